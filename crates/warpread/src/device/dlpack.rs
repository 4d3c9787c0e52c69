//! DLPack export of device columns: a fixed-width column's values (its
//! batches' chunks as one tensor) and, separately, its validity as one
//! byte per row, since DLPack has no bitmaps; booleans become one byte per
//! row too. [`DeviceTensor::into_dlpack`] gives the `DLManagedTensor` that
//! `torch.from_dlpack` and `cupy.from_dlpack` take without a copy.

use std::ffi::c_void;

use arrow::datatypes::DataType;

use super::array::{DeviceArray, DeviceBatch};
use crate::error::{Error, Result};
use crate::exec::CudaBackend;
use crate::gpu::DeviceBuffer;

/// DLPack's `kDLCUDA`.
pub const DL_CUDA: i32 = 2;

/// DLPack's `DLDevice`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLDevice {
    /// `kDLCUDA` here.
    pub device_type: i32,
    /// The device ordinal.
    pub device_id: i32,
}

/// DLPack's `DLDataType`: type code, bits, lanes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLDataType {
    /// `kDLInt` 0, `kDLUInt` 1, `kDLFloat` 2, `kDLBool` 6.
    pub code: u8,
    /// Bits per element.
    pub bits: u8,
    /// Lanes per element (1).
    pub lanes: u16,
}

impl DLDataType {
    const fn new(code: u8, bits: u8) -> Self {
        Self {
            code,
            bits,
            lanes: 1,
        }
    }
    /// One byte per boolean (`kDLBool`, 8 bits).
    pub const BOOL: Self = Self::new(6, 8);

    /// The DLPack type of a fixed-width Arrow type's values (temporal
    /// types as their integer storage), or why it has none.
    pub fn of(dt: &DataType) -> std::result::Result<Self, String> {
        use DataType::*;
        Ok(match dt {
            Int8 => Self::new(0, 8),
            Int16 => Self::new(0, 16),
            Int32 | Date32 | Time32(_) | Decimal32(..) => Self::new(0, 32),
            Int64 | Date64 | Time64(_) | Timestamp(..) | Duration(_) | Decimal64(..) => {
                Self::new(0, 64)
            }
            UInt8 => Self::new(1, 8),
            UInt16 => Self::new(1, 16),
            UInt32 => Self::new(1, 32),
            UInt64 => Self::new(1, 64),
            Float16 => Self::new(2, 16),
            Float32 => Self::new(2, 32),
            Float64 => Self::new(2, 64),
            Boolean => Self::BOOL,
            other => {
                return Err(format!(
                    "{other} has no DLPack type (DLPack takes fixed-width numbers, \
                     booleans and temporal storage; export it through the C Device \
                     Data Interface instead)"
                ));
            }
        })
    }
}

/// DLPack's `DLTensor`.
#[repr(C)]
#[derive(Debug)]
pub struct DLTensor {
    /// Device address of the first element.
    pub data: *mut c_void,
    /// Where the data lies.
    pub device: DLDevice,
    /// Dimensions (1).
    pub ndim: i32,
    /// Element type.
    pub dtype: DLDataType,
    /// Extent of each dimension.
    pub shape: *mut i64,
    /// Null: compact row-major.
    pub strides: *mut i64,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// DLPack's `DLManagedTensor`: a tensor, its owner and the deleter the
/// consumer calls when done.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The tensor.
    pub dl_tensor: DLTensor,
    /// The producer's data.
    pub manager_ctx: *mut c_void,
    /// Frees the tensor and what it holds.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// A one-dimensional device tensor: a column's values or validity bytes.
#[derive(Debug, Clone)]
pub struct DeviceTensor {
    buffer: DeviceBuffer,
    dtype: DLDataType,
    len: usize,
}

impl DeviceTensor {
    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element type.
    pub fn dtype(&self) -> DLDataType {
        self.dtype
    }

    /// The device bytes.
    pub fn buffer(&self) -> &DeviceBuffer {
        &self.buffer
    }

    /// The tensor as a `DLManagedTensor` the consumer owns: it holds a
    /// reference to the device memory until the consumer calls `deleter`.
    pub fn into_dlpack(self) -> *mut DLManagedTensor {
        let ctx = Box::new(Manager {
            shape: [self.len as i64],
            device: self.buffer.device_ordinal() as i32,
            ptr: self.buffer.device_ptr(),
            _buffer: self.buffer,
        });
        let ctx = Box::into_raw(ctx);
        // SAFETY: `ctx` was just leaked and is freed only by the deleter.
        let (shape, device, ptr) =
            unsafe { ((*ctx).shape.as_mut_ptr(), (*ctx).device, (*ctx).ptr) };
        Box::into_raw(Box::new(DLManagedTensor {
            dl_tensor: DLTensor {
                data: ptr as *mut c_void,
                device: DLDevice {
                    device_type: DL_CUDA,
                    device_id: device,
                },
                ndim: 1,
                dtype: self.dtype,
                shape,
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: ctx.cast(),
            deleter: Some(delete_tensor),
        }))
    }
}

struct Manager {
    shape: [i64; 1],
    device: i32,
    ptr: u64,
    _buffer: DeviceBuffer,
}

unsafe extern "C" fn delete_tensor(t: *mut DLManagedTensor) {
    if t.is_null() {
        return;
    }
    // SAFETY: `t` and its manager context were leaked by `into_dlpack`, and
    // DLPack consumers call the deleter once.
    unsafe {
        let t = Box::from_raw(t);
        if !t.manager_ctx.is_null() {
            drop(Box::from_raw(t.manager_ctx.cast::<Manager>()));
        }
    }
}

/// Frees a tensor nobody consumed (a capsule collected unused).
///
/// # Safety
/// `t` came from [`DeviceTensor::into_dlpack`] and was not deleted.
pub unsafe fn delete_unconsumed(t: *mut DLManagedTensor) {
    // SAFETY: see the function's contract.
    unsafe {
        if let Some(d) = t.as_ref().and_then(|t| t.deleter) {
            d(t);
        }
    }
}

/// The column at `index` of `batches` (one read's batches, in order).
fn chunks(batches: &[DeviceBatch], index: usize) -> Result<Vec<&DeviceArray>> {
    batches
        .iter()
        .map(|b| {
            b.column(index)
                .ok_or_else(|| Error::Unsupported(format!("no column {index}")))
        })
        .collect()
}

/// A column's values across `batches` as one tensor: a batch's chunk where
/// there is one, else the chunks concatenated on the device; booleans one
/// byte each. Null rows hold whatever the decoder left there (see
/// [`column_validity`]).
pub fn column_values(
    backend: &CudaBackend,
    batches: &[DeviceBatch],
    index: usize,
) -> Result<DeviceTensor> {
    let cols = chunks(batches, index)?;
    let dt = cols
        .first()
        .map(|c| c.data_type().clone())
        .or_else(|| {
            batches
                .first()
                .map(|b| b.schema.field(index).data_type().clone())
        })
        .ok_or_else(|| Error::Unsupported("a column of no batches".into()))?;
    let dtype = DLDataType::of(&dt).map_err(Error::Unsupported)?;
    let len: usize = cols.iter().map(|c| c.len()).sum();
    fn values<'a>(c: &'a DeviceArray, dt: &DataType) -> Result<&'a DeviceBuffer> {
        c.buffers()
            .get(1)
            .and_then(Option::as_ref)
            .ok_or_else(|| Error::InvalidPlan(format!("{dt} array without values")))
    }
    let buffer = if dt == DataType::Boolean {
        let parts = cols
            .iter()
            .map(|c| Ok((Some(values(c, &dt)?), c.offset(), c.len())))
            .collect::<Result<Vec<_>>>()?;
        backend.bits_to_bytes(&parts)?
    } else {
        let width = usize::from(dtype.bits / 8);
        let parts = cols
            .iter()
            .map(|c| {
                let v = values(c, &dt)?;
                v.slice(c.offset() * width..(c.offset() + c.len()) * width)
                    .ok_or_else(|| {
                        Error::InvalidPlan(format!("{dt} values shorter than their rows"))
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&DeviceBuffer> = parts.iter().collect();
        backend.concat(&refs)?
    };
    Ok(DeviceTensor { buffer, dtype, len })
}

/// A column's validity across `batches` as one byte per row (1 valid, 0
/// null); `None` when no row is null.
pub fn column_validity(
    backend: &CudaBackend,
    batches: &[DeviceBatch],
    index: usize,
) -> Result<Option<DeviceTensor>> {
    let cols = chunks(batches, index)?;
    if cols.iter().all(|c| c.validity().is_none()) {
        return Ok(None);
    }
    let parts: Vec<(Option<&DeviceBuffer>, usize, usize)> = cols
        .iter()
        .map(|c| (c.validity(), c.offset(), c.len()))
        .collect();
    let len = parts.iter().map(|p| p.2).sum();
    Ok(Some(DeviceTensor {
        buffer: backend.bits_to_bytes(&parts)?,
        dtype: DLDataType::BOOL,
        len,
    }))
}

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use arrow::datatypes::{DataType, TimeUnit};

    use super::*;

    /// DLPack's C layout on a 64-bit target.
    #[test]
    fn structs_have_the_c_layout() {
        assert_eq!(size_of::<DLDataType>(), 4);
        assert_eq!(offset_of!(DLTensor, device), 8);
        assert_eq!(offset_of!(DLTensor, ndim), 16);
        assert_eq!(offset_of!(DLTensor, dtype), 20);
        assert_eq!(offset_of!(DLTensor, shape), 24);
        assert_eq!(offset_of!(DLTensor, byte_offset), 40);
        assert_eq!(offset_of!(DLManagedTensor, manager_ctx), 48);
        assert_eq!(size_of::<DLManagedTensor>(), 64);
    }

    #[test]
    fn fixed_width_types_map_and_others_say_why_not() {
        let t = |dt: DataType| DLDataType::of(&dt).map(|d| (d.code, d.bits));
        assert_eq!(t(DataType::Int64), Ok((0, 64)));
        assert_eq!(t(DataType::UInt16), Ok((1, 16)));
        assert_eq!(t(DataType::Float32), Ok((2, 32)));
        assert_eq!(t(DataType::Boolean), Ok((6, 8)));
        assert_eq!(t(DataType::Date32), Ok((0, 32)));
        assert_eq!(
            t(DataType::Timestamp(TimeUnit::Microsecond, None)),
            Ok((0, 64))
        );
        let err = t(DataType::Utf8).unwrap_err();
        assert!(
            err.contains("Utf8") && err.contains("C Device Data Interface"),
            "{err}"
        );
        assert!(t(DataType::Decimal128(10, 2)).is_err());
    }
}
