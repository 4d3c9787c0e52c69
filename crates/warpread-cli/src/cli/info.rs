//! `warpread info`.

use crate::error::Result;
use crate::gpu;

pub fn run(settings: &super::Settings) -> Result<()> {
    match gpu::probe() {
        Ok(()) => println!("CUDA: driver and NVRTC found"),
        Err(why) => println!("CUDA: unavailable: {why}"),
    }
    // Every device the choice opens (`--devices`), each with its context.
    let devices = settings.select_devices()?;
    for (i, b) in devices.iter().enumerate() {
        let device = b
            .device_ordinal()
            .map_or_else(String::new, |o| format!(", device {o}"));
        println!("backend ({}{device}): {}", settings.backend, b.describe());
        if devices.len() > 1 && i == 0 {
            println!("devices: {} (SQL scans spread over them)", devices.len());
        }
    }
    Ok(())
}
