//! The ORC reader: the file tail and stripe footers are parsed on the CPU,
//! streams are read and become decompression and decode stages of the
//! [plan](crate::plan) run by a [backend](crate::exec), and the decoded
//! streams are assembled into Arrow record batches identical to pyarrow's.
//!
//! ```no_run
//! use warpread::exec::{self, BackendChoice};
//! use warpread::orc::{OrcFile, ReadOptions};
//!
//! let file = OrcFile::open("lineitem.orc")?;
//! let backend = exec::select(BackendChoice::Auto)?;
//! let options = ReadOptions::default().with_columns(["l_orderkey", "l_quantity"]);
//! for batch in file.read(&options, backend.as_ref())? {
//!     println!("{} rows", batch.num_rows());
//! }
//! # Ok::<(), warpread::Error>(())
//! ```

mod assemble;
pub mod compression;
mod decimal;
mod decode;
pub mod predicate;
pub mod proto;
mod reader;
pub mod row_index;
pub mod schema;
mod seek;
mod slots;
mod streams;
pub mod stripe;
pub mod tail;
mod timestamp;
pub mod writer;

pub use crate::read::RowSelection;
pub use reader::OrcFile;

/// A synchronous, streaming reader builder over a local ORC file or ORC
/// bytes in memory ([`crate::read::ReaderBuilder`]).
pub type OrcReaderBuilder = crate::read::ReaderBuilder<OrcFile>;

/// An async, streaming reader builder over an ORC object in any
/// `object_store::ObjectStore` ([`crate::read::StreamBuilder`]).
pub type OrcStreamBuilder = crate::read::StreamBuilder<OrcFile>;
// Format-neutral, kept reachable here for existing callers.
pub use crate::read::{CmpOp, Predicate, ReadOptions, ReadStats, ReadTuning, Scalar, split_batch};

impl OrcReaderBuilder {
    /// The parsed tail (postscript, footer, stripe statistics).
    pub fn metadata(&self) -> &tail::Tail {
        self.file().tail()
    }
}

impl OrcStreamBuilder {
    /// The parsed tail (postscript, footer, stripe statistics).
    pub fn metadata(&self) -> &tail::Tail {
        self.file().tail()
    }
}
