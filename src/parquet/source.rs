//! Positional reads from the file, every range checked against its length.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Result};

/// An open Parquet file.
#[derive(Debug)]
pub struct Source {
    path: PathBuf,
    file: File,
    len: u64,
}

impl Source {
    /// Opens a file.
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        Ok(Self {
            path: path.to_path_buf(),
            file,
            len,
        })
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// File length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Appends `len` bytes at `offset` to `buf`.
    pub fn read_into(&self, offset: u64, len: u64, buf: &mut Vec<u8>, at: &Location) -> Result<()> {
        if offset.checked_add(len).is_none_or(|e| e > self.len) {
            return Err(Error::parquet(
                &at.clone().at(offset),
                format!(
                    "range of {len} bytes at {offset} is outside the file of {} bytes",
                    self.len
                ),
            ));
        }
        let start = buf.len();
        buf.try_reserve(len as usize)
            .map_err(|_| Error::parquet(at, format!("cannot allocate {len} bytes")))?;
        buf.resize(start + len as usize, 0);
        self.file
            .read_exact_at(&mut buf[start..], offset)
            .map_err(|e| Error::io(&self.path, e))
    }
}
