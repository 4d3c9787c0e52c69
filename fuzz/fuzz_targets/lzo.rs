//! LZO1X (ORC LZO) through the block-codec entry, output size from the
//! first two bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_codecs::block::decompress;
use warpread_core::plan::BlockCodec;
use warpread_fuzz::Params;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let n = p.count(1);
    let _ = decompress(BlockCodec::Lzo, p.rest(), &mut vec![0u8; n]);
});
