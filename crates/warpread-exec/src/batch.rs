//! Gathers decode requests from many streams (many columns, many stripes)
//! into one stage per operation, runs them on a backend, and hands each
//! request its slice of the output. Format readers describe *what* to decode;
//! this is where it becomes few, large, parallel stages.

use std::collections::HashMap;
use std::ops::Range;

use arrow::buffer::Buffer;
use rayon::prelude::*;

use super::Backend;
use crate::error::{Error, Location, Result};
use crate::plan::{ChunkJob, ChunkStatus, Stage, StageOp};

/// When the inputs fill at least half of the span of the source from the
/// first byte of any to the last, that span is the stage input as it is:
/// carrying the gaps costs less than copying every piece into a new buffer
/// (the decompression stage's chunks fill nearly all of the stream bytes).
/// Order does not matter — jobs read their own ranges, and only outputs
/// must be in order — so pieces appended after the rest (ORC stored chunks
/// framed for inflation) keep the stage in place too.
fn direct_span(inputs: impl Iterator<Item = Range<usize>>) -> Option<Range<usize>> {
    let mut span: Option<Range<usize>> = None;
    let mut filled = 0usize;
    for r in inputs {
        span = Some(match span {
            None => r.clone(),
            Some(s) => s.start.min(r.start)..s.end.max(r.end),
        });
        filled = filled.saturating_add(r.len());
    }
    let span = span?;
    (filled >= span.len() / 2).then_some(span)
}

/// Handle to one request's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId(usize);

/// Splits one request's input into several chunk jobs (e.g. at run
/// boundaries) so a long stream decodes in parallel. Returns job inputs
/// relative to the request's input, output offsets relative to its output.
pub type Splitter = Box<dyn Fn(&[u8], u64) -> Option<Vec<ChunkJob>> + Send + Sync>;

struct Request {
    op: StageOp,
    input: Range<usize>,
    values: u64,
    aux: u64,
    location: Location,
    /// The caller will not read the output on the host
    /// ([`StageBatch::leave_on_device`]).
    device_only: bool,
}

/// A set of requests over one source buffer.
pub struct StageBatch<'a> {
    source: &'a [u8],
    requests: Vec<Request>,
    splitter: HashMap<StageOp, Splitter>,
}

struct Placed {
    stage: usize,
    /// Output elements of the request.
    output: Range<usize>,
    /// The request's jobs within its stage.
    jobs: Range<usize>,
}

/// The outputs of a run batch: each stage's data as an Arrow buffer, so
/// assembly can hand slices of it to Arrow arrays without copying.
pub struct BatchOutput {
    outputs: Vec<Buffer>,
    statuses: Vec<Vec<ChunkStatus>>,
    placed: Vec<Placed>,
    widths: Vec<usize>,
}

impl<'a> StageBatch<'a> {
    /// An empty batch reading from `source`.
    pub fn new(source: &'a [u8]) -> Self {
        Self {
            source,
            requests: Vec::new(),
            splitter: HashMap::new(),
        }
    }

    /// Lets requests of `op` be split into several jobs by `f`.
    pub fn split_with(
        &mut self,
        op: StageOp,
        f: impl Fn(&[u8], u64) -> Option<Vec<ChunkJob>> + Send + Sync + 'static,
    ) {
        self.splitter.insert(op, Box::new(f));
    }

    /// Asks for `values` elements of `op` decoded from `source[input]`.
    pub fn add(
        &mut self,
        op: StageOp,
        input: Range<usize>,
        values: u64,
        location: Location,
    ) -> RequestId {
        self.add_with_aux(op, input, values, 0, location)
    }

    /// [`add`](Self::add) for ops whose jobs take a parameter
    /// ([`ChunkJob::aux`]); such requests are never split.
    pub fn add_with_aux(
        &mut self,
        op: StageOp,
        input: Range<usize>,
        values: u64,
        aux: u64,
        location: Location,
    ) -> RequestId {
        self.requests.push(Request {
            op,
            input,
            values,
            aux,
            location,
            device_only: false,
        });
        RequestId(self.requests.len() - 1)
    }

    /// Promises that the caller will not read request `id`'s output on the
    /// host, only hand it to later stages on this backend: a backend that
    /// keeps the stage's output on its device may then leave those bytes
    /// out of the host copy ([`Backend::run_stage_reading`]).
    pub fn leave_on_device(&mut self, id: RequestId) {
        self.requests[id.0].device_only = true;
    }

    /// Whether this batch's stages of an op will address the source where
    /// it lies (the backend holds it on its device, or reads host memory in
    /// place for that op) rather than a gathered copy of the requests'
    /// bytes: requests that span other requests' bytes are cheap only so.
    pub fn in_place<'b>(&self, backend: &'b dyn Backend) -> impl Fn(&StageOp) -> bool + 'b {
        let on_device = !self.source.is_empty() && backend.holds_on_device(self.source);
        move |op| on_device || backend.reads_host_input(op)
    }

    /// True when nothing was requested.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Runs one stage per operation and checks every job's status.
    pub fn run(self, backend: &dyn Backend) -> Result<BatchOutput> {
        let mut ops: Vec<StageOp> = Vec::new();
        let mut by_op: HashMap<StageOp, Vec<usize>> = HashMap::new();
        for (i, r) in self.requests.iter().enumerate() {
            if r.input.end > self.source.len() || r.input.start > r.input.end {
                return Err(Error::InvalidPlan(format!(
                    "request input {:?} outside {} bytes at {}",
                    r.input,
                    self.source.len(),
                    r.location
                )));
            }
            by_op.entry(r.op).or_insert_with(|| {
                ops.push(r.op);
                Vec::new()
            });
            by_op.get_mut(&r.op).expect("inserted").push(i);
        }
        let mut placed: Vec<Option<Placed>> = (0..self.requests.len()).map(|_| None).collect();
        let mut outputs = Vec::with_capacity(ops.len());
        let mut statuses = Vec::with_capacity(ops.len());
        let mut widths = Vec::with_capacity(ops.len());
        let in_place = self.in_place(backend);
        // One stage at a time, planned just before it runs, so at most one
        // gathered input is alive (side by side on threads, each on its own
        // CUDA lane, the stages were slower: benchmarks/parquet-read.md).
        for (stage_idx, op) in ops.iter().enumerate() {
            let (stage, input) =
                self.plan_stage(stage_idx, *op, &by_op[op], in_place(op), &mut placed)?;
            let input = match &input {
                StageInput::Source(r) => &self.source[r.clone()],
                StageInput::Gathered(v) => v.as_slice(),
            };
            // The output bytes the host reads, when some are left to the
            // device: every other request's, in output order.
            let ids = &by_op[op];
            let host_reads: Option<Vec<Range<usize>>> =
                ids.iter().any(|&i| self.requests[i].device_only).then(|| {
                    let w = op.output_width();
                    let mut reads: Vec<Range<usize>> = ids
                        .iter()
                        .filter(|&&i| !self.requests[i].device_only)
                        .map(|&i| {
                            let o = &placed[i].as_ref().expect("placed above").output;
                            o.start * w..o.end * w
                        })
                        .collect();
                    reads.sort_unstable_by_key(|r| r.start);
                    reads
                });
            let out = backend
                .run_stage_reading(&stage, input, host_reads.as_deref())
                .map_err(|e| self.name_claim(e, &by_op[op]))?;
            for &i in &by_op[op] {
                let p = placed[i].as_ref().expect("placed above");
                let r = &self.requests[i];
                for j in p.jobs.clone() {
                    let st = out.statuses[j];
                    if !st.is_ok() {
                        let job = &stage.jobs[j];
                        let in_stream = job.input.start - stage.jobs[p.jobs.start].input.start;
                        return Err(Error::Corrupt {
                            location: Box::new(r.location.clone().with_chunk(
                                (j - p.jobs.start) as u64,
                                in_stream + st.detail as u64,
                            )),
                            status: st,
                        });
                    }
                }
            }
            widths.push(op.output_width());
            statuses.push(out.statuses);
            outputs.push(out.data.into_arrow());
        }
        Ok(BatchOutput {
            outputs,
            statuses,
            placed: placed
                .into_iter()
                .map(|p| p.expect("every request placed"))
                .collect(),
            widths,
        })
    }

    /// A host budget's refusal of a stage over the requests `ids`, naming
    /// the request whose claimed size is the largest: the metadata field
    /// to look at when a file lies. Other errors as they are.
    fn name_claim(&self, e: Error, ids: &[usize]) -> Error {
        let Error::HostMemory {
            during,
            needed,
            why,
        } = e
        else {
            return e;
        };
        let largest = ids
            .iter()
            .map(|&i| &self.requests[i])
            .max_by_key(|r| r.values);
        let during = match largest {
            Some(r) => format!(
                "{during}, whose largest part {} claims {} values",
                r.location, r.values
            ),
            None => during,
        };
        Error::HostMemory {
            during,
            needed,
            why,
        }
    }

    /// The stage of one operation over the requests `ids` and where its
    /// input lies; records where each request's jobs and output land.
    fn plan_stage(
        &self,
        stage_idx: usize,
        op: StageOp,
        ids: &[usize],
        in_place: bool,
        placed: &mut [Option<Placed>],
    ) -> Result<(Stage, StageInput)> {
        // In place: jobs address the source itself (a backend that reads
        // host memory where it is, or holds the source on its device), or
        // the one span of it the requests fill (`direct_span`); otherwise
        // the requests' bytes are compacted end to end first.
        let (input, base) = if in_place {
            (StageInput::Source(0..self.source.len()), Some(0))
        } else if let Some(span) = direct_span(ids.iter().map(|&i| self.requests[i].input.clone()))
        {
            let base = span.start;
            (StageInput::Source(span), Some(base))
        } else {
            let pieces: Vec<&[u8]> = ids
                .iter()
                .map(|&i| &self.source[self.requests[i].input.clone()])
                .collect();
            (StageInput::Gathered(super::copy::gather(&pieces)?), None)
        };
        // Finding run boundaries reads every run header (every varint of
        // RLE v1 literals): one task per request, as serial it was the
        // largest part of decoding ORC 0.11 files.
        let splits: Vec<Option<Vec<ChunkJob>>> = match self.splitter.get(&op) {
            Some(f) => ids
                .par_iter()
                .map(|&i| {
                    let r = &self.requests[i];
                    f(&self.source[r.input.clone()], r.values)
                })
                .collect(),
            None => vec![None; ids.len()],
        };
        let mut jobs = Vec::with_capacity(ids.len());
        let mut out_at = 0u64;
        let mut in_at = 0u64;
        for (&i, split) in ids.iter().zip(splits) {
            let r = &self.requests[i];
            if let Some(base) = base {
                in_at = (r.input.start - base) as u64;
            }
            let bytes = &self.source[r.input.clone()];
            let first_job = jobs.len();
            match split.filter(|_| r.aux == 0) {
                Some(parts) => jobs.extend(parts.into_iter().map(|j| ChunkJob {
                    input: j.input.start + in_at..j.input.end + in_at,
                    output_offset: j.output_offset + out_at,
                    values: j.values,
                    aux: j.aux,
                })),
                None => jobs.push(ChunkJob {
                    input: in_at..in_at + bytes.len() as u64,
                    output_offset: out_at,
                    values: r.values,
                    aux: r.aux,
                }),
            }
            placed[i] = Some(Placed {
                stage: stage_idx,
                output: out_at as usize..(out_at + r.values) as usize,
                jobs: first_job..jobs.len(),
            });
            in_at += bytes.len() as u64;
            out_at = out_at.checked_add(r.values).ok_or_else(|| {
                Error::InvalidPlan(format!("output size overflows at {}", r.location))
            })?;
        }
        let stage = Stage {
            op,
            jobs,
            output_values: out_at,
            location: Location::default(),
        };
        Ok((stage, input))
    }
}

/// Where a stage's input lies: a span of the batch's source, or the
/// requests' bytes gathered end to end.
enum StageInput {
    Source(Range<usize>),
    Gathered(Vec<u8>),
}

impl BatchOutput {
    /// A request's output bytes.
    pub fn bytes(&self, id: RequestId) -> &[u8] {
        let p = &self.placed[id.0];
        let w = self.widths[p.stage];
        &self.outputs[p.stage][p.output.start * w..p.output.end * w]
    }

    /// Bytes of one output element of a request's stage.
    pub fn width(&self, id: RequestId) -> usize {
        self.widths[self.placed[id.0].stage]
    }

    /// A request's output as an Arrow buffer sharing the stage's storage
    /// (8-byte aligned at the stage's start, element-aligned here).
    pub fn buffer(&self, id: RequestId) -> Buffer {
        let p = &self.placed[id.0];
        let w = self.widths[p.stage];
        self.outputs[p.stage].slice_with_length(p.output.start * w, p.output.len() * w)
    }

    /// A request's output as elements (the stage's element type).
    pub fn typed<T: crate::codecs::int::IntElem>(&self, id: RequestId) -> &[T] {
        let p = &self.placed[id.0];
        assert_eq!(std::mem::size_of::<T>(), self.widths[p.stage]);
        let bytes = self.bytes(id);
        assert_eq!(bytes.as_ptr().align_offset(std::mem::align_of::<T>()), 0);
        // SAFETY: the stage buffer came from 8-aligned storage and the
        // request starts at a whole element; T is a plain integer for which
        // every bit pattern is valid; the length is whole elements.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast(), p.output.len()) }
    }

    /// The stage a request ran in and the bytes of its output within that
    /// stage's data.
    pub fn place(&self, id: RequestId) -> (usize, Range<usize>) {
        let p = &self.placed[id.0];
        let w = self.widths[p.stage];
        (p.stage, p.output.start * w..p.output.end * w)
    }

    /// Bytes `bytes` of stage `stage`'s output, sharing its storage (a
    /// caller whose requests lie end to end takes them as one slice).
    pub fn stage_slice(&self, stage: usize, bytes: Range<usize>) -> Buffer {
        self.outputs[stage].slice_with_length(bytes.start, bytes.len())
    }

    /// Stage `stage`'s output data, whole (a caller whose requests already
    /// lie end to end in it keeps it rather than copying them).
    pub fn into_data(self, stage: usize) -> arrow::buffer::Buffer {
        self.outputs[stage].clone()
    }

    /// Whether every job of a byte-array data request found its output all
    /// ASCII ([`crate::plan::ChunkStatus::ascii`]).
    pub fn ascii(&self, id: RequestId) -> bool {
        let p = &self.placed[id.0];
        self.statuses[p.stage][p.jobs.clone()]
            .iter()
            .all(|s| s.ascii())
    }

    /// Elements each of a request's jobs produced (decompressed sizes).
    pub fn produced(&self, id: RequestId) -> Vec<u64> {
        let p = &self.placed[id.0];
        self.statuses[p.stage][p.jobs.clone()]
            .iter()
            .map(|s| s.produced)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_span_needs_fill_not_order() {
        assert_eq!(direct_span([0..4, 5..9].into_iter()), Some(0..9));
        assert_eq!(direct_span([0..2, 20..22].into_iter()), None);
        assert_eq!(direct_span([5..9, 0..4].into_iter()), Some(0..9));
        assert_eq!(direct_span([0..4, 3..9].into_iter()), Some(0..9));
        assert_eq!(
            direct_span([40..50, 0..30, 30..40].into_iter()),
            Some(0..50)
        );
        assert_eq!(direct_span(std::iter::empty()), None);
    }

    /// The CPU backend posing as a device that holds some sources already
    /// (a mirror) and otherwise compacts inputs; records each stage's input.
    struct Device {
        holds: bool,
        inputs: std::sync::Mutex<Vec<usize>>,
    }

    impl Backend for Device {
        fn name(&self) -> &'static str {
            "test-device"
        }
        fn describe(&self) -> String {
            "test device".into()
        }
        fn holds_on_device(&self, _source: &[u8]) -> bool {
            self.holds
        }
        fn run_stage(&self, stage: &Stage, input: &[u8]) -> Result<super::super::StageOutput> {
            self.inputs.lock().unwrap().push(input.len());
            crate::CpuBackend::new().run_stage(stage, input)
        }
    }

    #[test]
    fn a_source_held_on_the_device_is_read_in_place_whole() {
        use crate::codecs::orc_byte_rle;
        // Two small requests far apart in a large source: compacted
        // unless the device holds the source, then read where they are.
        let a: Vec<u8> = (0..300u32).map(|i| (i / 7) as u8).collect();
        let b: Vec<u8> = (0..500u32).map(|i| (i / 3) as u8).collect();
        let (ea, eb) = (orc_byte_rle::encode(&a), orc_byte_rle::encode(&b));
        let mut source = vec![0xEEu8; 10_000];
        source[100..100 + ea.len()].copy_from_slice(&ea);
        source[9_000..9_000 + eb.len()].copy_from_slice(&eb);
        for holds in [false, true] {
            let device = Device {
                holds,
                inputs: Default::default(),
            };
            let mut batch = StageBatch::new(&source);
            let ra = batch.add(
                StageOp::OrcByteRle,
                100..100 + ea.len(),
                a.len() as u64,
                Location::default(),
            );
            let rb = batch.add(
                StageOp::OrcByteRle,
                9_000..9_000 + eb.len(),
                b.len() as u64,
                Location::default(),
            );
            let out = batch.run(&device).unwrap();
            assert_eq!(out.bytes(ra), a.as_slice());
            assert_eq!(out.bytes(rb), b.as_slice());
            let want = if holds {
                source.len()
            } else {
                ea.len() + eb.len()
            };
            assert_eq!(*device.inputs.lock().unwrap(), vec![want]);
        }
    }

    #[test]
    fn one_stage_per_op_and_empty_batches() {
        use crate::codecs::{orc_byte_rle, orc_rle_v1};
        use crate::plan::IntType;
        let ints: Vec<u32> = (0..70_000u32).map(|i| i / 7).collect();
        let bytes: Vec<u8> = (0..50_000u32).map(|i| (i / 11) as u8).collect();
        let mut source = orc_rle_v1::encode(&ints);
        let split = source.len();
        source.extend(orc_byte_rle::encode(&bytes));
        let backend = crate::CpuBackend::new();
        let batch = || {
            let mut b = StageBatch::new(&source);
            let a = b.add(
                StageOp::OrcRleV1(IntType::U32),
                0..split,
                ints.len() as u64,
                Location::default(),
            );
            let c = b.add(
                StageOp::OrcByteRle,
                split..source.len(),
                bytes.len() as u64,
                Location::default(),
            );
            let out = b.run(&backend).unwrap();
            assert_eq!(out.outputs.len(), 2);
            (out.bytes(a).to_vec(), out.bytes(c).to_vec())
        };
        let (a, c) = batch();
        assert_eq!(
            a,
            ints.iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>()
        );
        assert_eq!(c, bytes);
        let out = StageBatch::new(&source).run(&backend).unwrap();
        assert!(out.outputs.is_empty());
    }
}
