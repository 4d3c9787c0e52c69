//! Huffman: canonical, length-limited Huffman codes over 8- or 16-bit
//! symbols in our own versioned format (docs/huffman-format.md), after the
//! two entropy-coding papers behind warpread: cuSZ's GPU decoders (gap
//! arrays, self-synchronization) and E²MC's code construction (sampled
//! probabilities, bounded code lengths, canonical codes).
//!
//! A frame holds one code section shared by independent blocks; each block
//! may carry a gap array (the first codeword start in every subsequence of
//! its bits). The frame is parsed on the CPU into a
//! [`Stage`](crate::plan::Stage) of one job per block ([`Frame::stage`]);
//! a backend decodes it: the CPU reference ([`decode_block`]) or the CUDA
//! backend's `huffman.cu` kernels, which give identical bytes and statuses.

pub mod code;
mod decode;
mod encode;
pub mod format;
pub mod histogram;
#[cfg(test)]
mod tests;

pub use code::CanonicalCode;
pub use decode::{DecodeTables, decode_block, window};
pub use encode::{
    HuffmanParams, build_code, code_from_counts, encode, encode_block, encode_with, frame_head,
};
pub use format::{CodeSection, CodeView, Frame, SymbolWidth};
pub use histogram::Sampling;

pub use crate::plan::HuffmanDecoder;

/// Decodes a whole frame with the CPU reference decoder (jobs in
/// parallel); errors name the failing block.
pub fn decode(frame: &[u8]) -> crate::error::Result<Vec<u8>> {
    use rayon::prelude::*;
    let location = crate::error::Location::default();
    let f = Frame::parse(frame, &location)?;
    let total = usize::try_from(f.total)
        .map_err(|_| crate::error::Error::Unsupported(format!("{} decoded bytes", f.total)))?;
    let mut out = vec![0u8; total];
    let jobs = f.jobs(0, 0);
    let statuses: Vec<_> = out
        .par_chunks_mut(f.block_bytes as usize)
        .zip(&jobs)
        .map(|(slot, job)| {
            let input = &frame[job.input.start as usize..job.input.end as usize];
            decode_block(input, job.input.start, job.aux, slot)
        })
        .collect();
    for (i, s) in statuses.iter().enumerate() {
        if !s.is_ok() {
            return Err(crate::error::Error::Format {
                format: "Huffman",
                location: Box::new(location.clone()),
                message: format!("block {i}: {s}"),
            });
        }
    }
    Ok(out)
}
