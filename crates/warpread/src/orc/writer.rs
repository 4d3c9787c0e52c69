//! A minimal ORC writer for generated data (TPC-H, tests): flat schemas of
//! integers, floats, strings, dates and decimals, nulls allowed, integer
//! streams in RLE v1 (file version 0.11), compression NONE, ZLIB, SNAPPY or
//! ZSTD, per-stripe and file statistics (min/max) so readers can prune.
//! It is not a general ORC writer: no dictionaries, no nesting, no
//! timestamps, no row index.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, SchemaRef,
};
use prost::Message;

use crate::codecs::{deflate, orc_rle_v1};
use crate::error::{Error, Result};
use crate::orc::proto;

/// Compression of the written file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrcCompression {
    /// Streams stored as they are.
    None,
    /// Raw deflate, level 6.
    Zlib,
    /// Snappy.
    Snappy,
    /// Zstandard, level 3.
    Zstd,
}

impl OrcCompression {
    fn proto(self) -> i32 {
        match self {
            Self::None => 0,
            Self::Zlib => 1,
            Self::Snappy => 2,
            Self::Zstd => 5,
        }
    }
}

/// Writer settings.
#[derive(Debug, Clone, Copy)]
pub struct OrcWriteOptions {
    /// Compression.
    pub compression: OrcCompression,
    /// Most rows per stripe.
    pub stripe_rows: usize,
    /// Compression chunk size.
    pub block_size: usize,
}

impl Default for OrcWriteOptions {
    fn default() -> Self {
        Self {
            compression: OrcCompression::Zlib,
            stripe_rows: 1 << 20,
            block_size: 256 << 10,
        }
    }
}

// Stream and type kinds of the ORC specification.
const PRESENT: i32 = 0;
const DATA: i32 = 1;
const LENGTH: i32 = 2;
const SECONDARY: i32 = 5;

fn orc_type(dt: &DataType) -> Option<proto::Type> {
    let (kind, precision, scale) = match dt {
        DataType::Int8 => (1, None, None),
        DataType::Int16 => (2, None, None),
        DataType::Int32 => (3, None, None),
        DataType::Int64 => (4, None, None),
        DataType::Float32 => (5, None, None),
        DataType::Float64 => (6, None, None),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => (7, None, None),
        DataType::Decimal128(p, s) if *s >= 0 => (14, Some(u32::from(*p)), Some(*s as u32)),
        DataType::Date32 => (15, None, None),
        _ => return None,
    };
    Some(proto::Type {
        kind: Some(kind),
        precision,
        scale,
        ..Default::default()
    })
}

/// Writes record batches into one ORC file.
pub struct OrcWriter {
    path: PathBuf,
    out: BufWriter<File>,
    schema: SchemaRef,
    options: OrcWriteOptions,
    pending: Vec<RecordBatch>,
    pending_rows: usize,
    offset: u64,
    stripes: Vec<proto::StripeInformation>,
    stripe_stats: Vec<proto::StripeStatistics>,
}

impl OrcWriter {
    /// Creates `path` for batches of `schema`; fails on column types the
    /// writer does not handle.
    pub fn try_new(path: &Path, schema: SchemaRef, options: OrcWriteOptions) -> Result<Self> {
        for f in schema.fields() {
            if orc_type(f.data_type()).is_none() {
                return Err(Error::Unsupported(format!(
                    "ORC writer: column {} of type {}",
                    f.name(),
                    f.data_type()
                )));
            }
        }
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        let mut out = BufWriter::new(file);
        out.write_all(b"ORC").map_err(|e| Error::io(path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            out,
            schema,
            options,
            pending: Vec::new(),
            pending_rows: 0,
            offset: 3,
            stripes: Vec::new(),
            stripe_stats: Vec::new(),
        })
    }

    /// Adds a batch; full stripes are written out.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.pending.push(batch.clone());
        self.pending_rows += batch.num_rows();
        while self.pending_rows >= self.options.stripe_rows.max(1) {
            let all = arrow::compute::concat_batches(&self.schema, &self.pending)
                .map_err(|e| Error::arrow("ORC writer: joining batches", e))?;
            let n = self.options.stripe_rows.max(1);
            self.write_stripe(&all.slice(0, n))?;
            let rest = all.slice(n, all.num_rows() - n);
            self.pending_rows = rest.num_rows();
            self.pending = vec![rest];
        }
        Ok(())
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| Error::io(&self.path, e))?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    fn write_stripe(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let start = self.offset;
        let mut streams = Vec::new();
        let mut stats = vec![proto::ColumnStatistics {
            number_of_values: Some(batch.num_rows() as u64),
            has_null: Some(false),
            ..Default::default()
        }];
        for (i, col) in batch.columns().iter().enumerate() {
            let id = i as u32 + 1;
            let (col_streams, st) = encode_column(col.as_ref())?;
            stats.push(st);
            for (kind, bytes) in col_streams {
                let data = compress(&bytes, self.options);
                self.put(&data)?;
                streams.push(proto::Stream {
                    kind: Some(kind),
                    column: Some(id),
                    length: Some(data.len() as u64),
                });
            }
        }
        let data_length = self.offset - start;
        let footer = proto::StripeFooter {
            streams,
            columns: vec![
                proto::ColumnEncoding {
                    kind: Some(0),
                    dictionary_size: None,
                };
                batch.num_columns() + 1
            ],
            writer_timezone: None,
        };
        let footer = compress(&footer.encode_to_vec(), self.options);
        self.put(&footer)?;
        self.stripes.push(proto::StripeInformation {
            offset: Some(start),
            index_length: Some(0),
            data_length: Some(data_length),
            footer_length: Some(footer.len() as u64),
            number_of_rows: Some(batch.num_rows() as u64),
        });
        self.stripe_stats
            .push(proto::StripeStatistics { col_stats: stats });
        Ok(())
    }

    /// Writes the last stripe and the file tail; returns the rows written.
    pub fn finish(mut self) -> Result<u64> {
        if self.pending_rows > 0 {
            let all = arrow::compute::concat_batches(&self.schema, &self.pending)
                .map_err(|e| Error::arrow("ORC writer: joining batches", e))?;
            self.write_stripe(&all)?;
        }
        let rows: u64 = self.stripes.iter().filter_map(|s| s.number_of_rows).sum();
        let mut types = vec![proto::Type {
            kind: Some(12),
            subtypes: (1..=self.schema.fields().len() as u32).collect(),
            field_names: self
                .schema
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect(),
            ..Default::default()
        }];
        types.extend(
            self.schema
                .fields()
                .iter()
                .filter_map(|f| orc_type(f.data_type())),
        );
        let file_stats = (0..types.len())
            .map(|c| merge_stats(self.stripe_stats.iter().map(|s| &s.col_stats[c])))
            .collect();
        let metadata = proto::Metadata {
            stripe_stats: std::mem::take(&mut self.stripe_stats),
        };
        let metadata = compress(&metadata.encode_to_vec(), self.options);
        let footer = proto::Footer {
            header_length: Some(3),
            content_length: Some(self.offset - 3),
            stripes: std::mem::take(&mut self.stripes),
            types,
            number_of_rows: Some(rows),
            statistics: file_stats,
            row_index_stride: Some(0),
            ..Default::default()
        };
        let footer = compress(&footer.encode_to_vec(), self.options);
        let postscript = proto::PostScript {
            footer_length: Some(footer.len() as u64),
            compression: Some(self.options.compression.proto()),
            compression_block_size: Some(self.options.block_size as u64),
            version: vec![0, 11],
            metadata_length: Some(metadata.len() as u64),
            writer_version: Some(6),
            stripe_statistics_length: None,
            magic: Some("ORC".into()),
        }
        .encode_to_vec();
        self.put(&metadata)?;
        self.put(&footer)?;
        self.put(&postscript)?;
        self.put(&[postscript.len() as u8])?;
        self.out.flush().map_err(|e| Error::io(&self.path, e))?;
        Ok(rows)
    }
}

/// ORC compression framing: chunks of at most the block size, each behind
/// a 3-byte header; a chunk that does not shrink is stored as original.
fn compress(data: &[u8], o: OrcWriteOptions) -> Vec<u8> {
    if o.compression == OrcCompression::None {
        return data.to_vec();
    }
    let mut out = Vec::with_capacity(data.len() / 2 + 16);
    for chunk in data.chunks(o.block_size.max(1)) {
        let packed = match o.compression {
            OrcCompression::Zlib => deflate::deflate(chunk, 6),
            OrcCompression::Snappy => snap::raw::Encoder::new()
                .compress_vec(chunk)
                .unwrap_or_else(|_| chunk.to_vec()),
            OrcCompression::Zstd => {
                zstd::bulk::compress(chunk, 3).unwrap_or_else(|_| chunk.to_vec())
            }
            OrcCompression::None => unreachable!(),
        };
        let (body, original) = if packed.len() < chunk.len() {
            (packed.as_slice(), 0)
        } else {
            (chunk, 1)
        };
        let h = (body.len() as u32) << 1 | original;
        out.extend_from_slice(&h.to_le_bytes()[..3]);
        out.extend_from_slice(body);
    }
    out
}

/// Boolean RLE of the validity bits (MSB first), as byte-RLE literals.
fn present(col: &dyn Array) -> Vec<u8> {
    let bits: Vec<u8> = (0..col.len())
        .collect::<Vec<_>>()
        .chunks(8)
        .map(|c| {
            c.iter().enumerate().fold(0u8, |acc, (k, &i)| {
                acc | (u8::from(col.is_valid(i)) << (7 - k))
            })
        })
        .collect();
    let mut out = Vec::with_capacity(bits.len() + bits.len() / 128 + 1);
    for group in bits.chunks(128) {
        out.push((-(group.len() as i32)) as u8);
        out.extend_from_slice(group);
    }
    out
}

fn int_stats(values: &[i64], nulls: bool) -> proto::ColumnStatistics {
    proto::ColumnStatistics {
        number_of_values: Some(values.len() as u64),
        has_null: Some(nulls),
        int_statistics: Some(proto::IntegerStatistics {
            minimum: values.iter().min().copied(),
            maximum: values.iter().max().copied(),
            sum: None,
        }),
        ..Default::default()
    }
}

type Streams = Vec<(i32, Vec<u8>)>;

fn encode_column(col: &dyn Array) -> Result<(Streams, proto::ColumnStatistics)> {
    let nulls = col.null_count() > 0;
    let mut streams: Streams = Vec::new();
    if nulls {
        streams.push((PRESENT, present(col)));
    }
    let valid = |i: &usize| col.is_valid(*i);
    let idx: Vec<usize> = (0..col.len()).filter(valid).collect();
    let mut base = proto::ColumnStatistics {
        number_of_values: Some(idx.len() as u64),
        has_null: Some(nulls),
        ..Default::default()
    };
    let ints = |v: Vec<i64>| (orc_rle_v1::encode(&v), v);
    let st = match col.data_type() {
        DataType::Int8 => {
            let a = col.as_primitive::<Int8Type>();
            let v: Vec<u8> = idx.iter().map(|&i| a.value(i) as u8).collect();
            let mut out = Vec::new();
            for g in v.chunks(128) {
                out.push((-(g.len() as i32)) as u8);
                out.extend_from_slice(g);
            }
            streams.push((DATA, out));
            int_stats(
                &v.iter().map(|&b| i64::from(b as i8)).collect::<Vec<_>>(),
                nulls,
            )
        }
        DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Date32 => {
            let v: Vec<i64> = match col.data_type() {
                DataType::Int16 => {
                    let a = col.as_primitive::<Int16Type>();
                    idx.iter().map(|&i| a.value(i).into()).collect()
                }
                DataType::Int32 => {
                    let a = col.as_primitive::<Int32Type>();
                    idx.iter().map(|&i| a.value(i).into()).collect()
                }
                DataType::Date32 => {
                    let a = col.as_primitive::<Date32Type>();
                    idx.iter().map(|&i| a.value(i).into()).collect()
                }
                _ => {
                    let a = col.as_primitive::<Int64Type>();
                    idx.iter().map(|&i| a.value(i)).collect()
                }
            };
            let (bytes, v) = ints(v);
            streams.push((DATA, bytes));
            if col.data_type() == &DataType::Date32 {
                base.date_statistics = Some(proto::DateStatistics {
                    minimum: v.iter().min().map(|&m| m as i32),
                    maximum: v.iter().max().map(|&m| m as i32),
                });
                base
            } else {
                int_stats(&v, nulls)
            }
        }
        DataType::Float32 | DataType::Float64 => {
            let v: Vec<f64> = if col.data_type() == &DataType::Float32 {
                let a = col.as_primitive::<Float32Type>();
                let mut out = Vec::new();
                for &i in &idx {
                    out.extend_from_slice(&a.value(i).to_le_bytes());
                }
                streams.push((DATA, out));
                idx.iter().map(|&i| a.value(i).into()).collect()
            } else {
                let a = col.as_primitive::<Float64Type>();
                let mut out = Vec::new();
                for &i in &idx {
                    out.extend_from_slice(&a.value(i).to_le_bytes());
                }
                streams.push((DATA, out));
                idx.iter().map(|&i| a.value(i)).collect()
            };
            // NaN makes min/max meaningless: leave the statistics out.
            if !v.iter().any(|x| x.is_nan()) {
                base.double_statistics = Some(proto::DoubleStatistics {
                    minimum: v.iter().copied().reduce(f64::min),
                    maximum: v.iter().copied().reduce(f64::max),
                    sum: None,
                });
            }
            base
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let strings: Vec<&str> = match col.data_type() {
                DataType::Utf8 => {
                    let a = col.as_string::<i32>();
                    idx.iter().map(|&i| a.value(i)).collect()
                }
                DataType::LargeUtf8 => {
                    let a = col.as_string::<i64>();
                    idx.iter().map(|&i| a.value(i)).collect()
                }
                _ => {
                    let a = col.as_string_view();
                    idx.iter().map(|&i| a.value(i)).collect()
                }
            };
            let lengths: Vec<u64> = strings.iter().map(|s| s.len() as u64).collect();
            streams.push((DATA, strings.concat().into_bytes()));
            streams.push((LENGTH, orc_rle_v1::encode(&lengths)));
            base.string_statistics = Some(proto::StringStatistics {
                minimum: strings.iter().min().map(|s| s.to_string()),
                maximum: strings.iter().max().map(|s| s.to_string()),
                sum: Some(lengths.iter().sum::<u64>() as i64),
                ..Default::default()
            });
            base
        }
        DataType::Decimal128(_, s) => {
            let a = col.as_primitive::<Decimal128Type>();
            let mut data = Vec::new();
            for &i in &idx {
                let v = a.value(i);
                // Zigzag over 128 bits, then a base-128 varint.
                let mut z = ((v << 1) ^ (v >> 127)) as u128;
                while z >= 0x80 {
                    data.push((z as u8) | 0x80);
                    z >>= 7;
                }
                data.push(z as u8);
            }
            streams.push((DATA, data));
            let scales = vec![i64::from(*s); idx.len()];
            streams.push((SECONDARY, orc_rle_v1::encode(&scales)));
            let text = |v: i128| {
                <Decimal128Type as arrow::datatypes::DecimalType>::format_decimal(v, 38, *s)
            };
            let values = idx.iter().map(|&i| a.value(i));
            base.decimal_statistics = Some(proto::DecimalStatistics {
                minimum: values.clone().min().map(text),
                maximum: values.max().map(text),
                sum: None,
            });
            base
        }
        other => {
            return Err(Error::Unsupported(format!(
                "ORC writer: column type {other}"
            )));
        }
    };
    Ok((streams, st))
}

fn merge_stats<'a>(
    stats: impl Iterator<Item = &'a proto::ColumnStatistics>,
) -> proto::ColumnStatistics {
    let mut out = proto::ColumnStatistics::default();
    let mut first = true;
    for s in stats {
        out.number_of_values =
            Some(out.number_of_values.unwrap_or(0) + s.number_of_values.unwrap_or(0));
        out.has_null = Some(out.has_null.unwrap_or(false) || s.has_null.unwrap_or(false));
        if first {
            out.int_statistics = s.int_statistics.clone();
            out.double_statistics = s.double_statistics.clone();
            out.string_statistics = s.string_statistics.clone();
            out.date_statistics = s.date_statistics.clone();
            out.decimal_statistics = s.decimal_statistics.clone();
            first = false;
            continue;
        }
        fn mm<T: Copy + PartialOrd>(
            a: Option<T>,
            b: Option<T>,
            pick: fn(T, T) -> bool,
        ) -> Option<T> {
            match (a, b) {
                (Some(x), Some(y)) => Some(if pick(y, x) { y } else { x }),
                _ => None,
            }
        }
        if let (Some(o), Some(n)) = (out.int_statistics.as_mut(), &s.int_statistics) {
            o.minimum = mm(o.minimum, n.minimum, |y, x| y < x);
            o.maximum = mm(o.maximum, n.maximum, |y, x| y > x);
        }
        if let (Some(o), Some(n)) = (out.date_statistics.as_mut(), &s.date_statistics) {
            o.minimum = mm(o.minimum, n.minimum, |y, x| y < x);
            o.maximum = mm(o.maximum, n.maximum, |y, x| y > x);
        }
        if let (Some(o), Some(n)) = (out.double_statistics.as_mut(), &s.double_statistics) {
            o.minimum = mm(o.minimum, n.minimum, |y, x| y < x);
            o.maximum = mm(o.maximum, n.maximum, |y, x| y > x);
        }
        if let (Some(o), Some(n)) = (out.decimal_statistics.as_mut(), &s.decimal_statistics) {
            // One column's bounds share its scale, so the digits compare.
            let units = |t: &String| t.replace('.', "").parse::<i128>().ok();
            let pick = |a: Option<String>, b: &Option<String>, less: bool| match (a, b) {
                (Some(x), Some(y)) => match (units(&x), units(y)) {
                    (Some(u), Some(v)) if (v < u) == less && u != v => Some(y.clone()),
                    (Some(_), Some(_)) => Some(x),
                    _ => None,
                },
                _ => None,
            };
            o.minimum = pick(o.minimum.take(), &n.minimum, true);
            o.maximum = pick(o.maximum.take(), &n.maximum, false);
        }
        if let (Some(o), Some(n)) = (out.string_statistics.as_mut(), &s.string_statistics) {
            o.minimum = match (o.minimum.take(), &n.minimum) {
                (Some(x), Some(y)) => Some(if y < &x { y.clone() } else { x }),
                _ => None,
            };
            o.maximum = match (o.maximum.take(), &n.maximum) {
                (Some(x), Some(y)) => Some(if y > &x { y.clone() } else { x }),
                _ => None,
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        ArrayRef, Date32Array, Decimal128Array, Float32Array, Float64Array, Int8Array, Int16Array,
        Int32Array, Int64Array, StringArray,
    };
    use arrow::datatypes::{Field, Schema};

    use super::*;
    use crate::exec::CpuBackend;
    use crate::orc::{OrcFile, ReadOptions};

    fn sample(n: usize) -> RecordBatch {
        let some = |i: usize| i % 7 != 3;
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int8Array::from_iter(
                (0..n).map(|i| some(i).then_some(i as i8)),
            )),
            Arc::new(Int16Array::from_iter_values((0..n).map(|i| i as i16 * 3))),
            Arc::new(Int32Array::from_iter(
                (0..n).map(|i| some(i).then_some(-(i as i32))),
            )),
            Arc::new(Int64Array::from_iter_values(
                (0..n).map(|i| (i as i64) << 33),
            )),
            Arc::new(Float32Array::from_iter_values(
                (0..n).map(|i| i as f32 / 4.0),
            )),
            Arc::new(Float64Array::from_iter(
                (0..n).map(|i| some(i).then_some(i as f64 * 0.1)),
            )),
            Arc::new(StringArray::from_iter(
                (0..n).map(|i| some(i).then(|| "x".repeat(i % 5) + &i.to_string())),
            )),
            Arc::new(Date32Array::from_iter_values(
                (0..n).map(|i| i as i32 - 500),
            )),
            Arc::new(
                Decimal128Array::from_iter(
                    (0..n).map(|i| some(i).then_some((i as i128 - 300) * 1_000_000_007)),
                )
                .with_precision_and_scale(30, 2)
                .unwrap(),
            ),
        ];
        let fields: Vec<Field> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), true))
            .collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
    }

    #[test]
    fn round_trips_through_the_reader() {
        let batch = sample(5000);
        let dir = std::env::temp_dir().join(format!("warpread-orc-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for compression in [
            OrcCompression::None,
            OrcCompression::Zlib,
            OrcCompression::Snappy,
            OrcCompression::Zstd,
        ] {
            let path = dir.join(format!("{compression:?}.orc"));
            let options = OrcWriteOptions {
                compression,
                stripe_rows: 1500,
                block_size: 4096,
            };
            let mut w = OrcWriter::try_new(&path, batch.schema(), options).unwrap();
            w.write(&batch.slice(0, 1000)).unwrap();
            w.write(&batch.slice(1000, 4000)).unwrap();
            assert_eq!(w.finish().unwrap(), 5000);
            let file = OrcFile::open(&path).unwrap();
            assert_eq!(file.stripes().len(), 4);
            let got = file
                .read(&ReadOptions::default(), &CpuBackend::new())
                .unwrap();
            let got = arrow::compute::concat_batches(&got[0].schema(), &got).unwrap();
            for (i, (g, want)) in got.columns().iter().zip(batch.columns()).enumerate() {
                assert_eq!(g.to_data(), want.to_data(), "{compression:?} column {i}");
            }
            // Stripe statistics prune: c3 = i << 33 is sorted.
            let pruned = ReadOptions::default().with_predicate("c3 < 8589934592".parse().unwrap());
            assert_eq!(file.selected_stripes(&pruned).unwrap(), vec![0]);
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
