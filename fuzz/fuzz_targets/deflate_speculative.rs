//! Speculative span inflate against zlib on the same bytes: the same
//! acceptance, and on success the same size and bytes, at spans of 1 to
//! 16 KiB (first byte), output capacity from the next two.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpread_codecs::deflate::inflate;
use warpread_codecs::deflate::speculative::{SpanOptions, inflate_speculative};
use warpread_fuzz::Params;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let span = 1024 * (1 + u64::from(p.u8() % 16));
    let n = p.count(1);
    let stream = p.rest();
    let mut want = vec![0u8; n];
    let mut got = vec![0u8; n];
    let a = inflate(stream, &mut want);
    let options = SpanOptions::default().with_span_bytes(span);
    let b = inflate_speculative(stream, &mut got, &options);
    assert_eq!(a.is_ok(), b.is_ok(), "zlib {a}, spans {b}");
    if a.is_ok() {
        assert_eq!(a.produced, b.produced);
        assert!(want == got, "bytes differ");
    }
});
