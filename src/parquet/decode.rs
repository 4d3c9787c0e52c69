//! Decode rounds over every page of a read group, each round one stage per
//! operation (`StageBatch`) across all row groups and columns:
//!
//! - A: repetition and definition levels (hybrid), dictionary pages
//!   (PLAIN fixed-width values, or byte-array lengths);
//! - B: page values, whose count (non-null entries) needs the levels:
//!   PLAIN, BYTE_STREAM_SPLIT, DELTA_BINARY_PACKED, dictionary indices
//!   (hybrid), byte-array lengths; dictionary byte-array bytes;
//! - C: byte-array bytes (the lengths give the sizes) and fixed-width
//!   dictionary gathers.
//!
//! The result per column chunk is its levels and its non-null values end to
//! end ([`Dense`]). Byte-array dictionary gathers happen here on the CPU
//! (variable-length output).

use std::ops::Range;

use arrow::buffer::MutableBuffer;
use parquet::basic::Type as PhysicalType;

use super::decompress::{Page, Pages};
use super::page_header::PageKind;
use crate::codecs::parquet_dict;
use crate::error::{Error, Location, Result};
use crate::exec::Backend;
use crate::exec::batch::{BatchOutput, RequestId, StageBatch};
use crate::plan::{ByteArrayEncoding, IntType, ParquetOp, StageOp};

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
        }
    }

    fn is_bytes(&self) -> bool {
        self.physical == PhysicalType::BYTE_ARRAY
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
        /// The values, in an Arrow buffer (64-byte aligned) so that values
        /// whose Arrow type has the stored width become an array without a
        /// copy.
        bytes: MutableBuffer,
    },
    /// Variable-length values.
    Bytes {
        /// `n + 1` offsets into `data`.
        offsets: Vec<usize>,
        /// The bytes.
        data: Vec<u8>,
    },
}

impl Dense {
    fn empty(info: &LeafInfo) -> Self {
        match info.physical {
            PhysicalType::BOOLEAN => Dense::Bool(Vec::new()),
            PhysicalType::BYTE_ARRAY => Dense::Bytes {
                offsets: vec![0],
                data: Vec::new(),
            },
            _ => Dense::Fixed {
                width: info.width,
                bytes: MutableBuffer::new(0),
            },
        }
    }

    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        match self {
            Dense::Bool(v) => v.len(),
            Dense::Fixed { width, bytes } => bytes.len() / (*width).max(1),
            Dense::Bytes { offsets, .. } => offsets.len() - 1,
        }
    }
}

/// A decoded column chunk.
#[derive(Debug)]
pub struct Leaf {
    /// Definition levels (empty when the column's max is 0).
    pub def: Vec<u16>,
    /// Repetition levels (empty when the column's max is 0).
    pub rep: Vec<u16>,
    /// Level entries (rows × repetitions).
    pub entries: usize,
    /// Non-null values.
    pub values: Dense,
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
    /// Dictionary indices.
    Indices(RequestId),
    /// Byte-array lengths (BYTE_ARRAY, or FLBA under DELTA_BYTE_ARRAY).
    Lengths(RequestId, ByteArrayEncoding),
}

enum Second {
    Data(RequestId),
    Gather(RequestId),
}

enum Dict {
    Fixed(Vec<u8>),
    Bytes(Vec<usize>, Vec<u8>),
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

/// Decodes every chunk of `pages`; `infos[i]` describes chunk `i`.
pub fn run(pages: &Pages, infos: &[LeafInfo], backend: &dyn Backend) -> Result<Vec<Leaf>> {
    let buf = &pages.buf;
    let mut a = StageBatch::new(buf);
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
                    let def = (info.max_def > 0).then(|| {
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
                        n: entries,
                        first: None,
                        second: None,
                    });
                }
                _ => {}
            }
        }
    }
    let out_a = a.run(backend)?;

    // Levels into the leaves, values counted.
    let mut leaves: Vec<Leaf> = infos
        .iter()
        .map(|info| Leaf {
            def: Vec::new(),
            rep: Vec::new(),
            entries: 0,
            values: Dense::empty(info),
        })
        .collect();
    for w in &mut works {
        let info = &infos[w.chunk];
        let p = &pages.chunks[w.chunk][w.page];
        let leaf = &mut leaves[w.chunk];
        leaf.entries += w.entries;
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
        if let Some(id) = w.def {
            let levels = out_a.typed::<u32>(id);
            if levels.iter().any(|&l| l > info.max_def as u32) {
                return Err(err(p, "definition level above the column's maximum"));
            }
            w.n = levels.iter().filter(|&&l| l == info.max_def as u32).count();
            leaf.def.extend(levels.iter().map(|&l| l as u16));
        }
    }

    // Dictionaries: fixed ones are final; byte-array ones need their bytes.
    let mut b = StageBatch::new(buf);
    let mut dicts: Vec<Option<Dict>> = (0..infos.len()).map(|_| None).collect();
    let mut dict_data: Vec<Option<(RequestId, Vec<usize>)>> = vec![None; infos.len()];
    for (c, req) in dict_req.iter().enumerate() {
        let Some((id, n, at)) = req else { continue };
        if infos[c].is_bytes() {
            let lens = out_a.typed::<u32>(*id);
            let mut offsets = Vec::with_capacity(n + 1);
            offsets.push(0usize);
            for &l in lens {
                offsets.push(offsets.last().expect("non-empty") + l as usize);
            }
            let page = &pages.chunks[c][0];
            let total = *offsets.last().expect("non-empty") as u64;
            let did = b.add(
                StageOp::Parquet(ParquetOp::ByteArrayData(ByteArrayEncoding::Plain)),
                page.data.clone(),
                total,
                at.clone(),
            );
            dict_data[c] = Some((did, offsets));
        } else {
            dicts[c] = Some(Dict::Fixed(out_a.bytes(*id).to_vec()));
        }
    }

    // Round B: values (or indices, or lengths).
    for w in &mut works {
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
                let (bw, r) = match buf[vals.clone()].first() {
                    Some(&bw) => (bw, vals.start + 1..vals.end),
                    None if n == 0 => (0, vals),
                    None => return Err(err(p, "dictionary page data without a bit width")),
                };
                if bw > 32 {
                    return Err(err(p, format!("dictionary index bit width {bw}")));
                }
                First::Indices(b.add(pq(ParquetOp::Hybrid { bit_width: bw }), r, n, at))
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
    let out_b = b.run(backend)?;
    for (c, d) in dict_data.into_iter().enumerate() {
        if let Some((id, offsets)) = d {
            dicts[c] = Some(Dict::Bytes(offsets, out_b.bytes(id).to_vec()));
        }
    }

    // Round C: byte-array bytes, fixed-width gathers.
    let mut c_bytes = StageBatch::new(buf);
    // Gather inputs sized exactly up front: grown by doubling, hundreds of
    // MiB of indices would be copied (and faulted in) again and again.
    let gather_len: usize = works
        .iter()
        .filter_map(|w| match (&w.first, &dicts[w.chunk]) {
            (Some(First::Indices(_)), Some(Dict::Fixed(d))) => Some(4 + d.len() + 4 * w.n),
            _ => None,
        })
        .sum();
    let mut gather_src = Vec::with_capacity(gather_len);
    let mut gathers: Vec<(usize, Range<usize>, u64, Location)> = Vec::new();
    for (wi, w) in works.iter_mut().enumerate() {
        let p = &pages.chunks[w.chunk][w.page];
        match &w.first {
            Some(First::Lengths(id, e)) => {
                let total: u64 = out_b.typed::<u32>(*id).iter().map(|&l| u64::from(l)).sum();
                let op = StageOp::Parquet(ParquetOp::ByteArrayData(*e));
                w.second = Some(Second::Data(c_bytes.add(
                    op,
                    w.values.clone(),
                    total,
                    p.location.clone(),
                )));
            }
            Some(First::Indices(id)) => {
                if let Some(Dict::Fixed(d)) = &dicts[w.chunk] {
                    let width = infos[w.chunk].width;
                    let start = gather_src.len();
                    parquet_dict::encode_input(d, width, out_b.typed::<u32>(*id), &mut gather_src);
                    gathers.push((wi, start..gather_src.len(), w.n as u64, p.location.clone()));
                }
            }
            _ => {}
        }
    }
    let out_c = c_bytes.run(backend)?;
    let mut g = StageBatch::new(&gather_src);
    for (wi, r, n, at) in gathers {
        let width = infos[works[wi].chunk].width as u32;
        let id = g.add(StageOp::Parquet(ParquetOp::DictGather { width }), r, n, at);
        works[wi].second = Some(Second::Gather(id));
    }
    let out_g = g.run(backend)?;

    // Each chunk's values are reserved at once: growing them page by page
    // reallocates (and faults in) hundreds of MiB again and again.
    let mut need = vec![(0usize, 0usize); infos.len()];
    for w in &works {
        need[w.chunk].0 += w.n;
        if let Some(Second::Data(id)) = w.second {
            need[w.chunk].1 += out_c.bytes(id).len();
        }
    }
    for ((leaf, info), &(n, bytes)) in leaves.iter_mut().zip(infos).zip(&need) {
        match &mut leaf.values {
            Dense::Bool(v) => v.reserve(n),
            Dense::Fixed { bytes: b, .. } => b.reserve(n * info.width),
            Dense::Bytes { offsets, data } => {
                offsets.reserve(n);
                data.reserve(bytes);
            }
        }
    }
    for w in &works {
        let p = &pages.chunks[w.chunk][w.page];
        let info = &infos[w.chunk];
        append(
            &mut leaves[w.chunk].values,
            w,
            info,
            p,
            dicts[w.chunk].as_ref(),
            [&out_b, &out_c, &out_g],
        )?;
    }
    Ok(leaves)
}

fn append(
    dense: &mut Dense,
    w: &Work,
    info: &LeafInfo,
    p: &Page,
    dict: Option<&Dict>,
    [out_b, out_c, out_g]: [&BatchOutput; 3],
) -> Result<()> {
    match (dense, &w.first, &w.second) {
        (Dense::Bool(v), Some(First::Direct(id)), _) => v.extend_from_slice(out_b.bytes(*id)),
        (Dense::Bool(v), Some(First::BoolRle(id)), _) => {
            v.extend(out_b.typed::<u32>(*id).iter().map(|&b| b as u8))
        }
        (Dense::Fixed { bytes, .. }, Some(First::Direct(id)), _) => {
            bytes.extend_from_slice(out_b.bytes(*id))
        }
        (Dense::Fixed { bytes, .. }, _, Some(Second::Gather(id))) => {
            bytes.extend_from_slice(out_g.bytes(*id))
        }
        (Dense::Fixed { bytes, width }, Some(First::Lengths(lid, _)), Some(Second::Data(id))) => {
            if out_b
                .typed::<u32>(*lid)
                .iter()
                .any(|&l| l as usize != *width)
            {
                return Err(err(
                    p,
                    "DELTA_BYTE_ARRAY value length differs from the fixed length",
                ));
            }
            bytes.extend_from_slice(out_c.bytes(*id));
        }
        (Dense::Bytes { offsets, data }, Some(First::Lengths(lid, _)), Some(Second::Data(id))) => {
            let mut last = *offsets.last().expect("non-empty");
            for &l in out_b.typed::<u32>(*lid) {
                last += l as usize;
                offsets.push(last);
            }
            data.extend_from_slice(out_c.bytes(*id));
        }
        (Dense::Bytes { offsets, data }, Some(First::Indices(id)), _) => {
            let Some(Dict::Bytes(doff, dbytes)) = dict else {
                return Err(err(p, "dictionary-encoded page without a dictionary page"));
            };
            let n = doff.len() - 1;
            let idx = out_b.typed::<u32>(*id);
            // Indices checked and the page's bytes counted first, so the
            // copy below runs into reserved memory.
            let mut total = 0usize;
            for &k in idx {
                let k = k as usize;
                if k >= n {
                    return Err(err(p, format!("dictionary index {k} past {n} entries")));
                }
                total += doff[k + 1] - doff[k];
            }
            data.reserve(total);
            offsets.reserve(idx.len());
            let mut last = data.len();
            for &k in idx {
                let v = &dbytes[doff[k as usize]..doff[k as usize + 1]];
                data.extend_from_slice(v);
                last += v.len();
                offsets.push(last);
            }
        }
        _ => {
            return Err(err(
                p,
                format!(
                    "cannot decode {} values with {}",
                    info.physical,
                    encoding_name(p.header.encoding)
                ),
            ));
        }
    }
    Ok(())
}
