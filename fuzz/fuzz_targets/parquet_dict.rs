//! Parquet dictionary decoders: the fixed-width gather, the whole-page
//! gather (with an `aux` from the input) and the byte-array gathers'
//! offsets and data passes. First byte picks, the second the width.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_codecs::parquet_dict;
use warpread_fuzz::Params;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let which = p.u8() % 4;
    let width = (p.u8() % 33) as usize;
    match which {
        0 => {
            let n = p.count(1);
            let _ = parquet_dict::decode(width, p.rest(), &mut vec![0u8; n]);
        }
        1 => {
            let aux = p.u64();
            let n = p.count(1);
            let _ = parquet_dict::decode_page(width, p.rest(), aux, &mut vec![0u8; n]);
        }
        2 => {
            let n = p.count(4);
            let _ = parquet_dict::bytes::offsets(p.rest(), &mut vec![0u32; n]);
        }
        _ => {
            let n = p.count(1);
            let _ = parquet_dict::bytes::data(p.rest(), &mut vec![0u8; n]);
        }
    }
});
