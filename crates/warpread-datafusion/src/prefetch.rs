//! Scans that start reading when the plan starts, not when first polled.
//!
//! DataFusion executes a plan top down at once, but a hash join polls its
//! probe side only after its build side is collected, and a repartition
//! pulls its input only once its own output is polled. A query of several
//! joins therefore scans its tables one after another: TPC-H Q9 at scale
//! 10 on the H100 host read orders, partsupp, supplier and part in turn and
//! started lineitem 407 ms into the query, whose first batches came 250 ms
//! later (benchmarks/tpch.md). DataFusion's own reader streams each
//! row group as it comes, so it loses little to this; a device reads large
//! groups and sits idle while the host builds hash tables.
//!
//! So when a warpread scan is executed, the first of its partitions to be
//! executed opens the file each partition's stream will open first and
//! decodes up to its first batch (which starts the usual read-ahead), each
//! in a task of its own, before any stream is polled (a stream of small
//! files may otherwise reach the next partition's file before that
//! partition is executed). That partition's opener keeps the tasks;
//! whichever stream then opens such a file (DataFusion's file streams take
//! files from one queue) takes the started read instead of starting
//! another. Every partition's opener holds the started reads, so a read
//! nobody takes is dropped, and its task aborted, with the scan's last
//! opener.
//!
//! The physical optimizer rule that picks the scans that do so is
//! `start_early`'s; this module imports no other module of the crate.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use datafusion::datasource::physical_plan::FileOpenFuture;
use datafusion::error::{DataFusionError, Result as DfResult};
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};

use arrow::record_batch::RecordBatch;

/// The first batch of a file's read (none for an empty read), and the rest
/// of its stream, unpolled since.
type Started = (
    Option<DfResult<RecordBatch>>,
    BoxStream<'static, DfResult<RecordBatch>>,
);

/// A spawned task, aborted when dropped, awaited as its handle.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T> std::future::Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

/// One started read: the task, until a stream takes it. Dropping the slot
/// (with the scan's last opener) or the stream that took it aborts the
/// task.
pub(crate) struct Slot(Mutex<Option<AbortOnDrop<DfResult<Started>>>>);

/// The started reads of one scan, by file, byte range and request. The
/// scan's openers hold them; this only finds them. Two executions of one
/// plan at the same time share it: the later one starts nothing and may
/// take the earlier one's reads not yet taken (the same file and request,
/// so the same batches).
#[derive(Default)]
pub(crate) struct Prefetches(Mutex<HashMap<String, Weak<Slot>>>);

impl std::fmt::Debug for Prefetches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prefetches")
    }
}

impl Prefetches {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Weak<Slot>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts `reads` (each the read of the file its key names) on the
    /// current Tokio runtime, each up to its first batch, unless reads of
    /// this scan are already held (another partition of the same execution
    /// started them: those are given instead); nothing outside a runtime.
    /// Every partition keeps the slots for as long as its stream may open
    /// files, so a read lives until taken or until the scan's last stream
    /// is gone (a stream may take a file just as another ends).
    pub(crate) fn start_all(&self, reads: Vec<(String, FileOpenFuture)>) -> Vec<Arc<Slot>> {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Vec::new();
        };
        let mut map = self.map();
        // Reads of an earlier execution whose openers are gone.
        map.retain(|_, s| s.strong_count() > 0);
        if !map.is_empty() {
            return map.values().filter_map(Weak::upgrade).collect();
        }
        reads
            .into_iter()
            .map(|(key, open)| {
                let task = runtime.spawn(async move {
                    let stream = open.await?;
                    Ok(stream.into_future().await)
                });
                let slot = Arc::new(Slot(Mutex::new(Some(AbortOnDrop(task)))));
                map.insert(key, Arc::downgrade(&slot));
                slot
            })
            .collect()
    }

    /// The started read of the file `key` names, as the stream its opener
    /// would give, if one was started and is still held.
    pub(crate) fn take(&self, key: &str) -> Option<FileOpenFuture> {
        // The entry stays: while its opener holds it, the scan's reads
        // count as started, taken or not.
        let slot = self.map().get(key)?.upgrade()?;
        let task = slot.0.lock().unwrap_or_else(|p| p.into_inner()).take()?;
        Some(
            async move {
                let (first, rest) = task
                    .await
                    .map_err(|e| DataFusionError::External(Box::new(e)))??;
                Ok(futures::stream::iter(first).chain(rest).boxed())
            }
            .boxed(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int32Array;
    use arrow::datatypes::{DataType, Field, Schema};

    fn batch(v: i32) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, false)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from(vec![v]))]).unwrap()
    }

    fn open(values: Vec<i32>) -> FileOpenFuture {
        async move {
            let s = futures::stream::iter(values.into_iter().map(|v| Ok(batch(v))));
            Ok(s.boxed())
        }
        .boxed()
    }

    fn values(batches: Vec<RecordBatch>) -> Vec<i32> {
        batches
            .iter()
            .map(|b| {
                let a = b.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
                a.value(0)
            })
            .collect()
    }

    fn start(p: &Prefetches, key: &str, open: FileOpenFuture) -> Option<Arc<Slot>> {
        p.start_all(vec![(key.into(), open)]).pop()
    }

    #[test]
    fn one_partition_starts_the_reads_of_an_execution() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let p = Prefetches::default();
            let first = p.start_all(vec![
                ("a".into(), open(vec![1])),
                ("b".into(), open(vec![2])),
            ]);
            assert_eq!(first.len(), 2);
            let a = p.take("a").unwrap().await.unwrap();
            assert_eq!(values(a.map(|b| b.unwrap()).collect().await), vec![1]);
            // Another partition of the same execution starts nothing and
            // holds the reads started, taken or not.
            let second = p.start_all(vec![("b".into(), open(vec![3]))]);
            assert_eq!(second.len(), 2);
            drop(first);
            let b = p.take("b").unwrap().await.unwrap();
            assert_eq!(values(b.map(|b| b.unwrap()).collect().await), vec![2]);
            // The next execution, the openers gone, starts again.
            drop(second);
            let _third = start(&p, "a", open(vec![5])).unwrap();
            let a = p.take("a").unwrap().await.unwrap();
            assert_eq!(values(a.map(|b| b.unwrap()).collect().await), vec![5]);
        });
    }

    #[test]
    fn a_started_read_gives_every_batch_once() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let p = Prefetches::default();
            let held = start(&p, "f", open(vec![1, 2, 3])).unwrap();
            assert!(p.take("g").is_none());
            let s = p.take("f").unwrap().await.unwrap();
            let got: Vec<RecordBatch> = s.map(|b| b.unwrap()).collect().await;
            assert_eq!(values(got), vec![1, 2, 3]);
            // Taken once only.
            assert!(p.take("f").is_none());
            drop(held);
            // An empty read gives an empty stream.
            let _held = start(&p, "e", open(Vec::new())).unwrap();
            let s = p.take("e").unwrap().await.unwrap();
            assert_eq!(s.count().await, 0);
        });
    }

    #[test]
    fn a_read_whose_opener_is_gone_is_not_found() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let p = Prefetches::default();
            drop(start(&p, "f", open(vec![1])).unwrap());
            assert!(p.take("f").is_none());
            let failing: FileOpenFuture =
                async { Err(DataFusionError::Execution("bad file".into())) }.boxed();
            let _held = start(&p, "x", failing).unwrap();
            let err = p.take("x").unwrap().await.err().unwrap();
            assert!(err.to_string().contains("bad file"), "{err}");
        });
    }

    /// A read that never finishes, and what tells when it was dropped.
    fn endless() -> (FileOpenFuture, futures::channel::oneshot::Receiver<()>) {
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        let open = async move {
            let _alive = tx;
            futures::future::pending::<()>().await;
            Ok(futures::stream::empty().boxed())
        }
        .boxed();
        (open, rx)
    }

    /// Whether the read behind `dropped` ends within five seconds (a
    /// runtime worker drops an aborted task's future).
    async fn ends(mut dropped: futures::channel::oneshot::Receiver<()>) -> bool {
        for _ in 0..5000 {
            if dropped.try_recv().is_err() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        false
    }

    #[test]
    fn dropping_the_opener_or_the_taker_aborts_the_read() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let p = Prefetches::default();
            let (open, dropped) = endless();
            let held = start(&p, "f", open).unwrap();
            drop(held);
            assert!(ends(dropped).await, "the task was not aborted");
            let (open, dropped) = endless();
            let held = start(&p, "g", open).unwrap();
            let taken = p.take("g").unwrap();
            drop(taken);
            assert!(ends(dropped).await, "the taken task was not aborted");
            drop(held);
        });
    }

    #[test]
    fn outside_a_runtime_nothing_starts() {
        let p = Prefetches::default();
        assert!(start(&p, "f", open(vec![1])).is_none());
        assert!(p.take("f").is_none());
    }
}
