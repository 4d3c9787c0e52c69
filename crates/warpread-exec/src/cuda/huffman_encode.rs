//! Huffman encoding on the device (`kernels/huffman_encode.cu`): the
//! symbol counts, the block sizes and the block bytes are kernels; the code
//! itself is built on the host from the counts (under a millisecond to a
//! few for 65,536 symbols), by the CPU encoder's own function, so both
//! encoders write the same frame byte for byte. A device whose SMs cannot
//! give one block the 16-bit histogram's 128 KiB of shared memory (the
//! consumer GPUs: about 100 KiB) counts 16-bit symbols on the host.

use std::time::Instant;

use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg,
};

use super::CudaBackend;
use crate::codecs::huffman::{self, HuffmanParams, SymbolWidth, histogram};
use crate::error::{Error, Result};
use crate::gpu::{kernels, launch::HUFFMAN_ENCODE_THREADS};

/// Dynamic shared memory of the 16-bit histogram: 65,536 16-bit counters.
const HISTOGRAM16_SHARED: u32 = 128 << 10;

/// Where one device encode's time went, in milliseconds of wall clock
/// (each phase ends with the host waiting for the device).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct HuffmanEncodeTimes {
    /// Counting symbols, counts copied back.
    pub histogram_ms: f64,
    /// Building the code on the host and uploading its table.
    pub code_ms: f64,
    /// Block sizes, copied back.
    pub sizes_ms: f64,
    /// The frame's head uploaded and every block written.
    pub blocks_ms: f64,
    /// All of it: data in device memory to frame in device memory.
    pub total_ms: f64,
}

/// The arguments both per-block kernels (`huffman_block_sizes`,
/// `huffman_encode_blocks`) take first: the data cut into blocks, and the
/// code's table.
struct Blocks<'a> {
    data: &'a CudaSlice<u8>,
    n: u64,
    block_bytes: u32,
    sb: u32,
    sub_log2: u32,
    ways_log2: u32,
    table: &'a CudaSlice<u32>,
    count: u32,
}

fn err(during: &'static str) -> impl Fn(cudarc::driver::DriverError) -> Error {
    move |e| Error::cuda(during, e)
}

impl CudaBackend {
    /// Compresses `data` into one Huffman frame (docs/huffman-format.md) on
    /// the device: the same bytes as [`huffman::encode`] on the CPU.
    pub fn huffman_encode(&self, data: &[u8], params: &HuffmanParams) -> Result<Vec<u8>> {
        Ok(self.time_huffman_encode(data, params, 0, 1)?.0)
    }

    /// Uploads `data` once, encodes it `warmup + runs` times on the device
    /// and returns the last run's frame (copied to the host) with the
    /// times of the last `runs` runs.
    pub fn time_huffman_encode(
        &self,
        data: &[u8],
        params: &HuffmanParams,
        warmup: usize,
        runs: usize,
    ) -> Result<(Vec<u8>, Vec<HuffmanEncodeTimes>)> {
        params.check()?;
        self.usable()?;
        let mut lane = self.take()?;
        let stream = lane.stream.clone();
        // A device allocation starts aligned for the kernels' word loads.
        let dev = stream
            .clone_htod(data)
            .map_err(err("copying input to the device"))?;
        let mut times = Vec::with_capacity(runs);
        for _ in 0..warmup + runs.max(1) - 1 {
            let (_, t) = self.encode_on_device(&stream, (&dev, data), params)?;
            times.push(t);
        }
        let ((frame, len), last) = self.encode_on_device(&stream, (&dev, data), params)?;
        times.push(last);
        times.drain(..warmup.min(times.len() - 1));
        let mut host = stream
            .clone_dtoh(&frame)
            .map_err(err("copying results to the host"))?;
        host.truncate(len);
        lane.busy = false;
        Ok((host, times))
    }

    /// One encode of `data` (its device copy and the host bytes, which the
    /// host counts from where the device cannot): the frame (its allocation
    /// may be longer) and its length.
    fn encode_on_device(
        &self,
        stream: &std::sync::Arc<cudarc::driver::CudaStream>,
        (data, host): (&CudaSlice<u8>, &[u8]),
        params: &HuffmanParams,
    ) -> Result<((CudaSlice<u8>, usize), HuffmanEncodeTimes)> {
        let n = host.len();
        let n64 = n as u64;
        let start = Instant::now();
        let mut times = HuffmanEncodeTimes::default();
        let sb = params.width.bytes() as u32;
        let alphabet = params.width.alphabet();
        let nblocks = n.div_ceil(params.block_bytes as usize);
        let nblocks_u32 = u32::try_from(nblocks).map_err(|_| {
            Error::Unsupported(format!(
                "Huffman encoding {nblocks} blocks of {} bytes",
                params.block_bytes
            ))
        })?;

        // 1. Counts.
        let on_host = params.width == SymbolWidth::U16
            && self.rt.info().shared_mem_per_sm < HISTOGRAM16_SHARED + (1 << 10);
        let windows = histogram::sample_windows(n, params.sampling);
        let mut counts = if on_host {
            // With the sample's floor already in.
            histogram::counts(host, params.width, params.sampling)
        } else {
            self.count_on_device(stream, data, windows, params)?
        };
        let t1 = Instant::now();
        times.histogram_ms = ms(t1 - start);

        // 2. The code, as the CPU encoder builds it.
        if !on_host && windows.is_some() {
            // The sample's floor: every symbol of the alphabet gets a code.
            for c in &mut counts {
                *c += 1;
            }
        }
        let code = huffman::code_from_counts(&counts, params)?;
        let table: Vec<u32> = code
            .encode_table(alphabet)
            .into_iter()
            .map(|(c, l)| c << 5 | l)
            .collect();
        let table = stream
            .clone_htod(&table)
            .map_err(err("copying input to the device"))?;
        let t2 = Instant::now();
        times.code_ms = ms(t2 - t1);

        // 3. Block sizes.
        let mut status = stream
            .alloc_zeros::<u32>(1)
            .map_err(err("allocating device memory"))?;
        let mut sizes = stream
            .alloc_zeros::<u32>(nblocks.max(1))
            .map_err(err("allocating device memory"))?;
        let per_block = LaunchConfig {
            grid_dim: (nblocks_u32.max(1), 1, 1),
            block_dim: (HUFFMAN_ENCODE_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let blocks = Blocks {
            data,
            n: n64,
            block_bytes: params.block_bytes,
            sb,
            sub_log2: u32::from(params.sub_log2),
            ways_log2: u32::from(params.ways_log2),
            table: &table,
            count: nblocks_u32,
        };
        if nblocks > 0 {
            let func = self
                .rt
                .function(&kernels::HUFFMAN_ENCODE, "huffman_block_sizes")?;
            let mut b = self.per_block_launch(stream, &func, &blocks)?;
            b.arg(&mut sizes).arg(&mut status);
            // SAFETY: the arguments match `huffman_block_sizes`; `data`
            // holds `n` bytes cut into `nblocks` blocks of `block_bytes`,
            // `table` one entry per symbol, `sizes` one u32 per block.
            unsafe { b.launch(per_block) }.map_err(err("launching a kernel"))?;
        }
        let mut sizes = stream
            .clone_dtoh(&sizes)
            .map_err(err("copying results to the host"))?;
        sizes.truncate(nblocks);
        let t3 = Instant::now();
        times.sizes_ms = ms(t3 - t2);

        // 4. The head, then every block at its offset.
        let head = huffman::frame_head(n64, &code, params, &sizes);
        let mut offsets = Vec::with_capacity(nblocks.max(1));
        let mut at = head.len() as u64;
        for &s in &sizes {
            offsets.push(at);
            at += u64::from(s);
        }
        if offsets.is_empty() {
            offsets.push(at);
        }
        let len = usize::try_from(at)
            .map_err(|_| Error::Unsupported(format!("a Huffman frame of {at} bytes")))?;
        // SAFETY: the head is copied into the first bytes and the kernel
        // writes every block's bytes after it (their sizes add up to the
        // rest); the status check below rejects a run that did not.
        let mut frame =
            unsafe { stream.alloc::<u8>(len) }.map_err(err("allocating device memory"))?;
        stream
            .memcpy_htod(&head, &mut frame.slice_mut(..head.len()))
            .map_err(err("copying input to the device"))?;
        let offsets = stream
            .clone_htod(&offsets)
            .map_err(err("copying input to the device"))?;
        if nblocks > 0 {
            let func = self
                .rt
                .function(&kernels::HUFFMAN_ENCODE, "huffman_encode_blocks")?;
            let out_len = len as u64;
            let mut b = self.per_block_launch(stream, &func, &blocks)?;
            b.arg(&offsets)
                .arg(&mut frame)
                .arg(&out_len)
                .arg(&mut status);
            // SAFETY: as for the sizes, plus `offsets` (one per block) into
            // `frame` of `out_len` bytes; the kernel checks each block's
            // bytes against `out_len` before writing.
            unsafe { b.launch(per_block) }.map_err(err("launching a kernel"))?;
        }
        let status = stream
            .clone_dtoh(&status)
            .map_err(err("copying results to the host"))?;
        if status.first().is_some_and(|&s| s != 0) {
            return Err(Error::InvalidPlan(
                "Huffman encoding: the device's block sizes and blocks disagree".into(),
            ));
        }
        let t4 = Instant::now();
        times.blocks_ms = ms(t4 - t3);
        times.total_ms = ms(t4 - start);
        Ok(((frame, len), times))
    }
    /// The symbol counts of `data`, exact or over the sampled `windows`
    /// (`histogram::sample_windows`; without the sample's floor), taken on
    /// the device.
    fn count_on_device(
        &self,
        stream: &std::sync::Arc<CudaStream>,
        data: &CudaSlice<u8>,
        windows: Option<(usize, usize)>,
        params: &HuffmanParams,
    ) -> Result<Vec<u64>> {
        let n = data.len();
        let alphabet = params.width.alphabet();
        let sms = self.rt.info().sm_count.max(1);
        let mut counts = stream
            .alloc_zeros::<u64>(alphabet)
            .map_err(err("allocating device memory"))?;
        let (first, step) = match windows {
            Some((f, s)) => (f as u64, s as u64),
            None => (0, 0),
        };
        let window = histogram::SAMPLE_WINDOW as u64;
        let n64 = n as u64;
        if n > 0 {
            let (entry, cfg) = match params.width {
                SymbolWidth::U8 => (
                    "huffman_histogram8",
                    LaunchConfig {
                        grid_dim: (
                            (n.div_ceil(HUFFMAN_ENCODE_THREADS as usize * 64) as u32)
                                .clamp(1, sms * 8),
                            1,
                            1,
                        ),
                        block_dim: (HUFFMAN_ENCODE_THREADS, 1, 1),
                        shared_mem_bytes: 0,
                    },
                ),
                SymbolWidth::U16 => (
                    "huffman_histogram16",
                    LaunchConfig {
                        grid_dim: ((n.div_ceil(2 * 65535) as u32).clamp(1, sms), 1, 1),
                        block_dim: (HUFFMAN_ENCODE_THREADS, 1, 1),
                        shared_mem_bytes: HISTOGRAM16_SHARED,
                    },
                ),
            };
            let func = self.rt.function(&kernels::HUFFMAN_ENCODE, entry)?;
            if params.width == SymbolWidth::U16 {
                func.set_attribute(
                    CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    HISTOGRAM16_SHARED as i32,
                )
                .map_err(err("setting a kernel's shared memory"))?;
            }
            self.faults
                .launch(&self.options.faults)
                .map_err(err("launching a kernel"))?;
            let mut b = stream.launch_builder(&func);
            b.arg(data)
                .arg(&n64)
                .arg(&first)
                .arg(&step)
                .arg(&window)
                .arg(&mut counts);
            // SAFETY: the arguments match the histogram kernels' signature;
            // `data` holds `n` bytes, `counts` one u64 per symbol of the
            // alphabet, which is all the kernel indexes.
            unsafe { b.launch(cfg) }.map_err(err("launching a kernel"))?;
        }
        stream
            .clone_dtoh(&counts)
            .map_err(err("copying results to the host"))
    }
}

impl CudaBackend {
    /// A launch of a per-block kernel with the arguments both take already
    /// pushed; the caller adds its own and launches.
    fn per_block_launch<'a>(
        &self,
        stream: &'a std::sync::Arc<CudaStream>,
        func: &'a CudaFunction,
        blocks: &'a Blocks<'a>,
    ) -> Result<LaunchArgs<'a>> {
        self.faults
            .launch(&self.options.faults)
            .map_err(err("launching a kernel"))?;
        let mut b = stream.launch_builder(func);
        b.arg(blocks.data)
            .arg(&blocks.n)
            .arg(&blocks.block_bytes)
            .arg(&blocks.sb)
            .arg(&blocks.sub_log2)
            .arg(&blocks.ways_log2)
            .arg(blocks.table)
            .arg(&blocks.count);
        Ok(b)
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
