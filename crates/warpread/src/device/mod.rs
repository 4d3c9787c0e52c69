//! Arrow on the device: reads whose batches stay in GPU memory, for
//! consumers on the GPU (cuDF, CuPy, PyTorch, RAPIDS).
//!
//! - [`reader`]: `build_device` on the reader builders, giving
//!   [`DeviceBatch`]es (CUDA backend only; otherwise an error);
//! - [`array`]: [`DeviceArray`] and [`DeviceBatch`], Arrow arrays whose
//!   buffers are device memory, and which of their bytes the decode stages
//!   produced on the device and which were built on the host and uploaded;
//! - [`ffi`]: the Arrow C Device Data Interface (`ArrowDeviceArray`,
//!   `ArrowDeviceArrayStream`);
//! - [`dlpack`]: fixed-width columns as DLPack tensors, validity and
//!   booleans as one byte per row.

pub mod array;
pub mod dlpack;
pub mod ffi;
pub mod reader;

pub use array::{DeviceArray, DeviceBatch, DeviceBytes, UploadCache};
pub use dlpack::{DLManagedTensor, DeviceTensor, column_validity, column_values};
pub use ffi::{
    ARROW_DEVICE_CUDA, ArrowArray, ArrowDeviceArray, ArrowDeviceArrayStream, DeviceBatchSource,
};
pub use reader::{DeviceBatchReader, DeviceBatchStream};
