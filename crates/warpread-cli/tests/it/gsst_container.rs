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
use warpread::gsst::container_file::ContainerFile;
use warpread::orc::{OrcFile, ReadOptions};
use warpread::parquet::ParquetFile;

use crate::common::root;
use crate::common::{Rng, cuda};

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
/// sliced batch and an empty batch; `below(n)` draws uniformly from `0..n`.
fn synthetic(below: &mut dyn FnMut(u64) -> u64) -> (SchemaRef, Vec<RecordBatch>) {
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
                (below(5) != 0).then(|| {
                    (0..below(6))
                        .map(|_| words[below(words.len() as u64) as usize])
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
    let (schema, batches) = synthetic(&mut |n| rng.below(n));
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
    let (schema, batches) = synthetic(&mut |n| rng.below(n));
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
    let (schema, batches) = synthetic(&mut |n| rng.below(n));
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
        // Errors or (for flips in bytes nothing checks) data; never a panic
        // or an abort.
        match read_container(&bad, &[], &CpuBackend::new()) {
            Ok((s, got)) => {
                assert_eq!(s.fields().len(), schema.fields().len(), "round {round}");
                for g in got {
                    g.columns().iter().for_each(|c| {
                        c.to_data().validate_full().unwrap();
                    });
                }
            }
            Err(e) => {
                let e = e.to_string();
                assert!(e.contains("random-damage-bad.arrow"), "round {round}: {e}");
            }
        }
    }
}

/// File positions of the footer's blocks (24-byte `Block` structs: offset
/// i64 at 0, metadata length i32 at 8, body length i64 at 16): dictionary
/// blocks, then record batch blocks.
fn footer_blocks(bytes: &[u8]) -> (Vec<usize>, Vec<usize>) {
    let n = bytes.len();
    let footer_len = i32::from_le_bytes(bytes[n - 10..n - 6].try_into().unwrap()) as usize;
    let footer = arrow::ipc::root_as_footer(&bytes[n - 10 - footer_len..n - 10]).unwrap();
    let at = |b: &arrow::ipc::Block| b as *const _ as usize - bytes.as_ptr() as usize;
    (
        footer.dictionaries().iter().flatten().map(at).collect(),
        footer.recordBatches().iter().flatten().map(at).collect(),
    )
}

/// File positions in the message of the block at `block`: its row count
/// (i64), its field nodes (length i64 at 0, null count at 8) and buffers
/// (offset i64 at 0, length at 8), and where its body starts.
struct MessageAt {
    rows: usize,
    nodes: Vec<usize>,
    buffers: Vec<usize>,
    body: usize,
}

fn message_at(bytes: &[u8], block: usize) -> MessageAt {
    let i64_at = |p: usize| i64::from_le_bytes(bytes[p..p + 8].try_into().unwrap());
    let offset = i64_at(block) as usize;
    let meta = i32::from_le_bytes(bytes[block + 8..block + 12].try_into().unwrap()) as usize;
    assert_eq!(bytes[offset..offset + 4], [0xff; 4]);
    let fb = &bytes[offset + 8..offset + meta];
    let message = arrow::ipc::root_as_message(fb).unwrap();
    let batch = message.header_as_record_batch().unwrap_or_else(|| {
        message
            .header_as_dictionary_batch()
            .and_then(|d| d.data())
            .unwrap()
    });
    let base = bytes.as_ptr() as usize;
    let table = &batch._tab;
    let rows_field = table.vtable().get(arrow::ipc::RecordBatch::VT_LENGTH) as usize;
    assert_ne!(rows_field, 0, "row count stored");
    MessageAt {
        rows: fb.as_ptr() as usize - base + table.loc() + rows_field,
        nodes: batch
            .nodes()
            .unwrap()
            .iter()
            .map(|n| n as *const _ as usize - base)
            .collect(),
        buffers: batch
            .buffers()
            .unwrap()
            .iter()
            .map(|b| b as *const _ as usize - base)
            .collect(),
        body: offset + meta,
    }
}

fn put_i64(b: &mut [u8], at: usize, v: i64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn put_i32(b: &mut [u8], at: usize, v: i32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// One length in a file set to what a flipped bit or a hostile writer
/// might put there; `expect` is part of the error message.
type LengthDamage = (&'static str, &'static str, Box<dyn Fn(&mut Vec<u8>)>);

/// Each damage must be an error naming the file and the place, through
/// both reading paths, before anything is sized from the damaged length.
fn assert_length_damage_is_an_error(name: &str, bytes: &[u8], cases: Vec<LengthDamage>) {
    let cpu = CpuBackend::new();
    let file_name = format!("{name}-bad.arrow");
    let bad = tmp(&file_name);
    for (what, expect, damage) in cases {
        let mut b = bytes.to_vec();
        damage(&mut b);
        std::fs::write(&bad, &b).unwrap();
        let e = read_container(&bad, &[], &cpu).map(|_| ()).unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains(&file_name) && e.contains(expect) && !e.contains("panicked"),
            "{name}, {what}: {e}"
        );
        let e = ContainerFile::open(&bad)
            .and_then(|f| {
                let all: Vec<usize> = (0..f.blocks().len()).collect();
                f.read(&all, &[], &cpu)
            })
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&file_name),
            "{name}, {what} (random access): {e}"
        );
    }
}

/// The lengths arrow-ipc sizes allocations from, each damaged in a freshly
/// written container. The first case is the input that aborted
/// `random_damage_never_panics` (a flipped bit 38 of a footer block's body
/// length: arrow-ipc allocated a ~274 GB read buffer for the block).
#[test]
fn damaged_lengths_are_errors_not_allocations() {
    let (schema, batches) = synthetic(&mut {
        let mut rng = Rng::seeded(7);
        move |n| rng.below(n)
    });
    let out = tmp("lengths.arrow");
    write(&out, &schema, &batches, GsstLayout::Splits);
    let bytes = std::fs::read(&out).unwrap();
    assert!(read_container(&out, &[], &CpuBackend::new()).is_ok());
    let (dicts, blocks) = footer_blocks(&bytes);
    assert!(dicts.is_empty() && blocks.len() == 4);
    let b1 = blocks[1];
    let m1 = message_at(&bytes, b1);
    let (buf2, rows1, node1) = (m1.buffers[2], m1.rows, m1.nodes[1]);
    let n = bytes.len();
    let cases: Vec<LengthDamage> = vec![
        (
            "body length bit 38 flipped (the abort)",
            "record batch 1",
            Box::new(move |b| b[b1 + 16 + 4] ^= 1 << 6),
        ),
        (
            "body length near i64::MAX",
            "record batch 1",
            Box::new(move |b| put_i64(b, b1 + 16, i64::MAX - 7)),
        ),
        (
            "metadata length i32::MAX",
            "record batch 1",
            Box::new(move |b| put_i32(b, b1 + 8, i32::MAX)),
        ),
        (
            "negative offset",
            "record batch 1",
            Box::new(move |b| put_i64(b, b1, -8)),
        ),
        (
            "footer length i32::MAX",
            "footer",
            Box::new(move |b| put_i32(b, n - 10, i32::MAX)),
        ),
        (
            "message length past its metadata",
            "record batch 1",
            Box::new(move |b| {
                let o = i64::from_le_bytes(b[b1..b1 + 8].try_into().unwrap()) as usize;
                put_i32(b, o + 4, i32::MAX);
            }),
        ),
        (
            "buffer length 2^40",
            "buffer 2",
            Box::new(move |b| put_i64(b, buf2 + 8, 1 << 40)),
        ),
        (
            "buffer offset i64::MAX",
            "buffer 2",
            Box::new(move |b| put_i64(b, buf2, i64::MAX)),
        ),
        (
            "row count 2^50",
            "rows",
            Box::new(move |b| put_i64(b, rows1, 1 << 50)),
        ),
        (
            "negative node length",
            "field node 1",
            Box::new(move |b| put_i64(b, node1, -1)),
        ),
    ];
    assert_length_damage_is_an_error("lengths", &bytes, cases);

    // A dictionary column: the footer's dictionary blocks are read before
    // any record batch (a damaged one aborted while opening the reader).
    let dict_schema = Arc::new(Schema::new(vec![
        Field::new("s", DataType::Utf8, false),
        Field::new(
            "d",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            false,
        ),
    ]));
    let dict_batch = RecordBatch::try_new(
        dict_schema.clone(),
        vec![
            Arc::new(StringArray::from_iter_values(
                (0..500).map(|i| format!("row {i}")),
            )) as ArrayRef,
            Arc::new(
                (0..500)
                    .map(|i| ["red", "green", "blue"][i % 3])
                    .collect::<arrow::array::DictionaryArray<arrow::datatypes::Int32Type>>(),
            ),
        ],
    )
    .unwrap();
    let out = tmp("lengths-dict.arrow");
    write(&out, &dict_schema, &[dict_batch], GsstLayout::Coalesced);
    let bytes = std::fs::read(&out).unwrap();
    let (_, got) = read_container(&out, &[], &CpuBackend::new()).unwrap();
    assert_eq!(got[0].num_rows(), 500);
    let (dicts, _) = footer_blocks(&bytes);
    assert_eq!(dicts.len(), 1);
    let d0 = dicts[0];
    let dict_buf2 = message_at(&bytes, d0).buffers[2];
    let cases: Vec<LengthDamage> = vec![
        (
            "dictionary body length bit 38 flipped",
            "dictionary batch 0",
            Box::new(move |b| b[d0 + 16 + 4] ^= 1 << 6),
        ),
        (
            "dictionary buffer length 2^40",
            "dictionary batch 0",
            Box::new(move |b| put_i64(b, dict_buf2 + 8, 1 << 40)),
        ),
    ];
    assert_length_damage_is_an_error("lengths-dict", &bytes, cases);
}

/// An LZ4-compressed Arrow IPC file (any tool's, read by `cat` and
/// `convert`): a compressed buffer's uncompressed-size prefix sizes
/// arrow-ipc's output buffer, so it is bounded by what LZ4 can expand to.
#[test]
fn compressed_buffer_sizes_are_bounded() {
    use arrow::ipc::writer::IpcWriteOptions;
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int32, false)]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int32Array::from_iter_values(0..10_000)) as ArrayRef],
    )
    .unwrap();
    let out = tmp("lz4.arrow");
    let options = IpcWriteOptions::default()
        .try_with_compression(Some(arrow::ipc::CompressionType::LZ4_FRAME))
        .unwrap();
    let written =
        FileWriter::try_new_with_options(std::fs::File::create(&out).unwrap(), &schema, options)
            .and_then(|mut w| {
                w.write(&batch)?;
                w.finish()
            });
    if let Err(e) = written {
        println!("skipped: arrow-ipc cannot write LZ4 in this build ({e})");
        return;
    }
    let bytes = std::fs::read(&out).unwrap();
    let (_, got) = read_container(&out, &[], &CpuBackend::new()).unwrap();
    assert_eq!(got, [batch]);
    let (_, blocks) = footer_blocks(&bytes);
    let m = message_at(&bytes, blocks[0]);
    let values = m.buffers[1];
    let at = m.body + i64::from_le_bytes(bytes[values..values + 8].try_into().unwrap()) as usize;
    let cases: Vec<LengthDamage> = vec![(
        "uncompressed size 2^40",
        "claims",
        Box::new(move |b| put_i64(b, at, 1 << 40)),
    )];
    assert_length_damage_is_an_error("lz4", &bytes, cases);
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

/// `warpread --backend cpu cat --format csv PATH`, which must fail; its
/// stderr.
pub(crate) fn cat_fails(path: &Path) -> String {
    let r = warpread()
        .args(["--backend", "cpu", "cat", "--format", "csv"])
        .arg(path)
        .output()
        .unwrap();
    assert!(!r.status.success(), "cat of {} succeeded", path.display());
    String::from_utf8_lossy(&r.stderr).into_owned()
}

pub(crate) fn read_ipc(path: &Path) -> (SchemaRef, Vec<RecordBatch>) {
    let r =
        arrow::ipc::reader::FileReader::try_new(std::fs::File::open(path).unwrap(), None).unwrap();
    let schema = r.schema();
    (schema, r.map(|b| b.unwrap()).collect())
}

pub(crate) fn concat(schema: &SchemaRef, batches: &[RecordBatch]) -> RecordBatch {
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
    let mut rng = Rng::fresh("cli_cat_damaged");
    let (schema, batches) = synthetic(&mut |n| rng.below(n));
    let out = tmp("cli-damaged.arrow");
    write(&out, &schema, &batches, GsstLayout::Splits);
    let mut b = std::fs::read(&out).unwrap();
    let at = b.windows(4).position(|w| w == b"GSSC").unwrap();
    b[at + 4] = 9; // column container version
    std::fs::write(&out, &b).unwrap();
    let err = cat_fails(&out);
    assert!(
        err.contains("GSST column") && !err.contains("panicked"),
        "{err}"
    );
}
