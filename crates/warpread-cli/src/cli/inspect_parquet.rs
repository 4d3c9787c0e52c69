//! `warpread inspect FILE` for Parquet: footer, schema, row groups, column
//! chunks (codec, encodings, sizes, statistics) and, where the file has
//! one, the page index (pages per chunk, rows per page, null pages).

use crate::error::Result;
use crate::parquet::ParquetFile;

/// Row groups listed: all, or the first three.
pub fn shown(f: &ParquetFile, all: bool) -> Vec<usize> {
    let n = f.metadata().num_row_groups();
    (0..if all { n } else { n.min(3) }).collect()
}

/// Prints a Parquet file's structure; `all` lists every row group rather
/// than the first three.
pub fn print(f: &ParquetFile, all: bool) -> Result<()> {
    let meta = f.metadata();
    let fm = meta.file_metadata();
    println!("file: {}", f.path().display());
    println!("format: Parquet {}", fm.version());
    if let Some(w) = fm.created_by() {
        println!("writer: {w}");
    }
    println!("rows: {}", fm.num_rows());
    println!("parquet schema:");
    for (i, c) in fm.schema_descr().columns().iter().enumerate() {
        println!(
            "  [{i}] {}: {} {:?}{} def {} rep {}",
            c.path().string(),
            c.physical_type(),
            c.logical_type_ref(),
            if c.type_length() > 0 {
                format!(" length {}", c.type_length())
            } else {
                String::new()
            },
            c.max_def_level(),
            c.max_rep_level()
        );
    }
    println!("arrow schema: {}", f.schema());
    println!(
        "page index: {}",
        if meta
            .row_groups()
            .iter()
            .flat_map(|rg| rg.columns())
            .any(|cc| cc.offset_index_offset().is_some())
        {
            "present"
        } else {
            "absent"
        }
    );
    let n = meta.num_row_groups();
    println!("row groups: {n}");
    let shown = if all { n } else { n.min(3) };
    for g in 0..shown {
        let rg = meta.row_group(g);
        println!(
            "  row group {g}: rows {} compressed {} B uncompressed {} B",
            rg.num_rows(),
            rg.compressed_size(),
            rg.total_byte_size()
        );
        let index = f.page_index(g).unwrap_or_else(|m| {
            println!("    page index unusable: {m}");
            None
        });
        for (c, cc) in rg.columns().iter().enumerate() {
            let (start, len) = crate::parquet::pages::raw_range(cc);
            let stats = cc
                .statistics()
                .map_or(String::new(), |s| format!(" stats {s}"));
            println!(
                "    column {:<24} {:?} {} values {len} B at {start} encodings {:?}{stats}",
                cc.column_path().string(),
                cc.compression(),
                cc.num_values(),
                cc.encodings().collect::<Vec<_>>(),
            );
            if let Some(p) = index.as_ref().and_then(|i| i.get(c)) {
                println!(
                    "      page index: {} pages of {}..{} rows, {}",
                    p.pages,
                    p.rows_per_page.0,
                    p.rows_per_page.1,
                    if p.has_column_index {
                        format!("min/max per page, {} null pages", p.null_pages)
                    } else {
                        "no column index".into()
                    }
                );
            }
        }
    }
    if shown < n {
        println!(
            "  ... {} more row groups (--all-stripes lists them)",
            n - shown
        );
    }
    Ok(())
}
