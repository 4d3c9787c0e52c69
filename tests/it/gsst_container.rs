//! The GSST file container: Parquet, ORC and CSV sources converted and read
//! back give the source's Arrow exactly (CPU, and CUDA when present);
//! damaged containers give errors, never panics or wrong schemas.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int32Array, LargeStringArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::ipc::writer::FileWriter;
use warpread::exec::{Backend, CpuBackend};
use warpread::gsst::GsstLayout;
use warpread::gsst::container::{
    self, ContainerOptions, ContainerStats, EXTENSION_NAME, encode_batch, encode_schema,
    read_container, write_container,
};
use warpread::orc::{OrcFile, ReadOptions};
use warpread::parquet::ParquetFile;

use crate::common::{Rng, cuda};
use crate::orc_differential::root;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpread-gsst-container-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn write(path: &Path, schema: &Schema, batches: &[RecordBatch], layout: GsstLayout) {
    let sink = std::fs::File::create(path).unwrap();
    write_container(
        sink,
        schema,
        batches.iter().cloned().map(Ok),
        &ContainerOptions::new(layout),
    )
    .unwrap();
}

fn assert_same(got: &[RecordBatch], want: &[RecordBatch], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: batches");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.schema(), w.schema(), "{what}: schema of batch {i}");
        assert_eq!(g, w, "{what}: batch {i}");
    }
}

fn sources() -> Vec<PathBuf> {
    let r = root().join("testdata");
    [
        "parquet/types_snappy_v1.parquet",
        "parquet/types_gzip_v2_plain.parquet",
        "parquet/nested_snappy_v1.parquet",
        "parquet/empty.parquet",
        "orc/strings_v11_direct_snappy.orc",
        "orc/strings_v12_dict50_zstd.orc",
        "orc/many_stripes_v12_none.orc",
        "orc/single_null_row_v11_zlib.orc",
    ]
    .iter()
    .map(|p| r.join(p))
    .collect()
}

fn read_source(path: &Path, backend: &dyn Backend) -> (SchemaRef, Vec<RecordBatch>) {
    let options = ReadOptions::default().with_batch_size(700);
    if warpread::parquet::is_parquet(path) {
        let f = ParquetFile::open(path).unwrap();
        (
            f.projected_schema(&options).unwrap(),
            f.read(&options, backend).unwrap(),
        )
    } else {
        let f = OrcFile::open(path).unwrap();
        (
            f.projected_schema(&options).unwrap(),
            f.read(&options, backend).unwrap(),
        )
    }
}

#[test]
fn parquet_and_orc_sources_round_trip_in_both_layouts() {
    let cpu = CpuBackend::new();
    for src in sources() {
        let (schema, batches) = read_source(&src, &cpu);
        let has_dictionary = schema
            .fields()
            .iter()
            .any(|f| matches!(f.data_type(), DataType::Dictionary(..)));
        for layout in GsstLayout::ALL {
            let what = format!("{} ({})", src.display(), layout.name());
            let out = tmp(&format!(
                "{}.{}.arrow",
                src.file_name().unwrap().to_string_lossy(),
                layout.name()
            ));
            write(&out, &schema, &batches, layout);
            let (got_schema, got) = read_container(&out, &[], &cpu).unwrap();
            assert_eq!(got_schema, schema, "{what}");
            if has_dictionary {
                // Joined into one batch on writing (one dictionary a field).
                assert_eq!(got.len(), 1, "{what}");
                assert_eq!(got[0], concat(&schema, &batches), "{what}");
            } else {
                assert_same(&got, &batches, &what);
            }
            if let Some(gpu) = cuda("container round trip") {
                let (_, on_gpu) = read_container(&out, &[], gpu).unwrap();
                assert_same(&on_gpu, &got, &format!("{what} on CUDA"));
            }
        }
    }
}

/// Utf8 and LargeUtf8 with nulls, empty strings, multi-byte characters, a
/// sliced batch and an empty batch.
fn synthetic(rng: &mut Rng) -> (SchemaRef, Vec<RecordBatch>) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("s", DataType::Utf8, true),
        Field::new("l", DataType::LargeUtf8, false).with_metadata(
            [("note".to_string(), "kept".to_string())]
                .into_iter()
                .collect(),
        ),
    ]));
    let words = ["slyly", "", "pending ", "déjà vu", "§", "requests\n", "x"];
    let mut batch = |n: usize| {
        let s: Vec<Option<String>> = (0..n)
            .map(|_| {
                (rng.below(5) != 0).then(|| {
                    (0..rng.below(6))
                        .map(|_| words[rng.below(words.len() as u64) as usize])
                        .collect()
                })
            })
            .collect();
        let l: Vec<String> = (0..n)
            .map(|i| format!("{} {i}", words[i % words.len()]))
            .collect();
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from_iter_values(0..n as i32)) as ArrayRef,
                Arc::new(StringArray::from(s)),
                Arc::new(LargeStringArray::from(l)),
            ],
        )
        .unwrap()
    };
    let big = batch(20_000);
    let batches = vec![batch(1), big.slice(123, 9000), batch(0), batch(3000)];
    (schema, batches)
}

#[test]
fn synthetic_strings_round_trip_and_projection() {
    let mut rng = Rng::fresh("synthetic_strings_round_trip_and_projection");
    let (schema, batches) = synthetic(&mut rng);
    let out = tmp("synthetic.arrow");
    write(&out, &schema, &batches, GsstLayout::Coalesced);
    let (got_schema, got) = read_container(&out, &[], &CpuBackend::new()).unwrap();
    assert_eq!(got_schema, schema);
    // A sliced source batch comes back as an equal, unsliced one.
    assert_same(&got, &batches, "synthetic");
    let (proj, got) = read_container(&out, &["l".into()], &CpuBackend::new()).unwrap();
    assert_eq!(proj.fields().len(), 1);
    assert_eq!(proj.field(0).metadata()["note"], "kept");
    for (g, w) in got.iter().zip(&batches) {
        assert_eq!(g.column(0).as_ref(), w.column(2).as_ref());
    }
    assert!(read_container(&out, &["nope".into()], &CpuBackend::new()).is_err());
}

#[test]
fn other_tools_see_a_marked_binary_column() {
    let mut rng = Rng::fresh("other_tools_see_a_marked_binary_column");
    let (schema, batches) = synthetic(&mut rng);
    let out = tmp("plain-view.arrow");
    write(&out, &schema, &batches, GsstLayout::Splits);
    // Read as a plain Arrow IPC file, as any other tool would.
    let r =
        arrow::ipc::reader::FileReader::try_new(std::fs::File::open(&out).unwrap(), None).unwrap();
    let stored = r.schema();
    assert_eq!(stored.field(0).data_type(), &DataType::Int32);
    for i in [1, 2] {
        let f = stored.field(i);
        assert_eq!(f.data_type(), &DataType::LargeBinary);
        assert_eq!(f.metadata()["ARROW:extension:name"], EXTENSION_NAME);
    }
    let rows: usize = r.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, batches.iter().map(|b| b.num_rows()).sum::<usize>());
}

/// Writes a container whose stored schema or batch `damage` altered.
fn damaged(
    name: &str,
    damage: impl Fn(&mut Schema, &mut Vec<ArrayRef>),
) -> warpread::Result<(SchemaRef, Vec<RecordBatch>)> {
    let schema = Schema::new(vec![Field::new("s", DataType::Utf8, true)]);
    let src = RecordBatch::try_new(
        Arc::new(schema.clone()),
        vec![Arc::new(StringArray::from(vec![
            Some("carefully final"),
            None,
            Some("deposits"),
        ])) as ArrayRef],
    )
    .unwrap();
    let encoded = encode_schema(&schema, GsstLayout::Splits);
    let b = encode_batch(
        &src,
        &encoded,
        &ContainerOptions::new(GsstLayout::Splits),
        &mut ContainerStats::default(),
    )
    .unwrap();
    let mut schema = encoded.as_ref().clone();
    let mut cols = b.columns().to_vec();
    damage(&mut schema, &mut cols);
    let schema = Arc::new(schema);
    let path = tmp(name);
    let mut w = FileWriter::try_new(std::fs::File::create(&path).unwrap(), &schema).unwrap();
    w.write(&RecordBatch::try_new(schema.clone(), cols).unwrap())
        .unwrap();
    w.finish().unwrap();
    read_container(&path, &[], &CpuBackend::new())
}

fn set_ext_metadata(schema: &mut Schema, json: &str) {
    let f = schema.field(0).clone();
    let mut md = f.metadata().clone();
    md.insert("ARROW:extension:metadata".into(), json.into());
    *schema = Schema::new(vec![f.with_metadata(md)]);
}

fn cell(cols: &mut [ArrayRef], edit: impl Fn(&mut Vec<Vec<u8>>)) {
    let a = cols[0]
        .as_any()
        .downcast_ref::<arrow::array::LargeBinaryArray>()
        .unwrap();
    let mut v: Vec<Vec<u8>> = a.iter().map(|x| x.unwrap().to_vec()).collect();
    edit(&mut v);
    cols[0] = Arc::new(arrow::array::LargeBinaryArray::from_iter_values(v.iter()));
}

/// An edit of a container's stored schema and columns.
type Damage = dyn Fn(&mut Schema, &mut Vec<ArrayRef>);

#[test]
fn damaged_containers_give_errors() {
    assert!(damaged("intact.arrow", |_, _| {}).is_ok());
    let cases: Vec<(&str, Box<Damage>)> = vec![
        (
            "version 2",
            Box::new(|s, _| {
                set_ext_metadata(s, r#"{"version":2,"layout":"splits","value_type":"Utf8"}"#)
            }),
        ),
        (
            "unknown layout",
            Box::new(|s, _| {
                set_ext_metadata(s, r#"{"version":1,"layout":"zigzag","value_type":"Utf8"}"#)
            }),
        ),
        (
            "layout disagrees with the frame",
            Box::new(|s, _| {
                set_ext_metadata(
                    s,
                    r#"{"version":1,"layout":"coalesced","value_type":"Utf8"}"#,
                )
            }),
        ),
        (
            "value type",
            Box::new(|s, _| {
                set_ext_metadata(s, r#"{"version":1,"layout":"splits","value_type":"Int8"}"#)
            }),
        ),
        (
            "LargeUtf8 claimed",
            Box::new(|s, _| {
                set_ext_metadata(
                    s,
                    r#"{"version":1,"layout":"splits","value_type":"LargeUtf8"}"#,
                )
            }),
        ),
        (
            "metadata not JSON",
            Box::new(|s, _| set_ext_metadata(s, "{")),
        ),
        (
            "data in row 1",
            Box::new(|_, c| cell(c, |v| v[1] = b"x".to_vec())),
        ),
        ("empty row 0", Box::new(|_, c| cell(c, |v| v[0].clear()))),
        (
            "truncated column",
            Box::new(|_, c| cell(c, |v| v[0].pop().map(|_| ()).unwrap())),
        ),
        ("rows disagree", Box::new(|_, c| cell(c, |v| v[0][8] = 2))),
        (
            "frame magic",
            Box::new(|_, c| {
                cell(c, |v| {
                    let at = v[0].len() - 1;
                    let frame_at = v[0].windows(4).position(|w| w == b"GSST").unwrap_or(at);
                    v[0][frame_at] ^= 0xff;
                })
            }),
        ),
    ];
    for (what, damage) in cases {
        let r = damaged(&format!("{}.arrow", what.replace(' ', "_")), damage);
        match r {
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.is_empty(), "{what}");
            }
            Ok(_) => panic!("{what}: damaged container was accepted"),
        }
    }
}

#[test]
fn random_damage_never_panics() {
    let mut rng = Rng::fresh("random_damage_never_panics");
    let (schema, batches) = synthetic(&mut rng);
    let out = tmp("random-damage.arrow");
    write(&out, &schema, &batches, GsstLayout::Splits);
    let bytes = std::fs::read(&out).unwrap();
    let bad = tmp("random-damage-bad.arrow");
    for round in 0..200 {
        let mut b = bytes.clone();
        if round % 4 == 0 {
            b.truncate(rng.below(b.len() as u64) as usize);
        } else {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(b.len() as u64) as usize;
                b[at] ^= 1 << rng.below(8);
            }
        }
        std::fs::write(&bad, &b).unwrap();
        // Errors or (for flips in bytes nothing checks) data; never a panic.
        if let Ok((s, got)) = read_container(&bad, &[], &CpuBackend::new()) {
            assert_eq!(s.fields().len(), schema.fields().len());
            for g in got {
                g.columns().iter().for_each(|c| {
                    c.to_data().validate_full().unwrap();
                });
            }
        }
    }
}

fn warpread() -> Command {
    let bin =
        std::env::var_os("WARPREAD_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_warpread").into());
    Command::new(bin)
}

fn run_ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn read_ipc(path: &Path) -> (SchemaRef, Vec<RecordBatch>) {
    let r =
        arrow::ipc::reader::FileReader::try_new(std::fs::File::open(path).unwrap(), None).unwrap();
    let schema = r.schema();
    (schema, r.map(|b| b.unwrap()).collect())
}

fn concat(schema: &SchemaRef, batches: &[RecordBatch]) -> RecordBatch {
    arrow::compute::concat_batches(schema, batches).unwrap()
}

#[test]
fn cli_convert_then_cat_gives_the_source() {
    let csv = tmp("cli.csv");
    let mut text = String::from("id,name,price,comment\n");
    for i in 0..3000 {
        if i % 17 == 0 {
            text.push_str(&format!("{i},,{}.25,\n", i));
        } else {
            text.push_str(&format!(
                "{i},name {},{}.5,\"quickly, {} ünïcode requests\"\n",
                i % 41,
                i,
                i % 7
            ));
        }
    }
    std::fs::write(&csv, text).unwrap();
    let parquet = root().join("testdata/parquet/types_zstd_v1.parquet");
    let orc = root().join("testdata/orc/strings_v11_dict_zlib.orc");
    for (i, src) in [csv, parquet, orc].iter().enumerate() {
        for layout in ["splits", "coalesced"] {
            let gsst = tmp(&format!("cli-{i}-{layout}.gsst.arrow"));
            let plain = tmp(&format!("cli-{i}-{layout}.plain.arrow"));
            let back = tmp(&format!("cli-{i}-{layout}.back.arrow"));
            let base = || {
                let mut c = warpread();
                c.args(["--backend", "cpu", "convert", "--batch-size", "1000"]);
                c
            };
            run_ok(base().arg(src).arg(&gsst).args(["--layout", layout]));
            run_ok(base().arg(src).arg(&plain).args(["--strings", "plain"]));
            run_ok(
                warpread()
                    .args(["--backend", "cpu", "cat", "-o"])
                    .arg(&back)
                    .arg(&gsst),
            );
            let (ps, pb) = read_ipc(&plain);
            let (bs, bb) = read_ipc(&back);
            assert_eq!(bs, ps, "{}", src.display());
            assert_eq!(concat(&bs, &bb), concat(&ps, &pb), "{}", src.display());
            let (gs, _) = read_ipc(&gsst);
            if ps.fields().iter().any(|f| f.data_type() == &DataType::Utf8) {
                assert!(gs.fields().iter().any(|f| {
                    container::extension_of(f, &Default::default())
                        .unwrap()
                        .is_some()
                }));
            }
        }
    }
}

#[test]
fn cli_cat_of_a_damaged_container_fails_cleanly() {
    let (schema, batches) = synthetic(&mut Rng::fresh("cli_cat_damaged"));
    let out = tmp("cli-damaged.arrow");
    write(&out, &schema, &batches, GsstLayout::Splits);
    let mut b = std::fs::read(&out).unwrap();
    let at = b.windows(4).position(|w| w == b"GSSC").unwrap();
    b[at + 4] = 9; // column container version
    std::fs::write(&out, &b).unwrap();
    let r = warpread()
        .args(["--backend", "cpu", "cat", "--format", "csv"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("GSST column") && !err.contains("panicked"),
        "{err}"
    );
}
