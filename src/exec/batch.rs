//! Gathers decode requests from many streams (many columns, many stripes)
//! into one stage per operation, runs them on a backend, and hands each
//! request its slice of the output. Format readers describe *what* to decode;
//! this is where it becomes few, large, parallel stages.

use std::collections::HashMap;
use std::ops::Range;

use super::{Backend, StageOutput};
use crate::error::{Error, Location, Result};
use crate::plan::{ChunkJob, Stage, StageOp};

/// Handle to one request's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId(usize);

/// Splits one request's input into several chunk jobs (e.g. at run
/// boundaries) so a long stream decodes in parallel. Returns job inputs
/// relative to the request's input, output offsets relative to its output.
pub type Splitter = fn(&[u8], u64) -> Option<Vec<ChunkJob>>;

struct Request {
    op: StageOp,
    input: Range<usize>,
    values: u64,
    location: Location,
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

/// The outputs of a run batch.
pub struct BatchOutput {
    outputs: Vec<StageOutput>,
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
    pub fn split_with(&mut self, op: StageOp, f: Splitter) {
        self.splitter.insert(op, f);
    }

    /// Asks for `values` elements of `op` decoded from `source[input]`.
    pub fn add(
        &mut self,
        op: StageOp,
        input: Range<usize>,
        values: u64,
        location: Location,
    ) -> RequestId {
        self.requests.push(Request {
            op,
            input,
            values,
            location,
        });
        RequestId(self.requests.len() - 1)
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
        let mut widths = Vec::with_capacity(ops.len());
        for (stage_idx, op) in ops.iter().enumerate() {
            let ids = &by_op[op];
            // In place: jobs address the source itself; otherwise the
            // requests' bytes are compacted end to end first.
            let in_place = backend.reads_host_input(op);
            let compact;
            let input: &[u8] = if in_place {
                self.source
            } else {
                let pieces: Vec<&[u8]> = ids
                    .iter()
                    .map(|&i| &self.source[self.requests[i].input.clone()])
                    .collect();
                compact = super::copy::gather(&pieces)?;
                &compact
            };
            let mut jobs = Vec::with_capacity(ids.len());
            let mut out_at = 0u64;
            let mut in_at = 0u64;
            for &i in ids {
                let r = &self.requests[i];
                if in_place {
                    in_at = r.input.start as u64;
                }
                let bytes = &self.source[r.input.clone()];
                let first_job = jobs.len();
                let split = self.splitter.get(op).and_then(|f| f(bytes, r.values));
                match split {
                    Some(parts) => jobs.extend(parts.into_iter().map(|j| ChunkJob {
                        input: j.input.start + in_at..j.input.end + in_at,
                        output_offset: j.output_offset + out_at,
                        values: j.values,
                    })),
                    None => jobs.push(ChunkJob {
                        input: in_at..in_at + bytes.len() as u64,
                        output_offset: out_at,
                        values: r.values,
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
                op: *op,
                jobs,
                output_values: out_at,
                location: Location::default(),
            };
            let out = backend.run_stage(&stage, input)?;
            for &i in ids {
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
            outputs.push(out);
        }
        Ok(BatchOutput {
            outputs,
            placed: placed
                .into_iter()
                .map(|p| p.expect("every request placed"))
                .collect(),
            widths,
        })
    }
}

impl BatchOutput {
    /// A request's output bytes.
    pub fn bytes(&self, id: RequestId) -> &[u8] {
        let p = &self.placed[id.0];
        let w = self.widths[p.stage];
        &self.outputs[p.stage].data.as_bytes()[p.output.start * w..p.output.end * w]
    }

    /// A request's output as elements (the stage's element type).
    pub fn typed<T: crate::codecs::int::IntElem>(&self, id: RequestId) -> &[T] {
        let p = &self.placed[id.0];
        assert_eq!(std::mem::size_of::<T>(), self.widths[p.stage]);
        &self.outputs[p.stage].data.typed::<T>()[p.output.clone()]
    }

    /// The stage a request ran in and the bytes of its output within that
    /// stage's data.
    pub fn place(&self, id: RequestId) -> (usize, Range<usize>) {
        let p = &self.placed[id.0];
        let w = self.widths[p.stage];
        (p.stage, p.output.start * w..p.output.end * w)
    }

    /// Stage `stage`'s output data, taken whole (a caller whose requests
    /// already lie end to end in it keeps it rather than copying them).
    pub fn into_data(mut self, stage: usize) -> super::HostBuffer {
        std::mem::take(&mut self.outputs[stage].data)
    }

    /// Elements each of a request's jobs produced (decompressed sizes).
    pub fn produced(&self, id: RequestId) -> Vec<u64> {
        let p = &self.placed[id.0];
        self.outputs[p.stage].statuses[p.jobs.clone()]
            .iter()
            .map(|s| s.produced)
            .collect()
    }
}
