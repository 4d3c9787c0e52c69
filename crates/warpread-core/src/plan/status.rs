//! Per-chunk decode status, shared bit for bit with the kernels
//! (`codag::ChunkStatus` in kernels/codag.cuh).

use std::fmt;

/// What happened to one chunk job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum StatusCode {
    /// Decoded all requested elements.
    Ok = 0,
    /// The input ended inside a symbol.
    InputTruncated = 1,
    /// The stream holds more elements than the job's output capacity.
    OutputOverflow = 2,
    /// The stream ended before the job's element count was reached.
    OutputShort = 3,
    /// A varint is longer than the element width allows.
    VarintOverlong = 4,
    /// A decoded value does not fit the element type.
    ValueOutOfRange = 5,
    /// The input violates the format in another way.
    InputCorrupt = 6,
    /// No backend wrote this status (a bug if it survives a run).
    Pending = 0xffff_ffff,
}

impl StatusCode {
    /// Maps the raw code a kernel wrote; unknown codes become `Pending` so a
    /// garbage status can never read as success.
    #[inline]
    pub fn from_raw(raw: u32) -> Self {
        match raw {
            0 => Self::Ok,
            1 => Self::InputTruncated,
            2 => Self::OutputOverflow,
            3 => Self::OutputShort,
            4 => Self::VarintOverlong,
            5 => Self::ValueOutOfRange,
            6 => Self::InputCorrupt,
            _ => Self::Pending,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::InputTruncated => "input truncated inside a symbol",
            Self::OutputOverflow => "more values than expected",
            Self::OutputShort => "stream ended before the expected number of values",
            Self::VarintOverlong => "varint longer than the value width allows",
            Self::ValueOutOfRange => "value does not fit the column type",
            Self::InputCorrupt => "malformed symbol",
            Self::Pending => "chunk was not decoded",
        }
    }
}

/// The result of one chunk job. Layout matches the kernels' struct (16 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct ChunkStatus {
    /// A [`StatusCode`] as its raw number.
    pub code: u32,
    /// Chunk-relative byte offset of the symbol that failed (of the end of
    /// input for `OutputShort`); 0 on success.
    pub detail: u32,
    /// Elements produced before the failing symbol, or all of them.
    pub produced: u64,
}

impl ChunkStatus {
    /// The status a backend writes before running a job.
    pub const PENDING: Self = Self {
        code: StatusCode::Pending as u32,
        detail: 0,
        produced: 0,
    };

    /// A success that produced `produced` elements.
    #[inline]
    pub fn ok(produced: u64) -> Self {
        Self {
            code: StatusCode::Ok as u32,
            detail: 0,
            produced,
        }
    }

    /// A success of a byte-array data job (`ParquetOp::ByteArrayData`)
    /// whose `produced` output bytes are all ASCII or not: the reader then
    /// knows its strings are valid UTF-8 without a host pass over them.
    #[inline]
    pub fn ok_bytes(produced: u64, ascii: bool) -> Self {
        Self {
            detail: u32::from(ascii),
            ..Self::ok(produced)
        }
    }

    /// Whether a successful byte-array data job's output is all ASCII
    /// ([`ChunkStatus::ok_bytes`]).
    #[inline]
    pub fn ascii(&self) -> bool {
        self.is_ok() && self.detail == 1
    }

    /// A failure at chunk-relative byte `at` after `produced` elements.
    #[inline]
    pub fn failed(code: StatusCode, at: u64, produced: u64) -> Self {
        Self {
            code: code as u32,
            detail: u32::try_from(at).unwrap_or(u32::MAX),
            produced,
        }
    }

    /// The decoded status code.
    #[inline]
    pub fn status(&self) -> StatusCode {
        StatusCode::from_raw(self.code)
    }

    /// True on success.
    #[inline]
    pub fn is_ok(&self) -> bool {
        self.status() == StatusCode::Ok
    }
}

impl fmt::Display for ChunkStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status() {
            StatusCode::Ok => write!(f, "ok ({} values)", self.produced),
            s => write!(
                f,
                "{} at chunk byte {} after {} values",
                s.describe(),
                self.detail,
                self.produced
            ),
        }
    }
}

// SAFETY: plain old data of integers, no padding (4 + 4 + 8 bytes).
unsafe impl cudarc::driver::DeviceRepr for ChunkStatus {}
// SAFETY: all-zero bits are a valid (Ok) status.
unsafe impl cudarc::driver::ValidAsZeroBits for ChunkStatus {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_kernel_struct() {
        assert_eq!(std::mem::size_of::<ChunkStatus>(), 16);
        assert_eq!(std::mem::align_of::<ChunkStatus>(), 8);
    }

    #[test]
    fn failure_display_names_offset() {
        let s = ChunkStatus::failed(StatusCode::InputTruncated, 17, 3);
        assert_eq!(
            s.to_string(),
            "input truncated inside a symbol at chunk byte 17 after 3 values"
        );
        assert!(!s.is_ok());
        assert!(ChunkStatus::ok(5).is_ok());
    }
}
