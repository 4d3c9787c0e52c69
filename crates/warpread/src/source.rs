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
        self.read_many_into(reads, &mut buf)?;
        Ok(buf)
    }

    /// [`Source::read_many`] into `buf` (its length is the total), whose
    /// bytes outside the destination ranges are zeroed: it may be a reused
    /// buffer holding anything.
    pub fn read_many_into(
        &self,
        reads: &[(u64, Range<usize>, &Location)],
        buf: &mut [u8],
    ) -> Result<()> {
        let total = buf.len();
        let mut tasks: Vec<(&mut [u8], u64, &Location)> = Vec::new();
        let mut gaps: Vec<&mut [u8]> = Vec::new();
        let mut rest: &mut [u8] = buf;
        let mut consumed = 0usize;
        for (offset, dest, at) in reads {
            if dest.start < consumed || dest.end > total || dest.start > dest.end {
                return Err(self.error(
                    at,
                    format!("read into {dest:?} out of order or past {total} bytes"),
                ));
            }
            let (gap, tail) = std::mem::take(&mut rest).split_at_mut(dest.start - consumed);
            gaps.push(gap);
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
        gaps.push(rest);
        gaps.into_iter().for_each(|g| g.fill(0));
        tasks
            .into_par_iter()
            .try_for_each(|(dst, offset, at)| self.read_exact_at(offset, dst, at))
    }

    /// Reads a range into a new buffer.
    pub fn read(&self, offset: u64, len: u64, at: &Location) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        self.read_into(offset, len, &mut v, at)?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_many_into_zeroes_what_it_does_not_read() {
        let dir = std::env::temp_dir().join(format!("warpread-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bytes.bin");
        let bytes: Vec<u8> = (1..=200u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let src = Source::open(&path, "test").unwrap();
        let at = Location::file(&path);
        // A reused buffer full of garbage: gaps and the tail must read 0.
        let mut buf = vec![0xEEu8; 40];
        src.read_many_into(&[(10, 2..7, &at), (100, 9..19, &at)], &mut buf)
            .unwrap();
        let mut want = vec![0u8; 40];
        want[2..7].copy_from_slice(&bytes[10..15]);
        want[9..19].copy_from_slice(&bytes[100..110]);
        assert_eq!(buf, want);
        assert_eq!(src.read_many(&[(10, 2..7, &at)], 8).unwrap(), want[..8]);
        // Out-of-order destinations are refused.
        let err = src.read_many_into(&[(0, 5..9, &at), (0, 2..4, &at)], &mut buf);
        assert!(err.is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
