//! `warpread inspect FILE`: what is inside a columnar file.

use std::path::Path;

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
pub fn run(path: &Path, all_stripes: bool) -> Result<()> {
    if crate::parquet::is_parquet(path) {
        return super::inspect_parquet::run(path, all_stripes);
    }
    let f = OrcFile::open(path)?;
    let tail = f.tail();
    let ps = &tail.postscript;
    println!("file: {}", path.display());
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
    let shown = if all_stripes {
        f.stripes().len()
    } else {
        f.stripes().len().min(3)
    };
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
