//! `warpread info`.

use crate::error::Result;
use crate::gpu;

pub fn run(settings: &super::Settings) -> Result<()> {
    match gpu::probe() {
        Ok(()) => println!("CUDA: driver and NVRTC found"),
        Err(why) => println!("CUDA: unavailable: {why}"),
    }
    let backend = settings.select()?;
    println!("backend ({}): {}", settings.backend, backend.describe());
    Ok(())
}
