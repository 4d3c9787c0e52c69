//! The decode plan: independent chunk jobs, grouped into stages, that a
//! backend runs. The format readers build plans; they never decode.
//!
//! A [`Stage`] applies one [`StageOp`] to a batch of [`ChunkJob`]s. Each job
//! names an input byte range, an output element range and the number of
//! elements it must produce; the backend reports one [`ChunkStatus`] per job.

mod job;
mod status;

pub use job::{
    BlockCodec, ByteArrayEncoding, ChunkJob, DecodePlan, GsstLayout, HuffmanDecoder, IntType,
    JobDesc, MAX_CHUNK_INPUT, MAX_CHUNK_VALUES, ParquetOp, Stage, StageOp,
};
pub use status::{ChunkStatus, StatusCode};
