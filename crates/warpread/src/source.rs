//! Positional reads of a file's bytes, every range checked against its
//! length: the one way the format readers (ORC, Parquet) touch them.
//!
//! The bytes lie in a local file (read with `pread`), in memory
//! ([`bytes::Bytes`]), or in an object store: then the async readers
//! ([`crate::read::stream`]) fetch the ranges a step needs before it runs
//! and hand them to a [`Source::fetched`], whose reads copy from them. A
//! read of bytes not fetched fails and is remembered
//! ([`Source::take_misses`]), so the step can be run again once they are:
//! a short prefetch costs a retry, never a wrong byte, and the decoders
//! stay synchronous.

use std::collections::BTreeMap;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use bytes::Bytes;
use rayon::prelude::*;

use crate::error::{Error, Location, Result};

/// Bytes one read task of [`Source::read_many`] copies: big ranges are
/// split so the cores share them evenly.
pub const READ_PIECE: usize = 4 << 20;

/// An open file: its name, length and random-access bytes. Errors name
/// the file format (`ORC`, `Parquet`) given at opening.
#[derive(Debug)]
pub struct Source {
    path: PathBuf,
    bytes: Storage,
    len: u64,
    format: &'static str,
}

#[derive(Debug)]
enum Storage {
    File(File),
    Memory(Bytes),
    Fetched(std::sync::Arc<Fetched>),
}

/// Ranges of an object fetched so far, keyed by (start, end) with how many
/// reads handed each over (reads of one cached file may run side by side),
/// and the ranges reads asked for that were not among them.
#[derive(Debug, Default)]
struct Fetched {
    pieces: RwLock<BTreeMap<(u64, u64), (Bytes, usize)>>,
    misses: Mutex<Vec<Range<u64>>>,
    /// Misses ever recorded: a step compares it before and after it runs,
    /// since another step on the same source may take its misses.
    missed: std::sync::atomic::AtomicU64,
}

impl Fetched {
    /// Copies `dst.len()` bytes at `offset` from the pieces (which may
    /// chain), or records the miss.
    fn read(&self, mut offset: u64, mut dst: &mut [u8]) -> bool {
        let want = offset..offset + dst.len() as u64;
        let pieces = self.pieces.read().unwrap_or_else(|e| e.into_inner());
        while !dst.is_empty() {
            // The piece covering `offset` that reaches furthest.
            let piece = pieces
                .range(..=(offset, u64::MAX))
                .filter(|((start, end), _)| *start <= offset && offset < *end)
                .max_by_key(|((_, end), _)| *end);
            let Some(((start, end), (bytes, _))) = piece else {
                drop(pieces);
                self.misses
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(want);
                self.missed
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return false;
            };
            let from = (offset - start) as usize;
            let n = dst.len().min((end - offset) as usize);
            let (now, rest) = std::mem::take(&mut dst).split_at_mut(n);
            now.copy_from_slice(&bytes[from..from + n]);
            dst = rest;
            offset += n as u64;
        }
        true
    }
}

impl Source {
    /// Opens a file read as `format`.
    pub fn open(path: &Path, format: &'static str) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        Ok(Self {
            path: path.to_path_buf(),
            bytes: Storage::File(file),
            len,
            format,
        })
    }

    /// A file held in memory, named `name` in errors.
    pub fn from_bytes(name: impl Into<PathBuf>, bytes: Bytes, format: &'static str) -> Self {
        Self {
            path: name.into(),
            len: bytes.len() as u64,
            bytes: Storage::Memory(bytes),
            format,
        }
    }

    /// An object of `len` bytes whose ranges are fetched elsewhere and
    /// handed over with [`insert`](Self::insert) before the reads that
    /// need them.
    pub fn fetched(name: impl Into<PathBuf>, len: u64, format: &'static str) -> Self {
        Self {
            path: name.into(),
            len,
            bytes: Storage::Fetched(Default::default()),
            format,
        }
    }

    /// A second source over the same fetched ranges (and misses), for a
    /// caller that hands this one to a parser and must learn what it
    /// missed when the parser fails; `None` for a file or memory.
    pub fn twin(&self) -> Option<Source> {
        match &self.bytes {
            Storage::Fetched(f) => Some(Self {
                path: self.path.clone(),
                bytes: Storage::Fetched(f.clone()),
                len: self.len,
                format: self.format,
            }),
            _ => None,
        }
    }

    /// Hands over the fetched bytes at `offset` (a source of
    /// [`fetched`](Self::fetched) ranges; others ignore it).
    pub fn insert(&self, offset: u64, bytes: Bytes) {
        if let Storage::Fetched(f) = &self.bytes {
            let end = offset + bytes.len() as u64;
            f.pieces
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .entry((offset, end))
                .and_modify(|(_, n)| *n += 1)
                .or_insert((bytes, 1));
        }
    }

    /// Gives back the fetched ranges `ranges` handed over by
    /// [`insert`](Self::insert) (exactly those): the memory of a read
    /// step that has finished, dropped once every step that handed a
    /// range over has given it back.
    pub fn evict(&self, ranges: &[Range<u64>]) {
        if let Storage::Fetched(f) = &self.bytes {
            let mut pieces = f.pieces.write().unwrap_or_else(|e| e.into_inner());
            for r in ranges {
                let key = (r.start, r.end);
                if let Some((_, n)) = pieces.get_mut(&key) {
                    *n -= 1;
                    if *n == 0 {
                        pieces.remove(&key);
                    }
                }
            }
        }
    }

    /// Whether every range of `ranges` can be read; those that cannot (not
    /// fetched yet) are remembered as misses ([`take_misses`](Self::take_misses)),
    /// all at once, so that a step about to make many small reads fails
    /// once and is run again after one fetch rather than once per read.
    /// Always true for a file or memory.
    pub fn require(&self, ranges: &[Range<u64>]) -> bool {
        let Storage::Fetched(f) = &self.bytes else {
            return true;
        };
        let pieces = f.pieces.read().unwrap_or_else(|e| e.into_inner());
        let missing: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| r.start < r.end && r.end <= self.len)
            .filter(|r| {
                // Covered by one piece or a chain of touching ones.
                let mut at = r.start;
                while at < r.end {
                    let reach = pieces
                        .range(..=(at, u64::MAX))
                        .filter(|((s, e), _)| *s <= at && at < *e)
                        .map(|((_, e), _)| *e)
                        .max();
                    match reach {
                        Some(e) => at = e,
                        None => return true,
                    }
                }
                false
            })
            .cloned()
            .collect();
        drop(pieces);
        let all = missing.is_empty();
        f.missed
            .fetch_add(missing.len() as u64, std::sync::atomic::Ordering::Relaxed);
        f.misses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(missing);
        all
    }

    /// Bytes of fetched ranges held.
    pub fn fetched_bytes(&self) -> u64 {
        match &self.bytes {
            Storage::Fetched(f) => f
                .pieces
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .values()
                .map(|(b, _)| b.len() as u64)
                .sum(),
            _ => 0,
        }
    }

    /// The ranges reads asked for that had not been fetched, since the
    /// last call.
    pub fn take_misses(&self) -> Vec<Range<u64>> {
        match &self.bytes {
            Storage::Fetched(f) => {
                std::mem::take(&mut *f.misses.lock().unwrap_or_else(|e| e.into_inner()))
            }
            _ => Vec::new(),
        }
    }

    /// How many reads of ranges not fetched there have been so far (0 for
    /// a file or memory): a step that saw it grow while it ran may have
    /// failed for lack of bytes, even if another step took the misses.
    pub fn miss_count(&self) -> u64 {
        match &self.bytes {
            Storage::Fetched(f) => f.missed.load(std::sync::atomic::Ordering::Relaxed),
            _ => 0,
        }
    }

    /// Copies the bytes at `offset` into `dst`: the one place every read
    /// ends; the range is already checked against the length.
    fn copy_at(&self, offset: u64, dst: &mut [u8]) -> Result<()> {
        match &self.bytes {
            Storage::File(file) => file
                .read_exact_at(dst, offset)
                .map_err(|e| Error::io(&self.path, e)),
            Storage::Memory(b) => {
                let at = offset as usize;
                dst.copy_from_slice(&b[at..at + dst.len()]);
                Ok(())
            }
            Storage::Fetched(f) => {
                if f.read(offset, dst) {
                    Ok(())
                } else {
                    Err(Error::io(
                        &self.path,
                        std::io::Error::other(format!(
                            "bytes {offset}..{} were not fetched from the object store",
                            offset + dst.len() as u64
                        )),
                    ))
                }
            }
        }
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
        self.copy_at(offset, &mut buf[start..])
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
        self.copy_at(offset, dst)
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

    /// [`Source::read_many`] into a buffer of `backend`'s
    /// ([`Backend::input_buffer`](crate::exec::Backend::input_buffer): a
    /// pinned pool block on CUDA, which a stage uploads without staging).
    pub fn read_many_for(
        &self,
        backend: &dyn crate::exec::Backend,
        reads: &[(u64, Range<usize>, &Location)],
        total: usize,
    ) -> Result<crate::exec::InputBuffer> {
        let mut buf = self.input_buffer(backend, total)?;
        self.read_many_into(reads, &mut buf)?;
        Ok(buf)
    }

    /// `len` bytes from `backend` for reads of this file, or an error
    /// naming the file (sizes come from its metadata, which may lie).
    pub fn input_buffer(
        &self,
        backend: &dyn crate::exec::Backend,
        len: usize,
    ) -> Result<crate::exec::InputBuffer> {
        backend.input_buffer(len).map_err(|_| {
            self.error(
                &Location::file(&self.path),
                format!("cannot allocate {len} bytes for the read"),
            )
        })
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
#[allow(clippy::single_range_in_vec_init)] // byte ranges, not vectors
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

    #[test]
    fn fetched_ranges_chain_and_report_misses() {
        let bytes: Vec<u8> = (0..=255u8).collect();
        let at = Location::file("mem");
        let src = Source::fetched("obj", 256, "test");
        src.insert(10, Bytes::copy_from_slice(&bytes[10..20]));
        src.insert(20, Bytes::copy_from_slice(&bytes[20..40]));
        // A read across two adjacent pieces.
        assert_eq!(src.read(15, 20, &at).unwrap(), &bytes[15..35]);
        assert!(src.take_misses().is_empty());
        // A read past what was fetched fails and is remembered.
        let err = src.read(30, 20, &at).unwrap_err().to_string();
        assert!(err.contains("not fetched"), "{err}");
        assert_eq!(src.take_misses(), vec![30..50]);
        assert!(src.take_misses().is_empty());
        // Outside the object: a format error, not a miss.
        assert!(src.read(250, 10, &at).is_err());
        assert!(src.take_misses().is_empty());
        src.evict(&[10..20]);
        assert!(src.read(12, 2, &at).is_err());
        assert_eq!(src.read(20, 2, &at).unwrap(), &bytes[20..22]);
        let mem = Source::from_bytes("mem", Bytes::from(bytes.clone()), "test");
        assert_eq!(mem.read(250, 6, &at).unwrap(), &bytes[250..]);
        assert!(mem.read(251, 6, &at).is_err());
    }
}
