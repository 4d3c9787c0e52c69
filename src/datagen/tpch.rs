//! TPC-H tables generated in-process (tpchgen) and written as Parquet, one
//! file per table, generator parts built in parallel. Strings are written as
//! plain `Utf8` so every reader (pyarrow's ORC writer included) takes them.
//!
//! ORC output needs an ORC writer with compression, which warpread does not
//! have: convert the Parquet files with `scripts/parquet_to_orc.py`.

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

use crate::error::{Error, Result};

/// The eight TPC-H tables.
pub const TABLES: [&str; 8] = [
    "lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region",
];

/// Parquet compression for generated files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GenCompression {
    /// No compression.
    None,
    /// GZIP (deflate), level 6.
    Gzip,
    /// Snappy.
    Snappy,
    /// Zstandard, level 3.
    Zstd,
}

impl GenCompression {
    fn parquet(self) -> Compression {
        match self {
            Self::None => Compression::UNCOMPRESSED,
            Self::Gzip => Compression::GZIP(GzipLevel::default()),
            Self::Snappy => Compression::SNAPPY,
            Self::Zstd => Compression::ZSTD(ZstdLevel::default()),
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

/// Generates one table at scale factor `sf` into `dir/TABLE.parquet`;
/// returns the path and the row count.
pub fn write_table(
    table: &str,
    sf: f64,
    compression: GenCompression,
    dir: &Path,
    progress: Option<&ProgressBar>,
) -> Result<(PathBuf, u64)> {
    let parts = if matches!(table, "nation" | "region") {
        1
    } else {
        ((rows_at_sf1(table) * sf) / ROWS_PER_PART).ceil().max(1.0) as i32
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let path = dir.join(format!("{table}.parquet"));
    let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
    let props = WriterProperties::builder()
        .set_compression(compression.parquet())
        .set_max_row_group_row_count(Some(1 << 20))
        .build();
    let mut writer: Option<ArrowWriter<File>> = None;
    let mut file = Some(file);
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
                None => writer.insert(
                    ArrowWriter::try_new(
                        file.take().expect("first batch"),
                        batch.schema(),
                        Some(props.clone()),
                    )
                    .map_err(|e| Error::Parquet {
                        path: path.clone(),
                        source: e,
                    })?,
                ),
            };
            rows += batch.num_rows() as u64;
            w.write(&batch).map_err(|e| Error::Parquet {
                path: path.clone(),
                source: e,
            })?;
        }
        if let Some(p) = progress {
            p.inc(ids.len() as u64);
        }
    }
    if let Some(w) = writer {
        w.close().map_err(|e| Error::Parquet {
            path: path.clone(),
            source: e,
        })?;
    }
    Ok((path, rows))
}

/// Generates every table (or those named) into `dir` with a progress bar.
pub fn generate(
    sf: f64,
    compression: GenCompression,
    dir: &Path,
    tables: &[String],
) -> Result<Vec<(PathBuf, u64)>> {
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
        out.push(write_table(t, sf, compression, dir, Some(&bar))?);
    }
    bar.finish_and_clear();
    Ok(out)
}
