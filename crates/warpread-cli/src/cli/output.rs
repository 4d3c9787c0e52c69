//! `cat`'s output file: disk blocks reserved ahead of the writes.
//!
//! Writing into a hole makes the file system reserve blocks page by page
//! as each write lands; blocks reserved in large steps beforehand
//! (`fallocate` with `FALLOC_FL_KEEP_SIZE`, so the file's length still
//! grows with the writes) leave a write only the copy into the page cache:
//! 10.1 GB went into a file on the GPU host in 2.39 s instead of 3.69 s
//! (benchmarks/streaming.md, "The sink"). What is reserved past the last
//! byte is given back by [`OutputFile::finish`]. Where the file system
//! (or the output, a pipe or a device) cannot reserve, the writes go on
//! without.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Bytes of blocks reserved at a time ahead of `write` calls.
const RESERVE_STEP: u64 = 256 << 20;

/// An output file written front to back, its blocks reserved ahead.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    path: PathBuf,
    /// Bytes written so far (the file's length).
    written: u64,
    /// End of the reserved blocks (past the length).
    reserved: u64,
    /// Bytes reserved at a time; 0: none (the file system cannot).
    step: u64,
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
            step: RESERVE_STEP,
        })
    }

    /// Gives back the blocks reserved past the last byte written and
    /// closes the file.
    pub fn finish(self) -> Result<()> {
        if self.reserved > self.written {
            // Setting the length the file already has frees the blocks
            // reserved beyond it.
            self.file
                .set_len(self.written)
                .map_err(|e| Error::io(&self.path, e))?;
        }
        Ok(())
    }

    /// Reserves blocks to cover `len` more bytes, a step at a time. A file
    /// system that cannot reserve turns reservation off: it is a speed-up,
    /// not a requirement.
    fn reserve(&mut self, len: usize) {
        let end = self.written + len as u64;
        while self.step > 0 && end > self.reserved {
            if reserve_past_end(&self.file, self.reserved, self.step).is_err() {
                self.step = 0;
                return;
            }
            self.reserved += self.step;
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

    #[test]
    fn reserved_blocks_past_the_end_are_given_back() {
        let dir = std::env::temp_dir().join(format!("warpread-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.bin");
        let mut out = OutputFile::create(&path).unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 4096) as u8).collect();
        out.write_all(&data[..100_000]).unwrap();
        out.write_all(&data[100_000..]).unwrap();
        let reserved = out.reserved;
        out.finish().unwrap();
        assert!(std::fs::read(&path).unwrap() == data, "output differs");
        #[cfg(target_os = "linux")]
        if reserved > 0 {
            // A step was reserved (ext4, xfs, btrfs) and its excess given
            // back: the file holds about its length in blocks, not a step.
            use std::os::unix::fs::MetadataExt;
            let blocks = std::fs::metadata(&path).unwrap().blocks() * 512;
            assert!(blocks < 1 << 20, "{blocks} bytes of blocks kept");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_output_that_cannot_reserve_is_written_without() {
        // A device (as `-o /dev/null` is) refuses fallocate.
        let mut out = OutputFile::create(Path::new("/dev/null")).unwrap();
        out.write_all(&[7u8; 10_000]).unwrap();
        assert_eq!((out.step, out.written), (0, 10_000));
        out.finish().unwrap();
    }
}
