//! One GSST block: first byte the layout and the stage offset (a multiple
//! of 16, or not), then the output size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_codecs::gsst::{GsstLayout, decode_block};
use warpread_fuzz::Params;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let b = p.u8();
    let layout = if b & 1 == 0 {
        GsstLayout::Splits
    } else {
        GsstLayout::Coalesced
    };
    let stage_offset = if b & 2 == 0 {
        (b >> 2) as u64 * 16
    } else {
        (b >> 2) as u64
    };
    let n = p.count(1);
    let _ = decode_block(p.rest(), stage_offset, layout, &mut vec![0u8; n]);
});
