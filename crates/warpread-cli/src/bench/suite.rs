//! The benchmark columns behind `warpread bench codecs`.
//!
//! Two sets:
//!
//! - [`codag_suite`]: the CODAG-style columns built from the real-data folder
//!   (`../shared/realdata`, see its README and DESIGN.md section 5): mortgage
//!   loan ids and interest rates, taxi passenger counts and payment types in
//!   pickup-time order, a Criteo integer feature, Twitter edge sources, genome
//!   characters and English text;
//! - [`generated_suite`]: integer columns of TPC-H `lineitem` generated
//!   in-process with `tpchgen`, for machines without the real data.
//!
//! Every column is tiled (repeated) to the requested byte size, so the numbers
//! measured on it are on real values but not on that many distinct rows.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::Instant;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::compute::{can_cast_types, cast, concat};
use arrow::datatypes::{DataType, Float32Type, Int64Type, UInt64Type};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::errors::ParquetError;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::plan::IntType;

/// Values of one benchmark column, in the integer type the codecs decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnData {
    /// Signed 8-bit values.
    I8(Vec<i8>),
    /// Unsigned 8-bit values (also bytes of text and genome characters).
    U8(Vec<u8>),
    /// Signed 16-bit values.
    I16(Vec<i16>),
    /// Unsigned 16-bit values.
    U16(Vec<u16>),
    /// Signed 32-bit values.
    I32(Vec<i32>),
    /// Unsigned 32-bit values (also `f32` bit patterns).
    U32(Vec<u32>),
    /// Signed 64-bit values.
    I64(Vec<i64>),
    /// Unsigned 64-bit values.
    U64(Vec<u64>),
}

/// Runs `$body` with `$v` bound to the inner vector of any [`ColumnData`].
macro_rules! with_values {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            ColumnData::I8($v) => $body,
            ColumnData::U8($v) => $body,
            ColumnData::I16($v) => $body,
            ColumnData::U16($v) => $body,
            ColumnData::I32($v) => $body,
            ColumnData::U32($v) => $body,
            ColumnData::I64($v) => $body,
            ColumnData::U64($v) => $body,
        }
    };
}

pub(crate) use with_values;

/// Same as [`with_values`], rebuilding the same variant from `$body`.
macro_rules! map_values {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            ColumnData::I8($v) => ColumnData::I8($body),
            ColumnData::U8($v) => ColumnData::U8($body),
            ColumnData::I16($v) => ColumnData::I16($body),
            ColumnData::U16($v) => ColumnData::U16($body),
            ColumnData::I32($v) => ColumnData::I32($body),
            ColumnData::U32($v) => ColumnData::U32($body),
            ColumnData::I64($v) => ColumnData::I64($body),
            ColumnData::U64($v) => ColumnData::U64($body),
        }
    };
}

/// Little-endian encoding of one fixed-width integer.
trait LeBytes: Copy {
    const WIDTH: usize;
    fn write_le(self, out: &mut [u8]);
}

macro_rules! impl_le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            const WIDTH: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn write_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
impl_le_bytes!(i8, u8, i16, u16, i32, u32, i64, u64);

fn le_bytes_of<T: LeBytes>(values: &[T]) -> Vec<u8> {
    let mut out = vec![0u8; values.len() * T::WIDTH];
    for (dst, v) in out.chunks_exact_mut(T::WIDTH).zip(values) {
        v.write_le(dst);
    }
    out
}

/// `src` repeated until exactly `n` values (a prefix when `n < src.len()`;
/// empty when `src` is). Copies double the filled part each round, so a
/// 256 MiB column costs a few large memcpys.
fn tile<T: Copy>(src: &[T], n: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(if src.is_empty() { 0 } else { n });
    if src.is_empty() {
        return out;
    }
    out.extend_from_slice(&src[..n.min(src.len())]);
    while out.len() < n {
        // `out.len()` is a multiple of `src.len()` here, so copying a prefix
        // of `out` keeps `out[i] == src[i % src.len()]`.
        let take = (n - out.len()).min(out.len());
        out.extend_from_within(..take);
    }
    out
}

impl ColumnData {
    /// The element type, as the decode plans name it.
    pub fn int_type(&self) -> IntType {
        match self {
            Self::I8(_) => IntType::I8,
            Self::U8(_) => IntType::U8,
            Self::I16(_) => IntType::I16,
            Self::U16(_) => IntType::U16,
            Self::I32(_) => IntType::I32,
            Self::U32(_) => IntType::U32,
            Self::I64(_) => IntType::I64,
            Self::U64(_) => IntType::U64,
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        with_values!(self, v => v.len())
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size of the values in bytes (`len * width`).
    pub fn byte_len(&self) -> usize {
        self.len() * self.int_type().byte_width()
    }

    /// The values as little-endian bytes, `byte_len()` of them.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        with_values!(self, v => le_bytes_of(v))
    }

    /// Repeat the values until exactly `target_bytes / width` values (a
    /// prefix when that is fewer than there are). An empty column stays empty.
    pub fn tiled(&self, target_bytes: usize) -> ColumnData {
        let n = target_bytes / self.int_type().byte_width();
        map_values!(self, v => tile(v, n))
    }
}

/// One benchmark column with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteColumn {
    /// Short name, e.g. `"MC0"` or `"L_ORDERKEY"`.
    pub name: String,
    /// What the values are, e.g. `"mortgage loan id (u64)"`.
    pub description: String,
    /// The file the values were read from, or
    /// `"generated: TPC-H lineitem SF x"`.
    pub source: String,
    /// The values, already tiled.
    pub data: ColumnData,
}

/// Names of the CODAG-style columns, in the order [`codag_suite`] returns them.
pub const CODAG_NAMES: [&str; 8] = ["MC0", "MC3", "TPC", "TPT", "CD2", "TC2", "HRG", "TXT"];

/// Names of the generated TPC-H columns, in the order [`generated_suite`]
/// returns them.
pub const GENERATED_NAMES: [&str; 7] = [
    "L_ORDERKEY",
    "L_PARTKEY",
    "L_QUANTITY",
    "L_LINENUMBER",
    "L_SHIPDATE",
    "L_DISCOUNT",
    "L_RETURNFLAG",
];

const FANNIE_FILE: &str = "fannie_mae_performance_2007Q3_10k.parquet";
const TAXI_FILE: &str = "nyc_yellow_taxi_2018_2020_sample_360k.parquet";
const CRITEO_FILE: &str = "criteo_kaggle_train_head999.parquet";
const TWITTER_FILE: &str = "snap_ego_twitter_edges.parquet";
const GENOME_FILE: &str = "genome_hg38_chr2_1-2333275.fa.xz";
const TEXT_FILE: &str = "english_corpus_19mb.txt.xz";

/// Which of `known` the caller asked for (all when `names` is empty), as a
/// mask over `known`. Names match case-insensitively; an unknown name is an
/// error that lists the known ones.
fn select(known: &[&str], names: &[&str], suite: &str) -> Result<Vec<bool>> {
    if names.is_empty() {
        return Ok(vec![true; known.len()]);
    }
    let mut wanted = vec![false; known.len()];
    for name in names {
        match known
            .iter()
            .position(|k| k.eq_ignore_ascii_case(name.trim()))
        {
            Some(i) => wanted[i] = true,
            None => {
                return Err(Error::Unsupported(format!(
                    "no column {name:?} in the {suite} suite (known: {})",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(wanted)
}

/// Reads whole columns of a Parquet file, only those columns decoded, each
/// concatenated into one array, in the order of `columns`.
fn read_parquet_columns(path: &Path, columns: &[&str]) -> Result<Vec<ArrayRef>> {
    let pq_err = |source: ParquetError| Error::Parquet {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(pq_err)?;
    let schema = builder.schema().clone();
    let mut roots = Vec::with_capacity(columns.len());
    for name in columns {
        let (i, _) = schema.column_with_name(name).ok_or_else(|| {
            Error::Unsupported(format!(
                "{}: no column {name:?} (columns: {})",
                path.display(),
                schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        roots.push(i);
    }
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let reader = builder
        .with_projection(mask)
        .with_batch_size(64 * 1024)
        .build()
        .map_err(pq_err)?;
    let mut parts: Vec<Vec<ArrayRef>> = vec![Vec::new(); columns.len()];
    for batch in reader {
        let batch = batch.map_err(|e| pq_err(ParquetError::ArrowError(e.to_string())))?;
        for (name, part) in columns.iter().zip(parts.iter_mut()) {
            let col = batch.column_by_name(name).ok_or_else(|| {
                Error::Unsupported(format!(
                    "{}: column {name:?} missing from a batch",
                    path.display()
                ))
            })?;
            part.push(col.clone());
        }
    }
    parts
        .into_iter()
        .zip(columns)
        .map(|(part, name)| {
            if part.is_empty() {
                let dt = schema.field_with_name(name).map(|f| f.data_type().clone());
                return Ok(arrow::array::new_empty_array(&dt.unwrap_or(DataType::Null)));
            }
            let refs: Vec<&dyn Array> = part.iter().map(|a| a.as_ref()).collect();
            concat(&refs).map_err(|e| pq_err(ParquetError::ArrowError(e.to_string())))
        })
        .collect()
}

fn unexpected_type(path: &Path, column: &str, dt: &DataType, want: &str) -> Error {
    Error::Unsupported(format!(
        "{}: column {column:?} has type {dt}, which does not convert to {want}",
        path.display()
    ))
}

fn cast_failed(
    path: &Path,
    column: &str,
    dt: &DataType,
    want: &str,
    e: arrow::error::ArrowError,
) -> Error {
    Error::Unsupported(format!(
        "{}: column {column:?} of type {dt} failed to convert to {want}: {e}",
        path.display()
    ))
}

/// Any integer-like array (ints of any width, timestamps and dates, numeric
/// strings, dictionaries of those, floats truncated) as `i64`, nulls as 0.
/// `UInt64` keeps its bit pattern.
fn as_i64_values(path: &Path, column: &str, array: &ArrayRef) -> Result<Vec<i64>> {
    let dt = array.data_type();
    if *dt == DataType::UInt64 {
        let a = array.as_primitive::<UInt64Type>();
        return Ok(a.iter().map(|v| v.unwrap_or(0) as i64).collect());
    }
    if let DataType::Dictionary(_, value) = dt
        && **value == DataType::UInt64
    {
        let plain =
            cast(array, &DataType::UInt64).map_err(|e| cast_failed(path, column, dt, "u64", e))?;
        return as_i64_values(path, column, &plain);
    }
    if !can_cast_types(dt, &DataType::Int64) {
        return Err(unexpected_type(path, column, dt, "an integer"));
    }
    let plain =
        cast(array, &DataType::Int64).map_err(|e| cast_failed(path, column, dt, "i64", e))?;
    let a = plain.as_primitive::<Int64Type>();
    if a.null_count() == 0 {
        Ok(a.values().to_vec())
    } else {
        Ok(a.iter().map(|v| v.unwrap_or(0)).collect())
    }
}

/// Any numeric array as `f32`, nulls as 0.
fn as_f32_values(path: &Path, column: &str, array: &ArrayRef) -> Result<Vec<f32>> {
    let dt = array.data_type();
    if !can_cast_types(dt, &DataType::Float32) {
        return Err(unexpected_type(path, column, dt, "f32"));
    }
    let plain =
        cast(array, &DataType::Float32).map_err(|e| cast_failed(path, column, dt, "f32", e))?;
    let a = plain.as_primitive::<Float32Type>();
    Ok(a.iter().map(|v| v.unwrap_or(0.0)).collect())
}

/// Whole `.xz` file, decompressed.
fn read_xz(path: &Path) -> Result<Vec<u8>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut out = Vec::new();
    lzma_rs::xz_decompress(&mut input, &mut out).map_err(|e| {
        let err = match e {
            lzma_rs::error::Error::IoError(io) => io,
            other => std::io::Error::new(std::io::ErrorKind::InvalidData, format!("xz: {other}")),
        };
        Error::io(path, err)
    })?;
    Ok(out)
}

/// FASTA sequence characters: header lines (`>`) and line breaks dropped,
/// every `N`/`n` removed; soft-masked lower case kept.
fn fasta_bases_without_n(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for line in text.split(|&b| b == b'\n') {
        if line.first() == Some(&b'>') {
            continue;
        }
        out.extend(
            line.iter()
                .copied()
                .filter(|&b| !matches!(b, b'N' | b'n' | b'\r')),
        );
    }
    out
}

/// Stable permutation that sorts `keys` ascending.
fn sort_permutation(keys: &[i64]) -> Vec<u32> {
    let mut pairs: Vec<(i64, u32)> = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, i as u32))
        .collect();
    // Ties are broken by the original index, so this is a stable sort.
    pairs.par_sort_unstable();
    pairs.into_iter().map(|(_, i)| i).collect()
}

/// The name of the taxi pickup-time column (`tpep_pickup_datetime`,
/// `pickup_datetime`, ...).
fn pickup_column(path: &Path) -> Result<String> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|source| Error::Parquet {
            path: path.to_path_buf(),
            source,
        })?;
    let fields = builder.schema().fields();
    let find = |pred: &dyn Fn(&str) -> bool| {
        fields
            .iter()
            .map(|f| f.name().to_ascii_lowercase())
            .position(|n| pred(&n))
            .map(|i| fields[i].name().clone())
    };
    find(&|n| n.contains("pickup") && n.contains("datetime"))
        .or_else(|| find(&|n| n.contains("pickup") && (n.contains("time") || n.contains("date"))))
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "{}: no pickup datetime column (columns: {})",
                path.display(),
                fields
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}

/// Number of source files [`load_group`] knows, numbered from 0.
const SOURCE_GROUPS: usize = 6;

/// One loaded column, before tiling.
struct Loaded {
    name: &'static str,
    description: &'static str,
    source: PathBuf,
    data: ColumnData,
}

/// Loads the wanted columns that come from one source file.
fn load_group(dir: &Path, group: usize, want: &dyn Fn(&str) -> bool) -> Result<Vec<Loaded>> {
    let started = Instant::now();
    let mut out = Vec::new();
    match group {
        0 => {
            let path = dir.join(FANNIE_FILE);
            let mut cols = Vec::new();
            if want("MC0") {
                cols.push("f0");
            }
            if want("MC3") {
                cols.push("f3");
            }
            if cols.is_empty() {
                return Ok(out);
            }
            let arrays = read_parquet_columns(&path, &cols)?;
            for (col, array) in cols.iter().zip(&arrays) {
                if *col == "f0" {
                    let v = as_i64_values(&path, col, array)?;
                    out.push(Loaded {
                        name: "MC0",
                        description: "mortgage loan id (u64)",
                        source: path.clone(),
                        data: ColumnData::U64(v.into_iter().map(|x| x as u64).collect()),
                    });
                } else {
                    let v = as_f32_values(&path, col, array)?;
                    out.push(Loaded {
                        name: "MC3",
                        description: "mortgage interest rate (f32 bits as u32)",
                        source: path.clone(),
                        data: ColumnData::U32(v.into_iter().map(f32::to_bits).collect()),
                    });
                }
            }
        }
        1 => {
            let (tpc, tpt) = (want("TPC"), want("TPT"));
            if !tpc && !tpt {
                return Ok(out);
            }
            let path = dir.join(TAXI_FILE);
            let pickup = pickup_column(&path)?;
            let arrays =
                read_parquet_columns(&path, &[&pickup, "passenger_count", "payment_type"])?;
            let keys = as_i64_values(&path, &pickup, &arrays[0])?;
            let order = sort_permutation(&keys);
            if tpc {
                let v = as_i64_values(&path, "passenger_count", &arrays[1])?;
                out.push(Loaded {
                    name: "TPC",
                    description: "taxi passenger_count, sorted by pickup time (i8)",
                    source: path.clone(),
                    data: ColumnData::I8(order.iter().map(|&i| v[i as usize] as i8).collect()),
                });
            }
            if tpt {
                let v = as_i64_values(&path, "payment_type", &arrays[2])?;
                out.push(Loaded {
                    name: "TPT",
                    description: "taxi payment_type code, sorted by pickup time (u8)",
                    source: path.clone(),
                    data: ColumnData::U8(order.iter().map(|&i| v[i as usize] as u8).collect()),
                });
            }
        }
        2 => {
            if !want("CD2") {
                return Ok(out);
            }
            let path = dir.join(CRITEO_FILE);
            let arrays = read_parquet_columns(&path, &["I2"])?;
            let v = as_i64_values(&path, "I2", &arrays[0])?;
            out.push(Loaded {
                name: "CD2",
                description: "Criteo integer feature I2 (u32)",
                source: path,
                data: ColumnData::U32(v.into_iter().map(|x| x as u32).collect()),
            });
        }
        3 => {
            if !want("TC2") {
                return Ok(out);
            }
            let path = dir.join(TWITTER_FILE);
            let arrays = read_parquet_columns(&path, &["src"])?;
            let v = as_i64_values(&path, "src", &arrays[0])?;
            out.push(Loaded {
                name: "TC2",
                description: "Twitter edge source id (u64)",
                source: path,
                data: ColumnData::U64(v.into_iter().map(|x| x as u64).collect()),
            });
        }
        4 => {
            if !want("HRG") {
                return Ok(out);
            }
            let path = dir.join(GENOME_FILE);
            let text = read_xz(&path)?;
            out.push(Loaded {
                name: "HRG",
                description: "human genome hg38 chr2 characters, N removed (u8)",
                source: path,
                data: ColumnData::U8(fasta_bases_without_n(&text)),
            });
        }
        5 => {
            if !want("TXT") {
                return Ok(out);
            }
            let path = dir.join(TEXT_FILE);
            out.push(Loaded {
                name: "TXT",
                description: "English text bytes (u8)",
                data: ColumnData::U8(read_xz(&path)?),
                source: path,
            });
        }
        _ => unreachable!("{SOURCE_GROUPS} source groups"),
    }
    for l in &out {
        tracing::debug!(
            column = l.name,
            values = l.data.len(),
            ms = started.elapsed().as_secs_f64() * 1e3,
            "loaded suite column"
        );
    }
    Ok(out)
}

/// Tiles loaded columns in parallel; `target_bytes == 0` keeps them as they are.
fn finish(loaded: Vec<Loaded>, target_bytes: usize) -> Vec<SuiteColumn> {
    loaded
        .into_par_iter()
        .map(|l| SuiteColumn {
            name: l.name.to_string(),
            description: l.description.to_string(),
            source: l.source.display().to_string(),
            data: if target_bytes == 0 {
                l.data
            } else {
                l.data.tiled(target_bytes)
            },
        })
        .collect()
}

/// The CODAG-style columns from the real-data folder (typically
/// `../shared/realdata`), each tiled to `target_bytes` (`0` keeps the
/// original, untiled values).
///
/// `names` selects which (empty = all): MC0, MC3, TPC, TPT, CD2, TC2, HRG,
/// TXT (case-insensitive). The result follows that canonical order
/// ([`CODAG_NAMES`]), whatever the order of `names`.
///
/// - MC0: Fannie Mae performance `f0`, loan id, as u64, file order;
/// - MC3: same file, `f3`, interest rate as f32, stored as its bit pattern in
///   [`ColumnData::U32`];
/// - TPC / TPT: yellow-taxi `passenger_count` as i8 and `payment_type` as u8,
///   rows stably sorted by the pickup datetime;
/// - CD2: Criteo `I2` as u32 (negative values wrap);
/// - TC2: SNAP ego-Twitter edge `src` as u64, file order;
/// - HRG: hg38 chr2 FASTA characters without headers, line breaks and `N`/`n`;
/// - TXT: the English corpus bytes.
///
/// Nulls read as 0. Files are read in parallel, each only once.
pub fn codag_suite(
    realdata: &Path,
    names: &[&str],
    target_bytes: usize,
) -> Result<Vec<SuiteColumn>> {
    let started = Instant::now();
    let mask = select(&CODAG_NAMES, names, "CODAG")?;
    let want = |n: &str| CODAG_NAMES.iter().zip(&mask).any(|(k, &w)| w && *k == n);
    let groups: Vec<Vec<Loaded>> = (0..SOURCE_GROUPS)
        .into_par_iter()
        .map(|g| load_group(realdata, g, &want))
        .collect::<Result<_>>()?;
    let mut loaded: Vec<Loaded> = groups.into_iter().flatten().collect();
    loaded.sort_by_key(|l| CODAG_NAMES.iter().position(|k| *k == l.name));
    for l in &loaded {
        if l.data.is_empty() {
            return Err(Error::Unsupported(format!(
                "{}: column {} has no values",
                l.source.display(),
                l.name
            )));
        }
    }
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let out = finish(loaded, target_bytes);
    tracing::info!(
        columns = out.len(),
        target_bytes,
        load_ms,
        total_ms = started.elapsed().as_secs_f64() * 1e3,
        "CODAG suite ready"
    );
    Ok(out)
}

/// Scale factor for the generated suite: enough rows that the widest column
/// (8 bytes) reaches `target_bytes` where that stays cheap, between 0.001
/// (about 6,000 rows) and 0.1 (about 600,000 rows); the rest is tiling.
fn generated_scale_factor(target_bytes: usize) -> f64 {
    let rows = target_bytes as f64 / 8.0;
    let sf = (rows / 6_000_000.0 * 1000.0).ceil() / 1000.0;
    sf.clamp(0.001, 0.1)
}

/// Fallback when there is no real data: integer columns of TPC-H `lineitem`
/// generated in-process with `tpchgen` (a small scale factor, 0.001 to 0.1
/// depending on `target_bytes`, then tiled to `target_bytes`; `0` keeps the
/// generated rows untiled).
///
/// Columns: `L_ORDERKEY` (u64), `L_PARTKEY` (u64), `L_QUANTITY` (i8),
/// `L_LINENUMBER` (u8), `L_SHIPDATE` (i32 days since 1970-01-01),
/// `L_DISCOUNT` (u8, percent), `L_RETURNFLAG` (u8, the flag character).
/// `names` filters as in [`codag_suite`] (empty = all, canonical order
/// [`GENERATED_NAMES`]).
pub fn generated_suite(names: &[&str], target_bytes: usize) -> Result<Vec<SuiteColumn>> {
    use tpchgen::generators::LineItemGenerator;

    let started = Instant::now();
    let mask = select(&GENERATED_NAMES, names, "generated TPC-H")?;
    let sf = generated_scale_factor(target_bytes);

    /// Rows of one generator part, column by column.
    #[derive(Default)]
    struct Part {
        orderkey: Vec<u64>,
        partkey: Vec<u64>,
        quantity: Vec<i8>,
        linenumber: Vec<u8>,
        shipdate: Vec<i32>,
        discount: Vec<u8>,
        returnflag: Vec<u8>,
    }

    // A fixed part count keeps the rows identical whatever the thread count.
    const PARTS: i32 = 16;
    let parts: Vec<Part> = (1..=PARTS)
        .into_par_iter()
        .map(|part| {
            let mut p = Part::default();
            for row in LineItemGenerator::new(sf, part, PARTS).iter() {
                p.orderkey.push(row.l_orderkey as u64);
                p.partkey.push(row.l_partkey as u64);
                p.quantity.push(row.l_quantity as i8);
                p.linenumber.push(row.l_linenumber as u8);
                p.shipdate.push(row.l_shipdate.to_unix_epoch());
                p.discount.push(row.l_discount.0 as u8);
                p.returnflag
                    .push(row.l_returnflag.as_bytes().first().copied().unwrap_or(0));
            }
            p
        })
        .collect();
    fn gather<T: Copy>(parts: &[Part], f: impl Fn(&Part) -> &Vec<T>) -> Vec<T> {
        let mut out = Vec::with_capacity(parts.iter().map(|p| f(p).len()).sum());
        for p in parts {
            out.extend_from_slice(f(p));
        }
        out
    }
    const DESCRIPTIONS: [&str; 7] = [
        "TPC-H l_orderkey (u64)",
        "TPC-H l_partkey (u64)",
        "TPC-H l_quantity (i8)",
        "TPC-H l_linenumber (u8)",
        "TPC-H l_shipdate, days since 1970-01-01 (i32)",
        "TPC-H l_discount in percent (u8)",
        "TPC-H l_returnflag character (u8)",
    ];
    let build = |i: usize| match i {
        0 => ColumnData::U64(gather(&parts, |p| &p.orderkey)),
        1 => ColumnData::U64(gather(&parts, |p| &p.partkey)),
        2 => ColumnData::I8(gather(&parts, |p| &p.quantity)),
        3 => ColumnData::U8(gather(&parts, |p| &p.linenumber)),
        4 => ColumnData::I32(gather(&parts, |p| &p.shipdate)),
        5 => ColumnData::U8(gather(&parts, |p| &p.discount)),
        _ => ColumnData::U8(gather(&parts, |p| &p.returnflag)),
    };
    let source = PathBuf::from(format!("generated: TPC-H lineitem SF {sf}"));
    let loaded: Vec<Loaded> = (0..GENERATED_NAMES.len())
        .filter(|&i| mask[i])
        .map(|i| Loaded {
            name: GENERATED_NAMES[i],
            description: DESCRIPTIONS[i],
            source: source.clone(),
            data: build(i),
        })
        .collect();
    drop(parts);
    let out = finish(loaded, target_bytes);
    tracing::info!(
        columns = out.len(),
        scale_factor = sf,
        target_bytes,
        total_ms = started.elapsed().as_secs_f64() * 1e3,
        "generated TPC-H suite ready"
    );
    Ok(out)
}

/// Default real-data folder: `$WARPREAD_REALDATA` if set (and not empty),
/// else the first of `../shared/realdata`, `../../shared/realdata` relative to
/// the current directory that exists, else `None`.
pub fn default_realdata_dir() -> Option<PathBuf> {
    if let Some(dir) = crate::cli::env::realdata() {
        return Some(dir);
    }
    let cwd = std::env::current_dir().ok()?;
    let found = ["../shared/realdata", "../../shared/realdata"]
        .iter()
        .map(|rel| cwd.join(rel))
        .find(|p| p.is_dir())?;
    Some(found.canonicalize().unwrap_or(found))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiling_is_exact_and_periodic() {
        let src: Vec<u16> = (0..7).map(|i| i * 3 + 1).collect();
        let col = ColumnData::U16(src.clone());
        for target in [0, 1, 2, 13, 14, 16, 100, 1000, 4096, 12345] {
            let t = col.tiled(target);
            assert_eq!(t.len(), target / 2, "target {target}");
            assert_eq!(t.int_type(), IntType::U16);
            let ColumnData::U16(v) = &t else {
                panic!("type changed")
            };
            for (i, x) in v.iter().enumerate() {
                assert_eq!(*x, src[i % src.len()], "target {target} index {i}");
            }
            assert!(t.byte_len() <= target && target - t.byte_len() < 2);
        }
        // Fewer than one period: a prefix.
        assert_eq!(
            ColumnData::I64(vec![5, 6, 7]).tiled(16),
            ColumnData::I64(vec![5, 6])
        );
        // Empty stays empty.
        assert!(ColumnData::U8(Vec::new()).tiled(1 << 20).is_empty());
        // Large, multiple-of-period and not.
        let big = ColumnData::U8((0..=250).collect()).tiled(3 << 20);
        assert_eq!(big.len(), 3 << 20);
        let ColumnData::U8(v) = big else {
            unreachable!()
        };
        assert!(v.iter().enumerate().all(|(i, &x)| x as usize == i % 251));
    }

    #[test]
    fn le_bytes_and_sizes() {
        let c = ColumnData::I16(vec![1, -2, 0x1234]);
        assert_eq!(c.len(), 3);
        assert!(!c.is_empty());
        assert_eq!(c.byte_len(), 6);
        assert_eq!(c.to_le_bytes(), vec![1, 0, 0xfe, 0xff, 0x34, 0x12]);
        let c = ColumnData::U64(vec![0x0102_0304_0506_0708]);
        assert_eq!(c.to_le_bytes(), vec![8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(c.int_type(), IntType::U64);
        let c = ColumnData::U32(vec![6.375f32.to_bits()]);
        assert_eq!(c.to_le_bytes(), 6.375f32.to_le_bytes().to_vec());
        let c = ColumnData::I8(vec![-1, 2]);
        assert_eq!(c.to_le_bytes(), vec![0xff, 2]);
        assert_eq!(ColumnData::I32(Vec::new()).to_le_bytes(), Vec::<u8>::new());
    }

    #[test]
    fn fasta_cleaning() {
        let text = b">chr2 test\nNNNNacgT\nnnGGNa\r\n>second\nTTn\n";
        assert_eq!(fasta_bases_without_n(text), b"acgTGGaTT".to_vec());
    }

    #[test]
    fn sort_permutation_is_stable() {
        let keys = [3, 1, 3, 0, 1, 3];
        assert_eq!(sort_permutation(&keys), vec![3, 1, 4, 0, 2, 5]);
    }

    #[test]
    fn name_selection() {
        assert_eq!(select(&CODAG_NAMES, &[], "x").unwrap(), vec![true; 8]);
        let m = select(&CODAG_NAMES, &["hrg", "MC0"], "x").unwrap();
        assert_eq!(m.iter().filter(|w| **w).count(), 2);
        assert!(m[0] && m[6]);
        assert!(matches!(
            select(&CODAG_NAMES, &["L_ORDERKEY"], "x"),
            Err(Error::Unsupported(_))
        ));
    }

    #[test]
    fn generated_suite_small() {
        let target = 64 << 10;
        let cols = generated_suite(&[], target).unwrap();
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, GENERATED_NAMES.to_vec());
        for c in &cols {
            assert_eq!(
                c.data.len(),
                target / c.data.int_type().byte_width(),
                "{}",
                c.name
            );
            assert!(
                c.source.starts_with("generated: TPC-H lineitem SF "),
                "{}",
                c.source
            );
        }
        let by = |n: &str| &cols.iter().find(|c| c.name == n).unwrap().data;
        assert_eq!(by("L_ORDERKEY").int_type(), IntType::U64);
        assert_eq!(by("L_PARTKEY").int_type(), IntType::U64);
        assert_eq!(by("L_SHIPDATE").int_type(), IntType::I32);
        let ColumnData::I8(q) = by("L_QUANTITY") else {
            panic!("L_QUANTITY type")
        };
        assert!(q.iter().all(|&x| (1..=50).contains(&x)));
        let ColumnData::U8(l) = by("L_LINENUMBER") else {
            panic!("L_LINENUMBER type")
        };
        assert!(l.iter().all(|&x| (1..=7).contains(&x)));
        let ColumnData::U8(d) = by("L_DISCOUNT") else {
            panic!("L_DISCOUNT type")
        };
        assert!(d.iter().all(|&x| x <= 10));
        let ColumnData::U8(f) = by("L_RETURNFLAG") else {
            panic!("L_RETURNFLAG type")
        };
        assert!(f.iter().all(|&x| matches!(x, b'R' | b'A' | b'N')));
        let ColumnData::I32(s) = by("L_SHIPDATE") else {
            unreachable!()
        };
        // 1992-01-02 .. 1998-12-31 in days since the epoch.
        assert!(
            s.iter().all(|&x| (8036..=10_591).contains(&x)),
            "{:?}",
            &s[..4]
        );
        let ColumnData::U64(o) = by("L_ORDERKEY") else {
            unreachable!()
        };
        assert_eq!(o[0], 1);

        let some = generated_suite(&["L_DISCOUNT", "l_orderkey"], 1024).unwrap();
        let names: Vec<&str> = some.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["L_ORDERKEY", "L_DISCOUNT"]);
        assert!(generated_suite(&["MC0"], 1024).is_err());
    }

    #[test]
    fn realdata_suite() {
        let Some(dir) = default_realdata_dir() else {
            println!("skipped: no realdata");
            return;
        };
        if !dir.join(FANNIE_FILE).exists() {
            println!("skipped: no realdata in {}", dir.display());
            return;
        }
        // Decompressing the 19 MB text is slow without optimisation.
        let names: Vec<&str> = if cfg!(debug_assertions) {
            CODAG_NAMES
                .iter()
                .copied()
                .filter(|n| *n != "TXT")
                .collect()
        } else {
            CODAG_NAMES.to_vec()
        };
        let started = Instant::now();
        let raw = codag_suite(&dir, &names, 0).unwrap();
        println!(
            "loaded {} columns untiled in {:?}",
            raw.len(),
            started.elapsed()
        );
        assert_eq!(raw.len(), names.len());
        let target = 1 << 20;
        let cols: Vec<SuiteColumn> = raw
            .iter()
            .map(|c| SuiteColumn {
                data: c.data.tiled(target),
                ..c.clone()
            })
            .collect();
        // The tiling path of the loader itself, on two cheap columns.
        let two = codag_suite(&dir, &["cd2", "MC0"], target).unwrap();
        assert_eq!(two.len(), 2);
        assert_eq!(two[0].data, cols[0].data);
        let cd2 = cols.iter().find(|c| c.name == "CD2").unwrap();
        assert_eq!(two[1].data, cd2.data);
        let expect = [
            ("MC0", IntType::U64),
            ("MC3", IntType::U32),
            ("TPC", IntType::I8),
            ("TPT", IntType::U8),
            ("CD2", IntType::U32),
            ("TC2", IntType::U64),
            ("HRG", IntType::U8),
            ("TXT", IntType::U8),
        ];
        for ((c, r), n) in cols.iter().zip(&raw).zip(&names) {
            let (_, ty) = expect.iter().find(|(e, _)| e == n).unwrap();
            assert_eq!(c.name, *n);
            assert_eq!(c.data.int_type(), *ty, "{n}");
            assert!(!r.data.is_empty(), "{n}");
            assert_eq!(c.data.len(), target / ty.byte_width(), "{n}");
            println!(
                "{n}: {} values untiled, {} ({})",
                r.data.len(),
                c.description,
                c.source
            );
        }
        let raw_of = |n: &str| &raw.iter().find(|c| c.name == n).unwrap().data;
        let ColumnData::U64(mc0) = raw_of("MC0") else {
            unreachable!()
        };
        assert_eq!(mc0.len(), 10_000);
        assert_eq!(mc0[0], 100_006_457_919);
        let ColumnData::U32(mc3) = raw_of("MC3") else {
            unreachable!()
        };
        assert_eq!(mc3[0], 6.375f32.to_bits());
        let ColumnData::I8(tpc) = raw_of("TPC") else {
            unreachable!()
        };
        assert_eq!(tpc.len(), 360_000);
        assert!(tpc.iter().all(|&x| (0..=9).contains(&x)));
        let ColumnData::U8(tpt) = raw_of("TPT") else {
            unreachable!()
        };
        assert!(tpt.iter().all(|&x| x <= 6));
        let ColumnData::U32(cd2) = raw_of("CD2") else {
            unreachable!()
        };
        assert_eq!(&cd2[..5], &[1, 0, 0, 893, u32::MAX]);
        let ColumnData::U64(tc2) = raw_of("TC2") else {
            unreachable!()
        };
        assert_eq!(tc2.len(), 1_342_310);
        assert!(tc2.windows(2).all(|w| w[0] <= w[1]));
        let ColumnData::U8(hrg) = raw_of("HRG") else {
            unreachable!()
        };
        assert!(hrg.len() > 1_000_000);
        assert!(!hrg.iter().any(|&b| matches!(b, b'N' | b'n' | b'\n' | b'>')));
        assert!(
            hrg.iter()
                .all(|b| b"ACGTacgt".contains(b) || b.is_ascii_alphabetic())
        );
    }

    /// Load times at the benchmark size; run with
    /// `cargo test --release --lib bench::suite -- --ignored --nocapture`.
    #[test]
    #[ignore = "timing at 256 MiB per column; run in release"]
    fn load_timing_256mib() {
        let target = 256 << 20;
        if let Some(dir) = default_realdata_dir() {
            for name in CODAG_NAMES {
                let t = Instant::now();
                let raw = codag_suite(&dir, &[name], 0).unwrap();
                let load = t.elapsed();
                let t = Instant::now();
                let tiled = raw[0].data.tiled(target);
                println!(
                    "{name}: load {load:?} ({} values), tile to {} B {:?}",
                    raw[0].data.len(),
                    tiled.byte_len(),
                    t.elapsed()
                );
            }
            let t = Instant::now();
            let all = codag_suite(&dir, &[], 0).unwrap();
            println!("codag_suite(all, untiled): {:?}", t.elapsed());
            drop(all);
            let t = Instant::now();
            let all = codag_suite(&dir, &[], target).unwrap();
            println!(
                "codag_suite(all, 256 MiB): {:?}, {} columns",
                t.elapsed(),
                all.len()
            );
            drop(all);
        } else {
            println!("skipped codag: no realdata");
        }
        let t = Instant::now();
        let all = generated_suite(&[], target).unwrap();
        println!(
            "generated_suite(all, 256 MiB): {:?}, {} columns, {}",
            t.elapsed(),
            all.len(),
            all[0].source
        );
        let t = Instant::now();
        let bytes = all[0].data.to_le_bytes();
        println!("to_le_bytes of {} B: {:?}", bytes.len(), t.elapsed());
    }
}
