//! GSST containers (Arrow IPC files with GSST- and Huffman-compressed
//! columns) as a warpread table format: units are the file's record
//! batches; compressed columns decode on the session's backend. `STORED AS
//! GSST`.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;

use super::format::{ReadUnit, ScanRequest, WarpFile, WarpFormat};
use crate::error::Result;
use crate::exec::Backend;
use crate::gsst::container_file::ContainerFile;
use crate::orc::ReadStats;
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
        let (Some(first), Some(last)) = (units.first(), units.last()) else {
            return Ok((Vec::new(), ReadStats::default()));
        };
        // Batches start at distinct offsets, so this range holds exactly
        // the batches from first to last (the container prunes none).
        let options = super::format::read_options(request, Some(first.offset..last.offset + 1));
        self.read_with_stats(&options, backend)
    }
}
