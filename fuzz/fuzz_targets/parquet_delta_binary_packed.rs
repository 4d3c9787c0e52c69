//! Parquet DELTA_BINARY_PACKED into i64, i32 or u8 (first byte picks), output count
//! from the next two bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_codecs::parquet_delta_binary_packed::decode;
use warpread_fuzz::Params;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    match p.u8() % 4 {
        0 => {
            let n = p.count(8);
            let _ = decode::<i64>(p.rest(), &mut vec![0i64; n]);
        }
        1 => {
            let n = p.count(4);
            let _ = decode::<i32>(p.rest(), &mut vec![0i32; n]);
        }
        2 => {
            let n = p.count(2);
            let _ = decode::<u16>(p.rest(), &mut vec![0u16; n]);
        }
        _ => {
            let n = p.count(1);
            let _ = decode::<u8>(p.rest(), &mut vec![0u8; n]);
        }
    }
});
