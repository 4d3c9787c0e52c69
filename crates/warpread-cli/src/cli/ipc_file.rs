//! An Arrow IPC file writer that encodes and writes batches on several
//! threads, for `cat --format arrow` into a file.
//!
//! Why: arrow-ipc's `FileWriter` copies every byte into the file from the
//! caller's thread, and at 10 GB of Arrow (TPC-H lineitem at scale 10) that
//! one thread, not the decode, set the pace of `cat` on a 16-core host on
//! either backend. Here each batch is encoded on a worker, given its place
//! in the file in batch order (its size is known once encoded), and written
//! there with positioned writes by a worker, so several batches are copied
//! into the page cache at once. The bytes are those `FileWriter` writes
//! (tested), for schemas without dictionaries: a dictionary is written once
//! and referred to by later batches, so `cat` keeps `FileWriter` for those.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, sync_channel};

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::ipc::convert::IpcSchemaEncoder;
use arrow::ipc::writer::{
    DictionaryTracker, EncodedData, IpcDataGenerator, IpcWriteContext, IpcWriteOptions,
    write_message,
};
use arrow::ipc::{Block, FooterBuilder, MetadataVersion};

/// The file's leading magic, padded as `FileWriter` pads it.
const MAGIC: &[u8; 6] = b"ARROW1";

/// `IpcWriteOptions::default()`'s alignment and metadata version, which
/// `FileWriter::try_new` writes with (the options hide their fields).
const ALIGNMENT: usize = 64;
const VERSION: MetadataVersion = MetadataVersion::V5;

/// A batch's message once encoded.
type Encoded = Result<EncodedData, ArrowError>;

/// Writes an Arrow IPC file of a schema without dictionaries from a pool
/// of threads (see the module docs). Call [`finish`](Self::finish) to
/// write the footer; a writer dropped unfinished leaves an incomplete
/// file.
pub struct ParallelFileWriter {
    file: Arc<File>,
    schema: SchemaRef,
    options: IpcWriteOptions,
    pool: rayon::ThreadPool,
    /// Batches being encoded, in batch order.
    encoding: VecDeque<Receiver<Encoded>>,
    /// Messages being written.
    writing: VecDeque<Receiver<std::io::Result<()>>>,
    /// Where the next message goes.
    offset: u64,
    blocks: Vec<Block>,
    /// Encodes (and writes) in flight at most.
    in_flight: usize,
}

impl ParallelFileWriter {
    /// Starts a file for `schema` on `threads` threads: writes its magic
    /// and schema message. `schema` holds no dictionary type.
    pub fn try_new(file: File, schema: &Schema, threads: usize) -> Result<Self, ArrowError> {
        if schema
            .flattened_fields()
            .iter()
            .any(|f| matches!(f.data_type(), DataType::Dictionary(..)))
        {
            return Err(ArrowError::InvalidArgumentError(
                "the parallel IPC writer takes schemas without dictionaries".into(),
            ));
        }
        let threads = threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("ipc-write-{i}"))
            .build()
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
        let options = IpcWriteOptions::try_new(ALIGNMENT, false, VERSION)?;
        let mut head = Vec::new();
        head.extend_from_slice(MAGIC);
        head.resize(MAGIC.len() + pad(ALIGNMENT, MAGIC.len()), 0);
        let mut tracker = DictionaryTracker::new(true);
        let message = IpcDataGenerator::default().schema_to_bytes_with_dictionary_tracker(
            schema,
            &mut tracker,
            &options,
        );
        write_message(&mut head, message, &options)?;
        file.write_all_at(&head, 0)?;
        Ok(Self {
            file: Arc::new(file),
            schema: Arc::new(schema.clone()),
            options,
            pool,
            encoding: VecDeque::new(),
            writing: VecDeque::new(),
            offset: head.len() as u64,
            blocks: Vec::new(),
            in_flight: threads,
        })
    }

    /// Queues `batch`: it is encoded and written by the pool, in order.
    /// An error of an earlier batch comes back here or from `finish`.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        if batch.schema_ref().fields() != self.schema.fields() {
            return Err(ArrowError::SchemaError(
                "a batch's schema differs from the file's".into(),
            ));
        }
        let (tx, rx) = sync_channel(1);
        let batch = batch.clone();
        let options = self.options.clone();
        self.pool.spawn(move || {
            let mut tracker = DictionaryTracker::new(true);
            let mut context = IpcWriteContext::default();
            let encoded = IpcDataGenerator::default()
                .encode(&batch, &mut tracker, &options, &mut context)
                .map(|(_, message)| message);
            let _ = tx.send(encoded);
        });
        self.encoding.push_back(rx);
        while self.encoding.len() > self.in_flight {
            self.place_next()?;
        }
        Ok(())
    }

    /// Waits for the oldest batch's encoding, gives it the next place in
    /// the file and hands it to the pool to write.
    fn place_next(&mut self) -> Result<(), ArrowError> {
        let Some(rx) = self.encoding.pop_front() else {
            return Ok(());
        };
        let encoded = rx.recv().map_err(|_| lost("encoding"))??;
        // The sizes `write_message` gives (the IPC format's framing: an
        // 8-byte prefix, the metadata padded to the alignment, the body,
        // already aligned), checked against what it returns.
        let header = (encoded.ipc_message.len() + 8).next_multiple_of(ALIGNMENT);
        let body = encoded.arrow_data.len();
        let at = self.offset;
        self.blocks
            .push(Block::new(at as i64, header as i32, body as i64));
        self.offset += (header + body) as u64;
        while self.writing.len() >= self.in_flight {
            self.finish_write()?;
        }
        let (tx, rx) = sync_channel(1);
        let file = self.file.clone();
        let options = self.options.clone();
        self.pool.spawn(move || {
            let mut out = At { file: &file, at };
            let written = write_message(&mut out, encoded, &options)
                .map_err(std::io::Error::other)
                .and_then(|sizes| {
                    if sizes == (header, body) {
                        Ok(())
                    } else {
                        Err(std::io::Error::other(format!(
                            "an IPC message took {sizes:?} bytes, {:?} expected",
                            (header, body)
                        )))
                    }
                });
            let _ = tx.send(written);
        });
        self.writing.push_back(rx);
        Ok(())
    }

    /// Waits for the oldest write.
    fn finish_write(&mut self) -> Result<(), ArrowError> {
        match self.writing.pop_front() {
            Some(rx) => Ok(rx.recv().map_err(|_| lost("writing"))??),
            None => Ok(()),
        }
    }

    /// Writes every queued batch, the end-of-stream marker and the footer.
    pub fn finish(mut self) -> Result<(), ArrowError> {
        while !self.encoding.is_empty() {
            self.place_next()?;
        }
        while !self.writing.is_empty() {
            self.finish_write()?;
        }
        let mut tail: Vec<u8> = Vec::new();
        // End of stream: the continuation marker and a zero length.
        tail.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        let mut fbb = flatbuffers::FlatBufferBuilder::new();
        let dictionaries = fbb.create_vector::<Block>(&[]);
        let batches = fbb.create_vector(&self.blocks);
        let mut tracker = DictionaryTracker::new(true);
        let schema = IpcSchemaEncoder::new()
            .with_dictionary_tracker(&mut tracker)
            .schema_to_fb_offset(&mut fbb, &self.schema);
        let mut footer = FooterBuilder::new(&mut fbb);
        footer.add_version(VERSION);
        footer.add_schema(schema);
        footer.add_dictionaries(dictionaries);
        footer.add_recordBatches(batches);
        let root = footer.finish();
        fbb.finish(root, None);
        let data = fbb.finished_data();
        tail.extend_from_slice(data);
        tail.extend_from_slice(&(data.len() as i32).to_le_bytes());
        tail.extend_from_slice(MAGIC);
        self.file.write_all_at(&tail, self.offset)?;
        self.file.set_len(self.offset + tail.len() as u64)?;
        Ok(())
    }
}

/// Bytes of padding after `len` bytes to reach `alignment`.
fn pad(alignment: usize, len: usize) -> usize {
    len.next_multiple_of(alignment) - len
}

/// A worker that died before answering (a panic in arrow-ipc).
fn lost(what: &str) -> ArrowError {
    ArrowError::IpcError(format!("an IPC {what} thread stopped without a result"))
}

/// Sequential writes from a position of a shared file.
struct At<'f> {
    file: &'f File,
    at: u64,
}

impl Write for At<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{ArrayRef, BooleanArray, Int64Array, ListArray, StringArray, StructArray};
    use arrow::datatypes::{Field, Int32Type};

    use super::*;

    fn batches() -> Vec<RecordBatch> {
        let n = 10_000usize;
        let ints: ArrayRef = Arc::new(Int64Array::from_iter(
            (0..n as i64).map(|i| (i % 7 != 0).then_some(i * 31)),
        ));
        let strings: ArrayRef =
            Arc::new(StringArray::from_iter((0..n).map(|i| {
                (i % 5 != 0).then(|| format!("row {i} {}", "x".repeat(i % 13)))
            })));
        let bools: ArrayRef = Arc::new(BooleanArray::from_iter(
            (0..n).map(|i| (i % 3 != 0).then_some(i % 2 == 0)),
        ));
        let lists: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
            (0..n).map(|i| (i % 4 != 0).then(|| (0..(i % 5) as i32).map(Some))),
        ));
        let nested: ArrayRef = Arc::new(StructArray::from(vec![(
            Arc::new(Field::new("b", DataType::Boolean, true)),
            bools.clone(),
        )]));
        let all = RecordBatch::try_from_iter([
            ("i", ints),
            ("s", strings),
            ("b", bools),
            ("l", lists),
            ("st", nested),
        ])
        .unwrap();
        // Slices at odd offsets, as a read's batches are.
        [(0, 4097), (4097, 1), (4098, 3333), (7431, 2569)]
            .into_iter()
            .map(|(o, l)| all.slice(o, l))
            .collect()
    }

    #[test]
    fn writes_the_bytes_file_writer_writes() {
        let batches = batches();
        let schema = batches[0].schema();
        let mut expected = Vec::new();
        let mut w = arrow::ipc::writer::FileWriter::try_new(&mut expected, &schema).unwrap();
        for b in &batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
        drop(w);
        let dir = std::env::temp_dir().join(format!("warpread-ipc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for threads in [1, 3] {
            let path = dir.join(format!("t{threads}.arrow"));
            let mut w = ParallelFileWriter::try_new(File::create(&path).unwrap(), &schema, threads)
                .unwrap();
            for b in &batches {
                w.write(b).unwrap();
            }
            w.finish().unwrap();
            let got = std::fs::read(&path).unwrap();
            assert!(got == expected, "{threads} threads: the files differ");
            let read: Vec<RecordBatch> =
                arrow::ipc::reader::FileReader::try_new(File::open(&path).unwrap(), None)
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
            assert_eq!(read, batches);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refuses_dictionaries_and_other_schemas() {
        let dir = std::env::temp_dir().join(format!("warpread-ipc-s-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = || File::create(dir.join("s.arrow")).unwrap();
        let dict = Schema::new(vec![Field::new(
            "d",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            true,
        )]);
        assert!(ParallelFileWriter::try_new(file(), &dict, 2).is_err());
        let batches = batches();
        let other = Schema::new(vec![Field::new("x", DataType::Int64, true)]);
        let mut w = ParallelFileWriter::try_new(file(), &other, 2).unwrap();
        assert!(w.write(&batches[0]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
