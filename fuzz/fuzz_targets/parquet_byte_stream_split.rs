//! Parquet BYTE_STREAM_SPLIT: first byte the width (0..=32), then the
//! output size in bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_fuzz::Params;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let width = (p.u8() % 33) as usize;
    let n = p.count(1);
    let _ = warpread_codecs::parquet_byte_stream_split::decode(width, p.rest(), &mut vec![0u8; n]);
});
