//! Runs one [`ParquetOp`] job with the CPU reference decoders, over the
//! job's byte slice of the stage output (aligned to the element width,
//! which `HostBuffer` and sorted job offsets guarantee).

use crate::plan::{ChunkStatus, IntType, ParquetOp, StatusCode};

use super::{
    parquet_byte_stream_split, parquet_delta_binary_packed, parquet_delta_byte_array,
    parquet_delta_length_byte_array, parquet_dict, parquet_hybrid, parquet_plain,
};
use crate::plan::ByteArrayEncoding;

/// Views `out` as elements of `T`; `None` if misaligned.
fn typed<T: crate::int::IntElem>(out: &mut [u8]) -> Option<&mut [T]> {
    // SAFETY: T is a plain integer type; every bit pattern is valid.
    let (pre, mid, post) = unsafe { out.align_to_mut::<T>() };
    (pre.is_empty() && post.is_empty()).then_some(mid)
}

/// Decodes one job: `input` is its input bytes, `aux` its parameter
/// ([`ChunkJob::aux`](crate::plan::ChunkJob::aux)), `out` its output bytes.
pub fn decode(op: ParquetOp, input: &[u8], aux: u64, out: &mut [u8]) -> ChunkStatus {
    let misaligned = || ChunkStatus::failed(StatusCode::InputCorrupt, 0, 0);
    match op {
        ParquetOp::Hybrid { bit_width } => match typed::<u32>(out) {
            Some(o) => parquet_hybrid::decode(bit_width, input, o),
            None => misaligned(),
        },
        ParquetOp::PlainBool => parquet_plain::decode_bool(input, out),
        ParquetOp::PlainFixed { width } => parquet_plain::decode_fixed(width as usize, input, out),
        ParquetOp::ByteStreamSplit { width } => {
            parquet_byte_stream_split::decode(width as usize, input, out)
        }
        ParquetOp::DeltaBinaryPacked(IntType::I32) => match typed::<i32>(out) {
            Some(o) => parquet_delta_binary_packed::decode(input, o),
            None => misaligned(),
        },
        ParquetOp::DeltaBinaryPacked(_) => match typed::<i64>(out) {
            Some(o) => parquet_delta_binary_packed::decode(input, o),
            None => misaligned(),
        },
        ParquetOp::ByteArrayLengths(enc) => match typed::<u32>(out) {
            Some(o) => match enc {
                ByteArrayEncoding::Plain => parquet_plain::byte_array_lengths(input, o),
                ByteArrayEncoding::DeltaLength => {
                    parquet_delta_length_byte_array::lengths(input, o)
                }
                ByteArrayEncoding::Delta => parquet_delta_byte_array::lengths(input, o),
            },
            None => misaligned(),
        },
        ParquetOp::ByteArrayData(enc) => {
            let st = match enc {
                ByteArrayEncoding::Plain => parquet_plain::byte_array_data(input, out),
                ByteArrayEncoding::DeltaLength => parquet_delta_length_byte_array::data(input, out),
                ByteArrayEncoding::Delta => parquet_delta_byte_array::data(input, out),
            };
            if st.is_ok() {
                ChunkStatus::ok_bytes(st.produced, out.is_ascii())
            } else {
                st
            }
        }
        ParquetOp::DictGather { width } => parquet_dict::decode(width as usize, input, out),
        ParquetOp::DictPage { width } => parquet_dict::decode_page(width as usize, input, aux, out),
        ParquetOp::ByteDictOffsets => match typed::<u32>(out) {
            Some(o) => parquet_dict::bytes::offsets(input, o),
            None => misaligned(),
        },
        ParquetOp::ByteDictData => parquet_dict::bytes::data(input, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed view of the output (the module's `unsafe`): an aligned
    /// slice decodes in place, a misaligned one is refused, never read as
    /// integers.
    #[test]
    fn jobs_decode_into_aligned_output_and_refuse_misaligned_output() {
        let op = ParquetOp::Hybrid { bit_width: 3 };
        // One RLE run: five values of 4.
        let input = [5 << 1, 4];
        let mut buf = [0u8; 64];
        let at = buf.as_ptr().align_offset(4);
        let out = &mut buf[at..at + 20];
        let st = decode(op, &input, 0, out);
        assert!(st.is_ok(), "{st:?}");
        let values: Vec<u32> = out
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(values, [4; 5]);
        let st = decode(op, &input, 0, &mut buf[at + 1..at + 21]);
        assert_eq!(st.code, StatusCode::InputCorrupt as u32);
        // Four bytes past an 8-byte boundary: no i64 lies there.
        let at8 = buf.as_ptr().align_offset(8) + 4;
        let op = ParquetOp::DeltaBinaryPacked(IntType::I64);
        let st = decode(op, &input, 0, &mut buf[at8..at8 + 16]);
        assert_eq!(st.code, StatusCode::InputCorrupt as u32);
    }
}
