//! Writes small encoded streams, with each target's parameter prefix, as
//! seeds under `<dir>/<target>/` (usage: `make_seeds DIR`).

use std::path::{Path, PathBuf};

use warpread_codecs::gsst::{GsstLayout, compress_block};
use warpread_codecs::huffman::{self, HuffmanParams, Sampling, SymbolWidth};
use warpread_codecs::{
    deflate, orc_byte_rle, orc_rle_v1, orc_rle_v2, parquet_byte_stream_split,
    parquet_delta_binary_packed, parquet_delta_byte_array, parquet_delta_length_byte_array,
    parquet_dict, parquet_hybrid, parquet_plain, testing::xorshift,
};

struct Seeds {
    dir: PathBuf,
    n: usize,
}

impl Seeds {
    fn put(&mut self, target: &str, prefix: &[u8], body: &[u8]) {
        let d = self.dir.join(target);
        std::fs::create_dir_all(&d).expect("create corpus dir");
        let mut v = prefix.to_vec();
        v.extend_from_slice(body);
        std::fs::write(d.join(format!("gen-{:04}", self.n)), v).expect("write seed");
        self.n += 1;
    }
}

/// Two-byte count prefix: `Params::count` multiplies by 16.
fn count(values: usize) -> [u8; 2] {
    (values.div_ceil(16) as u16).to_le_bytes()
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: make_seeds DIR");
    let mut s = Seeds {
        dir: Path::new(&dir).to_path_buf(),
        n: 0,
    };
    let mut rng = xorshift(0x9e37_79b9_7f4a_7c15);
    let n = 256;

    // Integer shapes: runs, small deltas, random.
    let mut shapes: Vec<Vec<i64>> = vec![
        vec![7; n],
        (0..n as i64).collect(),
        (0..n as i64).map(|i| 1000 - 3 * i).collect(),
    ];
    shapes.push((0..n).map(|_| (rng() % 200) as i64 - 100).collect());
    shapes.push((0..n).map(|_| rng() as i64).collect());

    for v in &shapes {
        let c = count(v.len());
        let v32: Vec<i32> = v.iter().map(|&x| x as i32).collect();
        let v16: Vec<u16> = v.iter().map(|&x| x as u16).collect();
        let v8: Vec<u8> = v.iter().map(|&x| x as u8).collect();
        for (target, enc) in [
            (
                "orc_rle_v1",
                [
                    orc_rle_v1::encode(v.as_slice()),
                    orc_rle_v1::encode(v32.as_slice()),
                    orc_rle_v1::encode(v16.as_slice()),
                    orc_rle_v1::encode(v8.as_slice()),
                ],
            ),
            (
                "orc_rle_v2",
                [
                    orc_rle_v2::encode(v.as_slice()),
                    orc_rle_v2::encode(v32.as_slice()),
                    orc_rle_v2::encode(v16.as_slice()),
                    orc_rle_v2::encode(v8.as_slice()),
                ],
            ),
        ] {
            for (k, e) in enc.iter().enumerate() {
                s.put(target, &[k as u8, c[0], c[1]], e);
            }
        }
        let u: Vec<u64> = v.iter().map(|&x| x as u64).collect();
        s.put(
            "parquet_delta_binary_packed",
            &[0, c[0], c[1]],
            &parquet_delta_binary_packed::encode(&u, 64),
        );
        s.put(
            "parquet_delta_binary_packed",
            &[1, c[0], c[1]],
            &parquet_delta_binary_packed::encode(&u, 32),
        );
        // parquet_ops: pick 4 (i32) and 5 (i64), output in bytes.
        let c32 = count(v.len() * 4);
        let c64 = count(v.len() * 8);
        let zero = [0u8; 8];
        s.put(
            "parquet_ops",
            &[&[4u8, 0][..], &zero[..], &c32[..]].concat(),
            &parquet_delta_binary_packed::encode(&u, 32),
        );
        s.put(
            "parquet_ops",
            &[&[5u8, 0][..], &zero[..], &c64[..]].concat(),
            &parquet_delta_binary_packed::encode(&u, 64),
        );

        s.put("orc_byte_rle", &count(v8.len()), &orc_byte_rle::encode(&v8));
        let bits: Vec<u8> = v8.iter().map(|b| b & 1).collect();
        s.put(
            "orc_bool_rle",
            &count(bits.len()),
            &orc_byte_rle::encode_bools(&bits),
        );

        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        s.put("inflate", &count(bytes.len()), &deflate::deflate(&bytes, 6));
        // Span inflate: 1 KiB spans (first byte 0), the same stream.
        s.put(
            "deflate_speculative",
            &[&[0u8][..], &count(bytes.len())].concat(),
            &deflate::deflate(&bytes, 6),
        );
        s.put(
            "lzo",
            &count(bytes.len()),
            &lzokay_native::compress(&bytes).expect("lzo"),
        );
        s.put(
            "block",
            &[&[0u8][..], &count(bytes.len())].concat(),
            &snap::raw::Encoder::new()
                .compress_vec(&bytes)
                .expect("snappy"),
        );
        s.put(
            "block",
            &[&[1u8][..], &count(bytes.len())].concat(),
            &zstd::bulk::compress(&bytes, 3).expect("zstd"),
        );
        s.put(
            "block",
            &[&[3u8][..], &count(bytes.len())].concat(),
            &lzokay_native::compress(&bytes).expect("lzo"),
        );

        for width in [4usize, 8] {
            let w = &bytes[..v.len() * width];
            s.put(
                "parquet_byte_stream_split",
                &[&[width as u8][..], &count(w.len())].concat(),
                &parquet_byte_stream_split::encode(w, width),
            );
        }
        s.put(
            "parquet_plain",
            &[&[0u8, 8][..], &count(bytes.len())].concat(),
            &bytes,
        );
    }

    // Hybrid and dictionaries.
    for bw in [0u8, 1, 3, 8, 13, 32] {
        let mask = if bw == 32 { u32::MAX } else { (1u32 << bw) - 1 };
        let runs: Vec<u32> = (0..n)
            .map(|i| {
                if i < n / 2 {
                    1 & mask
                } else {
                    (rng() as u32) & mask
                }
            })
            .collect();
        let enc = parquet_hybrid::encode(&runs, bw);
        s.put("parquet_hybrid", &[&[bw][..], &count(n)].concat(), &enc);
        s.put(
            "parquet_ops",
            &[&[0u8, bw][..], &[0u8; 8][..], &count(n * 4)].concat(),
            &enc,
        );
    }
    let dict: Vec<u8> = (0..16u32).flat_map(|i| (i * 1000).to_le_bytes()).collect();
    let idx: Vec<u32> = (0..n).map(|_| (rng() % 16) as u32).collect();
    let mut gather = Vec::new();
    parquet_dict::encode_input(&dict, 4, &idx, &mut gather);
    s.put(
        "parquet_dict",
        &[&[0u8, 4][..], &count(n * 4)].concat(),
        &gather,
    );
    s.put(
        "parquet_ops",
        &[&[12u8, 4][..], &[0u8; 8][..], &count(n * 4)].concat(),
        &gather,
    );
    let (page, aux) = parquet_dict::page_input(&dict, 4, &parquet_hybrid::encode(&idx, 4));
    s.put(
        "parquet_dict",
        &[&[1u8, 4][..], &aux.to_le_bytes()[..], &count(n * 4)].concat(),
        &page,
    );
    s.put(
        "parquet_ops",
        &[&[13u8, 4][..], &aux.to_le_bytes()[..], &count(n * 4)].concat(),
        &page,
    );

    // Byte arrays.
    let words: Vec<Vec<u8>> = (0..64)
        .map(|i| format!("value-{}-{}", i % 7, i).into_bytes())
        .collect();
    let refs: Vec<&[u8]> = words.iter().map(|w| w.as_slice()).collect();
    let total: usize = refs.iter().map(|w| w.len()).sum();
    let picks: Vec<u32> = [1u32, 2, 3, 4, 5, 6, 7, 0].repeat(4);
    let page_bytes: Vec<u8> = [vec![3u8], parquet_hybrid::encode(&picks, 3)].concat();
    let pages: [(u32, &[u8]); 1] = [(32, page_bytes.as_slice())];
    let job = parquet_dict::bytes::encode_job(&refs[..8], &pages);
    s.put("parquet_dict", &[&[2u8, 0][..], &count(33)].concat(), &job);
    s.put(
        "parquet_dict",
        &[&[3u8, 0][..], &count(total)].concat(),
        &job,
    );
    s.put(
        "parquet_ops",
        &[&[14u8, 0][..], &[0u8; 8][..], &count(33 * 4)].concat(),
        &job,
    );
    s.put(
        "parquet_ops",
        &[&[15u8, 0][..], &[0u8; 8][..], &count(total)].concat(),
        &job,
    );
    let plain = parquet_plain::encode_byte_array(&refs);
    s.put(
        "parquet_plain",
        &[&[2u8, 0][..], &count(refs.len())].concat(),
        &plain,
    );
    s.put(
        "parquet_plain",
        &[&[3u8, 0][..], &count(total)].concat(),
        &plain,
    );
    let bools: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
    s.put(
        "parquet_plain",
        &[&[1u8, 0][..], &count(n)].concat(),
        &parquet_plain::encode_bool(&bools),
    );
    let dba = parquet_delta_byte_array::encode(&refs);
    let dlba = parquet_delta_length_byte_array::encode(&refs);
    s.put(
        "parquet_delta_byte_array",
        &[&[0u8][..], &count(refs.len())].concat(),
        &dba,
    );
    s.put(
        "parquet_delta_byte_array",
        &[&[1u8][..], &count(total)].concat(),
        &dba,
    );
    s.put(
        "parquet_delta_byte_array",
        &[&[2u8][..], &count(refs.len())].concat(),
        &dlba,
    );
    s.put(
        "parquet_delta_byte_array",
        &[&[3u8][..], &count(total)].concat(),
        &dlba,
    );
    s.put("parquet_delta_byte_array", &[4u8], &dlba);
    for (pick, enc) in [(6u8, &plain), (7, &dlba), (8, &dba)] {
        s.put(
            "parquet_ops",
            &[&[pick, 0][..], &[0u8; 8][..], &count(refs.len() * 4)].concat(),
            enc,
        );
        s.put(
            "parquet_ops",
            &[&[pick + 3, 0][..], &[0u8; 8][..], &count(total)].concat(),
            enc,
        );
    }

    // GSST blocks.
    let text: Vec<u8> = refs.concat().repeat(4);
    for (bit, layout) in [(0u8, GsstLayout::Splits), (1, GsstLayout::Coalesced)] {
        for splits in [1usize, 4] {
            s.put(
                "gsst_block",
                &[&[bit][..], &count(text.len())].concat(),
                &compress_block(&text, splits, layout),
            );
        }
    }
    // Huffman frames (first byte 0: the whole-frame path): bytes and
    // pairs, with and without gap arrays and in ways, blocks small enough that a frame
    // holds several, a raw-stored block (random bytes) among them.
    let mut mixed = text.clone();
    mixed.extend((0..2048).map(|_| rng() as u8));
    for data in [&text, &mixed] {
        for (width, max_len) in [(SymbolWidth::U8, 12), (SymbolWidth::U16, 20)] {
            for (sub_log2, ways_log2) in [(0u8, 0u8), (9, 0), (0, 4)] {
                let params = HuffmanParams {
                    width,
                    max_len,
                    block_bytes: 1024,
                    sub_log2,
                    sampling: Sampling::Exact,
                    ways_log2,
                };
                if let Ok(frame) = huffman::encode(data, &params) {
                    s.put("huffman", &[0u8], &frame);
                }
            }
        }
    }
    println!("wrote {} seeds under {}", s.n, dir);
}
