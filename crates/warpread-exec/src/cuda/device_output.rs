//! Reads whose results stay on the device: host byte ranges turned into
//! [`DeviceBuffer`]s (a decode stage's output where its pool block's mirror
//! holds it, anything else uploaded), and the few device-side steps an
//! export needs (bits to bytes, chunks concatenated, bytes read back).
//!
//! Every call returns once its work is complete on the device, so a
//! buffer handed out is ready; [`CudaBackend::ready_event`] gives the event
//! that Arrow's C Device Data Interface hands a consumer to wait on.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, DevicePtrMut, LaunchConfig, PushKernelArg};

use super::{CudaBackend, counters};
use crate::error::{Error, Result};
use crate::gpu::{DeviceBuffer, DeviceEvent, Origin, kernels};

/// Host bytes not in pinned memory go up through a lane's pinned buffer
/// in pieces of at most this size (a pageable copy waits for other lanes'
/// kernels, and a staging buffer as large as a whole column would stay
/// pinned with its lane).
const UPLOAD_PIECE: usize = 32 << 20;

/// Offsets of uploaded parts inside their shared allocation are multiples
/// of this: the Arrow format asks for 8-byte alignment and recommends 64.
const ALIGN: usize = 64;

/// Threads per block of the per-element kernels (bits to bytes, decimal
/// widening).
const THREADS: u32 = 256;

fn err(during: &'static str) -> impl Fn(cudarc::driver::DriverError) -> Error {
    move |e| Error::cuda(during, e)
}

impl CudaBackend {
    /// Fails when the device was lost: nothing may be handed out from it.
    pub(super) fn usable(&self) -> Result<()> {
        match self.lost() {
            Some(why) => Err(Error::CudaUnavailable(format!(
                "device {} was lost: {why}",
                self.rt.info().ordinal
            ))),
            None => Ok(()),
        }
    }

    /// The device copy of each of `parts` (host bytes, such as the buffers
    /// of an Arrow array this backend decoded): a part lying in a pool
    /// block's device mirror (a decode stage's output, kept while a caller
    /// [retains decoded outputs](crate::Backend::retain_decoded)) becomes a
    /// view of it, without a copy; the others are uploaded into one new
    /// allocation. The buffers are complete when this returns.
    pub fn to_device(&self, parts: &[&[u8]]) -> Result<Vec<DeviceBuffer>> {
        self.usable()?;
        let mut mirrored: Vec<Option<DeviceBuffer>> = Vec::with_capacity(parts.len());
        let mut at: Vec<usize> = Vec::with_capacity(parts.len());
        let mut total = 0usize;
        for p in parts {
            let view = self
                .pool
                .mirror_of(p)
                .and_then(|(mem, off)| DeviceBuffer::new(mem, off..off + p.len(), Origin::Decoded));
            at.push(total);
            if view.is_none() {
                // An empty part takes a slot too: it still needs an
                // address inside an allocation.
                total = total
                    .checked_add(p.len().next_multiple_of(ALIGN).max(ALIGN))
                    .ok_or_else(|| Error::InvalidPlan("device upload size overflows".into()))?;
            } else {
                counters::count(&self.counters.bytes_mirrored, p.len() as u64);
            }
            mirrored.push(view);
        }
        let uploaded = if total > 0 {
            let pending: Vec<(&[u8], usize)> = parts
                .iter()
                .zip(&at)
                .zip(&mirrored)
                .filter(|(_, m)| m.is_none())
                .map(|((p, &a), _)| (*p, a))
                .collect();
            Some(Arc::new(self.upload_parts(&pending, total)?))
        } else {
            None
        };
        mirrored
            .into_iter()
            .zip(parts.iter().zip(at))
            .map(|(m, (p, a))| match (m, &uploaded) {
                (Some(view), _) => Ok(view),
                (None, Some(mem)) => {
                    DeviceBuffer::new(mem.clone(), a..a + p.len(), Origin::Uploaded).ok_or_else(
                        || Error::InvalidPlan("device upload out of its allocation".into()),
                    )
                }
                (None, None) => Err(Error::InvalidPlan(
                    "a part without a mirror was not uploaded".into(),
                )),
            })
            .collect()
    }

    /// Copies `parts` (host bytes and their offsets in the new allocation
    /// of `total` bytes) to the device: parts in pinned memory directly,
    /// the rest through the lane's pinned buffer piece by piece.
    fn upload_parts(&self, parts: &[(&[u8], usize)], total: usize) -> Result<CudaSlice<u8>> {
        self.faults
            .alloc(&self.options.faults)
            .map_err(err("allocating device memory"))?;
        let mut lane = self.take()?;
        let super::Lane {
            stream, scratch, ..
        } = &mut *lane;
        // SAFETY: every byte a consumer is handed (each part's range) is
        // written below before this returns; the alignment gaps between
        // parts are never handed out.
        let mut dev =
            unsafe { stream.alloc::<u8>(total) }.map_err(err("allocating device memory"))?;
        let ctx = self.rt.context().clone();
        for &(bytes, at) in parts {
            counters::count(&self.counters.bytes_in, bytes.len() as u64);
            if bytes.is_empty() {
                continue;
            }
            if self.pool.contains(bytes) {
                stream
                    .memcpy_htod(bytes, &mut dev.slice_mut(at..at + bytes.len()))
                    .map_err(err("copying output to the device"))?;
                continue;
            }
            for (i, piece) in bytes.chunks(UPLOAD_PIECE).enumerate() {
                let pinned = scratch.pinned_in.get(&ctx, piece.len())?;
                // The previous piece's copy reads the same pinned buffer.
                stream
                    .synchronize()
                    .map_err(err("copying output to the device"))?;
                let host = pinned
                    .as_mut_slice()
                    .map_err(err("writing to pinned memory"))?;
                crate::copy::par_copy(&mut host[..piece.len()], piece);
                let start = at + i * UPLOAD_PIECE;
                stream
                    .memcpy_htod(
                        &host[..piece.len()],
                        &mut dev.slice_mut(start..start + piece.len()),
                    )
                    .map_err(err("copying output to the device"))?;
            }
        }
        stream
            .synchronize()
            .map_err(err("copying output to the device"))?;
        lane.busy = false;
        Ok(dev)
    }

    /// One thread per element for `n` elements, at most 32 blocks an SM
    /// (the kernels stride over the rest).
    fn per_element(&self, n: usize) -> LaunchConfig {
        let blocks = n
            .div_ceil(THREADS as usize)
            .min(self.rt.info().sm_count.max(1) as usize * 32) as u32;
        LaunchConfig {
            grid_dim: (blocks.max(1), 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Waits for the lane's kernels (reading their status word back) and
    /// hands out `out`'s first `len` bytes, or an error when the `kernel`
    /// stepped outside its buffers.
    fn checked_output(
        &self,
        mut lane: super::Taken<'_>,
        status: &CudaSlice<u32>,
        out: CudaSlice<u8>,
        len: usize,
        kernel: &str,
    ) -> Result<DeviceBuffer> {
        let status = lane
            .stream
            .clone_dtoh(status)
            .map_err(err("copying results to the host"))?;
        lane.busy = false;
        drop(lane);
        if status.first().is_some_and(|&s| s != 0) {
            return Err(Error::InvalidPlan(format!(
                "{kernel} kernel stepped outside its buffers"
            )));
        }
        DeviceBuffer::new(Arc::new(out), 0..len, Origin::Derived)
            .ok_or_else(|| Error::InvalidPlan(format!("{kernel} output size")))
    }

    /// Bits `bit_offset..bit_offset + len` of `bits` (Arrow's bit order) as
    /// one byte each (0 or 1), written at `out_at` of `out`, which holds
    /// `out_len` bytes; the caller's lengths are checked here and by the
    /// kernel.
    fn launch_bits_to_bytes(
        &self,
        stream: &Arc<cudarc::driver::CudaStream>,
        (bits, bit_offset, len): (&DeviceBuffer, usize, usize),
        out: &mut CudaSlice<u8>,
        out_at: usize,
        status: &mut CudaSlice<u32>,
    ) -> Result<()> {
        let bits_needed = (bit_offset + len).div_ceil(8);
        if bits_needed > bits.len() || out_at + len > out.len() {
            return Err(Error::InvalidPlan(format!(
                "bits {bit_offset}..{} of a {} byte bitmap into bytes {out_at}..{} of {}",
                bit_offset + len,
                bits.len(),
                out_at + len,
                out.len()
            )));
        }
        if len == 0 {
            return Ok(());
        }
        let func = self
            .rt
            .function(&kernels::ARROW_DEVICE, "warpread_bits_to_bytes")?;
        let cfg = self.per_element(len);
        let src = bits.view();
        let (bits_len, bit_offset, n) = (bits.len() as u64, bit_offset as u64, len as u64);
        let mut dst = out.slice_mut(out_at..out_at + len);
        let out_len = len as u64;
        self.faults
            .launch(&self.options.faults)
            .map_err(err("launching a kernel"))?;
        let mut b = stream.launch_builder(&func);
        b.arg(&src)
            .arg(&bits_len)
            .arg(&bit_offset)
            .arg(&n)
            .arg(&mut dst)
            .arg(&out_len)
            .arg(status);
        // SAFETY: the arguments match `warpread_bits_to_bytes`'s signature;
        // `src` holds `bits_len` bytes and `dst` `out_len`, checked above
        // to cover the bits read and bytes written (the kernel checks too).
        unsafe { b.launch(cfg) }.map_err(err("launching a kernel"))?;
        Ok(())
    }

    /// One byte per bit (0 or 1) for each `(bits, bit_offset, len)` of
    /// `chunks`, one chunk after another in a new device buffer: Arrow
    /// booleans and validity as DLPack can describe them. A chunk without
    /// bits (validity of a chunk with no nulls) gives ones.
    pub fn bits_to_bytes(
        &self,
        chunks: &[(Option<&DeviceBuffer>, usize, usize)],
    ) -> Result<DeviceBuffer> {
        self.usable()?;
        let total: usize = chunks.iter().map(|c| c.2).sum();
        let lane = self.take()?;
        let stream = lane.stream.clone();
        let mut out = stream
            .alloc_zeros::<u8>(total.max(1))
            .map_err(err("allocating device memory"))?;
        let mut status = stream
            .alloc_zeros::<u32>(1)
            .map_err(err("allocating device memory"))?;
        let mut at = 0;
        for &(bits, off, len) in chunks {
            match bits {
                Some(bits) => {
                    self.launch_bits_to_bytes(&stream, (bits, off, len), &mut out, at, &mut status)?
                }
                None if len > 0 => {
                    let mut ones = out.slice_mut(at..at + len);
                    let (ptr, _record) = ones.device_ptr_mut(&stream);
                    // SAFETY: `ones` holds `len` bytes of `out` on this stream.
                    unsafe {
                        cudarc::driver::result::memset_d8_async(ptr, 1, len, stream.cu_stream())
                    }
                    .map_err(err("filling device memory"))?
                }
                None => {}
            }
            at += len;
        }
        self.checked_output(lane, &status, out, total, "bits-to-bytes")
    }

    /// The first `n` values of `values`, decimals stored as integers of
    /// `width` bytes (4 or 8), as 16-byte two's complement integers in a
    /// new device buffer (Arrow's `Decimal128` values).
    pub fn widen_decimals(
        &self,
        values: &DeviceBuffer,
        width: usize,
        n: usize,
    ) -> Result<DeviceBuffer> {
        self.usable()?;
        let fits = n.checked_mul(width).is_some_and(|b| b <= values.len());
        if !(width == 4 || width == 8) || !fits || !values.device_ptr().is_multiple_of(width as u64)
        {
            return Err(Error::InvalidPlan(format!(
                "widening {n} decimals of {width} bytes from a {} byte buffer at {:#x}",
                values.len(),
                values.device_ptr()
            )));
        }
        let out_len = n
            .checked_mul(16)
            .ok_or_else(|| Error::InvalidPlan("widened decimals overflow".into()))?;
        let func = self
            .rt
            .function(&kernels::ARROW_DEVICE, "warpread_widen_decimal")?;
        let lane = self.take()?;
        let stream = lane.stream.clone();
        let mut out = stream
            .alloc_zeros::<u8>(out_len.max(1))
            .map_err(err("allocating device memory"))?;
        let mut status = stream
            .alloc_zeros::<u32>(1)
            .map_err(err("allocating device memory"))?;
        if n > 0 {
            let cfg = self.per_element(n);
            let src = values.view();
            let (in_len, w, count, o_len) =
                (values.len() as u64, width as u32, n as u64, out_len as u64);
            self.faults
                .launch(&self.options.faults)
                .map_err(err("launching a kernel"))?;
            let mut b = stream.launch_builder(&func);
            b.arg(&src)
                .arg(&in_len)
                .arg(&w)
                .arg(&count)
                .arg(&mut out)
                .arg(&o_len)
                .arg(&mut status);
            // SAFETY: the arguments match `warpread_widen_decimal`'s
            // signature; `src` holds `in_len` bytes (at least `n * width`,
            // aligned to `width`, checked above) and `out` `o_len`; the
            // kernel checks every index against both.
            unsafe { b.launch(cfg) }.map_err(err("launching a kernel"))?;
        }
        self.checked_output(lane, &status, out, out_len, "decimal widening")
    }

    /// `parts` one after another in a new device buffer (a column's chunks
    /// as one tensor).
    pub fn concat(&self, parts: &[&DeviceBuffer]) -> Result<DeviceBuffer> {
        self.usable()?;
        if let [one] = parts {
            return Ok((*one).clone());
        }
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let mut lane = self.take()?;
        let stream = lane.stream.clone();
        // SAFETY: every byte is written by the copies below.
        let mut out =
            unsafe { stream.alloc::<u8>(total.max(1)) }.map_err(err("allocating device memory"))?;
        let mut at = 0;
        for p in parts {
            if !p.is_empty() {
                stream
                    .memcpy_dtod(&p.view(), &mut out.slice_mut(at..at + p.len()))
                    .map_err(err("copying on the device"))?;
            }
            at += p.len();
        }
        stream.synchronize().map_err(err("copying on the device"))?;
        lane.busy = false;
        DeviceBuffer::new(Arc::new(out), 0..total, Origin::Derived)
            .ok_or_else(|| Error::InvalidPlan("concatenated size".into()))
    }

    /// The bytes of `buf` in host memory (tests and verification).
    pub fn copy_to_host(&self, buf: &DeviceBuffer) -> Result<Vec<u8>> {
        self.usable()?;
        if buf.is_empty() {
            return Ok(Vec::new());
        }
        let mut lane = self.take()?;
        let out = lane
            .stream
            .clone_dtoh(&buf.view())
            .map_err(err("copying results to the host"))?;
        lane.busy = false;
        Ok(out)
    }

    /// An event recorded after all work handed to the device so far (every
    /// buffer this backend handed out is complete before it): what the C
    /// Device Data Interface gives a consumer to wait on before reading.
    pub fn ready_event(&self) -> Result<DeviceEvent> {
        self.usable()?;
        let stream = self.rt.stream();
        let event = stream
            .record_event(None)
            .map_err(err("recording an event"))?;
        Ok(DeviceEvent::new(event))
    }
}
