//! `warpread info`.

use crate::error::Result;
use crate::exec::{self, BackendChoice};
use crate::gpu;

pub fn run(choice: BackendChoice) -> Result<()> {
    match gpu::probe() {
        Ok(()) => println!("CUDA: driver and NVRTC found"),
        Err(why) => println!("CUDA: unavailable: {why}"),
    }
    let backend = exec::select(choice)?;
    println!("backend ({choice}): {}", backend.describe());
    Ok(())
}
