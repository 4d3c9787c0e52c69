//! A read's groups (stripes or row groups of about 256 MiB) in flight
//! together, results in group order.
//!
//! One group runs read, decompress, decode and assemble in turn, and each
//! step leaves something idle: the disk while the GPU decodes, the GPU
//! while the cores assemble. With two groups in flight the next group's
//! reads and transfers overlap the current one's host work. Like the
//! column sets, groups run on scoped threads, never rayon tasks (see
//! [`column_sets`](super::column_sets) for why).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::error::Result;

/// Groups one read keeps in flight.
pub const IN_FLIGHT: usize = 2;

/// Overrides [`IN_FLIGHT`] (1: one group after another), for benchmarks
/// that compare both in one run.
pub const ENV_IN_FLIGHT: &str = "WARPREAD_GROUPS_IN_FLIGHT";

/// [`IN_FLIGHT`], or [`ENV_IN_FLIGHT`] when set to a positive number.
pub fn in_flight() -> usize {
    std::env::var(ENV_IN_FLIGHT)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(IN_FLIGHT)
}

/// Runs `read` for groups `0..n`, at most `width` at a time, taken in
/// order; returns the results in group order. After a group fails no new
/// group starts, and the first error in group order is returned (every
/// group before a failed one was started, so it is known).
pub fn run_ordered<T, F>(n: usize, width: usize, read: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(usize) -> Result<T> + Sync,
{
    if n <= 1 || width <= 1 {
        return (0..n).map(read).collect();
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let done: Mutex<Vec<Option<Result<T>>>> = Mutex::new((0..n).map(|_| None).collect());
    let worker = || {
        while !failed.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            let r = read(i);
            if r.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            done.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
        }
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (1..width.min(n)).map(|_| s.spawn(worker)).collect();
        worker();
        for h in handles {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
    });
    let mut out = Vec::with_capacity(n);
    for r in done.into_inner().unwrap_or_else(|p| p.into_inner()) {
        match r {
            Some(r) => out.push(r?),
            // Only groups after a failed one are never started.
            None => unreachable!("a group was skipped without an earlier failure"),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn keeps_order_and_reports_the_first_error() {
        let v = run_ordered(9, 3, |i| Ok(i * 10)).unwrap();
        assert_eq!(v, (0..9).map(|i| i * 10).collect::<Vec<_>>());
        assert_eq!(run_ordered(0, 2, Ok).unwrap(), Vec::<usize>::new());
        let e = run_ordered(9, 3, |i| {
            if i >= 4 {
                Err(Error::InvalidPlan(format!("group {i}")))
            } else {
                Ok(i)
            }
        })
        .unwrap_err();
        assert!(e.to_string().contains("group 4"), "{e}");
        assert_eq!(run_ordered(3, 1, |i| Ok(i + 1)).unwrap(), vec![1, 2, 3]);
    }
}
