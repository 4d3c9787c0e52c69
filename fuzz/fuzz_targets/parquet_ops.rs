//! `parquet_ops::decode` over every `ParquetOp`: first byte picks the op,
//! the second its width, then `aux` (8 bytes) and the output size. The
//! output is 8-byte aligned, as the stage buffers are.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_codecs::parquet_ops::decode;
use warpread_core::plan::{ByteArrayEncoding, IntType, ParquetOp};
use warpread_fuzz::Params;

const ENCS: [ByteArrayEncoding; 3] = [
    ByteArrayEncoding::Plain,
    ByteArrayEncoding::DeltaLength,
    ByteArrayEncoding::Delta,
];

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let pick = p.u8();
    let w = p.u8();
    let width = (w % 33) as u32;
    let op = match pick % 16 {
        0 => ParquetOp::Hybrid { bit_width: w % 41 },
        1 => ParquetOp::PlainBool,
        2 => ParquetOp::PlainFixed { width },
        3 => ParquetOp::ByteStreamSplit { width },
        4 => ParquetOp::DeltaBinaryPacked(IntType::I32),
        5 => ParquetOp::DeltaBinaryPacked(IntType::I64),
        6..=8 => ParquetOp::ByteArrayLengths(ENCS[(pick % 16 - 6) as usize]),
        9..=11 => ParquetOp::ByteArrayData(ENCS[(pick % 16 - 9) as usize]),
        12 => ParquetOp::DictGather { width },
        13 => ParquetOp::DictPage { width },
        14 => ParquetOp::ByteDictOffsets,
        _ => ParquetOp::ByteDictData,
    };
    let aux = p.u64();
    let n = p.count(1);
    let mut words = vec![0u64; n.div_ceil(8)];
    // SAFETY: a u64 buffer viewed as its bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), n) };
    let _ = decode(op, p.rest(), aux, out);
});
