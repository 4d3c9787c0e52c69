//! Decodes ORC RLE v1 streams through a decode plan on the best available
//! backend, and checks the result against the CPU reference.
//!
//!     cargo run --release --example decode_rle_v1 [-- cpu|cuda|auto]

use warpread::codecs::orc_rle_v1;
use warpread::exec::{self, BackendChoice, CpuBackend};
use warpread::plan::{DecodePlan, IntType, Stage, StageOp};

fn main() -> warpread::Result<()> {
    let choice: BackendChoice = std::env::args()
        .nth(1)
        .as_deref()
        .unwrap_or("auto")
        .parse()?;
    // Sorted keys with repeats: runs for the encoder, as in an ORC key column.
    let values: Vec<i64> = (0..4_000_000).map(|i| 1_000_000 + i / 7).collect();
    // Independent streams of 16384 values each: one chunk job per stream.
    let (bytes, jobs) = orc_rle_v1::encode_chunks(&values, 16_384);
    let plan = DecodePlan {
        stages: vec![Stage {
            op: StageOp::OrcRleV1(IntType::I64),
            jobs,
            output_values: values.len() as u64,
            location: warpread::Location::default().with_column("key"),
        }],
    };
    let backend = exec::select(choice)?;
    let t = std::time::Instant::now();
    let out = exec::execute(backend.as_ref(), &plan, &[&bytes])?;
    let elapsed = t.elapsed();
    let reference = exec::execute(&CpuBackend::new(), &plan, &[&bytes])?;
    assert_eq!(out[0].data, reference[0].data, "backends disagree");
    assert_eq!(out[0].data.typed::<i64>(), values.as_slice());
    println!(
        "{}: decoded {} values ({} chunks, {} → {} bytes) in {elapsed:.2?}, identical to the CPU reference",
        backend.describe(),
        values.len(),
        plan.stages[0].jobs.len(),
        bytes.len(),
        values.len() * 8,
    );
    Ok(())
}
