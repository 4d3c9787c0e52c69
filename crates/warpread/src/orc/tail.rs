//! The ORC file tail: postscript, footer and metadata, read from the end of
//! the file and checked against its length before anything trusts them.

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

pub use crate::source::Source;

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
