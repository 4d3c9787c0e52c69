//! Benchmarks behind `warpread bench`: the CODAG-style column suite and the
//! codec runner that times a backend and verifies it against the CPU, the
//! Huffman codec's ratio and decoders (`huffman`), the
//! end-to-end read benchmark, the scan on every device (`read_devices`)
//! and TPC-H through DataFusion (`sql`).

pub mod codecs;
pub mod gsst;
pub mod huffman;
pub mod inflate_stream;
pub mod read;
pub mod read_devices;
pub mod sql;
pub mod suite;

/// Checks a stage's statuses, then that its output is `want` byte for
/// byte; `what` names the run ("CPU GSST", "GPU Huffman") in the error.
pub(crate) fn verify_output(
    what: &str,
    stage: &crate::plan::Stage,
    got: &crate::exec::StageOutput,
    want: &[u8],
) -> crate::error::Result<()> {
    got.check(stage)?;
    verify_bytes(what, got.data.as_bytes(), want)
}

/// That a decoder's output `got` is `want` byte for byte; else a mismatch
/// naming the first differing byte.
pub(crate) fn verify_bytes(what: &str, got: &[u8], want: &[u8]) -> crate::error::Result<()> {
    if got != want {
        let at = (got.iter().zip(want))
            .position(|(a, b)| a != b)
            .unwrap_or(want.len().min(got.len()));
        return Err(crate::error::Error::Mismatch {
            what: format!("{what} output"),
            detail: format!("differs from the input at byte {at}"),
        });
    }
    Ok(())
}
