//! Reads whose batches come out on the device: `build_device` on the
//! reader builders. The read runs as a host read does, on a CUDA backend
//! that keeps its decode stages' outputs on the device meanwhile
//! ([`Backend::retain_decoded`]); each host batch then becomes a
//! [`DeviceBatch`] whose decoded buffers are those device outputs and whose
//! host-built buffers are uploaded, before the host batch is dropped.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use futures::{Stream, StreamExt};

use super::array::{DeviceBatch, UploadCache};
use super::ffi::DeviceBatchSource;
use crate::error::{Error, Result};
use crate::exec::Backend;
use crate::read::{BatchReader, BatchStream, GroupedFile, ReaderBuilder, StreamBuilder};

/// Holds a CUDA backend's decoded outputs on its device for as long as it
/// lives; the uploads consecutive batches share; the schema handed out
/// (decimals read at their stored width are widened to it on the device).
struct Retained {
    backend: Arc<dyn Backend>,
    cache: UploadCache,
    schema: SchemaRef,
}

impl Retained {
    fn new(backend: Arc<dyn Backend>, schema: SchemaRef) -> Self {
        backend.retain_decoded(true);
        Self {
            backend,
            cache: UploadCache::default(),
            schema,
        }
    }

    fn move_to_device(&mut self, batch: &RecordBatch) -> Result<DeviceBatch> {
        let cuda = self
            .backend
            .as_cuda()
            .ok_or_else(|| Error::Unsupported("device output needs the CUDA backend".into()))?;
        DeviceBatch::from_host_with(batch, cuda, &mut self.cache)?.widened_to(&self.schema, cuda)
    }
}

impl Drop for Retained {
    fn drop(&mut self) {
        self.backend.retain_decoded(false);
    }
}

impl<F: GroupedFile + std::fmt::Debug> ReaderBuilder<F> {
    /// Builds a reader whose batches lie on the CUDA device
    /// ([`DeviceBatch`]); an error when the backend (given, or chosen as
    /// `auto` would) is not CUDA.
    pub fn build_device(mut self) -> Result<DeviceBatchReader<F>> {
        // Before `for_device` lets decimals be read at their stored width.
        let schema = self.schema()?;
        let backend = self.for_device()?;
        // Before the read starts decoding (on its read-ahead thread).
        let retained = Retained::new(backend, schema);
        let inner = self.build()?;
        Ok(DeviceBatchReader { inner, retained })
    }
}

/// A streaming read whose batches lie on the device (see the module docs).
pub struct DeviceBatchReader<F: GroupedFile> {
    inner: BatchReader<F>,
    retained: Retained,
}

impl<F: GroupedFile> std::fmt::Debug for DeviceBatchReader<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBatchReader")
            .field("inner", &self.inner)
            .finish()
    }
}

impl<F: GroupedFile> DeviceBatchReader<F> {
    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.retained.schema.clone()
    }

    /// The backend the batches lie on.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.retained.backend
    }

    /// The next batch; `None` at the end. After an error the read ends.
    pub fn next_batch(&mut self) -> Option<Result<DeviceBatch>> {
        let batch = self.inner.next_batch()?;
        Some(batch.and_then(|b| self.retained.move_to_device(&b)))
    }
}

impl<F: GroupedFile> Iterator for DeviceBatchReader<F> {
    type Item = Result<DeviceBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
    }
}

impl<F: GroupedFile + 'static> DeviceBatchSource for DeviceBatchReader<F> {
    fn schema(&self) -> SchemaRef {
        DeviceBatchReader::schema(self)
    }

    fn next_batch(&mut self) -> Option<Result<DeviceBatch>> {
        DeviceBatchReader::next_batch(self)
    }
}

impl<F: GroupedFile> StreamBuilder<F> {
    /// [`build`](Self::build) for batches on the CUDA device; an error when
    /// the backend is not CUDA.
    pub async fn build_device(mut self) -> Result<DeviceBatchStream> {
        let schema = self.schema()?;
        let backend = self.for_device()?;
        let retained = Retained::new(backend, schema);
        let inner = self.build().await?;
        Ok(DeviceBatchStream { inner, retained })
    }
}

/// An async read whose batches lie on the device: a [`Stream`] of
/// [`DeviceBatch`]es in file order.
pub struct DeviceBatchStream {
    inner: BatchStream,
    retained: Retained,
}

impl std::fmt::Debug for DeviceBatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBatchStream")
            .field("inner", &self.inner)
            .finish()
    }
}

impl DeviceBatchStream {
    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.retained.schema.clone()
    }

    /// The backend the batches lie on.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.retained.backend
    }
}

impl Stream for DeviceBatchStream {
    type Item = Result<DeviceBatch>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        let this = &mut *self;
        this.inner
            .poll_next_unpin(cx)
            .map(|o| o.map(|r| r.and_then(|b| this.retained.move_to_device(&b))))
    }
}
