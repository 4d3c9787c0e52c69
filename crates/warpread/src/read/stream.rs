//! [`StreamBuilder`]: an async, streaming reader of an object in any
//! [`ObjectStore`], shaped like arrow-rs's `ParquetRecordBatchStreamBuilder`
//! over a `ParquetObjectReader`.
//!
//! The footer is fetched and awaited (a tail of
//! [`GroupedFile::TAIL_GUESS`] bytes, then the rest of a longer footer);
//! each read group's byte ranges are fetched with one coalesced
//! `get_ranges` while the group before it decodes, and decoding runs on
//! tokio's blocking threads, so the stream never blocks the executor while
//! it waits for the store or the GPU. The decoders read the fetched bytes
//! through a [`Source::fetched`]; a read outside them (a prefetch that fell
//! short) is fetched and the step run again.

use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};

use super::builder::{Planned, Settings, settings_methods};
use super::file::or_unit_by_unit;
use super::{GroupedFile, ReadStats};
use crate::error::{Error, Result};
use crate::source::Source;

/// Times a step is run again after fetching the bytes it missed: a
/// prefetch is exact for footers and groups, so more means a bug or a
/// hostile file, and the read fails.
const MAX_REFETCHES: usize = 4;

/// An object being read: the store and the object's path.
#[derive(Debug, Clone)]
struct Object {
    store: Arc<dyn ObjectStore>,
    location: ObjectPath,
}

impl Object {
    async fn fetch_into(&self, src: &Source, ranges: &[Range<u64>]) -> Result<()> {
        fetch_into(&self.store, &self.location, src, ranges).await
    }
}

/// Fetches `ranges` of `location` (one coalesced `get_ranges`) and hands
/// them to `src` ([`Source::insert`]); give them back with
/// [`Source::evict`] once the step that reads them is done.
pub async fn fetch_into(
    store: &Arc<dyn ObjectStore>,
    location: &ObjectPath,
    src: &Source,
    ranges: &[Range<u64>],
) -> Result<()> {
    if ranges.is_empty() {
        return Ok(());
    }
    let got = store
        .get_ranges(location, ranges)
        .await
        .map_err(|e| Error::object_store(location.as_ref(), e))?;
    for (r, bytes) in ranges.iter().zip(got) {
        src.insert(r.start, bytes);
    }
    Ok(())
}

/// Ranges handed to a source by [`fetch_scoped`], given back
/// ([`Source::evict`]) when dropped: also when the future that fetched
/// them is cancelled, so a long-lived source (a cached file's) keeps only
/// its footer.
#[derive(Debug)]
pub struct FetchedRanges<'a> {
    src: &'a Source,
    ranges: Vec<Range<u64>>,
}

impl Drop for FetchedRanges<'_> {
    fn drop(&mut self) {
        self.src.evict(&self.ranges);
    }
}

/// [`fetch_into`], the ranges given back when the returned guard drops.
pub async fn fetch_scoped<'a>(
    store: &Arc<dyn ObjectStore>,
    location: &ObjectPath,
    src: &'a Source,
    ranges: Vec<Range<u64>>,
) -> Result<FetchedRanges<'a>> {
    fetch_into(store, location, src, &ranges).await?;
    Ok(FetchedRanges { src, ranges })
}

/// Runs `step` on one of tokio's blocking threads until it reads no byte
/// of `src` that was not fetched, fetching what it missed in between (at
/// most a few times: a prefetch is exact for footers and groups, so more
/// means a hostile file, and the step's own error is returned). Give back
/// the ranges fetched for the step before it ran; those fetched here
/// stay.
pub async fn run_fetching<T: Send + 'static>(
    store: &Arc<dyn ObjectStore>,
    location: &ObjectPath,
    src: &Source,
    step: impl Fn() -> Result<T> + Send + Sync + Clone + 'static,
) -> Result<T> {
    let mut rounds = 0;
    loop {
        let before = src.miss_count();
        let out = tokio::task::spawn_blocking(step.clone())
            .await
            .map_err(|e| Error::Unsupported(format!("a read task of {location} failed: {e}")))?;
        // Steps on one source (a cached file's, read by several scans)
        // share its misses: any miss while this one ran may have been its,
        // taken and fetched by another. Ranges fetched after a miss stay in
        // the source: a prefetch that fell short, rare and small.
        if src.miss_count() == before || rounds == MAX_REFETCHES {
            return out;
        }
        rounds += 1;
        let misses = src.take_misses();
        fetch_into(store, location, src, &misses).await?;
    }
}

/// The byte ranges `ranges` gives (a read group's), fetching the metadata
/// it reads to find them (ORC stripe footers) when it misses them: run
/// again after each fetch, a few times at most. What is fetched here stays
/// in the source, as in [`run_fetching`]: steps on one source share its
/// misses, and a miss fetched here may be another step's.
pub async fn ranges_fetching(
    store: &Arc<dyn ObjectStore>,
    location: &ObjectPath,
    src: &Source,
    ranges: impl Fn() -> Result<Vec<Range<u64>>>,
) -> Result<Vec<Range<u64>>> {
    let mut rounds = 0;
    loop {
        let before = src.miss_count();
        let out = ranges();
        if src.miss_count() == before || rounds == MAX_REFETCHES {
            return out;
        }
        rounds += 1;
        let misses = src.take_misses();
        fetch_into(store, location, src, &misses).await?;
    }
}

/// Opens `location` (of `size` bytes) in `store` as a source of fetched
/// ranges and parses its footer with `parse`: a tail of `tail_guess`
/// bytes (and the first 8) fetched first, then whatever a longer footer
/// needs. The footer's ranges stay in the source.
pub async fn open_fetched<T>(
    store: &Arc<dyn ObjectStore>,
    location: &ObjectPath,
    size: u64,
    format: &'static str,
    tail_guess: u64,
    parse: impl Fn(Source) -> Result<T>,
) -> Result<T> {
    let mut src = Source::fetched(location.to_string(), size, format);
    let tail = size.saturating_sub(tail_guess)..size;
    fetch_into(store, location, &src, &[0..size.min(8), tail]).await?;
    let mut tries = 0;
    loop {
        // A footer parses quickly: here rather than on a blocking thread.
        // The twin keeps what the parse missed.
        let twin = src.twin().expect("a fetched source has a twin");
        match parse(src) {
            Ok(file) => return Ok(file),
            Err(e) => {
                let misses = twin.take_misses();
                if misses.is_empty() || tries == MAX_REFETCHES {
                    return Err(e);
                }
                tries += 1;
                fetch_into(store, location, &twin, &misses).await?;
                src = twin;
            }
        }
    }
}

/// Builds an async [`Stream`] of record batches over an object in an
/// [`ObjectStore`]; see the format's alias (`ParquetStreamBuilder`,
/// `OrcStreamBuilder`). The stream must be polled inside a tokio runtime.
pub struct StreamBuilder<F: GroupedFile> {
    file: Arc<F>,
    object: Object,
    settings: Settings,
}

impl<F: GroupedFile> std::fmt::Debug for StreamBuilder<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamBuilder")
            .field("object", &self.object.location)
            .field("settings", &self.settings)
            .finish()
    }
}

impl<F: GroupedFile> StreamBuilder<F> {
    /// Opens `location` in `store`: asks its size, then fetches and parses
    /// the footer.
    pub async fn new(store: Arc<dyn ObjectStore>, location: ObjectPath) -> Result<Self> {
        let meta = store
            .head(&location)
            .await
            .map_err(|e| Error::object_store(location.as_ref(), e))?;
        Self::with_size(store, location, meta.size).await
    }

    /// Opens `location` in `store`, of `size` bytes (known from a listing:
    /// no request for it), fetching and parsing the footer.
    pub async fn with_size(
        store: Arc<dyn ObjectStore>,
        location: ObjectPath,
        size: u64,
    ) -> Result<Self> {
        let file = open_fetched(
            &store,
            &location,
            size,
            F::FORMAT,
            F::TAIL_GUESS,
            F::from_source,
        )
        .await?;
        Ok(Self {
            file: Arc::new(file),
            object: Object { store, location },
            settings: Settings::default(),
        })
    }

    settings_methods!();

    /// Plans the read (fetching the indexes it prunes with) and returns
    /// the stream; groups are fetched and decoded as it is polled.
    pub async fn build(self) -> Result<BatchStream> {
        let object = self.object;
        let file = self.file;
        let planning = file.planning_ranges(&self.settings.options)?;
        object.fetch_into(file.source(), &planning).await?;
        let settings = self.settings.clone();
        let planned = {
            let reading = file.clone();
            run_fetching(&object.store, &object.location, file.source(), move || {
                settings.plan(reading.clone()).map(Box::new)
            })
            .await?
        };
        file.source().evict(&planning);
        let read_ahead = self.settings.read_ahead;
        let schema = planned.shaper.schema.clone();
        let state = StreamState {
            planned,
            object,
            next: None,
            read_ahead,
        };
        let inner = futures::stream::try_unfold(state, |mut state| async move {
            match state.next_group().await? {
                Some(batches) => Ok(Some((
                    futures::stream::iter(batches.into_iter().map(Ok)),
                    state,
                ))),
                None => Ok(None),
            }
        })
        .map(|r: Result<_>| match r {
            Ok(s) => s.left_stream(),
            Err(e) => futures::stream::once(async move { Err(e) }).right_stream(),
        })
        .flatten()
        .boxed();
        Ok(BatchStream { schema, inner })
    }
}

/// A read group and the byte ranges it reads.
type Pending<F> = (<F as GroupedFile>::Group, Vec<Range<u64>>);

struct StreamState<F: GroupedFile> {
    planned: Box<Planned<F>>,
    object: Object,
    /// The next group, its ranges fetched (or being fetched).
    next: Option<Pending<F>>,
    read_ahead: usize,
}

impl<F: GroupedFile> StreamState<F> {
    /// The next group that `shaper` wants, with its byte ranges.
    async fn pop(&mut self) -> Result<Option<Pending<F>>> {
        let p = &mut self.planned;
        while !p.shaper.done() {
            let Some(group) = p.groups.pop_front() else {
                return Ok(None);
            };
            if p.shaper.wants(&p.file.group_span(&group)) {
                let (file, read) = (&p.file, &p.read);
                let ranges = ranges_fetching(
                    &self.object.store,
                    &self.object.location,
                    file.source(),
                    || file.group_ranges(&group, read),
                )
                .await?;
                return Ok(Some((group, ranges)));
            }
        }
        Ok(None)
    }

    async fn fetch_into(&self, ranges: &[Range<u64>]) -> Result<()> {
        self.object
            .fetch_into(self.planned.file.source(), ranges)
            .await
    }

    /// Fetches, decodes and shapes the next group that hands out rows.
    async fn next_group(&mut self) -> Result<Option<Vec<RecordBatch>>> {
        loop {
            let current = match self.next.take() {
                Some(c) => c,
                None => match self.pop().await? {
                    Some(c) => {
                        self.fetch_into(&c.1).await?;
                        c
                    }
                    None => return Ok(None),
                },
            };
            let (group, ranges) = current;
            let group = Arc::new(group);
            let decode = {
                let p = &self.planned;
                let (file, read, backend, group) = (
                    p.file.clone(),
                    p.read.clone(),
                    p.backend.clone(),
                    group.clone(),
                );
                let src = file.clone();
                let object = self.object.clone();
                async move {
                    run_fetching(&object.store, &object.location, src.source(), move || {
                        let mut stats = ReadStats::default();
                        let backend = backend.as_ref();
                        let first = |b: &dyn crate::exec::Backend, stats: &mut ReadStats| {
                            file.read_group(&group, &read, b, stats)
                        };
                        or_unit_by_unit(first, file.as_ref(), &group, &read, backend, &mut stats)
                            .map(|(b, rows)| (b, rows, stats))
                    })
                    .await
                }
            };
            // The next group's bytes come while this one decodes.
            let upcoming = if self.read_ahead > 0 {
                self.pop().await?
            } else {
                None
            };
            let (decoded, fetched) = match &upcoming {
                Some((_, r)) => {
                    let (d, f) = futures::join!(decode, self.fetch_into(r));
                    (d, f)
                }
                None => (decode.await, Ok(())),
            };
            self.planned.file.source().evict(&ranges);
            let (batches, rows, stats) = decoded?;
            fetched?;
            self.next = upcoming;
            self.planned.stats.add(&stats);
            let shaped = self.planned.shaper.shape(batches, &rows)?;
            if !shaped.is_empty() {
                return Ok(Some(shaped));
            }
            if self.planned.shaper.done() {
                return Ok(None);
            }
        }
    }
}

/// A streaming async read: a [`Stream`] of record batches in file order,
/// produced as read groups are fetched and decoded. Errors carry the
/// object, stripe or row group, column and byte offset.
pub struct BatchStream {
    schema: SchemaRef,
    inner: BoxStream<'static, Result<RecordBatch>>,
}

impl std::fmt::Debug for BatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchStream")
            .field("schema", &self.schema)
            .finish()
    }
}

impl BatchStream {
    /// The schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl Stream for BatchStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}
