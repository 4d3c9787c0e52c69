//! `warpread inspect FILE`: what is inside a columnar file.

use super::input::{Input, Kind};
use crate::error::Error;
use crate::parquet::ParquetFile;
use crate::read;

use crate::error::Result;
use crate::orc::OrcFile;
use crate::orc::proto::ColumnStatistics;
use crate::orc::schema::Column;

fn stats_line(s: &ColumnStatistics) -> String {
    let mut parts = vec![format!("values={}", s.number_of_values.unwrap_or(0))];
    if let Some(n) = s.has_null {
        parts.push(format!("has_null={n}"));
    }
    if let Some(i) = &s.int_statistics {
        parts.push(format!("min={:?} max={:?}", i.minimum, i.maximum));
    }
    if let Some(d) = &s.double_statistics {
        parts.push(format!("min={:?} max={:?}", d.minimum, d.maximum));
    }
    if let Some(t) = &s.string_statistics {
        let cut = |v: &Option<String>| v.as_ref().map(|s| s.chars().take(32).collect::<String>());
        parts.push(format!(
            "min={:?} max={:?}",
            cut(&t.minimum),
            cut(&t.maximum)
        ));
    }
    if let Some(d) = &s.date_statistics {
        parts.push(format!("min={:?} max={:?}", d.minimum, d.maximum));
    }
    if let Some(d) = &s.decimal_statistics {
        parts.push(format!("min={:?} max={:?}", d.minimum, d.maximum));
    }
    parts.join(" ")
}

fn print_columns(c: &Column, depth: usize, stats: &[ColumnStatistics]) {
    let st = stats.get(c.id as usize).map(stats_line).unwrap_or_default();
    println!(
        "  {:indent$}[{}] {}: {}  {st}",
        "",
        c.id,
        if c.name.is_empty() { "<root>" } else { &c.name },
        c.type_string(),
        indent = depth * 2
    );
    for ch in &c.children {
        print_columns(ch, depth + 1, stats);
    }
}

/// Prints an ORC file's structure; `all_stripes` lists every stripe's
/// streams rather than the first few.
pub fn run(input: &str, all_stripes: bool) -> Result<()> {
    match Input::parse(input)? {
        Input::Local(path) => match Input::local_kind(&path)? {
            Kind::Parquet => super::inspect_parquet::print(&ParquetFile::open(&path)?, all_stripes),
            Kind::Orc => print(&OrcFile::open(&path)?, all_stripes),
            Kind::Arrow => Err(Error::Unsupported(format!(
                "{}: inspect reads ORC and Parquet files (an Arrow IPC file: `cat` it)",
                path.display()
            ))),
        },
        Input::Object(o) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(|e| Error::io("tokio runtime", e))?;
            rt.block_on(async {
                let (size, head) = o.head().await?;
                let o = &o;
                let fetch = |src, ranges: Vec<_>| async move {
                    read::stream::fetch_into(&o.store, &o.location, src, &ranges).await
                };
                match Kind::of(&head, o.url.as_str())? {
                    Kind::Parquet => {
                        let f = read::stream::open_fetched(
                            &o.store,
                            &o.location,
                            size,
                            "Parquet",
                            64 << 10,
                            ParquetFile::from_source,
                        )
                        .await?;
                        // The page indexes of the row groups shown.
                        let shown = super::inspect_parquet::shown(&f, all_stripes);
                        fetch(f.source(), f.index_ranges(&shown)).await?;
                        super::inspect_parquet::print(&f, all_stripes)
                    }
                    Kind::Orc => {
                        let f = read::stream::open_fetched(
                            &o.store,
                            &o.location,
                            size,
                            "ORC",
                            64 << 10,
                            OrcFile::from_source,
                        )
                        .await?;
                        // The footers of the stripes shown.
                        let footers = f.stripes()[..shown(&f, all_stripes)]
                            .iter()
                            .map(|s| {
                                let at = s.offset + s.index_length + s.data_length;
                                at..at + s.footer_length
                            })
                            .collect();
                        fetch(f.source(), footers).await?;
                        print(&f, all_stripes)
                    }
                    Kind::Arrow => Err(Error::Unsupported(format!(
                        "{}: inspect reads ORC and Parquet files (an Arrow IPC file: `cat` it)",
                        o.url
                    ))),
                }
            })
        }
    }
}

/// Stripes listed: all, or the first three.
fn shown(f: &OrcFile, all_stripes: bool) -> usize {
    if all_stripes {
        f.stripes().len()
    } else {
        f.stripes().len().min(3)
    }
}

/// Prints an ORC file's structure.
fn print(f: &OrcFile, all_stripes: bool) -> Result<()> {
    let tail = f.tail();
    let ps = &tail.postscript;
    println!("file: {}", f.path().display());
    println!(
        "format: ORC {}",
        ps.version
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(".")
    );
    if let Some(v) = &tail.footer.software_version {
        println!("writer: {v}");
    }
    println!(
        "compression: {} (block size {} bytes)",
        tail.compression.kind.name(),
        tail.compression.block_size
    );
    println!("rows: {}", f.rows());
    println!(
        "row index stride: {}",
        tail.footer.row_index_stride.unwrap_or(0)
    );
    println!("schema: {}", f.root().type_string());
    println!("arrow schema: {}", f.schema());
    println!("columns (file statistics):");
    print_columns(f.root(), 0, &tail.footer.statistics);
    println!("stripes: {}", f.stripes().len());
    let shown = shown(f, all_stripes);
    let stride = u64::from(tail.footer.row_index_stride.unwrap_or(0));
    for s in &f.stripes()[..shown] {
        let layout = f.stripe_layout(s.index)?;
        // Row groups are what `--where` can skip inside a stripe.
        let groups = if stride > 0 {
            format!(" ({} row groups)", s.rows.div_ceil(stride))
        } else {
            String::new()
        };
        println!(
            "  stripe {}: offset {} rows {}{groups} index {} B data {} B footer {} B writer timezone {}",
            s.index,
            s.offset,
            s.rows,
            s.index_length,
            s.data_length,
            s.footer_length,
            layout.writer_timezone.as_deref().unwrap_or("-")
        );
        for (id, (enc, dict)) in layout.encodings.iter().enumerate() {
            let dict = if *dict > 0 {
                format!(" dictionary {dict}")
            } else {
                String::new()
            };
            println!("    column {id}: {}{dict}", enc.name());
        }
        for st in &layout.streams {
            println!(
                "    stream {:<17} column {:<3} {} bytes at {}",
                st.kind.name(),
                st.column,
                st.range.end - st.range.start,
                st.range.start
            );
        }
    }
    if shown < f.stripes().len() {
        println!(
            "  ... {} more stripes (--all-stripes lists them)",
            f.stripes().len() - shown
        );
    }
    Ok(())
}
