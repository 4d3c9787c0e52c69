//! A byte-array column whose few KB of pages name one long dictionary
//! entry hundreds of thousands of times: its values would take gigabytes.
//! Read as `Utf8` (32-bit offsets) that is an error, and it must be found
//! before the values are gathered, not after gigabytes of them were built.

use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::{Compression, Encoding, LogicalType, Repetition, Type as PhysicalType};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{SchemaDescriptor, Type};
use warpread::exec::CpuBackend;
use warpread::orc::ReadOptions;
use warpread::parquet::ParquetFile;

use warpread::codecs::varint::{write, zigzag};

/// Thrift compact protocol: field `id` (after field `prev`) of type `ty`.
fn field(out: &mut Vec<u8>, prev: u8, id: u8, ty: u8) {
    out.push((id - prev) << 4 | ty);
}

fn i32_field(out: &mut Vec<u8>, prev: u8, id: u8, v: i32) {
    field(out, prev, id, 5);
    write(out, zigzag(i64::from(v)));
}

/// A page header: type, sizes, then the data (field 5) or dictionary
/// (field 7) page header of `num_values` values in `encoding`.
fn page_header(kind: i32, size: usize, num_values: i32, encoding: i32) -> Vec<u8> {
    let mut h = Vec::new();
    i32_field(&mut h, 0, 1, kind);
    i32_field(&mut h, 1, 2, size as i32);
    i32_field(&mut h, 2, 3, size as i32);
    let sub = if kind == 2 { 7 } else { 5 };
    field(&mut h, 3, sub, 12);
    i32_field(&mut h, 0, 1, num_values);
    i32_field(&mut h, 1, 2, encoding);
    if kind == 0 {
        // Level encodings: RLE (no levels in a required flat column).
        i32_field(&mut h, 2, 3, 3);
        i32_field(&mut h, 3, 4, 3);
    }
    h.push(0); // end of the page header struct
    h.push(0); // end of the page header
    h
}

/// A file of one required string column: a dictionary page of one entry
/// of `entry` bytes, then one data page of `rows` RLE_DICTIONARY indices,
/// all naming it (one RLE run).
fn dictionary_bomb(entry: usize, rows: u32) -> Vec<u8> {
    let mut dict = (entry as u32).to_le_bytes().to_vec();
    dict.resize(4 + entry, b'x');
    let mut chunk = page_header(2, dict.len(), 1, 0); // PLAIN dictionary
    chunk.extend_from_slice(&dict);
    let data_at = chunk.len();
    // Bit width 1, then one RLE run of `rows` zeros.
    let mut indices = vec![1u8];
    write(&mut indices, u64::from(rows) << 1);
    indices.push(0);
    chunk.extend(page_header(0, indices.len(), rows as i32, 8)); // RLE_DICTIONARY
    chunk.extend_from_slice(&indices);

    let column = Type::primitive_type_builder("s", PhysicalType::BYTE_ARRAY)
        .with_repetition(Repetition::REQUIRED)
        .with_logical_type(Some(LogicalType::String))
        .build()
        .unwrap();
    let schema = Arc::new(
        Type::group_type_builder("schema")
            .with_fields(vec![Arc::new(column)])
            .build()
            .unwrap(),
    );
    let descr = SchemaDescriptor::new(schema.clone()).column(0);
    let metadata = ColumnChunkMetaData::builder(descr)
        .set_compression(Compression::UNCOMPRESSED)
        .set_encodings(vec![
            Encoding::PLAIN,
            Encoding::RLE,
            Encoding::RLE_DICTIONARY,
        ])
        .set_num_values(i64::from(rows))
        .set_total_compressed_size(chunk.len() as i64)
        .set_total_uncompressed_size(chunk.len() as i64)
        .set_dictionary_page_offset(Some(0))
        .set_data_page_offset(data_at as i64)
        .build()
        .unwrap();
    let close = ColumnCloseResult {
        bytes_written: chunk.len() as u64,
        rows_written: u64::from(rows),
        metadata,
        bloom_filter: None,
        column_index: None,
        offset_index: None,
    };
    let mut file = Vec::new();
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(&mut file, schema, props).unwrap();
    let mut rg = w.next_row_group().unwrap();
    rg.append_column(&Bytes::from(chunk), close).unwrap();
    rg.close().unwrap();
    w.close().unwrap();
    file
}

#[test]
fn long_entry_named_many_times_is_an_error_before_the_gather() {
    let tmp = std::env::temp_dir().join(format!("warpread-pq-bomb-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();

    // A small one first: the hand-built file reads as intended.
    let path = tmp.join("small.parquet");
    std::fs::write(&path, dictionary_bomb(100, 1000)).unwrap();
    let batches = ParquetFile::open(&path)
        .unwrap()
        .read(&ReadOptions::default(), &CpuBackend::new())
        .unwrap();
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 1000);
    let s = batches[0].column(0).as_any();
    let s = s.downcast_ref::<arrow::array::StringArray>().unwrap();
    assert_eq!(s.value(0), "x".repeat(100));

    // 64 KiB named 200,000 times: 13 GB of values from a 64 KiB file.
    let path = tmp.join("bomb.parquet");
    let bytes = dictionary_bomb(64 << 10, 200_000);
    assert!(bytes.len() < 70 << 10);
    std::fs::write(&path, bytes).unwrap();
    let t = std::time::Instant::now();
    let e = ParquetFile::open(&path)
        .unwrap()
        .read(&ReadOptions::default(), &CpuBackend::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("byte array column over 2 GiB")
            && e.contains(&*path.to_string_lossy())
            && e.contains("row group 0"),
        "{e}"
    );
    assert!(t.elapsed().as_secs() < 10, "took {:?}", t.elapsed());
    std::fs::remove_dir_all(&tmp).ok();
}
