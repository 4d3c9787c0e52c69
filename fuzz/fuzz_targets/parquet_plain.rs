//! Parquet PLAIN: fixed width, booleans, byte-array lengths and data.
//! First byte picks, the second the width.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_codecs::parquet_plain;
use warpread_fuzz::Params;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let which = p.u8() % 4;
    let width = (p.u8() % 33) as usize;
    match which {
        0 => {
            let n = p.count(1);
            let _ = parquet_plain::decode_fixed(width, p.rest(), &mut vec![0u8; n]);
        }
        1 => {
            let n = p.count(1);
            let _ = parquet_plain::decode_bool(p.rest(), &mut vec![0u8; n]);
        }
        2 => {
            let n = p.count(4);
            let _ = parquet_plain::byte_array_lengths(p.rest(), &mut vec![0u32; n]);
        }
        _ => {
            let n = p.count(1);
            let _ = parquet_plain::byte_array_data(p.rest(), &mut vec![0u8; n]);
        }
    }
});
