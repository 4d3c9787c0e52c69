//! ORC integer run-length encoding, version 2 (ORC spec, integer RLE v2):
//! SHORT_REPEAT, DIRECT, PATCHED_BASE and DELTA sub-encodings.
//!
//! PLACEHOLDER while the decoder is written on its branch: every chunk
//! reports `InputCorrupt`.

use crate::codecs::int::IntElem;
use crate::plan::{ChunkStatus, StatusCode};

/// Decodes one chunk into `out` (filled exactly).
pub fn decode<T: IntElem>(_input: &[u8], _out: &mut [T]) -> ChunkStatus {
    ChunkStatus::failed(StatusCode::InputCorrupt, 0, 0)
}
