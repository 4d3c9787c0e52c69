//! Positional reads from a file, every range checked against its length:
//! the one way the format readers (ORC, Parquet) touch file bytes.

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, Location, Result};

/// Bytes one read task of [`Source::read_many`] copies: big ranges are
/// split so the cores share them evenly.
pub const READ_PIECE: usize = 4 << 20;

/// An open file: its path, length and random-access reader. Errors name
/// the file format (`ORC`, `Parquet`) given at opening.
#[derive(Debug)]
pub struct Source {
    path: PathBuf,
    file: File,
    len: u64,
    format: &'static str,
}

impl Source {
    /// Opens a file read as `format`.
    pub fn open(path: &Path, format: &'static str) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        Ok(Self {
            path: path.to_path_buf(),
            file,
            len,
            format,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn error(&self, at: &Location, message: String) -> Error {
        Error::Format {
            format: self.format,
            location: Box::new(at.clone()),
            message,
        }
    }

    /// Reads `len` bytes at `offset` into `buf` (appending), failing with
    /// the location when the range is outside the file.
    pub fn read_into(&self, offset: u64, len: u64, buf: &mut Vec<u8>, at: &Location) -> Result<()> {
        if offset.checked_add(len).is_none_or(|e| e > self.len) {
            return Err(self.error(
                &at.clone().at(offset),
                format!(
                    "range of {len} bytes at {offset} is outside the file of {} bytes",
                    self.len
                ),
            ));
        }
        let start = buf.len();
        buf.try_reserve(len as usize)
            .map_err(|_| self.error(at, format!("cannot allocate {len} bytes")))?;
        buf.resize(start + len as usize, 0);
        self.file
            .read_exact_at(&mut buf[start..], offset)
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Fills `dst` with the bytes at `offset`, failing with the location
    /// when the range is outside the file. Takes `&self`, so disjoint
    /// ranges can be read from several threads at once.
    pub fn read_exact_at(&self, offset: u64, dst: &mut [u8], at: &Location) -> Result<()> {
        let len = dst.len() as u64;
        if offset.checked_add(len).is_none_or(|e| e > self.len) {
            return Err(self.error(
                &at.clone().at(offset),
                format!(
                    "range of {len} bytes at {offset} is outside the file of {} bytes",
                    self.len
                ),
            ));
        }
        self.file
            .read_exact_at(dst, offset)
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Reads many ranges into one zero-padded buffer of `total` bytes, in
    /// pieces of at most [`READ_PIECE`] bytes on all cores: `reads` are
    /// (file offset, destination range, location for errors), destination
    /// ranges ascending and disjoint. Serial reads of a row group's chunks
    /// (and the zeroing of their buffer) were a tenth of a Parquet read.
    pub fn read_many(
        &self,
        reads: &[(u64, Range<usize>, &Location)],
        total: usize,
    ) -> Result<Vec<u8>> {
        let mut buf = crate::exec::copy::try_zeroed_vec::<u8>(total).map_err(|_| {
            self.error(
                &Location::file(&self.path),
                format!("cannot allocate {total} bytes for the read"),
            )
        })?;
        let mut tasks: Vec<(&mut [u8], u64, &Location)> = Vec::new();
        let mut rest: &mut [u8] = &mut buf;
        let mut consumed = 0usize;
        for (offset, dest, at) in reads {
            if dest.start < consumed || dest.end > total || dest.start > dest.end {
                return Err(self.error(
                    at,
                    format!("read into {dest:?} out of order or past {total} bytes"),
                ));
            }
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(dest.start - consumed);
            let (mut mine, tail) = tail.split_at_mut(dest.len());
            rest = tail;
            consumed = dest.end;
            let mut offset = *offset;
            while !mine.is_empty() {
                let n = mine.len().min(READ_PIECE);
                let (piece, more) = std::mem::take(&mut mine).split_at_mut(n);
                tasks.push((piece, offset, *at));
                offset += n as u64;
                mine = more;
            }
        }
        tasks
            .into_par_iter()
            .try_for_each(|(dst, offset, at)| self.read_exact_at(offset, dst, at))?;
        Ok(buf)
    }

    /// Reads a range into a new buffer.
    pub fn read(&self, offset: u64, len: u64, at: &Location) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        self.read_into(offset, len, &mut v, at)?;
        Ok(v)
    }
}
