//! Every block codec (Snappy, Zstd, LZ4, LZO, Hadoop LZ4, Brotli): first
//! byte picks, then the output size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_codecs::block::decompress;
use warpread_core::plan::BlockCodec;
use warpread_fuzz::Params;

const CODECS: [BlockCodec; 6] = [
    BlockCodec::Snappy,
    BlockCodec::Zstd,
    BlockCodec::Lz4,
    BlockCodec::Lzo,
    BlockCodec::Lz4Hadoop,
    BlockCodec::Brotli,
];

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let codec = CODECS[p.u8() as usize % CODECS.len()];
    let n = p.count(1);
    let _ = decompress(codec, p.rest(), &mut vec![0u8; n]);
});
