//! Whole-frame GSST decompression through a backend: the frame is parsed
//! on the CPU into one stage ([`Frame::stage`]) that the backend runs.

use crate::error::{Location, Result};
use crate::exec::{Backend, CpuBackend, HostBuffer};
use warpread_codecs::gsst::Frame;

/// Decompresses a whole frame with a backend: the frame is parsed on the
/// CPU into one stage, which the backend runs; the first bad block becomes
/// an error naming it.
pub fn decompress_with(
    backend: &dyn Backend,
    frame: &[u8],
    location: &Location,
) -> Result<HostBuffer> {
    let parsed = Frame::parse(frame, location)?;
    let stage = parsed.stage(location.clone());
    let out = backend.run_stage(&stage, frame)?;
    out.check(&stage)?;
    Ok(out.data)
}

/// Decompresses a whole frame on the CPU.
pub fn decompress(frame: &[u8]) -> Result<Vec<u8>> {
    let buf = decompress_with(&CpuBackend::new(), frame, &Location::default())?;
    Ok(buf.as_bytes().to_vec())
}
