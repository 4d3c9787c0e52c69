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
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RegionArrow,
    SupplierArrow,
};

use super::orc::{OrcCompression, OrcWriteOptions, OrcWriter};
use crate::error::{Error, Result};

/// The eight TPC-H tables.
pub const TABLES: [&str; 8] = [
    "lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region",
];

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
    Parquet(ArrowWriter<File>),
    Orc(OrcWriter),
}

impl TableWriter {
    fn create(path: &Path, schema: SchemaRef, o: &GenOptions) -> Result<Self> {
        let perr = |e| Error::Parquet {
            path: path.to_path_buf(),
            source: e,
        };
        Ok(match o.format {
            GenFormat::Parquet => {
                let file = File::create(path).map_err(|e| Error::io(path, e))?;
                let props = WriterProperties::builder()
                    .set_compression(o.compression.parquet()?)
                    .set_max_row_group_row_count(Some(o.rows_per_group))
                    .build();
                Self::Parquet(ArrowWriter::try_new(file, schema, Some(props)).map_err(perr)?)
            }
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

    fn write(&mut self, path: &Path, batch: &RecordBatch) -> Result<()> {
        match self {
            Self::Parquet(w) => w.write(batch).map_err(|e| Error::Parquet {
                path: path.to_path_buf(),
                source: e,
            }),
            Self::Orc(w) => w.write(batch),
        }
    }

    fn finish(self, path: &Path) -> Result<()> {
        match self {
            Self::Parquet(w) => w.close().map(drop).map_err(|e| Error::Parquet {
                path: path.to_path_buf(),
                source: e,
            }),
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
        for batch in generated.into_iter().flatten() {
            let w = match &mut writer {
                Some(w) => w,
                None => writer.insert(TableWriter::create(&tmp, batch.schema(), options)?),
            };
            rows += batch.num_rows() as u64;
            w.write(&tmp, &batch)?;
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
