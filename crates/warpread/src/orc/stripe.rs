//! Stripes: the footer's stripe directory, each stripe's footer, and where
//! each stream of each column lies in the file.

use std::collections::HashMap;
use std::ops::Range;

use prost::Message;

use super::compression::{self, Compression};
use super::proto;
use super::tail::Source;
use crate::error::{Error, Location, Result};

/// A stream's kind (`Stream.Kind` in the specification).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StreamKind {
    /// Null bitmap (boolean RLE).
    Present,
    /// The values.
    Data,
    /// Lengths of strings, lists, maps, or of dictionary entries.
    Length,
    /// Dictionary bytes.
    DictionaryData,
    /// Dictionary entry counts (old Hive; unused).
    DictionaryCount,
    /// Timestamp nanoseconds, decimal scales.
    Secondary,
    /// Row index.
    RowIndex,
    /// Bloom filter.
    BloomFilter,
    /// UTF-8 Bloom filter.
    BloomFilterUtf8,
    /// Encrypted index (column encryption).
    EncryptedIndex,
    /// Encrypted data (column encryption).
    EncryptedData,
}

impl StreamKind {
    fn from_proto(v: i32) -> Option<Self> {
        use StreamKind::*;
        Some(match v {
            0 => Present,
            1 => Data,
            2 => Length,
            3 => DictionaryData,
            4 => DictionaryCount,
            5 => Secondary,
            6 => RowIndex,
            7 => BloomFilter,
            8 => BloomFilterUtf8,
            9 => EncryptedIndex,
            10 => EncryptedData,
            _ => return None,
        })
    }

    /// The specification's name.
    pub fn name(self) -> &'static str {
        use StreamKind::*;
        match self {
            Present => "PRESENT",
            Data => "DATA",
            Length => "LENGTH",
            DictionaryData => "DICTIONARY_DATA",
            DictionaryCount => "DICTIONARY_COUNT",
            Secondary => "SECONDARY",
            RowIndex => "ROW_INDEX",
            BloomFilter => "BLOOM_FILTER",
            BloomFilterUtf8 => "BLOOM_FILTER_UTF8",
            EncryptedIndex => "ENCRYPTED_INDEX",
            EncryptedData => "ENCRYPTED_DATA",
        }
    }
}

/// A column's encoding in one stripe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// DIRECT (integer RLE v1).
    Direct,
    /// DICTIONARY (integer RLE v1).
    Dictionary,
    /// DIRECT_V2 (integer RLE v2).
    DirectV2,
    /// DICTIONARY_V2 (integer RLE v2).
    DictionaryV2,
    /// A kind this reader does not know; an error only if the column has
    /// values to decode (some writers put junk on empty columns).
    Unknown(i32),
}

impl Encoding {
    /// Whether integer streams use RLE v2.
    pub fn is_v2(self) -> bool {
        matches!(self, Self::DirectV2 | Self::DictionaryV2)
    }

    /// Whether the column is dictionary encoded.
    pub fn is_dictionary(self) -> bool {
        matches!(self, Self::Dictionary | Self::DictionaryV2)
    }

    /// The specification's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Direct => "DIRECT",
            Self::Dictionary => "DICTIONARY",
            Self::DirectV2 => "DIRECT_V2",
            Self::DictionaryV2 => "DICTIONARY_V2",
            Self::Unknown(_) => "UNKNOWN",
        }
    }
}

/// A stripe as the file footer describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripeInfo {
    /// Stripe number in the file.
    pub index: usize,
    /// File offset of the stripe.
    pub offset: u64,
    /// Bytes of index streams.
    pub index_length: u64,
    /// Bytes of data streams.
    pub data_length: u64,
    /// Bytes of the (compressed) stripe footer.
    pub footer_length: u64,
    /// Rows in the stripe.
    pub rows: u64,
    /// First row of the stripe in the file.
    pub first_row: u64,
}

/// One stream's place in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    /// Column id.
    pub column: u32,
    /// Kind.
    pub kind: StreamKind,
    /// File byte range.
    pub range: Range<u64>,
}

/// Where decoding of a stream starts when a stripe is read from a row
/// group on (`row_index` / `seek`): the stream's file range then begins at
/// a compression chunk (or, uncompressed, at the position itself), and
/// these are dropped from its front.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seek {
    /// Decompressed bytes before the position, in the range's first chunks.
    pub bytes: u64,
    /// Decoded values of the run at the position that belong to earlier
    /// row groups (booleans: bits).
    pub values: u64,
}

/// A stripe's footer, resolved: streams by column and kind, encodings.
///
/// A layout may also describe a *window* of the stripe, a run of its row
/// groups ([`window`](Self::window)): `info.rows` and `info.first_row` are
/// then the window's, the positioned streams' ranges are cut to it and
/// [`seek`](Self::seek) says what to drop from their front.
#[derive(Debug, Clone)]
pub struct StripeLayout {
    /// The stripe (its rows and first row are a window's, if one).
    pub info: StripeInfo,
    /// Every stream in file order.
    pub streams: Vec<StreamInfo>,
    by_key: HashMap<(u32, StreamKind), usize>,
    /// Encoding of each column id.
    pub encodings: Vec<(Encoding, u32)>,
    /// The writer's time zone (IANA name), if recorded.
    pub writer_timezone: Option<String>,
    seeks: HashMap<(u32, StreamKind), Seek>,
    /// The stripe's rows this window covers (`None`: the whole stripe).
    pub window: Option<Range<u64>>,
}

impl StripeLayout {
    /// The file range of a column's stream, if the stripe has it.
    pub fn stream(&self, column: u32, kind: StreamKind) -> Option<&StreamInfo> {
        self.by_key.get(&(column, kind)).map(|&i| &self.streams[i])
    }

    /// A column's encoding and dictionary size.
    pub fn encoding(&self, column: u32) -> (Encoding, u32) {
        self.encodings
            .get(column as usize)
            .copied()
            .unwrap_or((Encoding::Direct, 0))
    }

    /// What to drop from the front of a stream (nothing unless windowed).
    pub fn seek(&self, column: u32, kind: StreamKind) -> Seek {
        self.seeks.get(&(column, kind)).copied().unwrap_or_default()
    }

    /// The window of the whole stripe's `rows`, with the given streams
    /// cut to their file range and seek; other streams (dictionaries,
    /// unprojected columns) stay whole. `self` is the whole stripe.
    pub fn windowed(
        &self,
        rows: Range<u64>,
        cut: impl IntoIterator<Item = ((u32, StreamKind), Range<u64>, Seek)>,
    ) -> StripeLayout {
        debug_assert!(self.window.is_none(), "windows are cut from whole stripes");
        let mut w = self.clone();
        w.info.rows = rows.end - rows.start;
        w.info.first_row = self.info.first_row + rows.start;
        w.window = Some(rows);
        for (key, range, seek) in cut {
            if let Some(&i) = w.by_key.get(&key) {
                w.streams[i].range = range;
                w.seeks.insert(key, seek);
            }
        }
        w
    }
}

/// The footer's stripe directory, checked against the file.
pub fn stripes(footer: &proto::Footer, file_len: u64, at: &Location) -> Result<Vec<StripeInfo>> {
    let mut out = Vec::with_capacity(footer.stripes.len());
    let mut first_row = 0u64;
    for (index, s) in footer.stripes.iter().enumerate() {
        let info = StripeInfo {
            index,
            offset: s.offset.unwrap_or(0),
            index_length: s.index_length.unwrap_or(0),
            data_length: s.data_length.unwrap_or(0),
            footer_length: s.footer_length.unwrap_or(0),
            rows: s.number_of_rows.unwrap_or(0),
            first_row,
        };
        let end = info
            .offset
            .checked_add(info.index_length)
            .and_then(|e| e.checked_add(info.data_length))
            .and_then(|e| e.checked_add(info.footer_length));
        if end.is_none_or(|e| e > file_len) {
            return Err(Error::orc(
                &at.clone().with_stripe(index as u64),
                format!("stripe extends past the end of the file ({file_len} bytes)"),
            ));
        }
        first_row = first_row.checked_add(info.rows).ok_or_else(|| {
            Error::orc(&at.clone().with_stripe(index as u64), "row count overflows")
        })?;
        out.push(info);
    }
    Ok(out)
}

/// Reads and resolves a stripe's footer.
pub fn read_layout(
    src: &Source,
    info: &StripeInfo,
    compression: &Compression,
    columns: usize,
) -> Result<StripeLayout> {
    let at = Location::file(src.path()).with_stripe(info.index as u64);
    let footer_at = info.offset + info.index_length + info.data_length;
    let raw = src.read(footer_at, info.footer_length, &at)?;
    let bytes =
        compression::decompress_on_cpu(&raw, compression, &at.clone().with_stream("footer"))?;
    let footer = proto::StripeFooter::decode(bytes.as_slice())
        .map_err(|e| Error::orc(&at, format!("cannot parse the stripe footer: {e}")))?;
    let mut streams = Vec::with_capacity(footer.streams.len());
    let mut by_key = HashMap::new();
    let mut pos = info.offset;
    let end = footer_at;
    for s in &footer.streams {
        let len = s.length.unwrap_or(0);
        let range = pos..pos.checked_add(len).filter(|&e| e <= end).ok_or_else(|| {
            Error::orc(&at.clone().at(pos), "streams extend past the stripe's data")
        })?;
        pos = range.end;
        let Some(kind) = StreamKind::from_proto(s.kind.unwrap_or(-1)) else {
            // Unknown streams from newer writers are skipped, as ORC readers do.
            continue;
        };
        let column = s.column.unwrap_or(0);
        if (column as usize) < columns {
            by_key.insert((column, kind), streams.len());
        }
        streams.push(StreamInfo {
            column,
            kind,
            range,
        });
    }
    let encodings = footer
        .columns
        .iter()
        .map(|e| {
            let enc = match e.kind.unwrap_or(0) {
                0 => Encoding::Direct,
                1 => Encoding::Dictionary,
                2 => Encoding::DirectV2,
                3 => Encoding::DictionaryV2,
                k => Encoding::Unknown(k),
            };
            (enc, e.dictionary_size.unwrap_or(0))
        })
        .collect();
    Ok(StripeLayout {
        info: *info,
        streams,
        by_key,
        encodings,
        writer_timezone: footer.writer_timezone.filter(|s| !s.is_empty()),
        seeks: HashMap::new(),
        window: None,
    })
}
