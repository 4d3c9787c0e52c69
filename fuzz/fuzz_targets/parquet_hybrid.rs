//! Parquet RLE/bit-packed hybrid: first byte the bit width (0..=40, past
//! the valid 32 on purpose), then the value count.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_fuzz::Params;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let bit_width = p.u8() % 41;
    let n = p.count(4);
    let _ = warpread_codecs::parquet_hybrid::decode(bit_width, p.rest(), &mut vec![0u32; n]);
});
