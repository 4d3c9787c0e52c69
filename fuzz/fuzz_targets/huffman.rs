//! Huffman: a whole frame through the parser and the CPU reference
//! decoder (first byte 0), or one job's input (a code section and a
//! block) with its block offset, stage offset and output size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_codecs::huffman::{decode, decode_block};
use warpread_fuzz::Params;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let b = p.u8();
    if b == 0 {
        let _ = decode(p.rest());
        return;
    }
    let stage_offset = if b & 1 == 0 { 0 } else { u64::from(b >> 1) };
    let aux = u64::from(p.u8()) * 4;
    let n = p.count(1);
    let _ = decode_block(p.rest(), stage_offset, aux, &mut vec![0u8; n]);
});
