//! The ORC file tail: postscript, footer and metadata, read from the end of
//! the file and checked against its length before anything trusts them.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use prost::Message;

use super::compression::{self, Compression, CompressionKind, MAX_BLOCK_SIZE};
use super::proto;
use crate::error::{Error, Location, Result};

/// ORC's default compression block size.
const DEFAULT_BLOCK_SIZE: u64 = 256 * 1024;
/// Bytes read from the end in one go: enough for most tails.
const TAIL_GUESS: u64 = 64 * 1024;
/// Largest footer or metadata section accepted (after decompression too):
/// larger claims come from corrupt or hostile files.
const MAX_TAIL_SECTION: u64 = 1 << 30;

/// An open ORC file: its path, length and random-access reader.
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

    /// Reads `len` bytes at `offset` into `buf` (appending), failing with
    /// the location when the range is outside the file.
    pub fn read_into(&self, offset: u64, len: u64, buf: &mut Vec<u8>, at: &Location) -> Result<()> {
        let end = offset.checked_add(len).filter(|&e| e <= self.len);
        if end.is_none() {
            return Err(Error::orc(
                &at.clone().at(offset),
                format!(
                    "range of {len} bytes at {offset} is outside the file of {} bytes",
                    self.len
                ),
            ));
        }
        let start = buf.len();
        buf.try_reserve(len as usize)
            .map_err(|_| Error::orc(at, format!("cannot allocate {len} bytes")))?;
        buf.resize(start + len as usize, 0);
        self.file
            .read_exact_at(&mut buf[start..], offset)
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Reads a range into a new buffer.
    pub fn read(&self, offset: u64, len: u64, at: &Location) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        self.read_into(offset, len, &mut v, at)?;
        Ok(v)
    }
}

/// Everything in the file tail.
#[derive(Debug, Clone)]
pub struct Tail {
    /// The postscript.
    pub postscript: proto::PostScript,
    /// The footer (schema, stripes, file statistics).
    pub footer: proto::Footer,
    /// Per-stripe statistics, when the file has them.
    pub metadata: Option<proto::Metadata>,
    /// The file's compression.
    pub compression: Compression,
}

fn decode<M: Message + Default>(bytes: &[u8], what: &str, at: &Location) -> Result<M> {
    M::decode(bytes).map_err(|e| Error::orc(at, format!("cannot parse the {what}: {e}")))
}

/// Reads and checks the tail of an ORC file.
pub fn read_tail(src: &Source) -> Result<Tail> {
    let at = Location::file(src.path());
    let len = src.len();
    if len < 4 {
        return Err(Error::orc(&at, format!("{len} bytes is too short for ORC")));
    }
    let guess = len.min(TAIL_GUESS);
    let mut end = src.read(len - guess, guess, &at)?;
    let ps_len = u64::from(*end.last().expect("len >= 4"));
    if ps_len + 1 > len || ps_len == 0 {
        return Err(Error::orc(
            &at,
            format!("postscript length {ps_len} is impossible"),
        ));
    }
    let ps_at = len - 1 - ps_len;
    let ps_bytes = &end[(guess - 1 - ps_len) as usize..(guess - 1) as usize];
    let postscript: proto::PostScript = decode(ps_bytes, "postscript", &at.clone().at(ps_at))?;
    if let Some(m) = &postscript.magic
        && m != "ORC"
    {
        return Err(Error::orc(
            &at,
            format!("postscript magic is {m:?}, not \"ORC\""),
        ));
    }
    let kind = CompressionKind::from_proto(postscript.compression.unwrap_or(0), &at)?;
    let block_size = postscript
        .compression_block_size
        .unwrap_or(DEFAULT_BLOCK_SIZE);
    if kind != CompressionKind::None && !(1..=MAX_BLOCK_SIZE).contains(&block_size) {
        return Err(Error::orc(
            &at,
            format!("compression block size {block_size} is out of range"),
        ));
    }
    let compression = Compression { kind, block_size };
    let footer_len = postscript.footer_length.unwrap_or(0);
    let meta_len = postscript.metadata_length.unwrap_or(0);
    let tail_len = footer_len
        .checked_add(meta_len)
        .and_then(|t| t.checked_add(ps_len + 1))
        .filter(|&t| t <= len && footer_len <= MAX_TAIL_SECTION && meta_len <= MAX_TAIL_SECTION)
        .ok_or_else(|| {
            Error::orc(
                &at,
                format!("footer ({footer_len} bytes) and metadata ({meta_len} bytes) do not fit the file"),
            )
        })?;
    if tail_len > guess {
        end = src.read(len - tail_len, tail_len, &at)?;
    }
    let base = len - end.len() as u64; // file offset of end[0]
    let slice = |off: u64, n: u64| &end[(off - base) as usize..(off - base + n) as usize];
    let footer_at = ps_at - footer_len;
    let footer_raw = compression::decompress_on_cpu(
        slice(footer_at, footer_len),
        &compression,
        &at.clone().with_stream("footer").at(footer_at),
    )?;
    let footer: proto::Footer = decode(&footer_raw, "footer", &at.clone().at(footer_at))?;
    let metadata = if meta_len > 0 {
        let meta_at = footer_at - meta_len;
        let raw = compression::decompress_on_cpu(
            slice(meta_at, meta_len),
            &compression,
            &at.clone().with_stream("metadata").at(meta_at),
        )?;
        // Statistics are an optimisation: a metadata section that does not
        // parse only disables pruning.
        match proto::Metadata::decode(raw.as_slice()) {
            Ok(m) => Some(m),
            Err(e) => {
                tracing::warn!("{at}: ignoring unreadable stripe statistics: {e}");
                None
            }
        }
    } else {
        None
    };
    Ok(Tail {
        postscript,
        footer,
        metadata,
        compression,
    })
}
