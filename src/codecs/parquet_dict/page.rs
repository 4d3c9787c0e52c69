//! CPU reference of a whole dictionary-encoded page of fixed-width values:
//! the RLE/bit-packed indices decoded and gathered in one pass, with no
//! intermediate array of indices.

use crate::codecs::parquet_hybrid::{self, MAX_BIT_WIDTH};
use crate::plan::{ChunkStatus, StatusCode};

/// Bytes of the job input [`write_page_input`] writes.
pub fn page_input_len(dict: &[u8], hybrid: &[u8]) -> usize {
    4 + dict.len() + 1 + hybrid.len()
}

/// Writes a job input: `<u32 n> <n * width dictionary bytes> <u8 bit
/// width> <hybrid stream of indices>` into `out` ([`page_input_len`] bytes).
pub fn write_page_input(dict: &[u8], width: usize, bit_width: u8, hybrid: &[u8], out: &mut [u8]) {
    assert_eq!(
        out.len(),
        page_input_len(dict, hybrid),
        "dictionary page input size"
    );
    let n = (dict.len() / width.max(1)) as u32;
    out[..4].copy_from_slice(&n.to_le_bytes());
    let (d, rest) = out[4..].split_at_mut(dict.len());
    d.copy_from_slice(dict);
    rest[0] = bit_width;
    rest[1..].copy_from_slice(hybrid);
}

/// Gathers `out.len() / width` values of a dictionary page job.
///
/// Statuses: `InputTruncated` (at 0) when the input is shorter than its
/// dictionary and bit-width byte; `InputCorrupt` for a dictionary size
/// that overflows or a bit width over 32 (at the bit-width byte); the
/// hybrid decoder's statuses with offsets from the job's start; and
/// `ValueOutOfRange` at the run's header for the first index past the
/// dictionary, `produced` being that value's position.
pub fn decode_page(width: usize, input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let (n, dict_end) = match super::decode::dictionary(input, width) {
        Ok(d) => d,
        Err(st) => return st,
    };
    let count = out.len() / width.max(1);
    if input.len() <= dict_end {
        return ChunkStatus::failed(StatusCode::InputTruncated, 0, 0);
    }
    let bit_width = input[dict_end];
    if bit_width > MAX_BIT_WIDTH {
        return ChunkStatus::failed(StatusCode::InputCorrupt, dict_end as u64, 0);
    }
    let base = dict_end + 1;
    let mut sink = Gather {
        dict: &input[4..dict_end],
        entries: n,
        width,
        out,
    };
    let st = parquet_hybrid::walk(bit_width, &input[base..], count, &mut sink);
    if st.is_ok() {
        return st;
    }
    // Offsets of the stream (hybrid failures and bad indices alike) made
    // offsets of the job.
    let at = u64::from(st.detail) + base as u64;
    ChunkStatus::failed(st.status(), at, st.produced)
}

struct Gather<'a> {
    dict: &'a [u8],
    entries: usize,
    width: usize,
    out: &'a mut [u8],
}

impl Gather<'_> {
    fn bad(&self, run_at: usize, at: usize) -> Option<ChunkStatus> {
        Some(ChunkStatus::failed(
            StatusCode::ValueOutOfRange,
            run_at as u64,
            at as u64,
        ))
    }
}

impl parquet_hybrid::Sink for Gather<'_> {
    fn repeat(&mut self, at: usize, v: u32, take: usize, run_at: usize) -> Option<ChunkStatus> {
        if take == 0 {
            return None;
        }
        let k = v as usize;
        if k >= self.entries {
            return self.bad(run_at, at);
        }
        let w = self.width;
        let value = &self.dict[k * w..(k + 1) * w];
        for o in self.out[at * w..(at + take) * w].chunks_exact_mut(w.max(1)) {
            o.copy_from_slice(value);
        }
        None
    }

    fn block(&mut self, at: usize, values: &[u32], run_at: usize) -> Option<ChunkStatus> {
        let w = self.width;
        for (i, &v) in values.iter().enumerate() {
            let k = v as usize;
            if k >= self.entries {
                return self.bad(run_at, at + i);
            }
            self.out[(at + i) * w..(at + i + 1) * w]
                .copy_from_slice(&self.dict[k * w..(k + 1) * w]);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codecs::parquet_hybrid::encode;

    fn input(dict: &[u8], width: usize, bw: u8, idx: &[u32]) -> Vec<u8> {
        let h = encode(idx, bw);
        let mut v = vec![0; page_input_len(dict, &h)];
        write_page_input(dict, width, bw, &h, &mut v);
        v
    }

    #[test]
    fn gathers_runs_and_packed_values() {
        let dict = [10u8, 0, 20, 0, 30, 0];
        // Long runs (RLE) and varied values (bit-packed).
        let idx: Vec<u32> = (0..100).map(|i| if i < 40 { 2 } else { i % 3 }).collect();
        let inp = input(&dict, 2, 2, &idx);
        let mut out = vec![0u8; 200];
        let st = decode_page(2, &inp, &mut out);
        assert!(st.is_ok(), "{st:?}");
        for (i, &k) in idx.iter().enumerate() {
            assert_eq!(out[2 * i], dict[2 * k as usize], "value {i}");
        }
        // The same as the two-step path: hybrid indices, then the gather.
        let mut ix = vec![0u32; 100];
        assert!(parquet_hybrid::decode(2, &encode(&idx, 2), &mut ix).is_ok());
        let mut g = Vec::new();
        super::super::encode_input(&dict, 2, &ix, &mut g);
        let mut out2 = vec![0u8; 200];
        assert!(super::super::decode(2, &g, &mut out2).is_ok());
        assert_eq!(out, out2);
    }

    #[test]
    fn reports_bad_indices_and_damage() {
        let dict = [1u8, 2];
        // Index 3 at position 50 (in a bit-packed run), past 2 entries.
        let mut idx = vec![0u32; 60];
        idx[50] = 3;
        idx[7] = 1;
        let inp = input(&dict, 1, 2, &idx);
        let mut out = vec![0u8; 60];
        let st = decode_page(1, &inp, &mut out);
        assert_eq!(
            (st.status(), st.produced),
            (StatusCode::ValueOutOfRange, 50)
        );
        // The bit-packed run holding it starts 5 bytes into the stream,
        // which starts after the size, dictionary and bit width.
        assert_eq!(st.detail, 5 + 4 + 2 + 1);
        // An RLE run of a bad index.
        let inp = input(&dict, 1, 2, &[3; 20]);
        let st = decode_page(1, &inp, &mut out[..20]);
        assert_eq!(
            (st.status(), st.produced, st.detail),
            (StatusCode::ValueOutOfRange, 0, 7)
        );
        // Truncations and a bad bit width.
        assert_eq!(
            decode_page(1, &inp[..3], &mut out).status(),
            StatusCode::InputTruncated
        );
        assert_eq!(
            decode_page(1, &inp[..6], &mut out).status(),
            StatusCode::InputTruncated
        );
        let mut wide = inp.clone();
        wide[6] = 33;
        let st = decode_page(1, &wide, &mut out[..20]);
        assert_eq!((st.status(), st.detail), (StatusCode::InputCorrupt, 6));
        // Hybrid failures are offset to the job: the stream ends early.
        let short = input(&dict, 1, 1, &[1; 10]);
        let st = decode_page(1, &short, &mut out[..30]);
        assert_eq!(st.status(), StatusCode::OutputShort);
        assert_eq!(st.detail as usize, short.len());
        // No values: nothing is read past the bit width.
        let st = decode_page(1, &input(&dict, 1, 0, &[]), &mut []);
        assert!(st.is_ok());
    }
}
