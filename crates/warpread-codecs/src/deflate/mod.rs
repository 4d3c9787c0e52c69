//! Raw deflate (RFC 1951), the codec of ORC `ZLIB` chunks and, inside gzip
//! members, of Parquet `GZIP` pages.
//!
//! [`inflate`] is the CPU reference (zlib-rs through flate2).
//! [`speculative`] inflates one long stream in parallel spans (the
//! same result, decoded by warpread's own decoder, [`span`]). The GPU kernel
//! (`kernels/inflate.cu`) follows zlib's validity rules, so the two accept
//! and reject the same streams; on a rejected stream the two may name
//! different failure kinds (zlib does not say "truncated" apart from
//! "corrupt" the way the kernel does), so tests compare acceptance, sizes and
//! bytes, not error codes.

mod bits;
pub mod block_start;
mod code;
mod header;
pub mod span;
pub mod speculative;
pub mod symbols;

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use crate::plan::{ChunkJob, ChunkStatus, StatusCode};

/// Inflates one raw deflate stream into `out` (its capacity). On success the
/// status's `produced` is the decompressed size and `out[produced..]` is
/// zero, as the GPU leaves it; bytes after the final block are ignored.
pub fn inflate(input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let st = inflate_dirty(input, out);
    // zlib-rs uses the spare output as scratch: clear it so that both
    // backends return the same bytes.
    let produced = (st.produced as usize).min(out.len());
    out[produced..].fill(0);
    st
}

fn inflate_dirty(input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let mut d = Decompress::new(false);
    let fail = |code, d: &Decompress| ChunkStatus::failed(code, d.total_in(), d.total_out());
    match d.decompress(input, out, FlushDecompress::Finish) {
        Ok(Status::StreamEnd) => return ChunkStatus::ok(d.total_out()),
        Ok(_) => {}
        Err(_) => return fail(StatusCode::InputCorrupt, &d),
    }
    // Not finished: either the output is full or the input ran out. One
    // more byte of room tells the two apart.
    if (d.total_out() as usize) < out.len() {
        return fail(StatusCode::InputTruncated, &d);
    }
    let consumed = d.total_in() as usize;
    let mut probe = [0u8; 1];
    match d.decompress(&input[consumed..], &mut probe, FlushDecompress::Finish) {
        Ok(Status::StreamEnd) if d.total_out() as usize == out.len() => {
            ChunkStatus::ok(d.total_out())
        }
        Ok(_) if d.total_out() as usize > out.len() => fail(StatusCode::OutputOverflow, &d),
        Ok(_) => fail(StatusCode::InputTruncated, &d),
        Err(_) => fail(StatusCode::InputCorrupt, &d),
    }
}

/// Compresses `data` as one raw deflate stream at `level` (0–9).
pub fn deflate(data: &[u8], level: u32) -> Vec<u8> {
    let mut c = Compress::new(Compression::new(level), false);
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    loop {
        out.reserve(data.len() / 4 + 1024);
        let consumed = c.total_in() as usize;
        match c.compress_vec(&data[consumed..], &mut out, FlushCompress::Finish) {
            Ok(Status::StreamEnd) => return out,
            Ok(_) => continue,
            Err(e) => unreachable!("deflate of in-memory data cannot fail: {e}"),
        }
    }
}

/// Compresses `data` in independent chunks of `chunk_bytes` (the last may be
/// shorter), concatenated; one job per chunk whose `values` is the exact
/// decompressed size. Chunks compress in parallel.
pub fn deflate_chunks(data: &[u8], chunk_bytes: usize, level: u32) -> (Vec<u8>, Vec<ChunkJob>) {
    use rayon::prelude::*;
    let parts: Vec<Vec<u8>> = data
        .par_chunks(chunk_bytes.max(1))
        .map(|c| deflate(c, level))
        .collect();
    let mut out = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    let mut jobs = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        let start = out.len() as u64;
        out.extend_from_slice(p);
        let first = i * chunk_bytes.max(1);
        jobs.push(ChunkJob {
            input: start..out.len() as u64,
            output_offset: first as u64,
            values: (data.len() - first).min(chunk_bytes.max(1)) as u64,
            aux: 0,
        });
    }
    (out, jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut v = b"the quick brown fox jumps over the lazy dog; ".repeat(200);
        v.extend((0..5000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
        v
    }

    #[test]
    fn round_trip_all_levels() {
        let data = sample();
        for level in 0..=9 {
            let z = deflate(&data, level);
            let mut out = vec![0u8; data.len()];
            let st = inflate(&z, &mut out);
            assert!(st.is_ok(), "level {level}: {st}");
            assert_eq!(st.produced as usize, data.len());
            assert_eq!(out, data);
        }
    }

    #[test]
    fn capacity_larger_than_needed_is_fine_smaller_overflows() {
        let data = sample();
        for level in 0..=9 {
            let z = deflate(&data, level);
            let mut big = vec![0u8; data.len() + 5000];
            let st = inflate(&z, &mut big);
            assert!(st.is_ok());
            assert_eq!(st.produced as usize, data.len());
            assert!(
                big[data.len()..].iter().all(|&b| b == 0),
                "level {level}: spare bytes written"
            );
        }
        let z = deflate(&data, 6);
        let mut small = vec![0u8; data.len() - 1];
        assert_eq!(inflate(&z, &mut small).status(), StatusCode::OutputOverflow);
    }

    #[test]
    fn truncated_and_corrupt_streams_fail() {
        let data = sample();
        let z = deflate(&data, 9);
        let mut out = vec![0u8; data.len()];
        assert_eq!(
            inflate(&z[..z.len() / 2], &mut out).status(),
            StatusCode::InputTruncated
        );
        assert_eq!(inflate(&[], &mut out).status(), StatusCode::InputTruncated);
        // block type 3 is reserved
        assert_eq!(
            inflate(&[0x07], &mut out).status(),
            StatusCode::InputCorrupt
        );
        // stored block whose LEN and NLEN disagree
        assert_eq!(
            inflate(&[0x01, 0x05, 0x00, 0x00, 0x00], &mut out).status(),
            StatusCode::InputCorrupt
        );
    }

    #[test]
    fn empty_input_and_chunks() {
        let z = deflate(&[], 9);
        let mut out = [0u8; 0];
        assert!(inflate(&z, &mut out).is_ok());
        let data = sample();
        let (bytes, jobs) = deflate_chunks(&data, 1000, 9);
        assert_eq!(jobs.len(), data.len().div_ceil(1000));
        for j in &jobs {
            let mut o = vec![0u8; j.values as usize];
            let st = inflate(&bytes[j.input.start as usize..j.input.end as usize], &mut o);
            assert!(st.is_ok());
            assert_eq!(o, data[j.output().start as usize..j.output().end as usize]);
        }
    }
}
