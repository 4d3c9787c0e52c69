//! `warpread gsst compress|decompress IN OUT`.

use std::path::{Path, PathBuf};

use clap::Subcommand;

use super::Settings;
use crate::error::{Error, Location, Result};
use crate::gsst::{self, Frame, GsstLayout, GsstParams, TargetDevice};

#[derive(Debug, Subcommand)]
pub enum GsstCommand {
    /// Compresses a file's bytes (e.g. newline-separated strings) into one
    /// GSST frame (docs/gsst-format.md).
    Compress {
        /// The file to compress.
        input: PathBuf,
        /// The frame to write.
        output: PathBuf,
        /// Code layout: splits or coalesced.
        #[arg(long, default_value = "splits")]
        layout: GsstLayout,
        /// Uncompressed KiB per block (default: derived from the decoding
        /// device, an H100 when none is present).
        #[arg(long)]
        block_kib: Option<usize>,
        /// Splits per block (default: one per kernel thread).
        #[arg(long)]
        splits: Option<usize>,
    },
    /// Decompresses a GSST frame with the chosen backend.
    Decompress {
        /// The frame.
        input: PathBuf,
        /// The file to write.
        output: PathBuf,
    },
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| Error::io(path, e))
}

/// The device the defaults are derived for: the GPU the backend would use,
/// else an H100.
fn target(settings: &Settings) -> Result<TargetDevice> {
    Ok(settings
        .cuda_backend()?
        .map(|c| c.runtime().info().gsst_target())
        .unwrap_or(TargetDevice::H100))
}

pub fn run(cmd: GsstCommand, settings: &Settings) -> Result<()> {
    match cmd {
        GsstCommand::Compress {
            input,
            output,
            layout,
            block_kib,
            splits,
        } => {
            let data = read(&input)?;
            // The frames' splits follow the shape the kernels are compiled with.
            let mut params = GsstParams::for_shape(
                &target(settings)?,
                &settings.cuda.gsst_shape,
                data.len(),
                layout,
            );
            if let Some(k) = block_kib {
                params.block_bytes = k.max(1) << 10;
            }
            if let Some(s) = splits {
                params.splits = s.max(1);
            }
            let frame = gsst::compress(&data, &params);
            write(&output, &frame)?;
            eprintln!(
                "{} -> {} bytes (ratio {:.3}), {} blocks of {} KiB, layout {}",
                data.len(),
                frame.len(),
                data.len() as f64 / frame.len().max(1) as f64,
                data.len().div_ceil(params.effective_block_bytes()),
                params.effective_block_bytes() >> 10,
                layout.name()
            );
            Ok(())
        }
        GsstCommand::Decompress { input, output } => {
            let frame = read(&input)?;
            let backend = settings.select()?;
            let location = Location::file(&input);
            let layout = Frame::parse(&frame, &location)?.layout;
            let data = gsst::decompress_with(backend.as_ref(), &frame, &location)?;
            write(&output, data.as_bytes())?;
            eprintln!(
                "{} -> {} bytes, layout {}, on {}",
                frame.len(),
                data.len(),
                layout.name(),
                backend.describe()
            );
            Ok(())
        }
    }
}
