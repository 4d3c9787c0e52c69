//! Parquet DELTA_BYTE_ARRAY and DELTA_LENGTH_BYTE_ARRAY, both passes
//! (lengths, data). First byte picks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_codecs::{parquet_delta_byte_array as dba, parquet_delta_length_byte_array as dlba};
use warpread_fuzz::Params;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    match p.u8() % 5 {
        0 => {
            let n = p.count(4);
            let _ = dba::lengths(p.rest(), &mut vec![0u32; n]);
        }
        1 => {
            let n = p.count(1);
            let _ = dba::data(p.rest(), &mut vec![0u8; n]);
        }
        2 => {
            let n = p.count(4);
            let _ = dlba::lengths(p.rest(), &mut vec![0u32; n]);
        }
        3 => {
            let n = p.count(1);
            let _ = dlba::data(p.rest(), &mut vec![0u8; n]);
        }
        _ => {
            let _ = dlba::suffix_start(p.rest());
        }
    }
});
