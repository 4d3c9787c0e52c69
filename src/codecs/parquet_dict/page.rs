//! CPU reference of a whole dictionary-encoded page of fixed-width values:
//! the RLE/bit-packed indices decoded and gathered in one pass, with no
//! intermediate array of indices.

use crate::codecs::parquet_hybrid::{self, MAX_BIT_WIDTH};
use crate::plan::{ChunkStatus, StatusCode};

/// Bytes of a dictionary record ([`write_dict_record`]).
pub fn dict_record_len(dict: &[u8]) -> usize {
    4 + dict.len()
}

/// Writes the dictionary record every page job of a column chunk starts
/// at: `<u32 n> <n * width dictionary bytes>`.
pub fn write_dict_record(dict: &[u8], width: usize, out: &mut [u8]) {
    assert_eq!(out.len(), dict_record_len(dict), "dictionary record size");
    let n = (dict.len() / width.max(1)) as u32;
    out[..4].copy_from_slice(&n.to_le_bytes());
    out[4..].copy_from_slice(dict);
}

/// Bytes of a page record ([`write_page_record`]).
pub fn page_record_len(hybrid: &[u8]) -> usize {
    1 + hybrid.len() + 4
}

/// Writes a page record: `<u8 bit width> <hybrid stream of indices> <u32
/// record length before this word>`. A page job's input runs from its
/// chunk's dictionary record to the end of its page record, whatever lies
/// between (other pages' records): the dictionary is written once per
/// chunk rather than once per page, and the trailing length finds the page.
pub fn write_page_record(bit_width: u8, hybrid: &[u8], out: &mut [u8]) {
    assert_eq!(out.len(), page_record_len(hybrid), "page record size");
    let (body, len) = out.split_at_mut(1 + hybrid.len());
    body[0] = bit_width;
    body[1..].copy_from_slice(hybrid);
    len.copy_from_slice(&((1 + hybrid.len()) as u32).to_le_bytes());
}

/// Bytes of a one-page job input ([`write_page_input`]).
pub fn page_input_len(dict: &[u8], hybrid: &[u8]) -> usize {
    dict_record_len(dict) + page_record_len(hybrid)
}

/// Writes a job input of one page right after its dictionary record.
pub fn write_page_input(dict: &[u8], width: usize, bit_width: u8, hybrid: &[u8], out: &mut [u8]) {
    assert_eq!(
        out.len(),
        page_input_len(dict, hybrid),
        "dictionary page input size"
    );
    let (d, page) = out.split_at_mut(dict_record_len(dict));
    write_dict_record(dict, width, d);
    write_page_record(bit_width, hybrid, page);
}

/// Gathers `out.len() / width` values of a dictionary page job.
///
/// Statuses: `InputTruncated` (at 0) when the input is shorter than its
/// dictionary, a bit-width byte and the record length; `InputCorrupt` for
/// a dictionary size that overflows (at 0), a record length of 0 or one
/// reaching into the dictionary (at the length word), or a bit width over
/// 32 (at the bit-width byte); the hybrid decoder's statuses with offsets
/// from the job's start; and `ValueOutOfRange` at the run's header for the
/// first index past the dictionary, `produced` being that value's position.
pub fn decode_page(width: usize, input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let (n, dict_end) = match super::decode::dictionary(input, width) {
        Ok(d) => d,
        Err(st) => return st,
    };
    let count = out.len() / width.max(1);
    if input.len() < dict_end.saturating_add(5) {
        return ChunkStatus::failed(StatusCode::InputTruncated, 0, 0);
    }
    let tail = input.len() - 4;
    let record = u32::from_le_bytes(input[tail..].try_into().expect("4 bytes")) as usize;
    if record == 0 || record > tail - dict_end {
        return ChunkStatus::failed(StatusCode::InputCorrupt, tail as u64, 0);
    }
    let at = tail - record;
    let bit_width = input[at];
    if bit_width > MAX_BIT_WIDTH {
        return ChunkStatus::failed(StatusCode::InputCorrupt, at as u64, 0);
    }
    let base = at + 1;
    let mut sink = Gather {
        dict: &input[4..dict_end],
        entries: n,
        width,
        out,
    };
    let st = parquet_hybrid::walk(bit_width, &input[base..tail], count, &mut sink);
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
    fn pages_share_their_chunk_dictionary_record() {
        let dict = [7u8, 0, 8, 0, 9, 0];
        let pages: [&[u32]; 3] = [&[0, 1, 2, 2], &[2; 30], &[1, 0]];
        // One dictionary record, then the pages' records: each job runs
        // from the dictionary to the end of its own page.
        let mut buf = vec![0u8; dict_record_len(&dict)];
        write_dict_record(&dict, 2, &mut buf);
        let mut ends = Vec::new();
        for idx in pages {
            let h = encode(idx, 2);
            let at = buf.len();
            buf.resize(at + page_record_len(&h), 0);
            write_page_record(2, &h, &mut buf[at..]);
            ends.push(buf.len());
        }
        for (idx, end) in pages.iter().zip(ends) {
            let mut out = vec![0u8; 2 * idx.len()];
            let st = decode_page(2, &buf[..end], &mut out);
            assert!(st.is_ok(), "{st:?}");
            let want: Vec<u8> = idx
                .iter()
                .flat_map(|&k| [dict[2 * k as usize], 0])
                .collect();
            assert_eq!(out, want);
        }
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
        // Hybrid failures are offset to the job: the stream ends early
        // (before the record length).
        let short = input(&dict, 1, 1, &[1; 10]);
        let st = decode_page(1, &short, &mut out[..30]);
        assert_eq!(st.status(), StatusCode::OutputShort);
        assert_eq!(st.detail as usize, short.len() - 4);
        // A record length of 0 or reaching into the dictionary.
        for bad in [0u32, 100] {
            let mut b = inp.clone();
            let tail = b.len() - 4;
            b[tail..].copy_from_slice(&bad.to_le_bytes());
            let st = decode_page(1, &b, &mut out[..20]);
            assert_eq!(
                (st.status(), st.detail as usize),
                (StatusCode::InputCorrupt, tail)
            );
        }
        // No values: nothing is read past the bit width.
        let st = decode_page(1, &input(&dict, 1, 0, &[]), &mut []);
        assert!(st.is_ok());
    }
}
