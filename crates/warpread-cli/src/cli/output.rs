//! `cat`'s output file: disk blocks reserved ahead of the writes.
//!
//! Writing into a hole makes the file system reserve blocks page by page
//! as each write lands; blocks reserved in large steps beforehand
//! (`fallocate` with `FALLOC_FL_KEEP_SIZE`, so the file's length still
//! grows with the writes) leave a write mostly the copy into the page
//! cache. On the GPU host 10.1 GB went into one file in 2.39 s instead of
//! 3.69 s from a hot buffer, 2.56 s instead of 2.79 s from a cold one;
//! `cat` of lineitem SF 10 gained on CUDA, not measurably on the CPU
//! (benchmarks/streaming.md, "The sink"). Blocks reserved past the last
//! byte are given back when the file is finished or dropped. Where the
//! output (a pipe, a device) or its file system cannot reserve, the
//! writes go on without.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Bytes of blocks reserved at a time.
const RESERVE_STEP: u64 = 256 << 20;

/// An output file written front to back, its blocks reserved ahead.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    path: PathBuf,
    /// Bytes written so far (the file's length).
    written: u64,
    /// End of the blocks reserved so far.
    reserved: u64,
    /// End of the furthest reservation asked for: a failed one may still
    /// have reserved part of its range.
    asked: u64,
    /// Bytes reserved at a time; 0: none (the output cannot, or a
    /// reservation failed).
    step: u64,
    /// Whether the blocks past the end were given back already.
    finished: bool,
}

impl OutputFile {
    /// Creates (or truncates) `path`.
    pub fn create(path: &Path) -> Result<Self> {
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        Ok(Self {
            file,
            path: path.to_path_buf(),
            written: 0,
            reserved: 0,
            asked: 0,
            step: RESERVE_STEP,
            finished: false,
        })
    }

    /// Gives back the blocks reserved past the last byte written.
    pub fn finish(mut self) -> Result<()> {
        self.finished = true;
        self.give_back().map_err(|e| Error::io(&self.path, e))
    }

    /// Cuts a regular file to the bytes written when anything past them was
    /// asked for: setting the length it already has frees the blocks
    /// reserved beyond it.
    fn give_back(&self) -> io::Result<()> {
        if self.asked > self.written && self.file.metadata()?.is_file() {
            self.file.set_len(self.written)?;
        }
        Ok(())
    }

    /// Reserves blocks to cover `len` more bytes, a step at a time. A
    /// reservation that fails turns reservation off: it is a speed-up, not
    /// a requirement (a full disk fails the write itself).
    fn reserve(&mut self, len: usize) {
        let end = self.written + len as u64;
        while self.step > 0 && end > self.reserved {
            self.asked = self.reserved + self.step;
            if reserve_past_end(&self.file, self.reserved, self.step).is_err() {
                self.step = 0;
                return;
            }
            self.reserved = self.asked;
        }
    }
}

impl Drop for OutputFile {
    /// A file dropped unfinished (a failed `cat`) still gives its reserved
    /// blocks back, best effort: the error has been reported already.
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.give_back();
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.reserve(buf.len());
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Reserves `len` bytes of blocks from `offset` without changing the
/// file's length.
#[cfg(target_os = "linux")]
fn reserve_past_end(file: &File, offset: u64, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    // SAFETY: `file` owns an open descriptor for the call's duration, and
    // fallocate reads nothing from our memory.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, offset, len) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Elsewhere nothing is reserved.
#[cfg(not(target_os = "linux"))]
fn reserve_past_end(_file: &File, _offset: u64, _len: u64) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 4096) as u8).collect()
    }

    /// Bytes of blocks `path` holds.
    #[cfg(target_os = "linux")]
    fn blocks(path: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).unwrap().blocks() * 512
    }

    fn tempfile(tag: &str) -> (PathBuf, PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("warpread-output-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        (dir.join("out.bin"), dir)
    }

    #[test]
    fn reservations_run_ahead_of_the_writes_and_their_excess_is_given_back() {
        let (path, dir) = tempfile("finish");
        let mut out = OutputFile::create(&path).unwrap();
        let step = 64 << 10;
        out.step = step;
        let data = pattern(500_000);
        // Writes shorter and longer than a step.
        for piece in [&data[..100_000], &data[100_000..300_000], &data[300_000..]] {
            out.write_all(piece).unwrap();
            if out.step > 0 {
                assert_eq!(out.reserved % step, 0);
                assert!(out.written <= out.reserved && out.reserved < out.written + step);
            }
        }
        #[cfg(target_os = "linux")]
        let reserving = out.step > 0;
        out.finish().unwrap();
        assert!(std::fs::read(&path).unwrap() == data, "output differs");
        // On a file system that reserves (ext4, xfs, btrfs, tmpfs) the file
        // holds its length in blocks, not a step more.
        #[cfg(target_os = "linux")]
        if reserving {
            assert!(
                blocks(&path) < 500_000 + step,
                "{} bytes of blocks",
                blocks(&path)
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_file_dropped_unfinished_gives_its_reservation_back() {
        let (path, dir) = tempfile("drop");
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(&pattern(10_000)).unwrap();
        let reserving = out.step > 0;
        drop(out);
        assert_eq!(std::fs::read(&path).unwrap(), pattern(10_000));
        if reserving {
            assert!(blocks(&path) < 1 << 20, "{} bytes of blocks", blocks(&path));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    #[cfg(unix)]
    fn an_output_that_cannot_reserve_is_written_without() {
        // A device (as `-o /dev/null` is) refuses fallocate, and is not cut
        // at the end.
        let mut out = OutputFile::create(Path::new("/dev/null")).unwrap();
        out.write_all(&[7u8; 10_000]).unwrap();
        assert_eq!((out.step, out.written), (0, 10_000));
        out.finish().unwrap();
    }
}
