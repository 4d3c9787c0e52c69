//! GSST containers (Arrow IPC files with GSST- and Huffman-compressed
//! columns) as a warpread table format: units are the file's record
//! batches; compressed columns decode on the session's backend. `STORED AS
//! GSST`.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;

use super::format::{ReadUnit, ScanRequest, WarpFile, WarpFormat};
use crate::error::Result;
use crate::exec::Backend;
use crate::gsst::container_file::ContainerFile;
use crate::orc::{ReadStats, split_batch};
use warpread::source::Source;

/// The GSST container format (`warpread convert` writes it: GSST and
/// Huffman columns, decoded on the session's backend).
#[derive(Debug, Clone, Copy, Default)]
pub struct GsstFormat;

impl WarpFormat for GsstFormat {
    fn name(&self) -> &'static str {
        "gsst"
    }

    fn extension(&self) -> &'static str {
        ".arrow"
    }

    fn open(&self, path: &Path) -> Result<Arc<dyn WarpFile>> {
        Ok(Arc::new(ContainerFile::open(path)?))
    }

    fn source_format(&self) -> &'static str {
        "GSST container"
    }

    fn open_source(&self, src: Source) -> Result<Arc<dyn WarpFile>> {
        Ok(Arc::new(ContainerFile::from_source(src)?))
    }
}

impl WarpFile for ContainerFile {
    fn schema(&self) -> SchemaRef {
        ContainerFile::schema(self)
    }

    fn rows(&self) -> u64 {
        ContainerFile::rows(self)
    }

    fn source(&self) -> &Source {
        ContainerFile::source(self)
    }

    fn unit_ranges(&self, units: &[ReadUnit], request: &ScanRequest) -> Result<Vec<Range<u64>>> {
        use warpread::read::GroupedFile;
        let batches: Vec<usize> = units.iter().map(|u| u.index).collect();
        self.group_ranges(
            &batches,
            &warpread::read::ReadOptions::default().with_columns(request.columns.clone()),
        )
    }

    fn plan(&self, request: &ScanRequest) -> Result<Vec<ReadUnit>> {
        // A batch belongs to the byte range holding its message's start,
        // so each falls in exactly one of DataFusion's ranges. The container
        // keeps no statistics: predicates prune nothing (DataFusion still
        // filters the rows).
        Ok(self
            .blocks()
            .iter()
            .filter(|b| {
                request
                    .byte_range
                    .as_ref()
                    .is_none_or(|r| r.contains(&b.offset))
            })
            .map(|b| ReadUnit {
                index: b.index,
                offset: b.offset,
                bytes: b.bytes,
                rows: b.rows,
            })
            .collect())
    }

    fn read(
        &self,
        units: &[ReadUnit],
        request: &ScanRequest,
        backend: &dyn Backend,
    ) -> Result<(Vec<RecordBatch>, ReadStats)> {
        let t = Instant::now();
        let indices: Vec<usize> = units.iter().map(|u| u.index).collect();
        let read =
            |indices: &[usize]| ContainerFile::read(self, indices, &request.columns, backend);
        // Batches that together run the device out of memory are decoded
        // one at a time (the ORC and Parquet readers do the same with their
        // units themselves).
        let batches = match read(&indices) {
            Err(e) if e.is_device_out_of_memory() && indices.len() > 1 => {
                let mut all = Vec::new();
                for one in indices.chunks(1) {
                    all.extend(read(one)?);
                }
                all
            }
            other => other?,
        };
        let out = batches
            .iter()
            .flat_map(|b| split_batch(b, request.batch_size))
            .collect();
        let stats = ReadStats {
            file_bytes: units.iter().map(|u| u.bytes).sum(),
            decode_s: t.elapsed().as_secs_f64(),
            ..ReadStats::default()
        };
        Ok((out, stats))
    }
}
