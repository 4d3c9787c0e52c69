//! ORC RLE v1 encoder, shaped like the Java writer: runs of at least three
//! values with a constant delta in `-128..=127`, literals otherwise.

use super::{MAX_LITERALS, MAX_RUN, MIN_RUN};
use crate::int::IntElem;
use crate::plan::ChunkJob;
use crate::varint;

fn payload<T: IntElem>(v: T) -> u64 {
    if T::TYPE.is_signed() {
        varint::zigzag(v.to_bits() as i64)
    } else {
        v.to_bits()
    }
}

fn flush_literals<T: IntElem>(out: &mut Vec<u8>, lits: &[T]) {
    for group in lits.chunks(MAX_LITERALS) {
        out.push((-(group.len() as i32)) as u8);
        for &v in group {
            varint::write(out, payload(v));
        }
    }
}

/// Encodes `values` as one RLE v1 stream.
pub fn encode<T: IntElem>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() + 16);
    encode_into(values, &mut out);
    out
}

fn encode_into<T: IntElem>(values: &[T], out: &mut Vec<u8>) {
    let delta_at =
        |i: usize| (values[i + 1].to_bits() as i64).wrapping_sub(values[i].to_bits() as i64);
    let mut lit_start = 0;
    let mut i = 0;
    while i < values.len() {
        if i + 2 < values.len() {
            let d = delta_at(i);
            if (-128..=127).contains(&d) && delta_at(i + 1) == d {
                let mut n = 3;
                while n < MAX_RUN && i + n < values.len() && delta_at(i + n - 1) == d {
                    n += 1;
                }
                debug_assert!(n >= MIN_RUN);
                flush_literals(out, &values[lit_start..i]);
                out.push((n - MIN_RUN) as u8);
                out.push(d as i8 as u8);
                varint::write(out, payload(values[i]));
                i += n;
                lit_start = i;
                continue;
            }
        }
        i += 1;
    }
    flush_literals(out, &values[lit_start..]);
}

/// Encodes `values` as independent streams of `chunk_values` values each
/// (the last may be shorter), concatenated; returns the bytes and one job per
/// chunk, the layout of the CODAG benchmarks.
pub fn encode_chunks<T: IntElem>(values: &[T], chunk_values: usize) -> (Vec<u8>, Vec<ChunkJob>) {
    crate::encode_chunks_with(values, chunk_values, encode_into)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orc_rle_v1::decode;

    #[test]
    fn runs_are_found() {
        // 100 sevens is the spec's [0x61, 0x00, 0x07].
        assert_eq!(encode(&[7u32; 100]), vec![0x61, 0x00, 0x07]);
        assert_eq!(
            encode(&(1..=100u32).rev().collect::<Vec<_>>()),
            vec![0x61, 0xff, 0x64]
        );
        assert_eq!(
            encode(&[2u32, 3, 6, 7, 11]),
            vec![0xfb, 0x02, 0x03, 0x06, 0x07, 0x0b]
        );
    }

    #[test]
    fn long_inputs_split_runs_and_literals() {
        let vals: Vec<u64> = (0..1000)
            .map(|i| if i % 200 < 150 { 9 } else { i * 1_000_003 })
            .collect();
        let enc = encode(&vals);
        let mut out = vec![0u64; vals.len()];
        assert!(decode(&enc, &mut out).is_ok());
        assert_eq!(out, vals);
    }

    #[test]
    fn chunks_are_independent() {
        let vals: Vec<i32> = (0..10_000).map(|i| (i / 7) * 3 - 5000).collect();
        let (bytes, jobs) = encode_chunks(&vals, 1024);
        assert_eq!(jobs.len(), 10);
        for j in &jobs {
            let mut out = vec![0i32; j.values as usize];
            let input = &bytes[j.input.start as usize..j.input.end as usize];
            assert!(decode(input, &mut out).is_ok());
            assert_eq!(
                out,
                vals[j.output().start as usize..j.output().end as usize]
            );
        }
    }
}
