//! Criterion benchmarks of the CPU reference decoders (the GPU figures come
//! from `warpread bench codecs`, which times kernels with CUDA events).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use warpread::codecs::{orc_rle_v1, parquet_dict, parquet_hybrid};

/// A xorshift64 generator from `seed` (not 0): reproducible inputs.
fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

fn rle_v1(c: &mut Criterion) {
    let mut g = c.benchmark_group("orc_rle_v1_cpu");
    // Sorted keys with repeats (runs) and small random codes (literals).
    let runs: Vec<u64> = (0..1u64 << 20).map(|i| 1_000_000 + i / 50).collect();
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let literals: Vec<u8> = (0..1usize << 20).map(|_| (next() % 6) as u8).collect();
    let enc_runs = orc_rle_v1::encode(&runs);
    let enc_lits = orc_rle_v1::encode(&literals);
    g.throughput(Throughput::Bytes((runs.len() * 8) as u64));
    g.bench_function("u64_runs", |b| {
        let mut out = vec![0u64; runs.len()];
        b.iter(|| orc_rle_v1::decode(&enc_runs, &mut out))
    });
    g.throughput(Throughput::Bytes(literals.len() as u64));
    g.bench_function("u8_literals", |b| {
        let mut out = vec![0u8; literals.len()];
        b.iter(|| orc_rle_v1::decode(&enc_lits, &mut out))
    });
    g.finish();
}

/// A dictionary page job of `n` random indices into `entries` entries of
/// `width` bytes (bit-packed runs, as writers emit for varied values).
fn dict_page(width: usize, entries: usize, n: usize) -> (Vec<u8>, u64) {
    let bw = (usize::BITS - (entries - 1).leading_zeros()) as u8;
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let idx: Vec<u32> = (0..n).map(|_| (next() % entries as u64) as u32).collect();
    let dict: Vec<u8> = (0..entries * width).map(|i| i as u8).collect();
    parquet_dict::page_input(&dict, bw, &parquet_hybrid::encode(&idx, bw))
}

fn parquet_dict_pages(c: &mut Criterion) {
    let mut g = c.benchmark_group("parquet_dict_page_cpu");
    let n = 1 << 20;
    for (width, entries) in [(8, 1000), (4, 200), (8, 7)] {
        let (input, aux) = dict_page(width, entries, n);
        g.throughput(Throughput::Bytes((n * width) as u64));
        g.bench_function(format!("w{width}_entries{entries}"), |b| {
            let mut out = vec![0u8; n * width];
            b.iter(|| parquet_dict::decode_page(width, &input, aux, &mut out))
        });
    }
    g.finish();
}

criterion_group!(benches, rle_v1, parquet_dict_pages);
criterion_main!(benches);
