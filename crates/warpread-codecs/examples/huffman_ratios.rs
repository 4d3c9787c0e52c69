//! Ratio of the Huffman codec on a file under several settings: symbol
//! width, code length bound, exact or sampled counts, gap arrays. Prints one
//! line per setting, with the order-0 entropy bound beside it.
//!
//! `cargo run --release -p warpread-codecs --example huffman_ratios -- FILE`

use warpread_codecs::huffman::{self, HuffmanParams, Sampling, SymbolWidth, histogram};

fn main() {
    let path = std::env::args().nth(1).expect("usage: huffman_ratios FILE");
    let data = std::fs::read(&path).expect("readable file");
    let n = data.len() as f64;
    for width in [SymbolWidth::U8, SymbolWidth::U16] {
        let h = histogram::entropy_bits(&histogram::exact(&data, width));
        println!(
            "{path}: {} bytes, {}-bit order-0 entropy {:.4} bits/byte, bound ratio {:.4}",
            data.len(),
            8 * width.bytes(),
            h / n,
            8.0 * n / h
        );
    }
    let base = [HuffmanParams::BYTES, HuffmanParams::PAIRS];
    let mut settings = Vec::new();
    for b in base {
        let lens: &[u32] = if b.width == SymbolWidth::U8 {
            &[9, 10, 11, 12, 16, 24]
        } else {
            &[16, 18, 20, 24]
        };
        for &max_len in lens {
            settings.push(HuffmanParams { max_len, ..b });
        }
        for every in [8u32, 32, 128] {
            settings.push(HuffmanParams {
                sampling: Sampling::Every(every),
                ..b
            });
        }
        for sub_log2 in [0u8, 8, 10] {
            settings.push(HuffmanParams { sub_log2, ..b });
        }
    }
    for p in settings {
        let t = std::time::Instant::now();
        let frame = match huffman::encode(&data, &p) {
            Ok(f) => f,
            Err(e) => {
                println!("{p:?}: {e}");
                continue;
            }
        };
        let enc = t.elapsed().as_secs_f64();
        assert_eq!(huffman::decode(&frame).expect("decodes"), data);
        println!(
            "symbols {:2} bits  max_len {:2}  sampling {:12}  gaps {:>5}  ratio {:.4}  encode {:.2} GB/s",
            8 * p.width.bytes(),
            p.max_len,
            format!("{:?}", p.sampling),
            if p.sub_log2 == 0 {
                "none".to_string()
            } else {
                format!("2^{}", p.sub_log2)
            },
            n / frame.len() as f64,
            n / enc / 1e9
        );
    }
}
