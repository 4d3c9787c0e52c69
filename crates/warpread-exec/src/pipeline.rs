//! Read groups in flight side by side: the next group starts once the
//! current one has passed its *front* (file reads and decompression).
//!
//! A read group's phases load different resources: its front the bus and
//! the device (compressed pages up, an inflate kernel, pages down), its back
//! the host's cores (value conversion, CRC32 checks, assembly). Run one
//! after another, the device idles through every group's back and the
//! cores through every front. With a second group started as the first
//! reaches its back, one's front runs beneath the other's back. Groups are
//! started in order and their results returned in order, so the output is
//! the same whatever the depth.
//!
//! Groups run on scoped threads, not rayon tasks, for the reason column sets
//! do (`column_sets`): a rayon worker waiting for a group could steal work
//! that waits for a CUDA lane it holds.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::sync::{Condvar, Mutex};

use crate::error::Result;

/// Groups a read keeps in flight unless told otherwise: 1. Not 2 on either
/// backend: the CPU's cores are busy with any one group, and on the H100
/// two TPC-H lineitem SF 10 Parquet groups in flight read no faster than
/// one at a time (10.1 against 10.2 GB/s, interleaved; benchmarks/parquet-read.md):
/// their downloads contend for the bus, which one group already keeps busy.
pub const GROUPS_IN_FLIGHT: usize = 1;

/// A group's front, as its column sets pass it: the group after it starts
/// once every set has [`arrive`](Self::arrive)d, or once the group ends,
/// whichever comes first (a group that fails early must not hold up the
/// read).
#[derive(Debug)]
pub struct Front {
    state: Mutex<FrontState>,
    opened: Condvar,
}

#[derive(Debug)]
struct FrontState {
    /// Sets still to arrive.
    remaining: usize,
    open: bool,
}

impl Default for Front {
    fn default() -> Self {
        Self::new()
    }
}

impl Front {
    /// A front of one party, closed.
    pub fn new() -> Self {
        Self {
            state: Mutex::new(FrontState {
                remaining: 1,
                open: false,
            }),
            opened: Condvar::new(),
        }
    }

    /// Sets how many parties (column sets) must arrive before the front
    /// opens; called before any of them runs. Zero opens it.
    pub fn parties(&self, n: usize) {
        let mut s = self.lock();
        s.remaining = n;
        if n == 0 {
            s.open = true;
            self.opened.notify_all();
        }
    }

    /// One party has passed the front.
    pub fn arrive(&self) {
        let mut s = self.lock();
        s.remaining = s.remaining.saturating_sub(1);
        if s.remaining == 0 && !s.open {
            s.open = true;
            self.opened.notify_all();
        }
    }

    /// Opens the front whatever has arrived (the group has ended).
    pub fn open(&self) {
        let mut s = self.lock();
        s.open = true;
        self.opened.notify_all();
    }

    /// Whether the front is open.
    pub fn is_open(&self) -> bool {
        self.lock().open
    }

    fn wait(&self) {
        let mut s = self.lock();
        while !s.open {
            s = self.opened.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FrontState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `read` of every group, in group order, with up to `depth` groups in
/// flight: group `k + 1` starts once group `k`'s [`Front`] opens, and at
/// most `depth` run at once. With `depth` 1 (or one group) every group runs
/// on the caller's thread, one after another. The first error in group
/// order is returned, and no group starts after a group has failed; a
/// panic in a group reaches the caller.
pub fn run<G: Send, R: Send>(
    groups: Vec<G>,
    depth: usize,
    read: impl Fn(G, &Front) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let mut done = Vec::with_capacity(groups.len());
    let mut failed = None;
    run_each(groups, depth, read, |r| match r {
        Ok(r) => {
            done.push(r);
            ControlFlow::Continue(())
        }
        Err(e) => {
            failed = Some(e);
            ControlFlow::Break(())
        }
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(done),
    }
}

/// [`run`], handing each group's result to `deliver` in group order as
/// soon as it and every group before it have finished, so a caller can
/// stream results while later groups decode. `deliver` may block (the
/// groups in flight go on meanwhile); when it returns `Break`, or after
/// it is handed an error, no group starts and the groups in flight are
/// waited for and dropped.
pub fn run_each<G: Send, R: Send>(
    groups: impl IntoIterator<Item = G>,
    depth: usize,
    read: impl Fn(G, &Front) -> Result<R> + Sync,
    mut deliver: impl FnMut(Result<R>) -> ControlFlow<()>,
) {
    let mut groups = groups.into_iter().peekable();
    if depth <= 1 {
        for g in groups {
            let front = Front::new();
            let r = read(g, &front);
            let err = r.is_err();
            if deliver(r).is_break() || err {
                return;
            }
        }
        return;
    }
    let read = &read;
    let failed = std::sync::atomic::AtomicBool::new(false);
    let failed = &failed;
    std::thread::scope(|s| {
        let mut flight: VecDeque<std::thread::ScopedJoinHandle<'_, Result<R>>> = VecDeque::new();
        let mut last: Option<std::sync::Arc<Front>> = None;
        let mut stopped = false;
        let join = |h: std::thread::ScopedJoinHandle<'_, Result<R>>| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        };
        // Hands over the oldest group's result; false once the read stops.
        let mut hand = |r: Result<R>, stopped: &mut bool| {
            if !*stopped {
                let err = r.is_err();
                *stopped = deliver(r).is_break() || err;
            }
            !*stopped
        };
        while let Some(g) = groups.next() {
            if flight.len() >= depth
                && let Some(h) = flight.pop_front()
                && !hand(join(h), &mut stopped)
            {
                break;
            }
            if let Some(front) = &last {
                front.wait();
            }
            if failed.load(std::sync::atomic::Ordering::Acquire) {
                break;
            }
            // The last group runs here: no thread to spawn and join.
            if groups.peek().is_none() && flight.is_empty() {
                let front = Front::new();
                hand(read(g, &front), &mut stopped);
                return;
            }
            let front = std::sync::Arc::new(Front::new());
            let mine = front.clone();
            // The group stays here until its thread takes it, so that a
            // thread that cannot be spawned leaves it to run inline.
            let slot = std::sync::Arc::new(Mutex::new(Some(g)));
            let theirs = slot.clone();
            let task = move || {
                // Opens the front when the group ends, panics included (the
                // loop below may be waiting for it), after `failed` is set.
                let _open = OpenOnDrop(&mine);
                let g = theirs.lock().unwrap_or_else(|p| p.into_inner()).take();
                let r = read(g.expect("a group is taken once"), &mine);
                if r.is_err() {
                    failed.store(true, std::sync::atomic::Ordering::Release);
                }
                r
            };
            match std::thread::Builder::new().spawn_scoped(s, task) {
                Ok(h) => flight.push_back(h),
                Err(e) => {
                    tracing::debug!("no thread for a read group ({e}); reading it here");
                    while let Some(h) = flight.pop_front() {
                        if !hand(join(h), &mut stopped) {
                            break;
                        }
                    }
                    let g = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
                    if let Some(g) = g
                        && !stopped
                    {
                        hand(read(g, &front), &mut stopped);
                    }
                    front.open();
                }
            }
            last = Some(front);
        }
        while let Some(h) = flight.pop_front() {
            let r = join(h);
            hand(r, &mut stopped);
        }
    })
}

struct OpenOnDrop<'a>(&'a Front);

impl Drop for OpenOnDrop<'_> {
    fn drop(&mut self) {
        self.0.open();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn results_come_in_group_order_at_every_depth() {
        for depth in [0, 1, 2, 3, 8] {
            let got = run((0..10u64).collect(), depth, |g, front| {
                front.parties(2);
                front.arrive();
                // Later groups finish first when they can.
                std::thread::sleep(Duration::from_millis(10 - g));
                front.arrive();
                Ok(g * g)
            })
            .unwrap();
            assert_eq!(got, (0..10u64).map(|g| g * g).collect::<Vec<_>>());
        }
    }

    #[test]
    fn the_next_group_waits_for_the_front_and_depth_bounds_the_flight() {
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let fronts = Mutex::new(Vec::new());
        run((0..6usize).collect(), 2, |g, front| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            // The previous group's front was open before this one started.
            fronts.lock().unwrap().push(g);
            std::thread::sleep(Duration::from_millis(5));
            front.arrive();
            std::thread::sleep(Duration::from_millis(20));
            running.fetch_sub(1, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
        assert_eq!(*fronts.lock().unwrap(), (0..6).collect::<Vec<_>>());
        let most = most.load(Ordering::SeqCst);
        assert!(most <= 2, "{most} groups ran at once with depth 2");
        assert_eq!(most, 2, "groups never overlapped");
    }

    #[test]
    fn a_failed_group_ends_the_read_with_its_error_and_starts_no_more() {
        let started = AtomicUsize::new(0);
        let err = run((0..20usize).collect(), 2, |g, _front| {
            started.fetch_add(1, Ordering::SeqCst);
            // No arrival: the front opens when the group ends.
            if g == 3 {
                return Err(Error::InvalidPlan(format!("group {g}")));
            }
            std::thread::sleep(Duration::from_millis(2));
            Ok(g)
        })
        .unwrap_err();
        assert!(err.to_string().contains("group 3"), "{err}");
        assert!(started.load(Ordering::SeqCst) <= 5);
    }

    #[test]
    fn run_each_delivers_while_later_groups_run_and_stops_on_break() {
        let started = AtomicUsize::new(0);
        let mut got = Vec::new();
        run_each(
            0..100usize,
            3,
            |g, front| {
                started.fetch_add(1, Ordering::SeqCst);
                front.arrive();
                std::thread::sleep(Duration::from_millis(2));
                Ok(g)
            },
            |r| {
                got.push(r.unwrap());
                if got.len() == 4 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(got, vec![0, 1, 2, 3]);
        // Group 4 was handed over only after 3 more had started.
        let started = started.load(Ordering::SeqCst);
        assert!((4..=8).contains(&started), "{started} groups started");
    }

    #[test]
    fn run_each_hands_over_the_first_error_in_order_and_nothing_after() {
        for depth in [1, 2, 4] {
            let mut got = Vec::new();
            run_each(
                0..10usize,
                depth,
                |g, _front| {
                    if g == 5 || g == 7 {
                        Err(Error::InvalidPlan(format!("group {g}")))
                    } else {
                        Ok(g)
                    }
                },
                |r| {
                    got.push(r.map_err(|e| e.to_string()));
                    ControlFlow::Continue(())
                },
            );
            assert_eq!(got.len(), 6, "depth {depth}: {got:?}");
            assert!(got[5].as_ref().unwrap_err().contains("group 5"));
        }
    }

    #[test]
    fn fronts_open_on_arrivals_or_parties_of_zero() {
        let f = Front::new();
        f.parties(3);
        f.arrive();
        f.arrive();
        assert!(!f.is_open());
        f.arrive();
        assert!(f.is_open());
        let z = Front::new();
        z.parties(0);
        assert!(z.is_open());
        let one = Front::new();
        one.arrive();
        assert!(one.is_open());
    }

    #[test]
    #[should_panic(expected = "boom")]
    fn a_panic_in_a_group_reaches_the_caller() {
        let _ = run((0..4usize).collect(), 2, |g, _front| {
            if g == 1 {
                panic!("boom");
            }
            Ok(g)
        });
    }
}
