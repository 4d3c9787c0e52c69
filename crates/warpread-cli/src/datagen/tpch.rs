//! TPC-H tables generated in-process (tpchgen) and written as Parquet or
//! ORC, one file per table, generator parts built in parallel. Strings are
//! written as plain `Utf8` so every reader (pyarrow's ORC writer included)
//! takes them.
//!
//! ORC comes from warpread's small writer ([`super::orc`]): RLE v1 (file
//! version 0.11), no dictionaries. For files as Hive or pyarrow write them
//! (RLE v2, dictionaries) convert the Parquet output with
//! `scripts/parquet_to_orc.py`.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use indicatif::{ProgressBar, ProgressStyle};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{ArrowColumnChunk, ArrowRowGroupWriterFactory, compute_leaves};
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use rayon::prelude::*;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RegionArrow,
    SupplierArrow,
};

use crate::error::{Error, Result};
use warpread::orc::writer::{OrcCompression, OrcWriteOptions, OrcWriter};

/// The eight TPC-H tables.
pub use warpread_datafusion::TPCH_TABLES as TABLES;

/// Compression for generated files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GenCompression {
    /// No compression.
    None,
    /// GZIP (deflate in gzip members), level 6: Parquet only.
    Gzip,
    /// ZLIB (raw deflate), level 6: ORC only.
    Zlib,
    /// Snappy.
    Snappy,
    /// Zstandard, level 3.
    Zstd,
}

/// File format of generated files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GenFormat {
    /// Parquet (the parquet crate's writer).
    Parquet,
    /// ORC (warpread's RLE v1 writer).
    Orc,
}

impl GenFormat {
    /// File extension without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Parquet => "parquet",
            Self::Orc => "orc",
        }
    }
}

impl GenCompression {
    fn parquet(self) -> Result<Compression> {
        Ok(match self {
            Self::None => Compression::UNCOMPRESSED,
            Self::Gzip => Compression::GZIP(GzipLevel::default()),
            Self::Snappy => Compression::SNAPPY,
            Self::Zstd => Compression::ZSTD(ZstdLevel::default()),
            Self::Zlib => {
                return Err(Error::Unsupported(
                    "Parquet has no ZLIB codec: use --compression gzip (deflate in gzip members)"
                        .into(),
                ));
            }
        })
    }

    fn orc(self) -> Result<OrcCompression> {
        Ok(match self {
            Self::None => OrcCompression::None,
            Self::Zlib => OrcCompression::Zlib,
            Self::Snappy => OrcCompression::Snappy,
            Self::Zstd => OrcCompression::Zstd,
            Self::Gzip => {
                return Err(Error::Unsupported(
                    "ORC has no GZIP codec: use --compression zlib (raw deflate)".into(),
                ));
            }
        })
    }
}

/// What to write: format, compression, and for ORC the stripe size.
#[derive(Debug, Clone, Copy)]
pub struct GenOptions {
    /// File format.
    pub format: GenFormat,
    /// Compression.
    pub compression: GenCompression,
    /// Most rows per ORC stripe or Parquet row group.
    pub rows_per_group: usize,
}

impl GenOptions {
    /// `format` with `compression` and the default group size (2^18 rows:
    /// several stripes per large table even at small scales, so scans split
    /// across partitions).
    pub fn new(format: GenFormat, compression: GenCompression) -> Self {
        Self {
            format,
            compression,
            rows_per_group: 1 << 18,
        }
    }

    /// Checks that the compression exists in the format.
    pub fn validate(&self) -> Result<()> {
        match self.format {
            GenFormat::Parquet => self.compression.parquet().map(drop),
            GenFormat::Orc => self.compression.orc().map(drop),
        }
    }
}

/// One output file of either format.
enum TableWriter {
    Parquet(ParquetTable),
    Orc(OrcWriter),
}

/// A Parquet file written a wave of batches at a time, its row groups
/// encoded and compressed side by side: the `ArrowWriter` compresses one
/// column chunk after another on one thread, which made GZIP generation at
/// scale 10 take minutes of a 16-core host.
struct ParquetTable {
    file: SerializedFileWriter<File>,
    columns: ArrowRowGroupWriterFactory,
    /// Rows waiting for a full row group (the last group takes the rest).
    pending: Vec<RecordBatch>,
    pending_rows: usize,
    rows_per_group: usize,
    groups: usize,
}

impl ParquetTable {
    fn create(path: &Path, schema: SchemaRef, o: &GenOptions) -> Result<Self> {
        let perr = |e| Error::Parquet {
            path: path.to_path_buf(),
            source: e,
        };
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        let props = WriterProperties::builder()
            .set_compression(o.compression.parquet()?)
            .set_max_row_group_row_count(Some(o.rows_per_group))
            .build();
        // The ArrowWriter converts the schema and embeds it as ARROW:schema;
        // its lower half then takes row groups encoded elsewhere.
        let (file, columns) = ArrowWriter::try_new(file, schema, Some(props))
            .and_then(ArrowWriter::into_serialized_writer)
            .map_err(perr)?;
        Ok(Self {
            file,
            columns,
            pending: Vec::new(),
            pending_rows: 0,
            rows_per_group: o.rows_per_group.max(1),
            groups: 0,
        })
    }

    /// Takes `batches`; writes every row group they complete.
    fn write(&mut self, path: &Path, batches: Vec<RecordBatch>) -> Result<()> {
        for b in batches {
            self.pending_rows += b.num_rows();
            self.pending.push(b);
        }
        let full = self.pending_rows / self.rows_per_group;
        if full > 0 {
            let groups = self.cut(full * self.rows_per_group, path)?;
            self.write_groups(path, groups)?;
        }
        Ok(())
    }

    /// The first `rows` pending rows as row groups of `rows_per_group`,
    /// each joined from the slices it covers: joining all pending batches
    /// at once overflowed 32-bit string offsets at scale 30 (partsupp's
    /// comments).
    fn cut(&mut self, rows: usize, path: &Path) -> Result<Vec<RecordBatch>> {
        let schema = self.pending[0].schema();
        let join = |parts: &[RecordBatch]| {
            arrow::compute::concat_batches(&schema, parts)
                .map_err(|e| Error::arrow(format!("{}: joining batches", path.display()), e))
        };
        let (mut groups, mut parts, mut rest) = (Vec::new(), Vec::new(), Vec::new());
        let (mut in_group, mut taken) = (0usize, 0usize);
        for mut b in std::mem::take(&mut self.pending) {
            while b.num_rows() > 0 && taken < rows {
                let n = (self.rows_per_group - in_group)
                    .min(rows - taken)
                    .min(b.num_rows());
                parts.push(b.slice(0, n));
                b = b.slice(n, b.num_rows() - n);
                in_group += n;
                taken += n;
                if in_group == self.rows_per_group || taken == rows {
                    groups.push(join(&parts)?);
                    parts.clear();
                    in_group = 0;
                }
            }
            if b.num_rows() > 0 {
                rest.push(b);
            }
        }
        self.pending_rows -= taken;
        self.pending = rest;
        Ok(groups)
    }

    /// Encodes `groups` (every column of every group a task), then appends
    /// them to the file in order.
    fn write_groups(&mut self, path: &Path, groups: Vec<RecordBatch>) -> Result<()> {
        let perr = |e| Error::Parquet {
            path: path.to_path_buf(),
            source: e,
        };
        let first = self.groups;
        let columns = &self.columns;
        let encoded: Vec<Vec<ArrowColumnChunk>> = groups
            .par_iter()
            .enumerate()
            .map(|(g, batch)| {
                let writers = columns.create_column_writers(first + g)?;
                let mut leaves = Vec::with_capacity(writers.len());
                for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
                    leaves.extend(compute_leaves(field, array)?);
                }
                writers
                    .into_par_iter()
                    .zip(leaves)
                    .map(|(mut w, leaf)| {
                        w.write(&leaf)?;
                        w.close()
                    })
                    .collect::<parquet::errors::Result<Vec<_>>>()
            })
            .collect::<parquet::errors::Result<_>>()
            .map_err(perr)?;
        for chunks in encoded {
            let mut group = self.file.next_row_group().map_err(perr)?;
            for c in chunks {
                c.append_to_row_group(&mut group).map_err(perr)?;
            }
            group.close().map_err(perr)?;
            self.groups += 1;
        }
        Ok(())
    }

    fn finish(mut self, path: &Path) -> Result<()> {
        if self.pending_rows > 0 {
            let groups = self.cut(self.pending_rows, path)?;
            self.write_groups(path, groups)?;
        }
        self.file.close().map(drop).map_err(|e| Error::Parquet {
            path: path.to_path_buf(),
            source: e,
        })
    }
}

impl TableWriter {
    fn create(path: &Path, schema: SchemaRef, o: &GenOptions) -> Result<Self> {
        Ok(match o.format {
            GenFormat::Parquet => Self::Parquet(ParquetTable::create(path, schema, o)?),
            GenFormat::Orc => Self::Orc(OrcWriter::try_new(
                path,
                schema,
                OrcWriteOptions {
                    compression: o.compression.orc()?,
                    stripe_rows: o.rows_per_group,
                    ..OrcWriteOptions::default()
                },
            )?),
        })
    }

    fn write(&mut self, path: &Path, batches: Vec<RecordBatch>) -> Result<()> {
        match self {
            Self::Parquet(w) => w.write(path, batches),
            Self::Orc(w) => batches.iter().try_for_each(|b| w.write(b)),
        }
    }

    fn finish(self, path: &Path) -> Result<()> {
        match self {
            Self::Parquet(w) => w.finish(path),
            Self::Orc(w) => w.finish().map(drop),
        }
    }
}

/// Rows per generator part: parts are generated in parallel.
const ROWS_PER_PART: f64 = 1_000_000.0;
/// Approximate rows of each table at scale factor 1.
fn rows_at_sf1(table: &str) -> f64 {
    match table {
        "lineitem" => 6_001_215.0,
        "orders" => 1_500_000.0,
        "customer" => 150_000.0,
        "part" => 200_000.0,
        "partsupp" => 800_000.0,
        "supplier" => 10_000.0,
        _ => 25.0,
    }
}

fn plain_strings(schema: &SchemaRef) -> SchemaRef {
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| {
                let t = match f.data_type() {
                    DataType::Utf8View => DataType::Utf8,
                    t => t.clone(),
                };
                Field::new(f.name(), t, f.is_nullable())
            })
            .collect::<Vec<_>>(),
    ))
}

fn part_batches(table: &str, sf: f64, part: i32, parts: i32) -> Result<Vec<RecordBatch>> {
    let batches: std::result::Result<Vec<RecordBatch>, _> = match table {
        "lineitem" => LineItemArrow::new(LineItemGenerator::new(sf, part, parts)).collect(),
        "orders" => OrderArrow::new(OrderGenerator::new(sf, part, parts)).collect(),
        "customer" => CustomerArrow::new(CustomerGenerator::new(sf, part, parts)).collect(),
        "part" => PartArrow::new(PartGenerator::new(sf, part, parts)).collect(),
        "partsupp" => PartSuppArrow::new(PartSuppGenerator::new(sf, part, parts)).collect(),
        "supplier" => SupplierArrow::new(SupplierGenerator::new(sf, part, parts)).collect(),
        "nation" => NationArrow::new(NationGenerator::new(sf, part, parts)).collect(),
        "region" => RegionArrow::new(RegionGenerator::new(sf, part, parts)).collect(),
        other => return Err(Error::Unsupported(format!("TPC-H table {other:?}"))),
    };
    batches
        .map_err(|e| Error::arrow("generating TPC-H", e))?
        .into_iter()
        .map(|b| {
            let schema = plain_strings(&b.schema());
            let cols = b
                .columns()
                .iter()
                .zip(schema.fields())
                .map(|(c, f)| arrow::compute::cast(c, f.data_type()))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::arrow("casting generated strings", e))?;
            RecordBatch::try_new(schema, cols).map_err(|e| Error::arrow("generating TPC-H", e))
        })
        .collect()
}

/// Generates one table at scale factor `sf` into `dir/TABLE.EXT`;
/// returns the path and the row count.
pub fn write_table(
    table: &str,
    sf: f64,
    options: &GenOptions,
    dir: &Path,
    progress: Option<&ProgressBar>,
) -> Result<(PathBuf, u64)> {
    let parts = if matches!(table, "nation" | "region") {
        1
    } else {
        ((rows_at_sf1(table) * sf) / ROWS_PER_PART).ceil().max(1.0) as i32
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let path = dir.join(format!("{table}.{}", options.format.extension()));
    // Written under a temporary name so an interrupted run leaves no file
    // that looks complete.
    let tmp = dir.join(format!(".{table}.{}.tmp", options.format.extension()));
    let mut writer: Option<TableWriter> = None;
    let mut rows = 0u64;
    let wave = rayon::current_num_threads().max(1) as i32;
    let mut next = 1;
    while next <= parts {
        let ids: Vec<i32> = (next..=(next + wave - 1).min(parts)).collect();
        next += ids.len() as i32;
        let generated = ids
            .par_iter()
            .map(|&p| part_batches(table, sf, p, parts))
            .collect::<Result<Vec<_>>>()?;
        let batches: Vec<RecordBatch> = generated.into_iter().flatten().collect();
        if let Some(first) = batches.first() {
            let w = match &mut writer {
                Some(w) => w,
                None => writer.insert(TableWriter::create(&tmp, first.schema(), options)?),
            };
            rows += batches.iter().map(|b| b.num_rows() as u64).sum::<u64>();
            w.write(&tmp, batches)?;
        }
        if let Some(p) = progress {
            p.inc(ids.len() as u64);
        }
    }
    if let Some(w) = writer {
        w.finish(&tmp)?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    }
    Ok((path, rows))
}

/// Generates every table (or those named) into `dir` with a progress bar.
pub fn generate(
    sf: f64,
    options: &GenOptions,
    dir: &Path,
    tables: &[String],
) -> Result<Vec<(PathBuf, u64)>> {
    options.validate()?;
    let chosen: Vec<&str> = if tables.is_empty() {
        TABLES.to_vec()
    } else {
        tables.iter().map(String::as_str).collect()
    };
    let total: u64 = chosen
        .iter()
        .map(|t| ((rows_at_sf1(t) * sf) / ROWS_PER_PART).ceil().max(1.0) as u64)
        .sum();
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} parts {elapsed}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut out = Vec::new();
    for t in chosen {
        bar.set_message(t.to_string());
        out.push(write_table(t, sf, options, dir, Some(&bar))?);
    }
    bar.finish_and_clear();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    /// Row groups of exactly `rows_per_group` rows however the waves'
    /// batches fall, the last taking the rest, with the generator's rows in
    /// order; and the same file whether the batches come in one wave or many.
    #[test]
    fn parquet_row_groups_are_cut_across_waves() {
        let dir = std::env::temp_dir().join(format!("warpread-tpch-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sf = 0.002;
        let expected: Vec<RecordBatch> = part_batches("orders", sf, 1, 1).unwrap();
        let schema = expected[0].schema();
        let all = arrow::compute::concat_batches(&schema, &expected).unwrap();
        let options = GenOptions {
            rows_per_group: 700,
            ..GenOptions::new(GenFormat::Parquet, GenCompression::Gzip)
        };
        let mut files = Vec::new();
        // One wave; waves of uneven slices (some shorter than a group, one
        // empty); one row at a time for the first rows.
        let cuts: [&[usize]; 3] = [&[], &[1, 333, 333, 0, 1500, 2], &[1, 1, 1, 698, 699]];
        for (k, cut) in cuts.iter().enumerate() {
            let path = dir.join(format!("orders{k}.parquet"));
            let mut w = TableWriter::create(&path, schema.clone(), &options).unwrap();
            let mut at = 0;
            for &n in *cut {
                w.write(&path, vec![all.slice(at, n)]).unwrap();
                at += n;
            }
            w.write(&path, vec![all.slice(at, all.num_rows() - at)])
                .unwrap();
            w.finish(&path).unwrap();
            files.push(path);
        }
        for path in &files {
            let reader =
                ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
            let sizes: Vec<i64> = reader
                .metadata()
                .row_groups()
                .iter()
                .map(|g| g.num_rows())
                .collect();
            let n = all.num_rows() as i64;
            assert!(n > 2 * 700, "too few rows ({n}) to cut several groups");
            let mut want = vec![700; (n / 700) as usize];
            if n % 700 > 0 {
                want.push(n % 700);
            }
            assert_eq!(sizes, want, "{}", path.display());
            let read: Vec<RecordBatch> = reader.build().unwrap().map(|b| b.unwrap()).collect();
            let read = arrow::compute::concat_batches(&read[0].schema(), &read).unwrap();
            assert_eq!(read.columns(), all.columns(), "{}", path.display());
            assert_eq!(
                std::fs::read(path).unwrap(),
                std::fs::read(&files[0]).unwrap()
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
