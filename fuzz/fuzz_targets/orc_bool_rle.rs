//! ORC boolean RLE (byte RLE of bit-packed bytes), output count from the first two bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_fuzz::Params;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let n = p.count(1);
    let _ = warpread_codecs::orc_byte_rle::decode_bools(p.rest(), &mut vec![0u8; n]);
});
