//! The Arrow C Device Data Interface, producer side: [`ArrowDeviceArray`]
//! (an `ArrowArray` whose buffer addresses are device addresses, with the
//! device and an event to wait on) and [`ArrowDeviceArrayStream`]. The
//! structs follow the specification's C declarations field for field; the
//! schema half is arrow-rs's [`FFI_ArrowSchema`], as schemas live on the
//! host.
//!
//! Ownership follows the specification: a consumer moves a struct out
//! (copies it and marks the source released) and calls `release` once when
//! done; releasing a batch drops its references to the device buffers,
//! and the memory is freed when no other batch or tensor holds it.

use std::ffi::{CString, c_char, c_int, c_void};
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use arrow::ffi::FFI_ArrowSchema;

use super::array::{DeviceArray, DeviceBatch};
use crate::error::{Error, Result};
use crate::gpu::{DeviceBuffer, DeviceEvent};

/// `ARROW_DEVICE_CUDA` of the specification's `ArrowDeviceType`.
pub const ARROW_DEVICE_CUDA: i32 = 2;

/// The C Data Interface's `struct ArrowArray`.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArray {
    /// Logical length.
    pub length: i64,
    /// Null count (-1: not computed).
    pub null_count: i64,
    /// Offset of the first row in the buffers.
    pub offset: i64,
    /// Entries of `buffers`.
    pub n_buffers: i64,
    /// Entries of `children`.
    pub n_children: i64,
    /// Buffer addresses (device addresses here).
    pub buffers: *mut *const c_void,
    /// Child arrays.
    pub children: *mut *mut ArrowArray,
    /// The dictionary of a dictionary-encoded array.
    pub dictionary: *mut ArrowArray,
    /// Frees the array; null once released or moved.
    pub release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    /// The producer's data.
    pub private_data: *mut c_void,
}

impl ArrowArray {
    /// A released (empty) struct, for a consumer to move into.
    pub fn empty() -> Self {
        Self {
            length: 0,
            null_count: 0,
            offset: 0,
            n_buffers: 0,
            n_children: 0,
            buffers: std::ptr::null_mut(),
            children: std::ptr::null_mut(),
            dictionary: std::ptr::null_mut(),
            release: None,
            private_data: std::ptr::null_mut(),
        }
    }
}

/// The C Device Data Interface's `struct ArrowDeviceArray`.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowDeviceArray {
    /// The array, its buffers on the device.
    pub array: ArrowArray,
    /// The device ordinal.
    pub device_id: i64,
    /// [`ARROW_DEVICE_CUDA`].
    pub device_type: i32,
    /// A `cudaEvent_t *` the consumer waits on before reading (null: none).
    pub sync_event: *mut c_void,
    /// Zero, for future use.
    pub reserved: [i64; 3],
}

impl ArrowDeviceArray {
    /// A released (empty) struct, for a consumer to move into.
    pub fn empty() -> Self {
        Self {
            array: ArrowArray::empty(),
            device_id: -1,
            device_type: 0,
            sync_event: std::ptr::null_mut(),
            reserved: [0; 3],
        }
    }

    /// Whether the struct holds an array (not released or moved out).
    pub fn is_released(&self) -> bool {
        self.array.release.is_none()
    }
}

impl Drop for ArrowDeviceArray {
    fn drop(&mut self) {
        if let Some(release) = self.array.release {
            // SAFETY: the struct holds an array this module exported and
            // nobody moved out; release frees it exactly once.
            unsafe { release(&mut self.array) };
        }
    }
}

/// What an exported array node owns: the addresses its struct points at and
/// the references that keep the device memory alive.
struct Private {
    buffers: Vec<*const c_void>,
    children: Vec<*mut ArrowArray>,
    dictionary: *mut ArrowArray,
    _keep: Vec<DeviceBuffer>,
    _event: Option<Arc<DeviceEvent>>,
}

unsafe extern "C" fn release_array(array: *mut ArrowArray) {
    // SAFETY: called by a consumer on a struct this module exported (or
    // moved from one), with `private_data` a `Box<Private>` we made.
    unsafe {
        let Some(a) = array.as_mut() else { return };
        if a.release.is_none() {
            return;
        }
        let private = Box::from_raw(a.private_data.cast::<Private>());
        for &child in &private.children {
            release_owned(child);
        }
        release_owned(private.dictionary);
        a.release = None;
        a.private_data = std::ptr::null_mut();
    }
}

/// Releases (if not moved out) and frees a boxed child struct.
///
/// # Safety
/// `p` is null or a `Box<ArrowArray>` leaked by `export`.
unsafe fn release_owned(p: *mut ArrowArray) {
    if p.is_null() {
        return;
    }
    // SAFETY: see the function's contract.
    unsafe {
        if let Some(release) = (*p).release {
            release(p);
        }
        drop(Box::from_raw(p));
    }
}

fn export(array: &DeviceArray, event: Option<Arc<DeviceEvent>>) -> ArrowArray {
    let buffers: Vec<*const c_void> = array
        .buffers
        .iter()
        .map(|b| {
            b.as_ref()
                .map_or(std::ptr::null(), |b| b.device_ptr() as *const c_void)
        })
        .collect();
    let keep: Vec<DeviceBuffer> = array.buffers.iter().flatten().cloned().collect();
    let children: Vec<*mut ArrowArray> = array
        .children
        .iter()
        .map(|c| Box::into_raw(Box::new(export(c, None))))
        .collect();
    let dictionary = array.dictionary.as_ref().map_or(std::ptr::null_mut(), |d| {
        Box::into_raw(Box::new(export(d, None)))
    });
    let mut private = Box::new(Private {
        buffers,
        children,
        dictionary,
        _keep: keep,
        _event: event,
    });
    let out = ArrowArray {
        length: array.len as i64,
        null_count: array.null_count as i64,
        offset: array.offset as i64,
        n_buffers: private.buffers.len() as i64,
        n_children: private.children.len() as i64,
        buffers: private.buffers.as_mut_ptr(),
        children: private.children.as_mut_ptr(),
        dictionary: private.dictionary,
        release: Some(release_array),
        private_data: std::ptr::null_mut(),
    };
    ArrowArray {
        private_data: Box::into_raw(private).cast(),
        ..out
    }
}

impl DeviceArray {
    /// The array as an [`ArrowDeviceArray`] on device `device` (its event:
    /// `ready`'s handle).
    pub fn to_ffi(&self, device: usize, ready: &Arc<DeviceEvent>) -> ArrowDeviceArray {
        ArrowDeviceArray {
            array: export(self, Some(ready.clone())),
            device_id: device as i64,
            device_type: ARROW_DEVICE_CUDA,
            sync_event: ready.handle_ptr(),
            reserved: [0; 3],
        }
    }
}

impl DeviceBatch {
    /// The batch as the C interface passes a record batch: a struct array
    /// of its columns, with its schema (a struct type whose fields are the
    /// columns, the schema's metadata kept).
    pub fn to_ffi(&self) -> Result<(FFI_ArrowSchema, ArrowDeviceArray)> {
        let schema = FFI_ArrowSchema::try_from(self.schema.as_ref())
            .map_err(|e| Error::Unsupported(format!("exporting a batch's schema: {e}")))?;
        Ok((schema, self.to_ffi_array()))
    }

    /// [`to_ffi`](Self::to_ffi)'s array alone (a stream hands the schema
    /// out once).
    pub fn to_ffi_array(&self) -> ArrowDeviceArray {
        let as_struct = DeviceArray {
            data_type: arrow::datatypes::DataType::Struct(self.schema.fields().clone()),
            len: self.num_rows,
            offset: 0,
            null_count: 0,
            buffers: vec![None],
            children: self.columns.clone(),
            dictionary: None,
        };
        as_struct.to_ffi(self.device, &self.ready)
    }
}

/// The C Device Data Interface's `struct ArrowDeviceArrayStream`.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowDeviceArrayStream {
    /// [`ARROW_DEVICE_CUDA`].
    pub device_type: i32,
    /// Writes the stream's schema; 0 or an errno value.
    pub get_schema:
        Option<unsafe extern "C" fn(*mut ArrowDeviceArrayStream, *mut FFI_ArrowSchema) -> c_int>,
    /// Writes the next batch (released: the stream is done); 0 or an errno
    /// value.
    pub get_next:
        Option<unsafe extern "C" fn(*mut ArrowDeviceArrayStream, *mut ArrowDeviceArray) -> c_int>,
    /// The last error's message, valid until the next call.
    pub get_last_error: Option<unsafe extern "C" fn(*mut ArrowDeviceArrayStream) -> *const c_char>,
    /// Frees the stream; null once released or moved.
    pub release: Option<unsafe extern "C" fn(*mut ArrowDeviceArrayStream)>,
    /// The producer's data.
    pub private_data: *mut c_void,
}

impl Drop for ArrowDeviceArrayStream {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: an unmoved stream this module exported.
            unsafe { release(self) };
        }
    }
}

/// Device batches one at a time, as a stream exports them.
pub trait DeviceBatchSource: Send {
    /// The schema of every batch.
    fn schema(&self) -> SchemaRef;
    /// The next batch; `None` at the end.
    fn next_batch(&mut self) -> Option<Result<DeviceBatch>>;
}

struct StreamPrivate {
    source: Box<dyn DeviceBatchSource>,
    last_error: Option<CString>,
}

/// errno's EIO and EINVAL, the codes the stream interface returns.
const EIO: c_int = 5;
const EINVAL: c_int = 22;

/// The private data of a stream this module exported and nobody released.
///
/// # Safety
/// `stream` is null or points at such a stream.
unsafe fn private_of<'a>(stream: *mut ArrowDeviceArrayStream) -> Option<&'a mut StreamPrivate> {
    // SAFETY: see the function's contract; `private_data` is the
    // `Box<StreamPrivate>` that `ArrowDeviceArrayStream::new` leaked.
    unsafe {
        stream
            .as_mut()
            .and_then(|s| s.private_data.cast::<StreamPrivate>().as_mut())
    }
}

unsafe extern "C" fn stream_schema(
    stream: *mut ArrowDeviceArrayStream,
    out: *mut FFI_ArrowSchema,
) -> c_int {
    // SAFETY: a stream this module exported, not released; `out` points
    // at a struct the consumer owns and lets us overwrite.
    unsafe {
        let Some(p) = private_of(stream) else {
            return EINVAL;
        };
        if out.is_null() {
            return EINVAL;
        }
        match FFI_ArrowSchema::try_from(p.source.schema().as_ref()) {
            Ok(s) => {
                std::ptr::write(out, s);
                0
            }
            Err(e) => {
                p.last_error = CString::new(format!("exporting the schema: {e}")).ok();
                EIO
            }
        }
    }
}

unsafe extern "C" fn stream_next(
    stream: *mut ArrowDeviceArrayStream,
    out: *mut ArrowDeviceArray,
) -> c_int {
    // SAFETY: as in `stream_schema`; `out` is a released struct the
    // consumer hands over.
    unsafe {
        let Some(p) = private_of(stream) else {
            return EINVAL;
        };
        if out.is_null() {
            return EINVAL;
        }
        // The schema went out once, through `get_schema`.
        let next = p.source.next_batch().map(|r| r.map(|b| b.to_ffi_array()));
        match next {
            None => {
                std::ptr::write(out, ArrowDeviceArray::empty());
                0
            }
            Some(Ok(array)) => {
                std::ptr::write(out, array);
                0
            }
            Some(Err(e)) => {
                p.last_error = CString::new(e.to_string().replace('\0', " ")).ok();
                EIO
            }
        }
    }
}

unsafe extern "C" fn stream_error(stream: *mut ArrowDeviceArrayStream) -> *const c_char {
    // SAFETY: as in `stream_schema`.
    unsafe {
        stream
            .as_mut()
            .and_then(|s| s.private_data.cast::<StreamPrivate>().as_ref())
            .and_then(|p| p.last_error.as_ref())
            .map_or(std::ptr::null(), |e| e.as_ptr())
    }
}

unsafe extern "C" fn stream_release(stream: *mut ArrowDeviceArrayStream) {
    // SAFETY: a stream this module exported; its private data is freed
    // once and the struct marked released.
    unsafe {
        let Some(s) = stream.as_mut() else { return };
        if s.release.is_none() {
            return;
        }
        if !s.private_data.is_null() {
            drop(Box::from_raw(s.private_data.cast::<StreamPrivate>()));
        }
        s.private_data = std::ptr::null_mut();
        s.release = None;
    }
}

impl ArrowDeviceArrayStream {
    /// A stream over `source`'s batches.
    pub fn new(source: Box<dyn DeviceBatchSource>) -> Self {
        let private = Box::new(StreamPrivate {
            source,
            last_error: None,
        });
        Self {
            device_type: ARROW_DEVICE_CUDA,
            get_schema: Some(stream_schema),
            get_next: Some(stream_next),
            get_last_error: Some(stream_error),
            release: Some(stream_release),
            private_data: Box::into_raw(private).cast(),
        }
    }
}

// SAFETY: the structs own their private data (device buffer references
// and an event, all `Send`), reached only through their release and
// stream callbacks, which the interface lets any one thread call.
unsafe impl Send for ArrowDeviceArray {}
// SAFETY: as above.
unsafe impl Send for ArrowDeviceArrayStream {}

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::*;

    /// Field offsets of the specification's C declarations on a 64-bit
    /// target: a consumer reads the structs at these.
    #[test]
    fn structs_have_the_c_layout() {
        assert_eq!(size_of::<ArrowArray>(), 80);
        assert_eq!(offset_of!(ArrowArray, buffers), 40);
        assert_eq!(offset_of!(ArrowArray, release), 64);
        assert_eq!(offset_of!(ArrowDeviceArray, device_id), 80);
        assert_eq!(offset_of!(ArrowDeviceArray, device_type), 88);
        assert_eq!(offset_of!(ArrowDeviceArray, sync_event), 96);
        assert_eq!(offset_of!(ArrowDeviceArray, reserved), 104);
        assert_eq!(size_of::<ArrowDeviceArray>(), 128);
        assert_eq!(offset_of!(ArrowDeviceArrayStream, get_schema), 8);
        assert_eq!(offset_of!(ArrowDeviceArrayStream, release), 32);
        assert_eq!(size_of::<ArrowDeviceArrayStream>(), 48);
    }

    #[test]
    fn an_empty_array_is_released_and_drops_without_a_call() {
        let a = ArrowDeviceArray::empty();
        assert!(a.is_released());
        drop(a);
    }
}
