//! Host memory budgets: what a read's stages may allocate on the host,
//! counted before they allocate it. Sizes come from file metadata, which
//! may lie (a column of 2^62 bytes, a billion-row stripe of 40 bytes), and
//! under Linux's overcommit a lie can be allocated and then kill the
//! process when it is touched; a budget turns it into an error first.
//!
//! A reader takes a budget in its tuning ([`HostBudget`]): a plain limit
//! ([`HostLimit`]) for a standalone read, or a query engine's memory pool
//! (the DataFusion scans reserve from their session's `MemoryPool`). Each
//! read group runs its stages through [`Budgeted`], which takes every
//! stage's output bytes from the budget before the stage runs and gives
//! them back when the group's read ends.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Backend, CudaBackend, InputBuffer, StageOutput};
use crate::error::{Error, Result};
use crate::plan::{Stage, StageOp};

/// Memory a read may take, shared by the reads that draw on it.
pub trait HostMemory: Send + Sync + fmt::Debug {
    /// Takes `bytes` more, or says why not (nothing is taken then).
    fn try_grow(&self, bytes: u64) -> std::result::Result<(), String>;
    /// Gives back `bytes` taken before.
    fn shrink(&self, bytes: u64);
}

/// A budget of at most `limit` bytes at once.
#[derive(Debug)]
pub struct HostLimit {
    limit: u64,
    used: AtomicU64,
}

impl HostLimit {
    /// A budget of `limit` bytes.
    pub fn new(limit: u64) -> Self {
        Self {
            limit,
            used: AtomicU64::new(0),
        }
    }

    /// Bytes taken now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
}

impl HostMemory for HostLimit {
    fn try_grow(&self, bytes: u64) -> std::result::Result<(), String> {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&n| n <= self.limit)
            })
            .map(|_| ())
            .map_err(|used| {
                format!(
                    "over the host memory limit of {} bytes ({used} in use)",
                    self.limit
                )
            })
    }

    fn shrink(&self, bytes: u64) {
        let _ = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                Some(used.saturating_sub(bytes))
            });
    }
}

/// A read's host budget as its tuning holds it: shared, compared by
/// identity.
#[derive(Clone)]
pub struct HostBudget(pub Arc<dyn HostMemory>);

impl HostBudget {
    /// A budget of at most `bytes` at once ([`HostLimit`]).
    pub fn limit(bytes: u64) -> Self {
        Self(Arc::new(HostLimit::new(bytes)))
    }
}

impl fmt::Debug for HostBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for HostBudget {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A backend whose stages take their output bytes from a budget first;
/// what they took is given back when this is dropped (the end of a read
/// group). Without a budget it only forwards.
pub struct Budgeted<'a> {
    inner: &'a dyn Backend,
    budget: Option<&'a dyn HostMemory>,
    taken: AtomicU64,
}

impl<'a> Budgeted<'a> {
    /// `inner`, drawing on `budget` when there is one.
    pub fn new(inner: &'a dyn Backend, budget: Option<&'a HostBudget>) -> Self {
        Self {
            inner,
            budget: budget.map(|b| b.0.as_ref()),
            taken: AtomicU64::new(0),
        }
    }

    /// Bytes this group has taken so far.
    pub fn taken(&self) -> u64 {
        self.taken.load(Ordering::Relaxed)
    }

    fn take(&self, stage: &Stage) -> Result<()> {
        let Some(budget) = self.budget else {
            return Ok(());
        };
        let bytes = stage.output_bytes() as u64;
        budget.try_grow(bytes).map_err(|why| Error::HostMemory {
            during: format!("the output of a {} stage", stage.op.name()),
            needed: bytes,
            why,
        })?;
        self.taken.fetch_add(bytes, Ordering::Relaxed);
        Ok(())
    }
}

impl Drop for Budgeted<'_> {
    fn drop(&mut self) {
        if let Some(budget) = self.budget {
            budget.shrink(*self.taken.get_mut());
        }
    }
}

impl Backend for Budgeted<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn run_stage(&self, stage: &Stage, input: &[u8]) -> Result<StageOutput> {
        self.take(stage)?;
        self.inner.run_stage(stage, input)
    }
    fn run_stage_reading(
        &self,
        stage: &Stage,
        input: &[u8],
        host_reads: Option<&[Range<usize>]>,
    ) -> Result<StageOutput> {
        self.take(stage)?;
        self.inner.run_stage_reading(stage, input, host_reads)
    }
    fn reads_host_input(&self, op: &StageOp) -> bool {
        self.inner.reads_host_input(op)
    }
    fn holds_on_device(&self, source: &[u8]) -> bool {
        self.inner.holds_on_device(source)
    }
    fn input_buffer(&self, len: usize) -> Result<InputBuffer> {
        self.inner.input_buffer(len)
    }
    fn group_bytes(&self) -> u64 {
        self.inner.group_bytes()
    }
    fn stream_group_bytes(&self) -> u64 {
        self.inner.stream_group_bytes()
    }
    fn stream_groups_in_flight(&self) -> usize {
        self.inner.stream_groups_in_flight()
    }
    fn device_ordinal(&self) -> Option<usize> {
        self.inner.device_ordinal()
    }
    fn scan_partitions(&self) -> Option<usize> {
        self.inner.scan_partitions()
    }
    fn release_on_device(&self, source: &[u8]) {
        self.inner.release_on_device(source)
    }
    fn aggregate(
        &self,
        program: &crate::query::AggProgram,
        batch: &arrow::record_batch::RecordBatch,
    ) -> Result<crate::query::Groups> {
        self.inner.aggregate(program, batch)
    }
    fn aggregate_on_device(
        &self,
        program: &crate::query::AggProgram,
        batches: &[arrow::record_batch::RecordBatch],
    ) -> Result<Option<crate::query::Groups>> {
        self.inner.aggregate_on_device(program, batches)
    }
    fn aggregates_on_device(&self) -> bool {
        self.inner.aggregates_on_device()
    }
    fn retain_decoded(&self, on: bool) {
        self.inner.retain_decoded(on)
    }
    fn as_cuda(&self) -> Option<&CudaBackend> {
        self.inner.as_cuda()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CpuBackend;
    use crate::plan::StageOp;

    fn stage(values: u64) -> Stage {
        Stage::single(StageOp::OrcRleV1(crate::plan::IntType::I64), 0..0, values)
    }

    #[test]
    fn a_limit_is_shared_and_given_back() {
        let l = HostLimit::new(100);
        assert!(l.try_grow(60).is_ok());
        let e = l.try_grow(41).unwrap_err();
        assert!(e.contains("100 bytes") && e.contains("60 in use"), "{e}");
        assert!(l.try_grow(40).is_ok());
        l.shrink(100);
        assert_eq!(l.used(), 0);
        assert!(l.try_grow(u64::MAX).is_err());
        l.shrink(5);
        assert_eq!(l.used(), 0);
    }

    #[test]
    fn stages_take_their_output_until_the_group_ends() {
        let budget = HostBudget::limit(64);
        let cpu = CpuBackend::new();
        {
            let group = Budgeted::new(&cpu, Some(&budget));
            // 4 values of 8 bytes each.
            let out = group.run_stage(&stage(4), &[]).unwrap();
            // An empty input fails the job, not the budget: the bytes were
            // taken all the same.
            assert!(!out.statuses[0].is_ok());
            assert_eq!(group.taken(), 32);
            let e = group.run_stage(&stage(5), &[]).map(|_| ()).unwrap_err();
            assert!(matches!(e, Error::HostMemory { needed: 40, .. }), "{e}");
            assert!(e.is_over_memory_limit());
            assert_eq!(group.taken(), 32);
        }
        let HostBudget(inner) = &budget;
        assert!(inner.try_grow(64).is_ok(), "the group gave its bytes back");
        let unbounded = Budgeted::new(&cpu, None);
        assert!(unbounded.run_stage(&stage(1 << 20), &[]).is_ok());
        assert_eq!(unbounded.taken(), 0);
    }
}
