//! The Parquet reader: the footer is parsed by the parquet crate, page
//! headers here; compressed pages become one decompression stage, levels
//! and values become decode stages of the [plan](crate::plan) run by a
//! [backend](crate::exec), and the decoded columns are assembled into Arrow
//! record batches identical to the parquet crate's Arrow reader.
//!
//! The parquet crate's own modules are re-exported here too (`basic`,
//! `file`, `schema`, `arrow`, ...).
//!
//! ```no_run
//! use warpread::exec::{self, BackendChoice};
//! use warpread::read::ReadOptions;
//! use warpread::parquet::ParquetFile;
//!
//! let file = ParquetFile::open("lineitem.parquet")?;
//! let backend = exec::select(BackendChoice::Auto)?;
//! let options = ReadOptions::default().with_columns(["l_orderkey"]);
//! for batch in file.read(&options, backend.as_ref())? {
//!     println!("{} rows", batch.num_rows());
//! }
//! # Ok::<(), warpread::Error>(())
//! ```

pub(crate) mod arrow_schema;
mod assemble;
mod byte_dict;
mod decode;
mod decompress;
pub mod gzip;
pub mod levels;
mod offsets;
pub mod page_header;
mod page_index;
mod page_select;
pub mod pages;
mod predicate;
mod reader;
mod row_ranges;
mod values;

// The parquet crate's modules stay reachable as `warpread::parquet::*`
// (`warpread::parquet::file::...`), as when this path re-exported the crate.
pub use ::parquet::*;

pub use crate::read::RowSelection;
pub use decode::encoding_name;
pub use page_index::PageIndexColumn;
pub use reader::{ParquetFile, RowGroupSet};

/// A synchronous, streaming reader builder over a local Parquet file or
/// Parquet bytes in memory ([`crate::read::ReaderBuilder`]).
pub type ParquetReaderBuilder = crate::read::ReaderBuilder<ParquetFile>;

/// An async, streaming reader builder over a Parquet object in any
/// `object_store::ObjectStore` ([`crate::read::StreamBuilder`]).
pub type ParquetStreamBuilder = crate::read::StreamBuilder<ParquetFile>;

// Format-neutral, kept reachable here for callers of either reader.
pub use crate::read::{CmpOp, Predicate, ReadOptions, ReadStats, ReadTuning, Scalar, split_batch};

/// Whether the file starts with the Parquet magic (`PAR1`, or `PARE` for
/// encrypted footers).
pub fn is_parquet(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|_| &magic == b"PAR1" || &magic == b"PARE")
}

impl ParquetReaderBuilder {
    /// The parsed footer (row groups, column chunks, statistics).
    pub fn metadata(&self) -> &ParquetMetaDataRef {
        self.file().metadata_ref()
    }
}

impl ParquetStreamBuilder {
    /// The parsed footer (row groups, column chunks, statistics).
    pub fn metadata(&self) -> &ParquetMetaDataRef {
        self.file().metadata_ref()
    }
}

/// A parsed Parquet footer, shared.
pub type ParquetMetaDataRef = std::sync::Arc<::parquet::file::metadata::ParquetMetaData>;
