//! Decode rounds over every page of a read group, each round one stage per
//! operation (`StageBatch`) across all row groups and columns:
//!
//! - A: repetition and definition levels (hybrid), dictionary pages
//!   (PLAIN fixed-width values, or byte-array lengths);
//! - B: page values, whose count (non-null entries) needs the levels:
//!   PLAIN, BYTE_STREAM_SPLIT, DELTA_BINARY_PACKED, fixed-width dictionary
//!   pages (indices decoded and gathered in one pass, `DictPage`),
//!   byte-array dictionary indices (hybrid), byte-array lengths; dictionary
//!   byte-array bytes;
//! - C: byte-array bytes (the lengths give the sizes).
//!
//! The result per column chunk is its levels and its non-null values end to
//! end ([`Dense`]). Byte-array dictionary gathers happen here on the CPU
//! (variable-length output).

use std::ops::Range;

use arrow::array::BooleanBufferBuilder;
use arrow::array::OffsetSizeTrait;
use arrow::buffer::{BooleanBuffer, Buffer, MutableBuffer, ScalarBuffer};
use arrow::datatypes::DataType;
use parquet::basic::Type as PhysicalType;
use rayon::prelude::*;

use super::byte_dict::ByteDict;
use super::decompress::{Page, Pages};
use super::offsets::{Offsets, push_lengths};
use super::page_header::PageKind;
use super::pages::RawChunk;
use crate::codecs::{parquet_dict, parquet_hybrid};
use crate::error::{Error, Location, Result};
use crate::exec::Backend;
use crate::exec::batch::{BatchOutput, RequestId, StageBatch};
use crate::plan::{ByteArrayEncoding, IntType, MAX_CHUNK_INPUT, ParquetOp, StageOp};
use crate::read::ReadTuning;

mod byte_dicts;
use byte_dicts::{run_byte_dicts, staged_byte_dicts};

const PLAIN: i32 = 0;
const PLAIN_DICTIONARY: i32 = 2;
const RLE: i32 = 3;
const BIT_PACKED: i32 = 4;
const DELTA_BINARY_PACKED: i32 = 5;
const DELTA_LENGTH_BYTE_ARRAY: i32 = 6;
const DELTA_BYTE_ARRAY: i32 = 7;
const RLE_DICTIONARY: i32 = 8;
const BYTE_STREAM_SPLIT: i32 = 9;

/// The name of an encoding number, for messages.
pub fn encoding_name(e: i32) -> String {
    match e {
        PLAIN => "PLAIN".into(),
        PLAIN_DICTIONARY => "PLAIN_DICTIONARY".into(),
        RLE => "RLE".into(),
        BIT_PACKED => "BIT_PACKED".into(),
        DELTA_BINARY_PACKED => "DELTA_BINARY_PACKED".into(),
        DELTA_LENGTH_BYTE_ARRAY => "DELTA_LENGTH_BYTE_ARRAY".into(),
        DELTA_BYTE_ARRAY => "DELTA_BYTE_ARRAY".into(),
        RLE_DICTIONARY => "RLE_DICTIONARY".into(),
        BYTE_STREAM_SPLIT => "BYTE_STREAM_SPLIT".into(),
        e => format!("encoding #{e}"),
    }
}

/// What the decoder needs to know about a leaf column.
#[derive(Debug, Clone, Copy)]
pub struct LeafInfo {
    /// Physical type.
    pub physical: PhysicalType,
    /// Bytes per value for fixed-width types.
    pub width: usize,
    /// Highest definition level.
    pub max_def: i16,
    /// Highest repetition level.
    pub max_rep: i16,
    /// INT32 or INT64 values read as Arrow `Decimal128`: a chunk whose data
    /// pages are all dictionary-encoded gathers them already sign-extended
    /// to 16 bytes (the dictionary is widened, not the values), so the
    /// gather's output is the Arrow buffer as it is.
    pub decimal128: bool,
    /// The caller reads this chunk's values only on the device (an
    /// aggregate over device-resident columns) and its Arrow type shares
    /// the decoded values as they are: when every data page is
    /// dictionary-encoded, the gathers' outputs stay on the device alone
    /// (see [`ReadOptions::device_values`](crate::read::ReadOptions::device_values)).
    pub device_values: bool,
    /// Byte-array values read as an Arrow type of 32-bit offsets (`Utf8`,
    /// `Binary`): a chunk whose values pass 2 GiB is an error, found before
    /// the values are gathered.
    pub offsets32: bool,
}

impl LeafInfo {
    /// From a column descriptor.
    pub fn new(c: &parquet::schema::types::ColumnDescriptor) -> Self {
        let physical = c.physical_type();
        let width = match physical {
            PhysicalType::BOOLEAN => 1,
            PhysicalType::INT32 | PhysicalType::FLOAT => 4,
            PhysicalType::INT64 | PhysicalType::DOUBLE => 8,
            PhysicalType::INT96 => 12,
            PhysicalType::FIXED_LEN_BYTE_ARRAY => c.type_length().max(0) as usize,
            PhysicalType::BYTE_ARRAY => 0,
        };
        Self {
            physical,
            width,
            max_def: c.max_def_level(),
            max_rep: c.max_rep_level(),
            decimal128: false,
            device_values: false,
            offsets32: false,
        }
    }

    /// The same, for values read as Arrow type `dt`.
    pub fn for_type(c: &parquet::schema::types::ColumnDescriptor, dt: &DataType) -> Self {
        let mut info = Self::new(c);
        info.decimal128 = matches!(dt, DataType::Decimal128(..))
            && matches!(info.physical, PhysicalType::INT32 | PhysicalType::INT64);
        info.offsets32 = matches!(dt, DataType::Utf8 | DataType::Binary);
        info
    }

    fn is_bytes(&self) -> bool {
        self.physical == PhysicalType::BYTE_ARRAY
    }

    /// Whether values read as `dt` are the decoded values as they are (the
    /// Arrow buffer is the gather's output, no host pass over it): flat
    /// required columns of these types only.
    pub fn shares_values(&self, dt: &DataType) -> bool {
        let p = self.physical;
        self.max_def == 0
            && self.max_rep == 0
            && match dt {
                DataType::Int32 | DataType::Date32 | DataType::Decimal32(..) => {
                    p == PhysicalType::INT32
                }
                DataType::Int64 | DataType::Decimal64(..) => p == PhysicalType::INT64,
                DataType::Float32 => p == PhysicalType::FLOAT,
                DataType::Float64 => p == PhysicalType::DOUBLE,
                // Widened by the gather (checked where it is decided).
                DataType::Decimal128(..) => self.decimal128,
                DataType::Utf8 | DataType::LargeUtf8 => p == PhysicalType::BYTE_ARRAY,
                _ => false,
            }
    }
}

/// Non-null values of a column chunk, end to end.
#[derive(Debug)]
pub enum Dense {
    /// Booleans, one byte (0 or 1) each.
    Bool(Vec<u8>),
    /// Fixed-width values of `width` bytes, little-endian as stored.
    Fixed {
        /// Bytes per value.
        width: usize,
        /// The values, in an Arrow buffer (element-aligned) so that values
        /// whose Arrow type has the stored width become an array without a
        /// copy; often a slice of a stage's output.
        bytes: Buffer,
    },
    /// Variable-length values.
    Bytes {
        /// `n + 1` offsets into `data`.
        offsets: Offsets,
        /// The bytes.
        data: Buffer,
        /// Known to be valid UTF-8 value by value (gathered from
        /// dictionaries whose entries were checked, or bytes the data
        /// stage found all ASCII); `false`: unknown.
        utf8: bool,
    },
}

impl Dense {
    fn empty(info: &LeafInfo) -> Self {
        match info.physical {
            PhysicalType::BOOLEAN => Dense::Bool(Vec::new()),
            // `MutableBuffer::new(0)`, not an empty Vec: its dangling
            // pointer is aligned for every native type, which Arrow asserts.
            PhysicalType::BYTE_ARRAY => Dense::Bytes {
                offsets: Offsets::Small(vec![0]),
                data: Buffer::from(MutableBuffer::new(0)),
                utf8: true,
            },
            _ => Dense::Fixed {
                width: info.width,
                bytes: Buffer::from(MutableBuffer::new(0)),
            },
        }
    }

    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        match self {
            Dense::Bool(v) => v.len(),
            Dense::Fixed { width, bytes } => bytes.len() / (*width).max(1),
            Dense::Bytes { offsets, .. } => offsets.values(),
        }
    }
}

/// A decoded column chunk.
#[derive(Debug)]
pub struct Leaf {
    /// Definition levels; empty when every entry is at [`Leaf::max_def`]
    /// (a column whose max is 0, or one whose pages all say so by a single
    /// run: the taxi table's nullable columns without nulls held 2 bytes
    /// per row of such levels, filled and read back for nothing).
    pub def: Vec<u16>,
    /// The definition levels as bits (set where the level is 1), in place
    /// of `def`, for a column whose highest level is 1 with levels below
    /// it: decoded on the host straight from the pages (see
    /// [`parquet_hybrid::decode_bits`]). `def` is then empty.
    pub valid: Option<BooleanBuffer>,
    /// The column's highest definition level.
    pub max_def: u16,
    /// Repetition levels (empty when the column's max is 0).
    pub rep: Vec<u16>,
    /// Level entries (rows × repetitions).
    pub entries: usize,
    /// Non-null values.
    pub values: Dense,
}

impl Leaf {
    /// The definition level of entry `i` (`max_def` where none are kept).
    pub fn def_at(&self, i: usize) -> u16 {
        match &self.valid {
            Some(v) => u16::from(v.value(i)),
            None => self.def.get(i).copied().unwrap_or(self.max_def),
        }
    }

    /// Whether every entry is at the highest definition level (no levels
    /// are kept).
    pub fn all_defined(&self) -> bool {
        self.def.is_empty() && self.valid.is_none()
    }
}

fn bit_width(max: i16) -> u8 {
    (16 - (max.max(0) as u16).leading_zeros()) as u8
}

/// Per data page: where its parts are and what was asked for them.
struct Work {
    chunk: usize,
    page: usize,
    values: Range<usize>,
    entries: usize,
    rep: Option<RequestId>,
    def: Option<RequestId>,
    /// Where the page's definition levels lie in the pages buffer, when
    /// the host decodes them into bits ([`Leaf::valid`]).
    def_bits: Option<Range<usize>>,
    /// The one definition level of every entry, when the page's levels are
    /// a single RLE run (no nulls, or all null): no stage decodes them.
    def_uniform: Option<u32>,
    /// Non-null values, known after round A.
    n: usize,
    first: Option<First>,
    second: Option<Second>,
}

enum First {
    /// Output already in final form (fixed width or bool bytes).
    Direct(RequestId),
    /// RLE booleans: hybrid u32 output.
    BoolRle(RequestId),
    /// Dictionary indices (byte-array dictionaries).
    Indices(RequestId),
    /// A fixed-width dictionary page, gathered (`ParquetOp::DictPage`):
    /// which output (`DP_IN_PLACE` or `DP_GATHERED`) and request; `None`
    /// until its request is made (after the round's other requests).
    DictPage(Option<(usize, RequestId)>),
    /// Byte-array lengths (BYTE_ARRAY, or FLBA under DELTA_BYTE_ARRAY).
    Lengths(RequestId, ByteArrayEncoding),
    /// A page of a byte-array chunk gathered whole by the byte dictionary
    /// stages ([`byte_dicts`]).
    ByteDict,
}

enum Second {
    Data(RequestId),
}

enum Dict<'a> {
    /// A slice of the dictionary stage's output (copying every chunk's
    /// dictionary, up to 1 MiB each, cost tens of ms per GiB group), or
    /// entries widened to 16 bytes.
    Fixed(std::borrow::Cow<'a, [u8]>),
    Bytes(ByteDict<'a>),
    /// A byte-array dictionary whose entries all have one length (flags,
    /// codes): its entries end to end are a fixed-width dictionary, so its
    /// pages are gathered as `DictPage` jobs of that width, on the device
    /// where there is one, and the values' offsets are a progression.
    OneLength(ByteDict<'a>),
}

fn err(p: &Page, msg: impl Into<String>) -> Error {
    Error::parquet(&p.location, msg)
}

fn u32_at(buf: &[u8], at: usize, p: &Page) -> Result<usize> {
    buf.get(at..at + 4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
        .ok_or_else(|| err(p, "level length prefix runs past the page"))
}

/// The next `len` bytes of a page body.
fn section(pos: &mut usize, end: usize, len: usize, p: &Page) -> Result<Range<usize>> {
    if end - *pos < len {
        return Err(err(p, "levels run past the page"));
    }
    *pos += len;
    Ok(*pos - len..*pos)
}

/// Per page of `chunk`, whether decoding reads its decompressed bytes on
/// the host; where not, a device that holds the decompressed pages may keep
/// them there alone (`decompress::run`): every stage of such a page reads
/// it in place. This must agree with every host read of [`run`]: levels
/// (their lengths, uniform runs, splits), boolean RLE lengths, byte-array
/// dictionary indices' bit width (and splits), widened decimal dictionary
/// pages (built on the host) all read pages; fixed-width values, their
/// dictionary pages (gathered in place, the job reading the bit width) and
/// byte-array values do not. Data pages v2, and chunks whose dictionary
/// pages are gathered from a host buffer (over [`MAX_CHUNK_INPUT`], or with
/// a dictionary page after the first page), are always read.
pub fn host_reads_pages(info: &LeafInfo, chunk: &RawChunk) -> Vec<bool> {
    // A dictionary page anywhere but first (a malformed chunk) sends its
    // chunk's dictionary-encoded pages through a host buffer.
    let dictionary_first = chunk
        .pages
        .iter()
        .skip(1)
        .all(|p| p.header.kind != PageKind::Dictionary);
    let all = info.max_def > 0
        || info.max_rep > 0
        || info.physical == PhysicalType::BOOLEAN
        || info.decimal128
        || !dictionary_first
        || chunk
            .pages
            .iter()
            .map(|p| p.header.uncompressed_size.max(0) as u64)
            .sum::<u64>()
            > MAX_CHUNK_INPUT / 2;
    chunk
        .pages
        .iter()
        .map(|p| {
            let h = &p.header;
            all || match h.kind {
                PageKind::Dictionary => false,
                PageKind::Data => {
                    info.is_bytes() && matches!(h.encoding, PLAIN_DICTIONARY | RLE_DICTIONARY)
                }
                _ => true,
            }
        })
        .collect()
}

/// The chunk's bits so far, begun where needed with the `implicit`
/// entries before them (all defined), `entries` long in the end.
fn bits_after<'b>(
    bits: &'b mut Option<BooleanBufferBuilder>,
    implicit: &mut usize,
    entries: usize,
) -> &'b mut BooleanBufferBuilder {
    bits.get_or_insert_with(|| {
        let mut b = BooleanBufferBuilder::new(entries);
        b.append_n(std::mem::take(implicit), true);
        b
    })
}

/// A v1 page's levels: a 4-byte length, then the hybrid stream.
fn v1_levels(
    buf: &[u8],
    pos: &mut usize,
    end: usize,
    max: i16,
    enc: i32,
    p: &Page,
) -> Result<Range<usize>> {
    if max == 0 {
        return Ok(0..0);
    }
    if enc != RLE {
        return Err(Error::Unsupported(format!(
            "{}: {} level encoding",
            p.location,
            encoding_name(enc)
        )));
    }
    if end - *pos < 4 {
        return Err(err(p, "level length prefix runs past the page"));
    }
    let len = u32_at(buf, *pos, p)?;
    *pos += 4;
    section(pos, end, len, p)
}

/// Decodes every chunk of `pages`; `infos[i]` describes chunk `i`; the
/// tuning's device switches apply.
pub fn run(
    pages: &Pages,
    infos: &[LeafInfo],
    backend: &dyn Backend,
    tuning: &ReadTuning,
) -> Result<Vec<Leaf>> {
    let buf = &pages.buf;
    let mut a = StageBatch::new(buf);
    split_hybrids(&mut a);
    let mut works: Vec<Work> = Vec::new();
    let mut dict_req: Vec<Option<(RequestId, usize, Location)>> = vec![None; infos.len()];
    for (c, (chunk, info)) in pages.chunks.iter().zip(infos).enumerate() {
        for (i, p) in chunk.iter().enumerate() {
            let h = &p.header;
            match h.kind {
                PageKind::Dictionary => {
                    if !matches!(h.encoding, PLAIN | PLAIN_DICTIONARY) {
                        return Err(Error::Unsupported(format!(
                            "{}: dictionary page encoding {}",
                            p.location,
                            encoding_name(h.encoding)
                        )));
                    }
                    let n = h.num_values as u64;
                    let op = if info.is_bytes() {
                        StageOp::Parquet(ParquetOp::ByteArrayLengths(ByteArrayEncoding::Plain))
                    } else if info.physical == PhysicalType::BOOLEAN {
                        StageOp::Parquet(ParquetOp::PlainBool)
                    } else {
                        StageOp::Parquet(ParquetOp::PlainFixed {
                            width: info.width as u32,
                        })
                    };
                    let id = a.add(op, p.data.clone(), n, p.location.clone());
                    dict_req[c] = Some((id, n as usize, p.location.clone()));
                }
                PageKind::Data | PageKind::DataV2 => {
                    let entries = h.num_values as usize;
                    let mut pos = p.data.start;
                    let end = p.data.end;
                    let (rep_r, def_r) = if h.kind == PageKind::DataV2 {
                        let r = section(&mut pos, end, h.rep_levels_len.max(0) as usize, p)?;
                        let d = section(&mut pos, end, h.def_levels_len.max(0) as usize, p)?;
                        (r, d)
                    } else {
                        let r =
                            v1_levels(buf, &mut pos, end, info.max_rep, h.rep_level_encoding, p)?;
                        let d =
                            v1_levels(buf, &mut pos, end, info.max_def, h.def_level_encoding, p)?;
                        (r, d)
                    };
                    let hybrid = |max: i16| {
                        StageOp::Parquet(ParquetOp::Hybrid {
                            bit_width: bit_width(max),
                        })
                    };
                    let rep = (info.max_rep > 0).then(|| {
                        a.add(
                            hybrid(info.max_rep),
                            rep_r,
                            entries as u64,
                            p.location.clone(),
                        )
                    });
                    let def_uniform = (info.max_def > 0)
                        .then(|| {
                            parquet_hybrid::uniform(
                                bit_width(info.max_def),
                                &buf[def_r.clone()],
                                entries,
                            )
                        })
                        .flatten();
                    // Levels of 0 or 1 are the validity bits themselves.
                    // (A page of no entries has none to give.)
                    let def_bits = (info.max_def == 1 && def_uniform.is_none() && entries > 0)
                        .then(|| def_r.clone());
                    let def = (info.max_def > 1 && def_uniform.is_none()).then(|| {
                        a.add(
                            hybrid(info.max_def),
                            def_r,
                            entries as u64,
                            p.location.clone(),
                        )
                    });
                    works.push(Work {
                        chunk: c,
                        page: i,
                        values: pos..end,
                        entries,
                        rep,
                        def,
                        def_bits,
                        def_uniform,
                        n: entries,
                        first: None,
                        second: None,
                    });
                }
                _ => {}
            }
        }
    }
    let span = crate::trace::span("pq.round_a");
    let out_a = a.run(backend)?;
    drop(span);
    let span = crate::trace::span("pq.levels");

    // Levels into the leaves, values counted: one task per column chunk.
    let mut leaves: Vec<Leaf> = infos
        .iter()
        .map(|info| Leaf {
            def: Vec::new(),
            valid: None,
            max_def: info.max_def.max(0) as u16,
            rep: Vec::new(),
            entries: 0,
            values: Dense::empty(info),
        })
        .collect();
    per_chunk(&mut works, infos.len())
        .into_par_iter()
        .zip(leaves.par_iter_mut())
        .zip(infos.par_iter())
        .try_for_each(|((ws, leaf), info)| {
            let entries: usize = ws.iter().map(|w| w.entries).sum();
            leaf.entries = entries;
            if info.max_rep > 0 {
                leaf.rep.reserve_exact(entries);
            }
            // Entries so far at the max level, not written out while `def`
            // is empty (see `Leaf::def`).
            let mut implicit = 0usize;
            let max_def = info.max_def.max(0) as u16;
            let materialize = |def: &mut Vec<u16>, implicit: &mut usize| {
                if def.is_empty() {
                    def.reserve_exact(entries);
                    def.resize(*implicit, max_def);
                    *implicit = 0;
                }
            };
            let mut bits: Option<BooleanBufferBuilder> = None;
            for w in ws.iter_mut() {
                let p = &pages.chunks[w.chunk][w.page];
                if let Some(id) = w.rep {
                    let levels = out_a.typed::<u32>(id);
                    if levels.iter().any(|&l| l > info.max_rep as u32) {
                        return Err(err(p, "repetition level above the column's maximum"));
                    }
                    if leaf.rep.is_empty() && levels.first().is_some_and(|&l| l != 0) {
                        return Err(err(p, "column chunk starts inside a record"));
                    }
                    leaf.rep.extend(levels.iter().map(|&l| l as u16));
                }
                if let Some(level) = w.def_uniform {
                    if level > info.max_def as u32 {
                        return Err(err(p, "definition level above the column's maximum"));
                    }
                    w.n = if level == info.max_def as u32 {
                        w.entries
                    } else {
                        0
                    };
                    if level == u32::from(max_def) && leaf.def.is_empty() && bits.is_none() {
                        implicit += w.entries;
                    } else if max_def == 1 {
                        bits_after(&mut bits, &mut implicit, entries)
                            .append_n(w.entries, level == 1);
                    } else {
                        materialize(&mut leaf.def, &mut implicit);
                        let new_len = leaf.def.len() + w.entries;
                        leaf.def.resize(new_len, level as u16);
                    }
                }
                if let Some(r) = &w.def_bits {
                    let b = bits_after(&mut bits, &mut implicit, entries);
                    w.n = parquet_hybrid::decode_bits(&buf[r.clone()], w.entries, b).map_err(
                        |status| Error::Corrupt {
                            location: Box::new(
                                p.location.clone().with_chunk(0, u64::from(status.detail)),
                            ),
                            status,
                        },
                    )?;
                }
                if let Some(id) = w.def {
                    materialize(&mut leaf.def, &mut implicit);
                    let levels = out_a.typed::<u32>(id);
                    let max = info.max_def as u32;
                    // One pass over the levels: checked, counted and kept
                    // (6.4 against 11 ms for 6M levels on the dev box).
                    let (mut over, mut full) = (false, 0usize);
                    leaf.def.extend(levels.iter().map(|&l| {
                        over |= l > max;
                        full += usize::from(l == max);
                        l as u16
                    }));
                    if over {
                        return Err(err(p, "definition level above the column's maximum"));
                    }
                    w.n = full;
                }
            }
            leaf.valid = bits.map(|mut b| b.finish());
            Ok(())
        })?;

    drop(span);
    let span = crate::trace::span("pq.plan_b");
    // Dictionaries: fixed ones are final; byte-array ones need their bytes.
    let mut b = StageBatch::new(buf);
    split_hybrids(&mut b);
    let mut dicts: Vec<Option<Dict>> = (0..infos.len()).map(|_| None).collect();
    let mut dict_data: Vec<Option<(RequestId, RequestId)>> = vec![None; infos.len()];
    for (c, req) in dict_req.iter().enumerate() {
        let Some((id, _, at)) = req else { continue };
        if infos[c].is_bytes() {
            let total: u64 = out_a.typed::<u32>(*id).iter().map(|&l| u64::from(l)).sum();
            let page = &pages.chunks[c][0];
            let did = b.add(
                StageOp::Parquet(ParquetOp::ByteArrayData(ByteArrayEncoding::Plain)),
                page.data.clone(),
                total,
                at.clone(),
            );
            dict_data[c] = Some((did, *id));
        } else {
            dicts[c] = Some(Dict::Fixed(out_a.bytes(*id).into()));
        }
    }

    // Where each fixed dictionary lies in the pages buffer, as its page
    // stored it: dictionary pages are gathered from there in place.
    let mut raw_dicts: Vec<Option<Range<usize>>> = (0..infos.len())
        .map(|c| {
            let Some(Dict::Fixed(entries)) = &dicts[c] else {
                return None;
            };
            // Booleans decode from bits: their entries are not the bytes.
            if infos[c].physical == PhysicalType::BOOLEAN {
                return None;
            }
            let page = pages.chunks[c]
                .iter()
                .find(|p| p.header.kind == PageKind::Dictionary)?;
            // `PlainFixed` copies the stored entries as they are, so the
            // decoded dictionary is those bytes (not compared again here:
            // a pass over every dictionary of the read).
            let r = page.data.start..page.data.start + entries.len();
            debug_assert!(
                // Pages on the device may be missing from the host buffer.
                r.end > page.data.end
                    || backend.holds_on_device(buf)
                    || buf[r.clone()] == entries[..]
            );
            (r.end <= page.data.end).then_some(r)
        })
        .collect();

    // Decimal128 chunks read through their dictionaries only: the entries
    // are widened here, and from now on the chunk's values are 16 bytes.
    let mut eff = infos.to_vec();
    for (c, (info, dict)) in eff.iter_mut().zip(dicts.iter_mut()).enumerate() {
        let Some(Dict::Fixed(entries)) = dict else {
            continue;
        };
        if !(info.decimal128 && matches!(info.width, 4 | 8) && tuning.widen_decimals) {
            continue;
        }
        let mut data = pages.chunks[c]
            .iter()
            .filter(|p| matches!(p.header.kind, PageKind::Data | PageKind::DataV2))
            .peekable();
        if data.peek().is_some()
            && data.all(|p| matches!(p.header.encoding, PLAIN_DICTIONARY | RLE_DICTIONARY))
        {
            *entries = widen_to_16(entries, info.width).into();
            info.width = 16;
            raw_dicts[c] = None;
        }
    }

    // Byte-array chunks whose data pages are all dictionary-encoded may be
    // gathered by stages, their indices never decoded apart.
    let mut staged = staged_byte_dicts(&works, infos, &dict_data, pages, backend, tuning);
    let one_len = one_length_dicts(&works, infos, &dict_data, &out_a, pages);
    for (c, l) in one_len.iter().enumerate() {
        if let Some(l) = l {
            staged[c] = false;
            eff[c].width = *l;
        }
    }
    let infos = &eff[..];

    // Round B: values (or indices, or lengths); fixed-width dictionary pages
    // as whole pages (their inputs assembled below).
    let mut dict_pages: Vec<DictPageRef> = Vec::new();
    for (wi, w) in works.iter_mut().enumerate() {
        let info = &infos[w.chunk];
        let p = &pages.chunks[w.chunk][w.page];
        let enc = p.header.encoding;
        let n = w.n as u64;
        let at = p.location.clone();
        let vals = w.values.clone();
        let pq = |op| StageOp::Parquet(op);
        use PhysicalType as T;
        w.first = Some(match (info.physical, enc) {
            (T::BOOLEAN, PLAIN) => First::Direct(b.add(pq(ParquetOp::PlainBool), vals, n, at)),
            (T::BOOLEAN, RLE) => {
                let len = if n == 0 && vals.is_empty() {
                    0
                } else {
                    u32_at(buf, vals.start, p)?
                };
                let start = (vals.start + 4).min(vals.end);
                let r = start..(start + len).min(vals.end);
                First::BoolRle(b.add(pq(ParquetOp::Hybrid { bit_width: 1 }), r, n, at))
            }
            (_, PLAIN_DICTIONARY | RLE_DICTIONARY) => {
                if dicts[w.chunk].is_none() && dict_data[w.chunk].is_none() {
                    return Err(err(p, "dictionary-encoded page without a dictionary page"));
                }
                if staged[w.chunk] {
                    First::ByteDict
                } else if matches!(&dicts[w.chunk], Some(Dict::Fixed(_)))
                    || one_len[w.chunk].is_some()
                {
                    // The job reads the bit width itself (and reports a bad
                    // one): the page's bytes may lie on the device alone
                    // (`host_reads_pages`).
                    dict_pages.push((wi, vals));
                    First::DictPage(None)
                } else {
                    let (bw, r) = match buf[vals.clone()].first() {
                        Some(&bw) => (bw, vals.start + 1..vals.end),
                        None if n == 0 => (0, vals.clone()),
                        None => {
                            return Err(err(p, "dictionary page data without a bit width"));
                        }
                    };
                    if bw > 32 {
                        return Err(err(p, format!("dictionary index bit width {bw}")));
                    }
                    First::Indices(b.add(pq(ParquetOp::Hybrid { bit_width: bw }), r, n, at))
                }
            }
            (T::BYTE_ARRAY, PLAIN | DELTA_LENGTH_BYTE_ARRAY | DELTA_BYTE_ARRAY)
            | (T::FIXED_LEN_BYTE_ARRAY, DELTA_BYTE_ARRAY) => {
                let e = match enc {
                    PLAIN => ByteArrayEncoding::Plain,
                    DELTA_LENGTH_BYTE_ARRAY => ByteArrayEncoding::DeltaLength,
                    _ => ByteArrayEncoding::Delta,
                };
                First::Lengths(b.add(pq(ParquetOp::ByteArrayLengths(e)), vals, n, at), e)
            }
            (T::BYTE_ARRAY | T::BOOLEAN, _) => {
                return Err(Error::Unsupported(format!(
                    "{}: {} for {} values",
                    p.location,
                    encoding_name(enc),
                    info.physical
                )));
            }
            (_, PLAIN) => First::Direct(b.add(
                pq(ParquetOp::PlainFixed {
                    width: info.width as u32,
                }),
                vals,
                n,
                at,
            )),
            (T::INT32 | T::INT64, DELTA_BINARY_PACKED) => {
                let t = if info.physical == T::INT32 {
                    IntType::I32
                } else {
                    IntType::I64
                };
                First::Direct(b.add(pq(ParquetOp::DeltaBinaryPacked(t)), vals, n, at))
            }
            (
                T::INT32 | T::INT64 | T::FLOAT | T::DOUBLE | T::FIXED_LEN_BYTE_ARRAY,
                BYTE_STREAM_SPLIT,
            ) => {
                let width = info.width as u32;
                First::Direct(b.add(pq(ParquetOp::ByteStreamSplit { width }), vals, n, at))
            }
            _ => {
                return Err(Error::Unsupported(format!(
                    "{}: {} for {} values",
                    p.location,
                    encoding_name(enc),
                    info.physical
                )));
            }
        });
    }
    drop(span);
    let span = crate::trace::span("pq.round_b");
    let out_b = b.run(backend)?;
    drop(span);
    // Byte-array dictionaries borrow their entries from round B's output.
    let span = crate::trace::span("pq.byte_dicts");
    let byte_dicts: Vec<(usize, ByteDict)> = dict_data
        .into_iter()
        .enumerate()
        .filter_map(|(c, d)| d.map(|d| (c, d)))
        .map(|(c, (data, lengths))| {
            ByteDict::new(out_a.typed::<u32>(lengths), out_b.bytes(data))
                .map(|d| (c, d))
                .ok_or_else(|| {
                    err(
                        &pages.chunks[c][0],
                        "dictionary entry lengths do not add up to its bytes",
                    )
                })
        })
        .collect::<Result<_>>()?;
    for (c, d) in byte_dicts {
        dicts[c] = Some(match one_len[c] {
            // Lengths were all one value when planned; so they still are.
            Some(_) => Dict::OneLength(d),
            None => Dict::Bytes(d),
        });
    }
    drop(span);
    let [out_dp, out_dg] = run_dict_pages(
        &mut works,
        &dict_pages,
        &dicts,
        &raw_dicts,
        infos,
        pages,
        backend,
    )?;

    let span = crate::trace::span("pq.byte_dict_stages");
    let staged = run_byte_dicts(&works, &staged, &dicts, pages, backend)?;
    drop(span);

    // Round C: byte-array bytes.
    let span = crate::trace::span("pq.plan_c");
    let mut c_bytes = StageBatch::new(buf);
    for w in works.iter_mut() {
        let p = &pages.chunks[w.chunk][w.page];
        if let Some(First::Lengths(id, e)) = &w.first {
            let total: u64 = out_b.typed::<u32>(*id).iter().map(|&l| u64::from(l)).sum();
            let op = StageOp::Parquet(ParquetOp::ByteArrayData(*e));
            w.second = Some(Second::Data(c_bytes.add(
                op,
                w.values.clone(),
                total,
                p.location.clone(),
            )));
        }
    }
    drop(span);
    let span = crate::trace::span("pq.round_c");
    let out_c = c_bytes.run(backend)?;
    drop(span);
    let _span = crate::trace::span("pq.values");

    // Each chunk's values: one task per chunk; where the chunk's pages lie
    // end to end in one stage output, the values are a slice of it.
    let outs = [&out_b, &out_c, &out_dp, &out_dg];
    per_chunk(&mut works, infos.len())
        .into_par_iter()
        .zip(leaves.par_iter_mut())
        .zip(infos.par_iter())
        .zip(dicts.par_iter())
        .zip(staged.par_iter())
        .try_for_each(|((((ws, leaf), info), dict), staged)| {
            let _span = crate::trace::span_with(|| {
                let column = ws
                    .first()
                    .and_then(|w| pages.chunks[w.chunk][w.page].location.column.clone());
                format!("pq.values {}", column.unwrap_or_default())
            });
            leaf.values = Chunk {
                ws,
                info,
                pages,
                dict: dict.as_ref(),
                outs,
                staged: staged.as_ref(),
            }
            .values()?;
            Ok(())
        })?;
    Ok(leaves)
}

/// Appends the ends of `n` values of `l` bytes each.
fn push_progression<O: OffsetSizeTrait>(offsets: &mut Vec<O>, n: usize, l: usize) {
    let last = offsets.last().map_or(0, |o| o.as_usize());
    offsets.extend((1..=n).map(|i| O::usize_as(last + i * l)));
}

/// Longest entries a one-length byte dictionary may have to be gathered as
/// a fixed-width one: longer values gain little over the byte gather, and
/// the fixed-width jobs copy a value per lane.
const MAX_ONE_LENGTH: usize = 32;

/// Per chunk, the entries' length when its byte-array dictionary's entries
/// all have one length (1 to [`MAX_ONE_LENGTH`] bytes) and every data page
/// is dictionary-encoded: such a chunk is gathered as a fixed-width
/// dictionary of that width (`Dict::OneLength`). The taxi table's
/// `store_and_fwd_flag` (`N`/`Y`, a million indices per page) gathered on
/// the host ended its reads.
fn one_length_dicts(
    works: &[Work],
    infos: &[LeafInfo],
    dict_data: &[Option<(RequestId, RequestId)>],
    out_a: &BatchOutput,
    pages: &Pages,
) -> Vec<Option<usize>> {
    let mut all_dict = vec![true; infos.len()];
    for w in works {
        let e = pages.chunks[w.chunk][w.page].header.encoding;
        all_dict[w.chunk] &= matches!(e, PLAIN_DICTIONARY | RLE_DICTIONARY);
    }
    (0..infos.len())
        .map(|c| {
            let (_, lengths) = dict_data[c]?;
            let lengths = out_a.typed::<u32>(lengths);
            let l = *lengths.first()? as usize;
            // A page's gather job reads the dictionary and its section
            // as one input: half the job limit for the dictionary leaves
            // pages room (larger ones gather on the host as byte arrays).
            let dict_bytes = (lengths.len() as u64).saturating_mul(l as u64);
            (infos[c].is_bytes()
                && all_dict[c]
                && (1..=MAX_ONE_LENGTH).contains(&l)
                && dict_bytes <= MAX_CHUNK_INPUT / 2
                && lengths.iter().all(|&x| x as usize == l))
            .then_some(l)
        })
        .collect()
}

/// Little-endian signed values of `width` bytes (4 or 8), sign-extended
/// to 16 bytes each.
fn widen_to_16(values: &[u8], width: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() / width * 16);
    for v in values.chunks_exact(width) {
        let x: i128 = if width == 4 {
            i32::from_le_bytes(v.try_into().expect("4 bytes")).into()
        } else {
            i64::from_le_bytes(v.try_into().expect("8 bytes")).into()
        };
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// A fixed-width dictionary page: its work, and where its values section
/// (the indices' bit-width byte, then the hybrid indices) lies in the pages
/// buffer.
type DictPageRef = (usize, Range<usize>);

/// The outputs a page's values come from: rounds B and C, then the
/// dictionary pages gathered in place and those gathered from a copy.
type Outs<'a> = [&'a BatchOutput; 4];
/// [`Outs`] index of dictionary pages gathered in place.
const DP_IN_PLACE: usize = 2;
/// [`Outs`] index of dictionary pages gathered from a copy.
const DP_GATHERED: usize = 3;

/// Runs the fixed-width dictionary pages as `DictPage` stages (one per
/// value width). A page whose chunk's dictionary lies before it in the
/// pages buffer as stored (`raw_dicts`) is a job over that buffer as it is,
/// from the dictionary to the end of the page: on a backend that holds the
/// pages on its device or reads host memory in place, nothing is copied or
/// uploaded for it. The others (widened dictionaries, pages a backend
/// would have to gather) read a buffer written here: each chunk's
/// dictionary once, 16-aligned, then its pages' values sections; a page's
/// job runs from its chunk's dictionary to the end of its own section.
fn run_dict_pages(
    works: &mut [Work],
    dict_pages: &[DictPageRef],
    dicts: &[Option<Dict<'_>>],
    raw_dicts: &[Option<Range<usize>>],
    infos: &[LeafInfo],
    pages: &Pages,
    backend: &dyn Backend,
) -> Result<[BatchOutput; 2]> {
    let buf = &pages.buf[..];
    let op = |c: usize| {
        StageOp::Parquet(ParquetOp::DictPage {
            width: infos[c].width as u32,
        })
    };
    let dict_of = |chunk: usize| match &dicts[chunk] {
        Some(Dict::Fixed(d)) => d.as_ref(),
        Some(Dict::OneLength(d)) => d.data(),
        _ => unreachable!("dictionary pages are pages of fixed dictionaries"),
    };
    let span = crate::trace::span("pq.dict_records");
    // Chunks whose values only the device reads: every data page a
    // dictionary page gathered here (so its values lie end to end in one
    // stage's output, shared as the Arrow buffer), decimals widened.
    let mut pages_of = vec![0usize; infos.len()];
    for w in works.iter() {
        pages_of[w.chunk] += 1;
    }
    let mut dict_pages_of = vec![0usize; infos.len()];
    for (wi, _) in dict_pages {
        dict_pages_of[works[*wi].chunk] += 1;
    }
    let mut direct = StageBatch::new(buf);
    // A job spanning other pages must never be gathered piece by piece.
    let in_place = direct.in_place(backend);
    let fits: Vec<Option<&Range<usize>>> = dict_pages
        .iter()
        .map(|(wi, vals)| {
            let c = works[*wi].chunk;
            raw_dicts[c].as_ref().filter(|d| {
                in_place(&op(c))
                    && d.end <= vals.start
                    && (vals.end - d.start) as u64 <= MAX_CHUNK_INPUT
            })
        })
        .collect();
    // A chunk's pages split between the two batches are joined by a copy
    // on the host, which must then have their values.
    let mut split = vec![(false, false); infos.len()];
    for ((wi, _), f) in dict_pages.iter().zip(&fits) {
        let s = &mut split[works[*wi].chunk];
        if f.is_some() {
            s.0 = true;
        } else {
            s.1 = true;
        }
    }
    let device_only = |c: usize| {
        let i = &infos[c];
        i.device_values
            && pages_of[c] == dict_pages_of[c]
            && split[c] != (true, true)
            && (!i.decimal128 || i.width == 16)
    };
    let mut copied: Vec<usize> = Vec::new();
    for (k, (wi, vals)) in dict_pages.iter().enumerate() {
        let w = &works[*wi];
        let Some(d) = fits[k] else {
            copied.push(k);
            continue;
        };
        let aux = parquet_dict::page_aux(d.len() as u32, (vals.start - d.start) as u32);
        let p = &pages.chunks[w.chunk][w.page];
        let id = direct.add_with_aux(
            op(w.chunk),
            d.start..vals.end,
            w.n as u64,
            aux,
            p.location.clone(),
        );
        if device_only(w.chunk) {
            direct.leave_on_device(id);
        }
        works[*wi].first = Some(First::DictPage(Some((DP_IN_PLACE, id))));
    }

    // The rest from a buffer of records in input order: a chunk's
    // dictionary before its first page (works, hence dictionary pages,
    // come chunk by chunk).
    enum Record<'p> {
        Dict(usize),
        Page(&'p [u8]),
        /// Zeros before a dictionary record, so that its entries start
        /// 16-aligned: the GPU gather then copies values by words.
        Pad,
    }
    let mut records: Vec<(Record, Range<usize>)> = Vec::new();
    let mut dict: Option<(usize, usize)> = None;
    let mut jobs = Vec::with_capacity(copied.len());
    let mut len = 0usize;
    for &k in &copied {
        let (wi, vals) = &dict_pages[k];
        let chunk = works[*wi].chunk;
        let start = match dict {
            Some((c, start)) if c == chunk => start,
            _ => {
                let aligned = len.next_multiple_of(16);
                if aligned > len {
                    records.push((Record::Pad, len..aligned));
                    len = aligned;
                }
                let n = dict_of(chunk).len();
                records.push((Record::Dict(chunk), len..len + n));
                dict = Some((chunk, len));
                len += n;
                len - n
            }
        };
        let section = &buf[vals.clone()];
        records.push((Record::Page(section), len..len + section.len()));
        let aux = parquet_dict::page_aux(dict_of(chunk).len() as u32, (len - start) as u32);
        len += section.len();
        jobs.push((start..len, aux));
    }
    if copied.is_empty() {
        drop(span);
        let _span = crate::trace::span("pq.dict_pages");
        return Ok([direct.run(backend)?, StageBatch::new(&[]).run(backend)?]);
    }
    // Every byte is written below (the records cover it end to end).
    let mut src = backend.input_buffer(len)?;
    {
        let mut slots: Vec<(&mut [u8], &Record)> = Vec::with_capacity(records.len());
        let mut rest = &mut src[..];
        for (record, r) in &records {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(r.len());
            slots.push((head, record));
            rest = tail;
        }
        slots
            .into_par_iter()
            .for_each(|(dst, record)| match record {
                Record::Dict(chunk) => dst.copy_from_slice(dict_of(*chunk)),
                Record::Page(section) => dst.copy_from_slice(section),
                Record::Pad => dst.fill(0),
            });
    }
    let mut gathered = StageBatch::new(&src);
    for (&k, (r, aux)) in copied.iter().zip(jobs) {
        let wi = dict_pages[k].0;
        let w = &works[wi];
        let p = &pages.chunks[w.chunk][w.page];
        let id = gathered.add_with_aux(op(w.chunk), r, w.n as u64, aux, p.location.clone());
        if device_only(w.chunk) {
            gathered.leave_on_device(id);
        }
        works[wi].first = Some(First::DictPage(Some((DP_GATHERED, id))));
    }
    drop(span);
    let _span = crate::trace::span("pq.dict_pages");
    Ok([direct.run(backend)?, gathered.run(backend)?])
}

/// Each chunk's works: they are pushed chunk by chunk, so chunk `c`'s are
/// one run (empty for a chunk without data pages).
/// Long hybrid streams (levels, dictionary indices, RLE booleans) decode
/// as several jobs cut at run boundaries ([`parquet_hybrid::split`]).
fn split_hybrids(batch: &mut StageBatch<'_>) {
    for bit_width in 0..=parquet_hybrid::MAX_BIT_WIDTH {
        batch.split_with(
            StageOp::Parquet(ParquetOp::Hybrid { bit_width }),
            move |input, values| parquet_hybrid::split(bit_width, input, values),
        );
    }
}

fn per_chunk(works: &mut [Work], chunks: usize) -> Vec<&mut [Work]> {
    let mut out = Vec::with_capacity(chunks);
    let mut rest = works;
    for c in 0..chunks {
        let n = rest.iter().take_while(|w| w.chunk == c).count();
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
        out.push(head);
        rest = tail;
    }
    debug_assert!(rest.is_empty());
    out
}

/// Where a page's final values are: which round's output, which request.
fn value_piece(w: &Work) -> Option<(usize, RequestId)> {
    match (&w.first, &w.second) {
        (Some(First::DictPage(Some((out, id)))), _) => Some((*out, *id)),
        (Some(First::Lengths(..)), Some(Second::Data(id))) => Some((1, *id)),
        (Some(First::Direct(id)), _) => Some((0, *id)),
        _ => None,
    }
}

/// The pages' value bytes as one buffer: a slice of a stage output when
/// they lie end to end in it (requests of one operation are placed in
/// order), else a copy.
fn joined(ws: &[Work], outs: Outs<'_>) -> Option<Buffer> {
    let pieces: Vec<(usize, RequestId)> = ws.iter().map(value_piece).collect::<Option<_>>()?;
    let Some(&(round, first)) = pieces.first() else {
        return Some(Buffer::from(MutableBuffer::new(0)));
    };
    let (stage, start) = outs[round].place(first);
    let mut end = start.end;
    let contiguous = pieces.iter().skip(1).all(|&(r, id)| {
        let (s, range) = outs[r].place(id);
        let next = r == round && s == stage && range.start == end;
        end = range.end;
        next
    });
    if contiguous {
        return Some(outs[round].stage_slice(stage, start.start..end));
    }
    let total = pieces.iter().map(|&(r, id)| outs[r].bytes(id).len()).sum();
    let mut b = MutableBuffer::with_capacity(total);
    for &(r, id) in &pieces {
        b.extend_from_slice(outs[r].bytes(id));
    }
    Some(b.into())
}

/// One column chunk's pages and the round outputs holding their values.
struct Chunk<'a> {
    ws: &'a [Work],
    info: &'a LeafInfo,
    pages: &'a Pages,
    dict: Option<&'a Dict<'a>>,
    /// Rounds B, C and the dictionary pages (in place, gathered).
    outs: Outs<'a>,
    /// The chunk's offsets and bytes from the byte dictionary stages.
    staged: Option<&'a (Buffer, Buffer)>,
}

impl Chunk<'_> {
    fn page(&self, w: &Work) -> &Page {
        &self.pages.chunks[w.chunk][w.page]
    }

    /// The chunk's non-null values.
    fn values(&self) -> Result<Dense> {
        let Chunk { ws, info, outs, .. } = *self;
        let page = |w: &Work| self.page(w);
        let [out_b, ..] = outs;
        match Dense::empty(info) {
            Dense::Bool(mut v) => {
                v.reserve(ws.iter().map(|w| w.n).sum());
                for w in ws {
                    match &w.first {
                        Some(First::Direct(id)) => v.extend_from_slice(out_b.bytes(*id)),
                        Some(First::BoolRle(id)) => {
                            v.extend(out_b.typed::<u32>(*id).iter().map(|&b| b as u8))
                        }
                        _ => return Err(cannot(page(w), info)),
                    }
                }
                Ok(Dense::Bool(v))
            }
            Dense::Fixed { width, .. } => {
                for w in ws {
                    if let (Some(First::Lengths(lid, _)), Some(Second::Data(_))) =
                        (&w.first, &w.second)
                        && out_b
                            .typed::<u32>(*lid)
                            .iter()
                            .any(|&l| l as usize != width)
                    {
                        return Err(err(
                            page(w),
                            "DELTA_BYTE_ARRAY value length differs from the fixed length",
                        ));
                    }
                }
                match joined(ws, outs) {
                    Some(bytes) => Ok(Dense::Fixed { width, bytes }),
                    None => {
                        let w = ws
                            .iter()
                            .find(|w| value_piece(w).is_none())
                            .expect("joined fails only on a page without values");
                        Err(cannot(page(w), info))
                    }
                }
            }
            Dense::Bytes { .. } => self.bytes(),
        }
    }

    /// Byte-array values: lengths and data from the byte-array stages, or
    /// dictionary entries gathered here (variable-length output).
    fn bytes(&self) -> Result<Dense> {
        let Chunk {
            ws,
            info,
            dict,
            outs,
            ..
        } = *self;
        let [out_b, out_c, ..] = outs;
        let page = |w: &Work| self.page(w);
        let n: usize = ws.iter().map(|w| w.n).sum();
        if let Some(Dict::OneLength(d)) = dict {
            // Every page a `DictPage` job of the entries' length (planned
            // so): the gathered bytes are the values end to end.
            let data = joined(ws, outs).ok_or_else(|| err(page(&ws[0]), "no gathered values"))?;
            let l = d.max_len();
            if data.len() != n * l {
                return Err(err(
                    page(&ws[0]),
                    "dictionary gather gave inconsistent values",
                ));
            }
            let mut offsets = Offsets::with_bound(n, data.len() as u64);
            match &mut offsets {
                Offsets::Small(v) => push_progression(v, n, l),
                Offsets::Large(v) => push_progression(v, n, l),
                Offsets::Staged(_) => unreachable!("with_bound builds vectors"),
            }
            return Ok(Dense::Bytes {
                offsets,
                data,
                utf8: d.utf8(),
            });
        }
        if let Some((offsets, data)) = self.staged {
            let Some(Dict::Bytes(d)) = dict else {
                unreachable!("staged chunks have byte dictionaries")
            };
            let ends = ScalarBuffer::<i32>::new(offsets.clone(), 0, offsets.len() / 4);
            let offsets = Offsets::staged(ends, data.len())
                .filter(|o| o.values() == n)
                .ok_or_else(|| err(page(&ws[0]), "dictionary gather gave inconsistent offsets"))?;
            return Ok(Dense::Bytes {
                offsets,
                data: data.clone(),
                utf8: d.utf8(),
            });
        }
        let all_data = ws.iter().all(|w| {
            matches!(
                (&w.first, &w.second),
                (Some(First::Lengths(..)), Some(Second::Data(_)))
            )
        });
        if all_data {
            // Round C's request for a page is the sum of its lengths, so
            // the data's size bounds every offset.
            let data = joined(ws, outs).expect("every page has data");
            let mut offsets = Offsets::with_bound(n, data.len() as u64);
            let lengths = ws.iter().map(|w| {
                let Some(First::Lengths(lid, _)) = &w.first else {
                    unreachable!("checked above")
                };
                out_b.typed::<u32>(*lid)
            });
            match &mut offsets {
                Offsets::Small(v) => lengths.for_each(|l| push_lengths(v, l)),
                Offsets::Large(v) => lengths.for_each(|l| push_lengths(v, l)),
                Offsets::Staged(_) => unreachable!("with_bound builds vectors"),
            }
            // Strings whose every byte is ASCII need no UTF-8 pass.
            let utf8 = ws.iter().all(|w| match &w.second {
                Some(Second::Data(id)) => out_c.ascii(*id),
                None => false,
            });
            return Ok(Dense::Bytes {
                offsets,
                data,
                utf8,
            });
        }
        // Dictionary pages (and any PLAIN pages after a dictionary fallback):
        // indices checked first; plain pages' bytes are not known to be
        // UTF-8, dictionary entries were checked once.
        // Plain pages' bytes, and a bound on the gathered ones.
        let mut total = 0usize;
        let mut gathered = 0u64;
        let mut utf8 = true;
        for w in ws {
            match (&w.first, &w.second) {
                (Some(First::Lengths(..)), Some(Second::Data(id))) => {
                    total += out_c.bytes(*id).len();
                    utf8 &= out_c.ascii(*id);
                }
                (Some(First::Indices(id)), _) => {
                    let Some(Dict::Bytes(d)) = dict else {
                        return Err(err(
                            page(w),
                            "dictionary-encoded page without a dictionary page",
                        ));
                    };
                    let entries = d.len();
                    let indices = out_b.typed::<u32>(*id);
                    if let Some(&k) = indices.iter().find(|&&k| k as usize >= entries) {
                        return Err(err(
                            page(w),
                            format!("dictionary index {k} past {entries} entries"),
                        ));
                    }
                    gathered += indices.len() as u64 * d.max_len() as u64;
                    utf8 &= d.utf8();
                }
                _ => return Err(cannot(page(w), info)),
            }
        }
        let mut bound = total as u64 + gathered;
        if bound > i32::MAX as u64 {
            // The bound takes every index to name the longest entry. Past
            // 2 GiB the exact size decides, counted before anything is
            // allocated: a few KB of file can name one long entry millions
            // of times, and the gather would build all of it before the
            // Arrow array's offsets found it too large.
            let mut exact = total as u64;
            for w in ws {
                if let (Some(First::Indices(id)), Some(Dict::Bytes(d))) = (&w.first, dict) {
                    exact = exact.saturating_add(d.bytes_of(out_b.typed::<u32>(*id)));
                }
            }
            if info.offsets32 && exact > i32::MAX as u64 {
                return Err(err(
                    page(&ws[0]),
                    format!("byte array column over 2 GiB ({exact} bytes of values)"),
                ));
            }
            bound = exact;
        }
        let mut data = Vec::with_capacity(total);
        let mut offsets = Offsets::with_bound(n, bound);
        match &mut offsets {
            Offsets::Small(v) => self.gather_into(v, &mut data),
            Offsets::Large(v) => self.gather_into(v, &mut data),
            Offsets::Staged(_) => unreachable!("with_bound builds vectors"),
        }
        Ok(Dense::Bytes {
            offsets,
            data: Buffer::from_vec(data),
            utf8,
        })
    }

    /// The values of pages checked by [`Chunk::bytes`]: plain pages' bytes
    /// and dictionary entries, end to end.
    fn gather_into<O: OffsetSizeTrait>(&self, offsets: &mut Vec<O>, data: &mut Vec<u8>) {
        let [out_b, out_c, ..] = self.outs;
        for w in self.ws {
            match (&w.first, &w.second) {
                (Some(First::Lengths(lid, _)), Some(Second::Data(id))) => {
                    push_lengths(offsets, out_b.typed::<u32>(*lid));
                    data.extend_from_slice(out_c.bytes(*id));
                }
                (Some(First::Indices(id)), _) => {
                    let Some(Dict::Bytes(d)) = self.dict else {
                        unreachable!("checked by bytes")
                    };
                    d.gather(out_b.typed::<u32>(*id), data, offsets);
                }
                _ => unreachable!("checked by bytes"),
            }
        }
    }
}

fn cannot(p: &Page, info: &LeafInfo) -> Error {
    err(
        p,
        format!(
            "cannot decode {} values with {}",
            info.physical,
            encoding_name(p.header.encoding)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::super::decompress::PageBytes;
    use super::super::page_header::PageHeader;
    use super::*;
    use crate::exec::CpuBackend;

    fn page(kind: PageKind, n: i32, encoding: i32, data: Range<usize>) -> Page {
        let size = data.len() as i32;
        Page {
            header: PageHeader {
                kind,
                uncompressed_size: size,
                compressed_size: size,
                num_values: n,
                encoding,
                num_nulls: 0,
                num_rows: n,
                def_levels_len: 0,
                rep_levels_len: 0,
                is_compressed: false,
                def_level_encoding: RLE,
                rep_level_encoding: RLE,
                header_len: 0,
            },
            data,
            location: Location::default(),
        }
    }

    fn int32_leaf() -> LeafInfo {
        LeafInfo {
            physical: PhysicalType::INT32,
            width: 4,
            max_def: 0,
            max_rep: 0,
            decimal128: false,
            device_values: false,
            offsets32: false,
        }
    }

    /// A required INT32 chunk: a dictionary page, then pages of indices
    /// (each its bit width and hybrid runs), laid end to end as the
    /// decompression stage leaves them.
    fn chunk(indices: &[&[u32]]) -> Pages {
        let dict: Vec<u8> = [10i32, 20, 30]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut buf = Vec::new();
        let mut pages = Vec::new();
        buf.extend_from_slice(&dict);
        pages.push(page(PageKind::Dictionary, 3, PLAIN, 0..buf.len()));
        for idx in indices {
            let at = buf.len();
            buf.push(2);
            buf.extend(parquet_hybrid::encode(idx, 2));
            pages.push(page(
                PageKind::Data,
                idx.len() as i32,
                RLE_DICTIONARY,
                at..buf.len(),
            ));
        }
        Pages {
            buf: PageBytes::Gathered(buf),
            chunks: vec![pages],
            unchecked: Vec::new(),
        }
    }

    #[test]
    fn dictionary_pages_are_gathered_where_they_lie() {
        let pages = chunk(&[&[2, 0, 1, 1], &[0; 9]]);
        let leaves = run(
            &pages,
            &[int32_leaf()],
            &CpuBackend::new(),
            &ReadTuning::default(),
        )
        .unwrap();
        let Dense::Fixed { width: 4, bytes } = &leaves[0].values else {
            panic!("fixed values expected");
        };
        let got: Vec<i32> = bytes
            .as_slice()
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(got, [30, 10, 20, 20, 10, 10, 10, 10, 10, 10, 10, 10, 10]);
    }

    #[test]
    fn a_chunk_of_only_its_dictionary_decodes_to_nothing() {
        // A row group of no rows whose writer still stored a dictionary.
        let pages = chunk(&[]);
        let leaves = run(
            &pages,
            &[int32_leaf()],
            &CpuBackend::new(),
            &ReadTuning::default(),
        )
        .unwrap();
        assert_eq!(leaves[0].entries, 0);
        assert_eq!(leaves[0].values.len(), 0);
    }

    /// The CPU decoders behind a backend that neither reads host input in
    /// place nor holds anything on a device, as CUDA without a mirror:
    /// dictionary pages then take the copied path.
    struct Copying;

    impl Backend for Copying {
        fn name(&self) -> &'static str {
            "copying"
        }
        fn describe(&self) -> String {
            "the CPU decoders over copied inputs".into()
        }
        fn run_stage(
            &self,
            stage: &crate::plan::Stage,
            input: &[u8],
        ) -> Result<crate::exec::StageOutput> {
            CpuBackend::new().run_stage(stage, input)
        }
    }

    fn values(leaf: &Leaf) -> Vec<u8> {
        match &leaf.values {
            Dense::Fixed { bytes, .. } => bytes.as_slice().to_vec(),
            _ => panic!("fixed values expected"),
        }
    }

    #[test]
    fn copied_dictionary_pages_equal_the_in_place_ones() {
        let pages = chunk(&[&[2, 0, 1, 1], &[1; 40], &[], &[0, 2]]);
        let in_place = run(
            &pages,
            &[int32_leaf()],
            &CpuBackend::new(),
            &ReadTuning::default(),
        )
        .unwrap();
        let copied = run(&pages, &[int32_leaf()], &Copying, &ReadTuning::default()).unwrap();
        assert_eq!(values(&in_place[0]), values(&copied[0]));
        assert_eq!(values(&copied[0]).len(), 4 * 46);
        // Decimal128 over INT32: the widened dictionary always goes the
        // copied way; its values come out sign-extended to 16 bytes.
        let decimal = LeafInfo {
            decimal128: true,
            ..int32_leaf()
        };
        for backend in [&CpuBackend::new() as &dyn Backend, &Copying] {
            let leaves = run(
                &pages,
                std::slice::from_ref(&decimal),
                backend,
                &ReadTuning::default(),
            )
            .unwrap();
            let v = values(&leaves[0]);
            assert_eq!(v.len(), 16 * 46, "{}", backend.name());
            assert_eq!(i128::from_le_bytes(v[..16].try_into().unwrap()), 30);
            assert_eq!(i128::from_le_bytes(v[16..32].try_into().unwrap()), 10);
        }
    }
}
