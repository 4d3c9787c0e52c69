//! [`DeviceArray`] and [`DeviceBatch`]: Arrow arrays whose buffers lie in
//! device memory, in the layout of the Arrow C Data Interface (validity
//! first where the type has one, then the type's buffers; children; a
//! dictionary), made from a read's host batch by [`DeviceBatch::from_host`].
//!
//! They are not arrow-rs arrays on purpose: an `ArrayRef` over device
//! addresses would be dereferenced by the first host kernel that touched
//! it. Their bytes reach the host only through
//! [`DeviceBatch::to_host`], a copy.

use std::sync::Arc;

use arrow::array::{ArrayData, RecordBatch, make_array};
use arrow::buffer::{BooleanBuffer, Buffer, MutableBuffer};
use arrow::datatypes::{DataType, SchemaRef};

use crate::error::{Error, Result};
use crate::exec::CudaBackend;
use crate::gpu::{DeviceBuffer, DeviceEvent, Origin};

/// One Arrow array on the device.
#[derive(Debug, Clone)]
pub struct DeviceArray {
    pub(crate) data_type: DataType,
    pub(crate) len: usize,
    pub(crate) offset: usize,
    pub(crate) null_count: usize,
    /// The C Data Interface's buffers: a validity slot first (`None`: no
    /// nulls) for every type that has one, then the type's own buffers.
    pub(crate) buffers: Vec<Option<DeviceBuffer>>,
    pub(crate) children: Vec<DeviceArray>,
    pub(crate) dictionary: Option<Box<DeviceArray>>,
}

impl DeviceArray {
    /// The array's Arrow type.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// Logical length in rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Offset of the first row in the buffers (in elements; bits for
    /// bitmaps).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Null rows.
    pub fn null_count(&self) -> usize {
        self.null_count
    }

    /// The buffers in the C Data Interface's order (see the module docs).
    pub fn buffers(&self) -> &[Option<DeviceBuffer>] {
        &self.buffers
    }

    /// The validity bitmap, if the array has nulls.
    pub fn validity(&self) -> Option<&DeviceBuffer> {
        has_validity_slot(&self.data_type)
            .then(|| self.buffers.first().and_then(Option::as_ref))
            .flatten()
    }

    /// The child arrays (struct fields, list values, map entries).
    pub fn children(&self) -> &[DeviceArray] {
        &self.children
    }

    /// A dictionary array's values.
    pub fn dictionary(&self) -> Option<&DeviceArray> {
        self.dictionary.as_deref()
    }

    /// Visits every buffer of the array and its children and dictionary.
    fn each_buffer(&self, f: &mut impl FnMut(&DeviceBuffer)) {
        self.buffers.iter().flatten().for_each(&mut *f);
        for c in &self.children {
            c.each_buffer(f);
        }
        if let Some(d) = &self.dictionary {
            d.each_buffer(f);
        }
    }
}

/// Whether the C Data Interface gives `dt` a validity buffer (every type
/// but null, unions and run-end encoded arrays).
pub(crate) fn has_validity_slot(dt: &DataType) -> bool {
    !matches!(
        dt,
        DataType::Null | DataType::Union(..) | DataType::RunEndEncoded(..)
    )
}

/// Device bytes of a batch by where they came from.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DeviceBytes {
    /// Decode stages' outputs, left where the kernels wrote them.
    pub decoded: u64,
    /// Built on the host and uploaded.
    pub uploaded: u64,
    /// Made on the device from other device bytes.
    pub derived: u64,
}

impl DeviceBytes {
    /// Device bytes the buffers of `batches` cover, by origin; a device
    /// range that several buffers or batches share (the batches of one read
    /// group slicing one upload) counts once.
    pub fn of(batches: &[DeviceBatch]) -> Self {
        let mut seen = std::collections::HashSet::new();
        let mut out = DeviceBytes::default();
        for c in batches.iter().flat_map(|b| &b.columns) {
            c.each_buffer(&mut |b| {
                if !seen.insert((b.device_ptr(), b.len())) {
                    return;
                }
                let n = b.len() as u64;
                match b.origin() {
                    Origin::Decoded => out.decoded += n,
                    Origin::Uploaded => out.uploaded += n,
                    Origin::Derived => out.derived += n,
                }
            });
        }
        out
    }
}

/// A record batch on the device: a schema, a [`DeviceArray`] per column, and
/// the event a consumer waits on before it reads them.
#[derive(Debug, Clone)]
pub struct DeviceBatch {
    pub(crate) schema: SchemaRef,
    pub(crate) columns: Vec<DeviceArray>,
    pub(crate) num_rows: usize,
    pub(crate) device: usize,
    pub(crate) ready: Arc<DeviceEvent>,
}

impl DeviceBatch {
    /// The batch's schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Rows in the batch.
    pub fn num_rows(&self) -> usize {
        self.num_rows
    }

    /// Columns in the batch.
    pub fn num_columns(&self) -> usize {
        self.columns.len()
    }

    /// The columns, in schema order.
    pub fn columns(&self) -> &[DeviceArray] {
        &self.columns
    }

    /// The `i`th column.
    pub fn column(&self, i: usize) -> Option<&DeviceArray> {
        self.columns.get(i)
    }

    /// The column named `name`.
    pub fn column_by_name(&self, name: &str) -> Option<&DeviceArray> {
        let i = self.schema.index_of(name).ok()?;
        self.columns.get(i)
    }

    /// The ordinal of the CUDA device holding the batch.
    pub fn device_ordinal(&self) -> usize {
        self.device
    }

    /// The event recorded after the work that made the batch.
    pub fn ready_event(&self) -> &Arc<DeviceEvent> {
        &self.ready
    }

    /// Device bytes the batch's buffers cover, by origin (a range that
    /// several buffers share counts once).
    pub fn device_bytes(&self) -> DeviceBytes {
        DeviceBytes::of(std::slice::from_ref(self))
    }

    /// Moves a batch that `backend` decoded onto its device: each buffer
    /// that is a decode stage's output as it is (and whose device mirror
    /// the read kept: [`Backend::retain_decoded`](crate::exec::Backend::retain_decoded))
    /// is taken where it lies; every other buffer is uploaded, all of the
    /// batch's together.
    pub fn from_host(batch: &RecordBatch, backend: &CudaBackend) -> Result<Self> {
        Self::from_host_with(batch, backend, &mut UploadCache::default())
    }

    /// [`from_host`](Self::from_host) for one of a read's consecutive
    /// batches: a host buffer that `cache` holds from the batch before (the
    /// batches of one read group slice the same buffers: a string column's
    /// values, a validity bitmap) is not uploaded again.
    pub fn from_host_with(
        batch: &RecordBatch,
        backend: &CudaBackend,
        cache: &mut UploadCache,
    ) -> Result<Self> {
        let mut parts: Vec<Buffer> = Vec::new();
        let shapes = batch
            .columns()
            .iter()
            .zip(batch.schema().fields())
            .map(|(c, f)| {
                shape_of(&c.to_data(), &mut parts).map_err(|e| {
                    Error::Unsupported(format!("device output of column {:?}: {e}", f.name()))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut device = cache.upload(&parts, backend)?;
        let columns = shapes
            .into_iter()
            .map(|s| s.build(&mut device))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            schema: batch.schema(),
            columns,
            num_rows: batch.num_rows(),
            device: backend.runtime().info().ordinal,
            ready: Arc::new(backend.ready_event()?),
        })
    }

    /// The batch under `schema`, the schema the read hands out: a column
    /// read at its stored width (`Decimal32` / `Decimal64`, see
    /// [`ReadOptions::narrow_decimals`](crate::read::ReadOptions::narrow_decimals))
    /// where `schema` has `Decimal128` is widened on the device, so those
    /// 16-byte values are never built on the host or uploaded.
    pub fn widened_to(self, schema: &SchemaRef, backend: &CudaBackend) -> Result<Self> {
        if self.schema == *schema {
            return Ok(self);
        }
        if schema.fields().len() != self.columns.len() {
            return Err(Error::InvalidPlan(format!(
                "a device batch of {} columns under a schema of {}",
                self.columns.len(),
                schema.fields().len()
            )));
        }
        let columns = self
            .columns
            .into_iter()
            .zip(schema.fields())
            .map(|(c, f)| match (&c.data_type, f.data_type()) {
                (a, b) if a == b => Ok(c),
                (DataType::Decimal32(..) | DataType::Decimal64(..), DataType::Decimal128(p, s)) => {
                    let width = if matches!(c.data_type, DataType::Decimal64(..)) {
                        8
                    } else {
                        4
                    };
                    let values = c.buffers.get(1).and_then(Option::as_ref).ok_or_else(|| {
                        Error::InvalidPlan(format!("decimal column {:?} without values", f.name()))
                    })?;
                    let wide = backend.widen_decimals(values, width, c.offset + c.len)?;
                    let validity = c.buffers.first().cloned().flatten();
                    Ok(DeviceArray {
                        data_type: DataType::Decimal128(*p, *s),
                        buffers: vec![validity, Some(wide)],
                        ..c
                    })
                }
                (a, b) => Err(Error::InvalidPlan(format!(
                    "device column {:?} read as {a}, handed out as {b}",
                    f.name()
                ))),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            schema: schema.clone(),
            columns,
            ..self
        })
    }

    /// Copies the batch back to host memory as an arrow-rs batch (checked
    /// by arrow's validation): how tests compare a device read with a host
    /// one.
    pub fn to_host(&self, backend: &CudaBackend) -> Result<RecordBatch> {
        let columns = self
            .columns
            .iter()
            .map(|c| Ok(make_array(download(c, backend)?)))
            .collect::<Result<Vec<_>>>()?;
        RecordBatch::try_new(self.schema.clone(), columns)
            .map_err(|e| Error::Unsupported(format!("device batch back on the host: {e}")))
    }
}

/// Device copies of the host buffers the last batch uploaded, each with the
/// host buffer it copies (held, so that its address cannot be reused for
/// other bytes while the entry lives).
#[derive(Default)]
pub struct UploadCache {
    entries: Vec<(Buffer, DeviceBuffer)>,
}

impl std::fmt::Debug for UploadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UploadCache")
            .field("entries", &self.entries.len())
            .finish()
    }
}

impl UploadCache {
    /// The device copy of `part` inside a cached upload, and the entry.
    fn find(&self, part: &Buffer) -> Option<(usize, DeviceBuffer)> {
        let (start, len) = (part.as_ptr() as usize, part.len());
        self.entries
            .iter()
            .enumerate()
            .find_map(|(i, (host, dev))| {
                let off = start.checked_sub(host.as_ptr() as usize)?;
                (off + len <= host.len())
                    .then(|| dev.slice(off..off + len))
                    .flatten()
                    .map(|d| (i, d))
            })
    }

    /// The device copy of every part: from the cache, else from
    /// [`CudaBackend::to_device`] (mirrors, or one upload of all the rest);
    /// the cache then keeps this batch's uploads only.
    fn upload(
        &mut self,
        parts: &[Buffer],
        backend: &CudaBackend,
    ) -> Result<Vec<Option<DeviceBuffer>>> {
        let mut out: Vec<Option<DeviceBuffer>> = vec![None; parts.len()];
        let mut used = vec![false; self.entries.len()];
        let mut missing = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            match self.find(p) {
                Some((e, d)) => {
                    used[e] = true;
                    out[i] = Some(d);
                }
                None => missing.push(i),
            }
        }
        let slices: Vec<&[u8]> = missing.iter().map(|&i| parts[i].as_slice()).collect();
        let fresh = backend.to_device(&slices)?;
        let mut kept: Vec<(Buffer, DeviceBuffer)> = std::mem::take(&mut self.entries)
            .into_iter()
            .zip(used)
            .filter_map(|(e, u)| u.then_some(e))
            .collect();
        for (&i, d) in missing.iter().zip(fresh) {
            if d.origin() == Origin::Uploaded {
                kept.push((parts[i].clone(), d.clone()));
            }
            out[i] = Some(d);
        }
        self.entries = kept;
        Ok(out)
    }
}

/// An array's layout with its buffers as indices into the parts list.
struct Shape {
    data_type: DataType,
    len: usize,
    offset: usize,
    null_count: usize,
    buffers: Vec<Option<usize>>,
    children: Vec<Shape>,
    dictionary: Option<Box<Shape>>,
}

impl Shape {
    fn build(self, device: &mut [Option<DeviceBuffer>]) -> Result<DeviceArray> {
        let take = |i: usize, device: &mut [Option<DeviceBuffer>]| {
            device
                .get_mut(i)
                .and_then(Option::take)
                .ok_or_else(|| Error::InvalidPlan("device buffer missing".into()))
        };
        let buffers = self
            .buffers
            .into_iter()
            .map(|b| b.map(|i| take(i, device)).transpose())
            .collect::<Result<Vec<_>>>()?;
        let children = self
            .children
            .into_iter()
            .map(|c| c.build(device))
            .collect::<Result<Vec<_>>>()?;
        let dictionary = self
            .dictionary
            .map(|d| d.build(device).map(Box::new))
            .transpose()?;
        Ok(DeviceArray {
            data_type: self.data_type,
            len: self.len,
            offset: self.offset,
            null_count: self.null_count,
            buffers,
            children,
            dictionary,
        })
    }
}

/// The layout of `data`, its buffers appended to `parts`.
fn shape_of(data: &ArrayData, parts: &mut Vec<Buffer>) -> std::result::Result<Shape, String> {
    let dt = data.data_type();
    if matches!(
        dt,
        DataType::Utf8View
            | DataType::BinaryView
            | DataType::ListView(_)
            | DataType::LargeListView(_)
    ) {
        return Err(format!("{dt} is not produced on the device"));
    }
    let push = |b: Buffer, parts: &mut Vec<Buffer>| {
        parts.push(b);
        parts.len() - 1
    };
    let mut buffers = Vec::new();
    if has_validity_slot(dt) {
        let validity = data.nulls().filter(|n| n.null_count() > 0).map(|n| {
            // The C interface reads validity at the array's offset; a
            // bitmap whose own offset differs is rebuilt at that offset.
            if n.offset() == data.offset() {
                n.buffer().clone()
            } else {
                let off = data.offset();
                BooleanBuffer::collect_bool(off + data.len(), |i| i < off || n.is_valid(i - off))
                    .into_inner()
            }
        });
        buffers.push(validity.map(|b| push(b, parts)));
    }
    for b in data.buffers() {
        buffers.push(Some(push(b.clone(), parts)));
    }
    let (children, dictionary) = match dt {
        DataType::Dictionary(..) => {
            let values = data
                .child_data()
                .first()
                .ok_or("a dictionary array without values")?;
            (Vec::new(), Some(Box::new(shape_of(values, parts)?)))
        }
        _ => (
            data.child_data()
                .iter()
                .map(|c| shape_of(c, parts))
                .collect::<std::result::Result<Vec<_>, _>>()?,
            None,
        ),
    };
    Ok(Shape {
        data_type: dt.clone(),
        len: data.len(),
        offset: data.offset(),
        null_count: data.null_count(),
        buffers,
        children,
        dictionary,
    })
}

/// `array` copied to the host as arrow-rs data.
fn download(array: &DeviceArray, backend: &CudaBackend) -> Result<ArrayData> {
    // Into Arrow's aligned allocation: a `Vec<u8>`'s bytes may start at any
    // address, and arrow validates fixed-width buffers' alignment.
    let host = |b: &DeviceBuffer| {
        backend.copy_to_host(b).map(|bytes| {
            let mut m = MutableBuffer::from_len_zeroed(bytes.len());
            m.as_slice_mut().copy_from_slice(&bytes);
            Buffer::from(m)
        })
    };
    let mut bufs = array.buffers.iter();
    let nulls = if has_validity_slot(&array.data_type) {
        bufs.next().and_then(Option::as_ref).map(host).transpose()?
    } else {
        None
    };
    let buffers = bufs
        .map(|b| {
            b.as_ref()
                .map(host)
                .unwrap_or_else(|| Ok(Buffer::from_vec(Vec::<u8>::new())))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut children = array
        .children
        .iter()
        .map(|c| download(c, backend))
        .collect::<Result<Vec<_>>>()?;
    if let Some(d) = &array.dictionary {
        children.push(download(d, backend)?);
    }
    ArrayData::builder(array.data_type.clone())
        .len(array.len)
        .offset(array.offset)
        .null_bit_buffer(nulls)
        .buffers(buffers)
        .child_data(children)
        .build()
        .map_err(|e| Error::Unsupported(format!("device array back on the host: {e}")))
}
