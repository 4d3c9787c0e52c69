//! Criterion benchmarks of the CPU reference decoders (the GPU figures come
//! from `warpread bench codecs`, which times kernels with CUDA events).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use warpread::codecs::orc_rle_v1;

fn rle_v1(c: &mut Criterion) {
    let mut g = c.benchmark_group("orc_rle_v1_cpu");
    // Sorted keys with repeats (runs) and small random codes (literals).
    let runs: Vec<u64> = (0..1u64 << 20).map(|i| 1_000_000 + i / 50).collect();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let literals: Vec<u8> = (0..1usize << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 6) as u8
        })
        .collect();
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

criterion_group!(benches, rle_v1);
criterion_main!(benches);
