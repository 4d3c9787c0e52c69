//! Arrow on the device: reads whose batches stay in GPU memory, for
//! consumers on the GPU (cuDF, CuPy, PyTorch, RAPIDS).
//!
//! - [`reader`]: `build_device` on the reader builders, giving
//!   [`DeviceBatch`]es (CUDA backend only; otherwise an error);
//! - [`array`](mod@array): [`DeviceArray`] and [`DeviceBatch`], Arrow arrays whose
//!   buffers are device memory, and which of their bytes the decode stages
//!   produced on the device and which were built on the host and uploaded;
//! - [`ffi`]: the Arrow C Device Data Interface (`ArrowDeviceArray`,
//!   `ArrowDeviceArrayStream`);
//! - [`dlpack`]: fixed-width columns as DLPack tensors, validity and
//!   booleans as one byte per row.
//!
//! A device buffer keeps its whole device allocation alive (a decode
//! stage's output for many columns, or one batch's uploads) until the last
//! buffer over it is dropped; these allocations are the consumer's and do
//! not count against the backend's device memory limit.
//!
//! ```no_run
//! use std::sync::Arc;
//! use warpread::exec::{self, Backend, BackendChoice};
//! use warpread::parquet::ParquetReaderBuilder;
//!
//! let cuda: Arc<dyn Backend> = Arc::from(exec::select(BackendChoice::Cuda)?);
//! let reader = ParquetReaderBuilder::try_new("lineitem.parquet")?
//!     .with_backend(cuda)
//!     .build_device()?;
//! for batch in reader {
//!     // Schema and array for a consumer of the C Device Data Interface,
//!     // which releases the array when done with it.
//!     let (_schema, _array) = batch?.to_ffi()?;
//! }
//! # Ok::<(), warpread::Error>(())
//! ```

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
