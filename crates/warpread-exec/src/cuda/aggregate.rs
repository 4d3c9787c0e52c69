//! Aggregate programs on the device: the batch's columns where the decode
//! stages left them (pool blocks' device mirrors, kept while a caller
//! [retains decoded outputs](crate::Backend::retain_decoded)) or
//! uploaded, one launch of the program's generated kernel
//! ([`crate::query::cuda_source`]), the blocks' group tables merged here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow::array::{Array, AsArray};
use arrow::buffer::Buffer;
use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;
use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use super::{CudaBackend, counters};
use crate::error::{Error, Result};
use crate::gpu::kernels::KernelSource;
use crate::query::cuda_source::{self, ENTRY, GROUPS, KEY_BITS, THREADS};
use crate::query::groups::{KeyValue, encode_key};
use crate::query::{AggFn, AggProgram, Groups, Load};

/// The kernel source of a program, one per distinct text in `sources`
/// (the backend's: see `CudaBackend::programs`).
fn kernel_source(
    sources: &Mutex<HashMap<String, &'static KernelSource>>,
    program: &AggProgram,
) -> &'static KernelSource {
    let text = cuda_source::source(program);
    let mut map = sources.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(s) = map.get(&text) {
        return s;
    }
    let mut h = crate::query::groups::KeyHasher::default();
    std::hash::Hasher::write(&mut h, text.as_bytes());
    let file: &'static str =
        Box::leak(format!("aggregate_{:016x}.cu", std::hash::Hasher::finish(&h)).into_boxed_str());
    let src: &'static KernelSource = Box::leak(Box::new(KernelSource {
        file,
        text: Box::leak(text.clone().into_boxed_str()),
    }));
    map.insert(text, src);
    src
}

/// A bytes key's value bytes and its one value length, or `None` when the
/// lengths differ (or the type is not offsets and bytes).
fn fixed_length_bytes(a: &dyn Array) -> Option<(Buffer, usize)> {
    fn check<O: arrow::array::OffsetSizeTrait>(
        offsets: &[O],
        values: &Buffer,
    ) -> Option<(Buffer, usize)> {
        let first = offsets.first()?.as_usize();
        let n = offsets.len() - 1;
        let l = if n == 0 {
            0
        } else {
            offsets[1].as_usize().checked_sub(first)?
        };
        offsets
            .windows(2)
            .all(|w| w[1].as_usize().wrapping_sub(w[0].as_usize()) == l)
            .then_some(())?;
        let len = n.checked_mul(l)?;
        (first.checked_add(len)? <= values.len()).then(|| (values.slice_with_length(first, len), l))
    }
    match a.data_type() {
        DataType::Utf8 => {
            let s = a.as_string::<i32>();
            check(s.value_offsets(), s.values())
        }
        DataType::LargeUtf8 => {
            let s = a.as_string::<i64>();
            check(s.value_offsets(), s.values())
        }
        _ => None,
    }
}

/// Where each used input lies, ready for the kernel.
struct Placed {
    /// Per input: its bytes (`None`: unused).
    bytes: Vec<Option<Buffer>>,
    /// Value length of each bytes key, in key order.
    key_lengths: Vec<usize>,
}

fn place(program: &AggProgram, batch: &RecordBatch) -> Option<Placed> {
    let n = batch.num_rows();
    let mut bytes: Vec<Option<Buffer>> = vec![None; program.inputs.len()];
    let mut lengths: HashMap<usize, usize> = HashMap::new();
    for i in program.used_inputs() {
        let input = program.inputs[i];
        let a = batch.columns().get(input.column)?;
        let fits = match (input.load, a.data_type()) {
            (Load::Int { bytes, .. }, t) => {
                t.is_integer() && t.primitive_width() == Some(usize::from(bytes))
                    || (*t == DataType::Date32 && bytes == 4)
                    // A program bound to a batch's stored-width decimals.
                    || matches!(
                        (t, bytes),
                        (DataType::Decimal32(..), 4) | (DataType::Decimal64(..), 8)
                    )
            }
            (Load::Decimal128, t) => matches!(t, DataType::Decimal128(..)),
            (Load::Bytes, DataType::Utf8 | DataType::LargeUtf8) => true,
            _ => false,
        };
        if !fits || a.null_count() > 0 {
            return None;
        }
        let fixed = |width: usize| -> Option<Buffer> {
            let d = a.to_data();
            let buf = d.buffers().first()?;
            let at = d.offset().checked_mul(width)?;
            let len = n.checked_mul(width)?;
            (at.checked_add(len)? <= buf.len()).then(|| buf.slice_with_length(at, len))
        };
        bytes[i] = Some(match input.load {
            Load::Int { bytes, .. } => fixed(usize::from(bytes))?,
            Load::Decimal128 => fixed(16)?,
            Load::Bytes => {
                let (s, l) = fixed_length_bytes(a.as_ref())?;
                lengths.insert(i, l);
                s
            }
            Load::Bool => return None,
        });
    }
    let mut key_lengths = Vec::new();
    let mut bits = 0u32;
    for &k in &program.keys {
        let b = match program.inputs[k].load {
            // Longer values cannot pack (and would shift by 64 or more).
            Load::Bytes => {
                let l = *lengths.get(&k)?;
                if l > 7 {
                    return None;
                }
                key_lengths.push(l);
                l as u32 * 8
            }
            load => cuda_source::key_bits(load)?,
        };
        bits = bits.checked_add(b)?;
    }
    (bits <= KEY_BITS).then_some(Placed { bytes, key_lengths })
}

/// The group key bytes of a packed key (see the kernel's packing).
fn unpack_key(program: &AggProgram, key_lengths: &[usize], packed: u64, out: &mut Vec<u8>) {
    out.clear();
    let mut sh = 0u32;
    let mut bk = 0;
    for &k in &program.keys {
        let load = program.inputs[k].load;
        let bits = match load {
            Load::Bytes => {
                let l = key_lengths[bk];
                bk += 1;
                (l * 8) as u32
            }
            _ => cuda_source::key_bits(load).unwrap_or(32),
        };
        let x = if bits == 0 {
            0
        } else {
            (packed >> sh) & (u64::MAX >> (64 - bits))
        };
        sh += bits;
        let v = match load {
            Load::Bytes => {
                let b = x.to_le_bytes();
                encode_key(out, Some(KeyValue::Bytes(&b[..(bits / 8) as usize])));
                continue;
            }
            Load::Int { signed: false, .. } => i128::from(x),
            // Signed integers and decimals: sign-extend from their width.
            _ => i128::from(((x << (64 - bits)) as i64) >> (64 - bits)),
        };
        encode_key(out, Some(KeyValue::Int(v)));
    }
}

impl CudaBackend {
    /// Runs `program` over `batches` on the device, in one launch per run of
    /// batches that bind it alike and whose string keys share one value
    /// length (each launch has fixed costs: a lane, two waits, the tables'
    /// download); `None` when the kernel cannot take one of them (the
    /// caller runs other operators or the CPU reference).
    pub(super) fn aggregate_with_device(
        &self,
        program: &AggProgram,
        batches: &[RecordBatch],
    ) -> Result<Option<Groups>> {
        let batches: Vec<&RecordBatch> = batches.iter().filter(|b| b.num_rows() > 0).collect();
        if batches.is_empty() {
            return Ok(Some(Groups::new(program)));
        }
        // Each batch binds the program (files of one table may store a
        // decimal at different widths) and is placed for it.
        let bound: Vec<_> = batches
            .iter()
            .map(|b| program.bound_to(&b.schema()))
            .collect();
        let placed = if bound.iter().all(|p| cuda_source::supported(p)) {
            batches
                .iter()
                .zip(&bound)
                .map(|(b, p)| place(p, b))
                .collect::<Option<Vec<_>>>()
        } else {
            None
        };
        let Some(placed) = placed else {
            counters::count(&self.counters.host_batches, batches.len() as u64);
            return Ok(None);
        };
        // Runs of batches with the same loads and bytes keys of the same
        // lengths (the kernel's text and the packed keys' layout), one
        // launch each.
        let mut groups = Groups::new(program);
        let mut at = 0;
        while at < batches.len() {
            let alike = |k: &usize| {
                placed[*k].key_lengths == placed[at].key_lengths
                    && bound[*k].inputs == bound[at].inputs
            };
            let len = (at..batches.len()).take_while(alike).count();
            let run = &batches[at..at + len];
            match self.launch_program(&bound[at], run, &placed[at..at + len])? {
                Some(g) => groups.merge(&g),
                None => {
                    counters::count(&self.counters.host_batches, batches.len() as u64);
                    return Ok(None);
                }
            }
            at += len;
        }
        counters::count(&self.counters.device_batches, batches.len() as u64);
        Ok(Some(groups))
    }

    /// One launch over `batches` as segments of one row space.
    fn launch_program(
        &self,
        program: &AggProgram,
        batches: &[&RecordBatch],
        placed: &[Placed],
    ) -> Result<Option<Groups>> {
        let n: usize = batches.iter().map(|b| b.num_rows()).sum();
        let key_lengths = &placed[0].key_lengths;
        let _span = crate::trace::span("cuda.aggregate");
        // A kernel that does not build is a refusal, not a failed query.
        let func = match self
            .rt
            .function(kernel_source(&self.programs, program), ENTRY)
        {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!("aggregate program kernel unavailable: {e}");
                return Ok(None);
            }
        };
        let mut lane = self.take()?;
        let err = |what: &'static str| move |e| Error::cuda(what, e);

        // Inputs: device mirrors where the decode stages left them; the
        // rest (values the host built) uploaded together through the
        // lane's pinned buffer at 16-aligned offsets (a pageable copy runs
        // at a quarter of the bus's speed and waits for other lanes).
        let mut mirrors: Vec<Option<(Arc<CudaSlice<u8>>, usize)>> = Vec::new();
        let mut staged: Vec<Option<usize>> = Vec::new();
        let mut total = 0usize;
        for b in placed.iter().flat_map(|p| &p.bytes) {
            let m = b.as_ref().and_then(|b| self.pool.mirror_of(b.as_slice()));
            match (b, &m) {
                (Some(b), None) => {
                    staged.push(Some(total));
                    total += b.len().next_multiple_of(16);
                    counters::count(&self.counters.bytes_in, b.len() as u64);
                }
                (Some(b), Some(_)) => {
                    staged.push(None);
                    counters::count(&self.counters.bytes_mirrored, b.len() as u64);
                }
                (None, _) => staged.push(None),
            }
            mirrors.push(m);
        }
        let super::Lane {
            stream, scratch: s, ..
        } = &mut *lane;
        let ctx = self.rt.context();
        let dev_in = if total > 0 {
            let pinned = s.pinned_in.get(ctx, total)?;
            let host = pinned
                .as_mut_slice()
                .map_err(err("writing to pinned memory"))?;
            for (b, at) in placed.iter().flat_map(|p| &p.bytes).zip(&staged) {
                if let (Some(b), Some(at)) = (b, at) {
                    crate::copy::par_copy(&mut host[*at..*at + b.len()], b.as_slice());
                }
            }
            let dev = s.input.get(stream, total)?;
            stream
                .memcpy_htod(&host[..total], &mut dev.slice_mut(..total))
                .map_err(err("copying input to the device"))?;
            Some(&*dev)
        } else {
            None
        };
        let mut params: Vec<u64> =
            Vec::with_capacity(mirrors.len() + key_lengths.len() + batches.len() + 1);
        let mut guards = Vec::new();
        for (m, at) in mirrors.iter().zip(&staged) {
            match (m, at, dev_in) {
                (Some((m, off)), _, _) => {
                    let (ptr, g) = m.device_ptr(stream);
                    guards.push(g);
                    params.push(ptr + *off as u64);
                }
                (None, Some(at), Some(dev)) => {
                    let (ptr, g) = dev.device_ptr(stream);
                    guards.push(g);
                    params.push(ptr + *at as u64);
                }
                _ => params.push(0),
            }
        }
        params.extend(key_lengths.iter().map(|&l| l as u64));
        let mut first_row = 0u64;
        for b in batches {
            params.push(first_row);
            first_row += b.num_rows() as u64;
        }
        params.push(first_row);
        let params_dev = stream
            .clone_htod(&params)
            .map_err(err("copying input to the device"))?;
        let sms = self.rt.info().sm_count.max(1) as usize;
        // At most one block per SM (every block's table comes down,
        // `GROUPS` slots each) and 4 Ki rows per block: a row group of
        // TPC-H lineitem (262 Ki rows) took 16 blocks at 16 Ki rows each,
        // 64 sequential warp steps, which the scan then waited for.
        let blocks = n.div_ceil(1 << 12).clamp(1, sms);
        let words = cuda_source::slot_words(program.aggs.len());
        let mut out = stream
            .alloc_zeros::<u64>(blocks * GROUPS * words)
            .map_err(err("allocating device memory"))?;
        let mut status = stream
            .alloc_zeros::<u32>(blocks)
            .map_err(err("allocating device memory"))?;
        let (segments, rows) = (batches.len() as u64, n as u64);
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = stream.launch_builder(&func);
        b.arg(&params_dev)
            .arg(&segments)
            .arg(&rows)
            .arg(&mut out)
            .arg(&mut status);
        // SAFETY: the arguments match the generated entry's signature; every
        // input address of a segment holds that batch's rows of its load (or
        // `rows * len` bytes of a bytes key), checked in `place`; the
        // segments' first rows ascend to `n`, and the kernel reads a
        // segment's rows below the next one's first only; `out` and
        // `status` are sized for `blocks`.
        unsafe { b.launch(cfg) }.map_err(err("launching a kernel"))?;
        let status = stream
            .clone_dtoh(&status)
            .map_err(err("copying results to the host"))?;
        let out = stream
            .clone_dtoh(&out)
            .map_err(err("copying results to the host"))?;
        drop(guards);
        drop(lane);
        if status.iter().any(|&s| s != 0) {
            return Ok(None);
        }
        let mut groups = Groups::new(program);
        let mut key = Vec::new();
        for slot in out.chunks_exact(words) {
            if slot[0] == u64::MAX {
                continue;
            }
            unpack_key(program, key_lengths, slot[0], &mut key);
            let g = groups.group(&key);
            let rows = slot[1];
            for (a, agg) in program.aggs.iter().enumerate() {
                let sum = match agg.func {
                    AggFn::Count => 0,
                    _ => {
                        (u128::from(slot[2 + 2 * a]) | (u128::from(slot[3 + 2 * a]) << 64)) as i128
                    }
                };
                groups.add(g, a, rows, sum);
            }
        }
        Ok(Some(groups))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{Agg, Input};
    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{Field, Schema};

    #[test]
    fn packed_keys_unpack_as_the_cpu_encodes_them() {
        let program = AggProgram {
            inputs: vec![
                Input {
                    column: 0,
                    load: Load::Int {
                        bytes: 8,
                        signed: true,
                    },
                },
                Input {
                    column: 1,
                    load: Load::Bytes,
                },
            ],
            filter: None,
            keys: vec![0, 1],
            aggs: vec![Agg {
                func: AggFn::Count,
                arg: crate::query::Expr::Int(1),
            }],
            schema: Arc::new(Schema::new(vec![
                Field::new("a", DataType::Int64, true),
                Field::new("b", DataType::Utf8, true),
                Field::new("c", DataType::Int64, true),
            ])),
        };
        // -5 packed in 32 bits, then "AB" in the next 16.
        let packed = u64::from(-5i32 as u32) | (u64::from(u16::from_le_bytes(*b"AB")) << 32);
        let mut got = Vec::new();
        unpack_key(&program, &[2], packed, &mut got);
        let mut want = Vec::new();
        encode_key(&mut want, Some(KeyValue::Int(-5)));
        encode_key(&mut want, Some(KeyValue::Bytes(b"AB")));
        assert_eq!(got, want);

        let batch = RecordBatch::try_new(
            program.schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1, 2])),
                Arc::new(StringArray::from(vec!["AB", "CDE"])),
                Arc::new(Int64Array::from(vec![1, 2])),
            ],
        )
        .unwrap();
        assert!(place(&program, &batch).is_none(), "lengths differ");
    }
}
