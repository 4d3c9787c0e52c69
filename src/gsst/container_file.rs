//! Random access to a GSST container file: the IPC footer's record-batch
//! blocks become independently readable units (with their file offset and
//! row count, read from each block's message header without touching its
//! body), so a table provider can split a file by byte range and read only
//! the batches and columns a scan asks for.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::ipc::convert::fb_to_schema;
use arrow::ipc::reader::{FileReader, read_footer_length};

use super::container::{decode_batch, decode_schema};
use crate::error::{Error, Location, Result};
use crate::exec::Backend;

/// One record batch of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchBlock {
    /// Batch number in the file.
    pub index: usize,
    /// File offset of the batch's message.
    pub offset: u64,
    /// Message and body bytes.
    pub bytes: u64,
    /// Rows in the batch.
    pub rows: u64,
}

/// A GSST container (or any Arrow IPC file) opened for random access.
#[derive(Debug)]
pub struct ContainerFile {
    path: PathBuf,
    /// The stored schema (GSST columns as marked LargeBinary).
    stored: SchemaRef,
    /// The decoded schema (GSST columns as strings).
    schema: SchemaRef,
    blocks: Vec<BatchBlock>,
}

fn error(path: &Path, message: impl Into<String>) -> Error {
    Error::Format {
        format: "GSST container",
        location: Box::new(Location::file(path)),
        message: message.into(),
    }
}

/// Runs `f`, turning a panic of the IPC reader (arrow-ipc 59 panics on some
/// damaged footers and buffer lengths) into an error naming the file.
fn guarded<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(error(
            path,
            "damaged Arrow IPC file (the IPC reader panicked)",
        ))
    })
}

/// The rows of the record batch whose message starts `meta` (continuation
/// marker, length, flatbuffer).
fn message_rows(meta: &[u8]) -> std::result::Result<u64, String> {
    let body = match meta {
        [0xff, 0xff, 0xff, 0xff, _, _, _, _, rest @ ..] => rest,
        [_, _, _, _, rest @ ..] => rest,
        _ => return Err("record batch message shorter than its prefix".into()),
    };
    let message = arrow::ipc::root_as_message(body).map_err(|e| e.to_string())?;
    let batch = message
        .header_as_record_batch()
        .ok_or("a footer block is not a record batch")?;
    u64::try_from(batch.length()).map_err(|_| format!("negative row count {}", batch.length()))
}

impl ContainerFile {
    /// Opens a file: its schema and the footer's batch directory.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        guarded(path, || Self::open_inner(path))
    }

    fn open_inner(path: &Path) -> Result<Self> {
        let io = |e| Error::io(path, e);
        let mut file = File::open(path).map_err(io)?;
        let arrow_err = |e| Error::arrow(format!("reading {}", path.display()), e);
        let len = file.seek(SeekFrom::End(0)).map_err(io)?;
        if len < 10 {
            return Err(error(path, "file too short for an Arrow IPC footer"));
        }
        let mut tail = [0u8; 10];
        file.seek(SeekFrom::End(-10)).map_err(io)?;
        file.read_exact(&mut tail).map_err(io)?;
        let footer_len = read_footer_length(tail).map_err(arrow_err)? as u64;
        if footer_len + 10 > len {
            return Err(error(
                path,
                format!("footer of {footer_len} bytes in a {len}-byte file"),
            ));
        }
        let mut footer = vec![0u8; footer_len as usize];
        file.seek(SeekFrom::Start(len - 10 - footer_len))
            .map_err(io)?;
        file.read_exact(&mut footer).map_err(io)?;
        let footer = arrow::ipc::root_as_footer(&footer)
            .map_err(|e| error(path, format!("bad IPC footer: {e}")))?;
        let stored = Arc::new(fb_to_schema(
            footer
                .schema()
                .ok_or_else(|| error(path, "IPC footer without a schema"))?,
        ));
        let schema = decode_schema(&stored, &Location::file(path))?;
        let mut blocks = Vec::new();
        for (index, b) in footer.recordBatches().into_iter().flatten().enumerate() {
            let at = |m: String| error(path, format!("record batch {index}: {m}"));
            let (offset, meta, body) = (b.offset(), b.metaDataLength(), b.bodyLength());
            let (Ok(offset), Ok(meta), Ok(body)) = (
                u64::try_from(offset),
                u64::try_from(meta),
                u64::try_from(body),
            ) else {
                return Err(at(format!(
                    "negative block field (offset {offset}, metadata {meta}, body {body})"
                )));
            };
            if offset
                .checked_add(meta)
                .and_then(|e| e.checked_add(body))
                .is_none_or(|e| e > len)
            {
                return Err(at(format!(
                    "block at {offset} of {} bytes runs past the {len}-byte file",
                    meta.saturating_add(body)
                )));
            }
            let mut m = vec![0u8; meta as usize];
            file.seek(SeekFrom::Start(offset)).map_err(io)?;
            file.read_exact(&mut m).map_err(io)?;
            let rows = message_rows(&m).map_err(at)?;
            blocks.push(BatchBlock {
                index,
                offset,
                bytes: meta + body,
                rows,
            });
        }
        Ok(Self {
            path: path.to_path_buf(),
            stored,
            schema,
            blocks,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The decoded schema: GSST columns as Utf8 or LargeUtf8.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The record batches, in file order.
    pub fn blocks(&self) -> &[BatchBlock] {
        &self.blocks
    }

    /// Rows in the file.
    pub fn rows(&self) -> u64 {
        self.blocks.iter().map(|b| b.rows).sum()
    }

    /// Reads the batches numbered `indices` (their columns `columns`, all
    /// when empty), decoding GSST columns on `backend`.
    pub fn read(
        &self,
        indices: &[usize],
        columns: &[String],
        backend: &dyn Backend,
    ) -> Result<Vec<RecordBatch>> {
        guarded(&self.path, || self.read_inner(indices, columns, backend))
    }

    fn read_inner(
        &self,
        indices: &[usize],
        columns: &[String],
        backend: &dyn Backend,
    ) -> Result<Vec<RecordBatch>> {
        let path = &self.path;
        let projection = if columns.is_empty() {
            (0..self.stored.fields().len()).collect()
        } else {
            columns
                .iter()
                .map(|c| {
                    self.stored.index_of(c).map_err(|_| {
                        Error::Unsupported(format!("no column `{c}` in {}", path.display()))
                    })
                })
                .collect::<Result<Vec<_>>>()?
        };
        let arrow_err = |e| Error::arrow(format!("reading {}", path.display()), e);
        let schema = Arc::new(self.schema.project(&projection).map_err(arrow_err)?);
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let mut reader =
            FileReader::try_new(BufReader::new(file), Some(projection)).map_err(arrow_err)?;
        let mut out = Vec::with_capacity(indices.len());
        for &i in indices {
            if i >= reader.num_batches() {
                return Err(error(path, format!("no record batch {i}")));
            }
            reader.set_index(i).map_err(arrow_err)?;
            let batch = reader
                .next()
                .ok_or_else(|| error(path, format!("record batch {i} missing")))?
                .map_err(arrow_err)?;
            let location = Location::file(path).with_stripe(i as u64);
            out.push(decode_batch(&batch, &schema, backend, &location)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Int32Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    use super::*;
    use crate::exec::CpuBackend;
    use crate::gsst::container::{ContainerOptions, write_container};
    use crate::plan::GsstLayout;

    fn batch(n: usize, seed: usize) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("s", DataType::Utf8, true),
        ]));
        let ids = Int32Array::from_iter_values((0..n as i32).map(|i| i + seed as i32));
        let s =
            StringArray::from_iter((0..n).map(|i| {
                (i % 7 != 3).then(|| format!("value {} of batch {seed} says hello", i * 31))
            }));
        RecordBatch::try_new(schema, vec![Arc::new(ids), Arc::new(s)]).unwrap()
    }

    #[test]
    fn blocks_give_offsets_rows_and_random_access() {
        let dir = std::env::temp_dir().join(format!("warpread-cf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.arrow");
        let batches: Vec<_> = [(100, 0), (1, 1000), (2500, 2000)]
            .into_iter()
            .map(|(n, s)| batch(n, s))
            .collect();
        let schema = batches[0].schema();
        let mut file = File::create(&path).unwrap();
        write_container(
            &mut file,
            &schema,
            batches.iter().cloned().map(Ok),
            &ContainerOptions::new(GsstLayout::Splits),
        )
        .unwrap();
        let f = ContainerFile::open(&path).unwrap();
        assert_eq!(f.schema(), schema);
        let rows: Vec<u64> = f.blocks().iter().map(|b| b.rows).collect();
        assert_eq!(rows, [100, 1, 2500]);
        assert!(f.blocks().windows(2).all(|w| w[0].offset < w[1].offset));
        let got = f.read(&[2, 0], &["s".into()], &CpuBackend::new()).unwrap();
        assert_eq!(got[0].column(0).as_ref(), batches[2].column(1).as_ref());
        assert_eq!(got[1].column(0).as_ref(), batches[0].column(1).as_ref());
        assert!(f.read(&[3], &[], &CpuBackend::new()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn damaged_footers_are_errors() {
        let dir = std::env::temp_dir().join(format!("warpread-cf-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.arrow");
        let mut file = File::create(&path).unwrap();
        let b = batch(50, 0);
        write_container(
            &mut file,
            &b.schema(),
            [Ok(b.clone())],
            &ContainerOptions::new(GsstLayout::Coalesced),
        )
        .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        for cut in [0, 5, bytes.len() / 2, bytes.len() - 11, bytes.len() - 1] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let e = ContainerFile::open(&path).unwrap_err().to_string();
            assert!(e.contains("t.arrow"), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
