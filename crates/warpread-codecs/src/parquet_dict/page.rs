//! CPU reference of a whole dictionary-encoded page of fixed-width values:
//! the RLE/bit-packed indices decoded and gathered in one pass, with no
//! intermediate array of indices.

use crate::parquet_hybrid::{self, MAX_BIT_WIDTH};
use crate::plan::{ChunkStatus, StatusCode};

/// A dictionary page job's parameter ([`ChunkJob::aux`](crate::plan::ChunkJob::aux)):
/// its dictionary is the first `dict_len` bytes of its input, and its
/// indices (the bit-width byte, then the RLE/bit-packed runs to the end of
/// the input) start `indices_at` bytes in. Whatever lies between is not
/// read, so a job can run over the decompressed column chunk as it is,
/// from the dictionary page's values to the end of one data page.
#[inline]
pub fn page_aux(dict_len: u32, indices_at: u32) -> u64 {
    u64::from(dict_len) | (u64::from(indices_at) << 32)
}

/// A one-page job input: the dictionary, then the bit width and indices;
/// returns it with its [`page_aux`].
#[inline]
pub fn page_input(dict: &[u8], bit_width: u8, hybrid: &[u8]) -> (Vec<u8>, u64) {
    let mut v = Vec::with_capacity(dict.len() + 1 + hybrid.len());
    v.extend_from_slice(dict);
    v.push(bit_width);
    v.extend_from_slice(hybrid);
    let aux = page_aux(dict.len() as u32, dict.len() as u32);
    (v, aux)
}

/// Gathers `out.len() / width` values of a dictionary page job (`aux` as
/// [`page_aux`] makes it).
///
/// Statuses: `InputCorrupt` at 0 for a dictionary longer than the input or
/// not a whole number of entries, or indices starting inside the
/// dictionary or past the input; `InputTruncated` at the end for values
/// asked of a job without indices; `InputCorrupt` at the bit-width byte for
/// a width over 32; the hybrid decoder's statuses with offsets from the
/// job's start; and `ValueOutOfRange` at the run's header for the first
/// index past the dictionary, `produced` being that value's position.
pub fn decode_page(width: usize, input: &[u8], aux: u64, out: &mut [u8]) -> ChunkStatus {
    let dict_len = (aux & 0xffff_ffff) as usize;
    let at = (aux >> 32) as usize;
    let w = width.max(1);
    if dict_len > input.len() || !dict_len.is_multiple_of(w) || at < dict_len || at > input.len() {
        return ChunkStatus::failed(StatusCode::InputCorrupt, 0, 0);
    }
    let count = out.len() / w;
    if at == input.len() {
        return if count == 0 {
            ChunkStatus::ok(0)
        } else {
            ChunkStatus::failed(StatusCode::InputTruncated, at as u64, 0)
        };
    }
    let bit_width = input[at];
    if bit_width > MAX_BIT_WIDTH {
        return ChunkStatus::failed(StatusCode::InputCorrupt, at as u64, 0);
    }
    let base = at + 1;
    let mut sink = Gather {
        dict: &input[..dict_len],
        entries: dict_len / w,
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

/// The status of an index past the dictionary at value `at`, in the run
/// whose header is at `run_at`.
fn bad(run_at: usize, at: usize) -> Option<ChunkStatus> {
    Some(ChunkStatus::failed(
        StatusCode::ValueOutOfRange,
        run_at as u64,
        at as u64,
    ))
}

impl parquet_hybrid::Sink for Gather<'_> {
    fn repeat(&mut self, at: usize, v: u32, take: usize, run_at: usize) -> Option<ChunkStatus> {
        if take == 0 {
            return None;
        }
        let k = v as usize;
        if k >= self.entries {
            return bad(run_at, at);
        }
        let w = self.width;
        let value = &self.dict[k * w..(k + 1) * w];
        let out = &mut self.out[at * w..(at + take) * w];
        match w {
            4 => fill::<4>(out, value),
            8 => fill::<8>(out, value),
            16 => fill::<16>(out, value),
            _ => {
                for o in out.chunks_exact_mut(w.max(1)) {
                    o.copy_from_slice(value);
                }
            }
        }
        None
    }

    fn block(&mut self, at: usize, values: &[u32], run_at: usize) -> Option<ChunkStatus> {
        let w = self.width;
        let out = &mut self.out[at * w..(at + values.len()) * w];
        // The common widths copy as fixed-size arrays: a copy of a run-time
        // length per value was most of this loop's time.
        let stopped = match w {
            4 => gather::<4>(self.dict, values, out),
            8 => gather::<8>(self.dict, values, out),
            16 => gather::<16>(self.dict, values, out),
            _ => {
                for (i, &v) in values.iter().enumerate() {
                    let k = v as usize;
                    if k >= self.entries {
                        return bad(run_at, at + i);
                    }
                    out[i * w..(i + 1) * w].copy_from_slice(&self.dict[k * w..(k + 1) * w]);
                }
                None
            }
        };
        stopped.and_then(|i| bad(run_at, at + i))
    }
}

/// Copies entry `values[i]` of `dict` (whole entries of `W` bytes) to
/// value `i` of `out`, stopping at the first index past the dictionary
/// (its position is returned; the values before it are written).
fn gather<const W: usize>(dict: &[u8], values: &[u32], out: &mut [u8]) -> Option<usize> {
    let (table, _) = dict.as_chunks::<W>();
    let (slots, _) = out.as_chunks_mut::<W>();
    for (i, (slot, &v)) in slots.iter_mut().zip(values).enumerate() {
        // The table lookup is the range check.
        match table.get(v as usize) {
            Some(entry) => *slot = *entry,
            None => return Some(i),
        }
    }
    None
}

/// Writes `value` (`W` bytes) into every slot of `out`.
fn fill<const W: usize>(out: &mut [u8], value: &[u8]) {
    let value: [u8; W] = value.try_into().expect("a slice of W bytes");
    out.as_chunks_mut::<W>().0.fill(value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parquet_hybrid::encode;

    fn input(dict: &[u8], bw: u8, idx: &[u32]) -> (Vec<u8>, u64) {
        page_input(dict, bw, &encode(idx, bw))
    }

    #[test]
    fn gathers_runs_and_packed_values() {
        let dict = [10u8, 0, 20, 0, 30, 0];
        // Long runs (RLE) and varied values (bit-packed).
        let idx: Vec<u32> = (0..100).map(|i| if i < 40 { 2 } else { i % 3 }).collect();
        let (inp, aux) = input(&dict, 2, &idx);
        let mut out = vec![0u8; 200];
        let st = decode_page(2, &inp, aux, &mut out);
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

    /// Value `i` of the job is entry `idx[i]`, for every width (the fixed
    /// ones have their own copy loops), through runs and packed values; a
    /// bad index stops the job at its position with what came before it
    /// written.
    #[test]
    fn every_width_gathers_like_a_plain_lookup() {
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        for width in [1usize, 3, 4, 8, 12, 16] {
            let entries = 37;
            let dict: Vec<u8> = (0..entries * width).map(|_| next() as u8).collect();
            let idx: Vec<u32> = (0..3000)
                .map(|i| match i / 500 {
                    1 | 4 => 5,
                    _ => (next() % entries as u64) as u32,
                })
                .collect();
            let lookup = |idx: &[u32]| -> Vec<u8> {
                idx.iter()
                    .flat_map(|&k| dict[k as usize * width..][..width].to_vec())
                    .collect()
            };
            let (inp, aux) = input(&dict, 6, &idx);
            let mut out = vec![0u8; idx.len() * width];
            let st = decode_page(width, &inp, aux, &mut out);
            assert!(st.is_ok(), "width {width}: {st:?}");
            assert_eq!(out, lookup(&idx), "width {width}");
            // A bad index in a packed stretch, then in a run.
            for bad_at in [1234usize, 2100] {
                let mut bad = idx.clone();
                if bad_at == 2100 {
                    bad[2000..2500].fill(entries as u32 + 3);
                } else {
                    bad[bad_at] = entries as u32;
                }
                let first_bad = if bad_at == 2100 { 2000 } else { bad_at };
                let (inp, aux) = input(&dict, 6, &bad);
                let mut out = vec![0u8; idx.len() * width];
                let st = decode_page(width, &inp, aux, &mut out);
                assert_eq!(
                    (st.status(), st.produced as usize),
                    (StatusCode::ValueOutOfRange, first_bad),
                    "width {width}"
                );
                assert_eq!(
                    out[..first_bad * width],
                    lookup(&bad[..first_bad])[..],
                    "width {width}"
                );
            }
        }
    }

    #[test]
    fn pages_read_their_chunk_dictionary_in_place() {
        // A column chunk as decompressed: the dictionary page's values,
        // then data pages (here: 3 bytes of levels before the indices).
        let dict = [7u8, 0, 8, 0, 9, 0];
        let pages: [&[u32]; 3] = [&[0, 1, 2, 2], &[2; 30], &[1, 0]];
        let mut buf = dict.to_vec();
        let mut jobs = Vec::new();
        for idx in pages {
            buf.extend_from_slice(&[0xee; 3]);
            let at = buf.len();
            buf.push(2);
            buf.extend_from_slice(&encode(idx, 2));
            jobs.push((buf.len(), page_aux(dict.len() as u32, at as u32)));
        }
        for (idx, (end, aux)) in pages.iter().zip(jobs) {
            let mut out = vec![0u8; 2 * idx.len()];
            let st = decode_page(2, &buf[..end], aux, &mut out);
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
        let (inp, aux) = input(&dict, 2, &idx);
        let mut out = vec![0u8; 60];
        let st = decode_page(1, &inp, aux, &mut out);
        assert_eq!(
            (st.status(), st.produced),
            (StatusCode::ValueOutOfRange, 50)
        );
        // The bit-packed run holding it starts 5 bytes into the stream,
        // which starts after the dictionary and bit width.
        assert_eq!(st.detail, 5 + 2 + 1);
        // An RLE run of a bad index.
        let (inp, aux) = input(&dict, 2, &[3; 20]);
        let st = decode_page(1, &inp, aux, &mut out[..20]);
        assert_eq!(
            (st.status(), st.produced, st.detail),
            (StatusCode::ValueOutOfRange, 0, 3)
        );
        // A bad bit width.
        let mut wide = inp.clone();
        wide[2] = 33;
        let st = decode_page(1, &wide, aux, &mut out[..20]);
        assert_eq!((st.status(), st.detail), (StatusCode::InputCorrupt, 2));
        // Hybrid failures are offset to the job: the stream ends early.
        let (short, aux_s) = input(&dict, 1, &[1; 10]);
        let st = decode_page(1, &short, aux_s, &mut out[..30]);
        assert_eq!(st.status(), StatusCode::OutputShort);
        assert_eq!(st.detail as usize, short.len());
        // Parameters that do not fit the input: a dictionary past the end
        // or not whole entries, indices inside the dictionary or past the
        // end; values asked of a job whose indices are empty.
        let n = inp.len() as u32;
        for bad in [
            page_aux(n + 1, n + 1),
            page_aux(1, 2),
            page_aux(2, 1),
            page_aux(2, n + 1),
        ] {
            let st = decode_page(2, &inp, bad, &mut out[..20]);
            assert_eq!(
                (st.status(), st.detail),
                (StatusCode::InputCorrupt, 0),
                "{bad:x}"
            );
        }
        let st = decode_page(1, &inp, page_aux(2, n), &mut out[..20]);
        assert_eq!((st.status(), st.detail), (StatusCode::InputTruncated, n));
        // No values: nothing is read past the bit width, or at all.
        let (none, aux_n) = input(&dict, 0, &[]);
        assert!(decode_page(1, &none, aux_n, &mut []).is_ok());
        assert!(decode_page(1, &dict, page_aux(2, 2), &mut []).is_ok());
    }
}
