//! Round trips over random data and every setting, and the statuses of
//! damaged frames.

use super::format::{BLOCK_FIXED_BYTES, KIND_RAW};
use super::*;
use crate::plan::{ChunkStatus, StatusCode};
use crate::testing::{huffman_ab, xorshift};

/// Bytes drawn from a skewed distribution over `alphabet` values (a few
/// common, many rare), the shape of text and quantization codes.
fn skewed(n: usize, alphabet: u64, seed: u64) -> Vec<u8> {
    let mut next = xorshift(seed);
    (0..n)
        .map(|_| {
            let r = next();
            let bits = (r >> 58) as u32; // 0..63
            ((r % alphabet) >> (bits % 8)) as u8
        })
        .collect()
}

fn params_grid() -> Vec<HuffmanParams> {
    let mut v = Vec::new();
    for base in [HuffmanParams::BYTES, HuffmanParams::PAIRS] {
        for (sub_log2, ways_log2) in [(0u8, 0u8), (5, 0), (16, 0), (0, 3), (0, 7), (0, 10)] {
            for block_bytes in [64u32, 1000, 32 << 10] {
                for sampling in [Sampling::Exact, Sampling::Every(4)] {
                    v.push(HuffmanParams {
                        sub_log2,
                        ways_log2,
                        block_bytes,
                        sampling,
                        ..base
                    });
                }
            }
        }
    }
    v
}

fn round_trip(data: &[u8], p: &HuffmanParams) -> Vec<u8> {
    let frame = encode(data, p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    let back = decode(&frame).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    assert_eq!(back, data, "{p:?}");
    frame
}

#[test]
fn random_data_round_trips_under_every_setting() {
    let mut next = xorshift(0x4a11_5eed);
    for case in 0..8u64 {
        let n = match case {
            0 => 0,
            1 => 1,
            2 => 3,
            _ => (next() % 40_000) as usize,
        };
        let alphabet = [2u64, 3, 17, 64, 256][case as usize % 5];
        let data = skewed(n, alphabet, case + 1);
        for p in params_grid() {
            round_trip(&data, &p);
        }
    }
}

#[test]
fn length_bounds_round_trip_and_hold() {
    // Geometric-ish counts push an unlimited code far past 12 bits.
    let mut data = Vec::new();
    for s in 0..40u32 {
        data.extend(std::iter::repeat_n(
            s as u8,
            (1usize << (20 - s.min(20))) + 1,
        ));
    }
    for max_len in [8u32, 9, 12, 16, 24] {
        let p = HuffmanParams {
            max_len,
            ..HuffmanParams::BYTES
        };
        let frame = round_trip(&data, &p);
        let f = Frame::parse(&frame, &Default::default()).unwrap();
        let longest = (1..=max_len as usize)
            .rev()
            .find(|&l| f.code.code.counts[l] > 0)
            .unwrap();
        assert!(longest as u32 <= max_len);
    }
    // 40 symbols need at least 6 bits.
    let p = HuffmanParams {
        max_len: 5,
        ..HuffmanParams::BYTES
    };
    assert!(encode(&data, &p).is_err());
}

#[test]
fn incompressible_blocks_are_stored_raw_and_tiny_alphabets_compress() {
    let mut next = xorshift(99);
    let noise: Vec<u8> = (0..100_000).map(|_| next() as u8).collect();
    let frame = round_trip(&noise, &HuffmanParams::BYTES);
    let f = Frame::parse(&frame, &Default::default()).unwrap();
    let first = &frame[f.blocks[0].start as usize..];
    assert_eq!(first[0], KIND_RAW);
    assert!(frame.len() < noise.len() + noise.len() / 50);
    let same = vec![b'x'; 100_000];
    let frame = round_trip(&same, &HuffmanParams::BYTES);
    // One bit a symbol.
    assert!(
        frame.len() < 100_000 / 8 + 100_000 / 8 / 30 + 256,
        "{}",
        frame.len()
    );
}

#[test]
fn sampled_code_misses_symbols_yet_round_trips() {
    let mut data = skewed(200_000, 40, 5);
    // Symbols only in one spot the sample skips.
    data[123] = 0xFE;
    data[124] = 0xFD;
    for base in [HuffmanParams::BYTES, HuffmanParams::PAIRS] {
        let p = HuffmanParams {
            sampling: Sampling::Every(16),
            ..base
        };
        round_trip(&data, &p);
    }
}

/// The frame and its single block's job, decoded by the reference.
fn decode_one(frame: &[u8]) -> (ChunkStatus, Vec<u8>) {
    let f = Frame::parse(frame, &Default::default()).unwrap();
    let job = &f.jobs(0, 0)[0];
    let mut out = vec![0u8; job.values as usize];
    let input = &frame[job.input.start as usize..job.input.end as usize];
    (decode_block(input, job.input.start, job.aux, &mut out), out)
}

/// Decodes `rounds` copies of `frame`, each with one bit flipped past the
/// frame header, job by job; a failure must lie within its job's input and
/// output. How many jobs failed.
fn flip_bits_and_decode(frame: &[u8], rounds: usize, seed: u64) -> usize {
    let mut next = xorshift(seed);
    let mut failures = 0;
    for _ in 0..rounds {
        let mut bad = frame.to_vec();
        let at = 32 + (next() as usize % (bad.len() - 32));
        bad[at] ^= 1 << (next() % 8);
        let Ok(f) = Frame::parse(&bad, &Default::default()) else {
            continue;
        };
        for job in f.jobs(0, 0) {
            let mut out = vec![0u8; job.values as usize];
            let input = &bad[job.input.start as usize..job.input.end as usize];
            let st = decode_block(input, job.input.start, job.aux, &mut out);
            if !st.is_ok() {
                failures += 1;
                assert!(st.detail as usize <= input.len(), "{st}");
                assert!(st.produced <= job.values);
            }
        }
    }
    failures
}

#[test]
fn damage_gives_statuses_never_panics() {
    let data = skewed(3000, 30, 11);
    let p = HuffmanParams {
        block_bytes: 4096,
        ..HuffmanParams::BYTES
    };
    let frame = encode(&data, &p).unwrap();
    let (st, out) = decode_one(&frame);
    assert!(st.is_ok() && out == data, "{st}");
    let f = Frame::parse(&frame, &Default::default()).unwrap();
    let block = f.blocks[0].start as usize;
    let failures = flip_bits_and_decode(&frame, 3000, 7);
    assert!(failures > 100, "{failures}");
    // Gap array damage is always caught: every gap is checked.
    let gaps_at = block + BLOCK_FIXED_BYTES;
    let mut bad = frame.clone();
    bad[gaps_at + 3] ^= 1;
    let (st, _) = decode_one(&bad);
    assert_eq!(st.status(), StatusCode::InputCorrupt, "{st}");
    // A cut payload: the block header's bit count claims more than is there.
    let mut cut = frame.clone();
    let bits = u32::from_le_bytes(cut[block + 4..block + 8].try_into().unwrap());
    cut[block + 4..block + 8].copy_from_slice(&(bits + 64).to_le_bytes());
    let (st, _) = decode_one(&cut);
    assert_eq!(st.status(), StatusCode::InputTruncated, "{st}");
    // Fewer bits than the symbols need.
    let mut short = frame.clone();
    short[block + 4..block + 8].copy_from_slice(&(bits - 1).to_le_bytes());
    let (st, _) = decode_one(&short);
    assert!(!st.is_ok(), "{st}");
}

#[test]
fn damaged_ways_give_statuses_never_panic() {
    let data = skewed(6000, 30, 12);
    for (width, ways_log2) in [(SymbolWidth::U8, 4u8), (SymbolWidth::U16, 7)] {
        let p = HuffmanParams {
            width,
            max_len: if width == SymbolWidth::U8 { 12 } else { 20 },
            block_bytes: 4096,
            ways_log2,
            ..HuffmanParams::BYTES_IN_WAYS
        };
        let frame = encode(&data, &p).unwrap();
        let failures = flip_bits_and_decode(&frame, 3000, u64::from(ways_log2));
        assert!(failures > 100, "{failures}");
        // A directory entry past the payload is caught before any way.
        let f = Frame::parse(&frame, &Default::default()).unwrap();
        let dir = f.blocks[0].start as usize + BLOCK_FIXED_BYTES;
        let mut bad = frame.clone();
        bad[dir..dir + 2].copy_from_slice(&u16::MAX.to_le_bytes());
        let (st, _) = decode_one(&bad);
        assert_eq!(
            (st.status(), st.produced),
            (StatusCode::InputCorrupt, 0),
            "{st}"
        );
    }
}

#[test]
fn status_classes_of_a_hand_made_block() {
    // Code: 'a' = 0, 'b' = 10 (11 unused); "abababab" = (0 10) x 4 = 12
    // bits, no gaps.
    let code = huffman_ab::code();
    let p = HuffmanParams {
        sub_log2: 0,
        max_len: 4,
        block_bytes: 1024,
        ..HuffmanParams::BYTES
    };
    let block = |bits: u32, word: u32| {
        let mut f = Vec::new();
        format::write_frame_head(8, 1024, &huffman_ab::section(0), &[12], &mut f);
        f.extend_from_slice(&[0, 0, 0, 0]);
        f.extend_from_slice(&bits.to_le_bytes());
        f.extend_from_slice(&word.to_le_bytes());
        f
    };
    let w = 0b0100_1001_0010u32 << 20;
    let (st, out) = decode_one(&block(12, w));
    assert!(st.is_ok(), "{st}");
    assert_eq!(out, b"abababab");
    assert_eq!(encode_with(b"abababab", &code, &p).unwrap(), block(12, w));
    let status = |bits, word| {
        let (st, _) = decode_one(&block(bits, word));
        (st.status(), st.produced)
    };
    // An unused code (11) at bit 3.
    let unused = 0b0101_1001_0010u32 << 20;
    assert_eq!(status(12, unused), (StatusCode::InputCorrupt, 2));
    // Two more codewords ('a', 'a') than symbols: overflow after eight.
    assert_eq!(status(14, w), (StatusCode::OutputOverflow, 8));
    // The stream ends after seven symbols.
    assert_eq!(status(10, w), (StatusCode::OutputShort, 7));
    // The last codeword is cut.
    assert_eq!(status(11, w), (StatusCode::InputTruncated, 7));
}

#[test]
fn ways_decode_alone_and_report_the_first_bad_way() {
    // "ab" x 16 in two ways of "ab" x 8 (24 bits each), the second right
    // after the first.
    let code = huffman_ab::code();
    let p = HuffmanParams {
        sub_log2: 0,
        ways_log2: 1,
        max_len: 4,
        block_bytes: 1024,
        ..HuffmanParams::BYTES
    };
    let way = huffman_ab::way();
    let block = huffman_ab::two_ways;
    let good = block(48, 24, &way.repeat(2));
    assert_eq!(u16::from_le_bytes([good[4], good[5]]), format::VERSION);
    let (st, out) = decode_one(&good);
    assert!(st.is_ok(), "{st}");
    let data = b"ab".repeat(16);
    assert_eq!(out, data);
    assert_eq!(encode_with(&data, &code, &p).unwrap(), good);
    let status = |bits, dir, payload: &str| {
        let (st, _) = decode_one(&block(bits, dir, payload));
        (st.status(), u64::from(st.detail), st.produced)
    };
    let f = Frame::parse(&good, &Default::default()).unwrap();
    let job = &f.jobs(0, 0)[0];
    let dir_at = job.aux + BLOCK_FIXED_BYTES as u64;
    let payload_at = dir_at + 4;
    let both = way.repeat(2);
    // A directory entry whose way would end past the payload.
    assert_eq!(status(48, 49, &both), (StatusCode::InputCorrupt, dir_at, 0));
    // Way 0 told to end a bit early: its last code is cut.
    assert_eq!(
        status(48, 23, &both),
        (StatusCode::InputTruncated, payload_at + 2, 15)
    );
    // Way 0 given more bits than its codes take.
    assert_eq!(
        status(48, 40, &both),
        (StatusCode::OutputOverflow, payload_at + 3, 16)
    );
    // An unused code (11) opening way 1: way 0's symbols come first.
    let bad = format!("{way}11{}", &way[2..]);
    assert_eq!(
        status(48, 24, &bad),
        (StatusCode::InputCorrupt, payload_at + 3, 16)
    );
    // Way 1 given two bits more than its codes take.
    assert_eq!(
        status(50, 24, &both),
        (StatusCode::OutputOverflow, payload_at + 6, 32)
    );
    // A version 1 frame may not have ways.
    let mut v1 = good.clone();
    v1[4] = 1;
    assert!(Frame::parse(&v1, &Default::default()).is_err());
}

#[test]
fn ways_with_gap_arrays_or_past_16_bits_are_refused() {
    let p = HuffmanParams {
        sub_log2: 9,
        ways_log2: 3,
        ..HuffmanParams::BYTES
    };
    assert!(encode(b"abc", &p).is_err());
    // 2^16 symbols a way at up to 12 bits each.
    let p = HuffmanParams {
        sub_log2: 0,
        ways_log2: 1,
        block_bytes: 1 << 17,
        ..HuffmanParams::BYTES
    };
    assert!(encode(b"abc", &p).is_err());
}
