//! Work on threads of the caller's own rather than rayon's, for callers
//! that hold something other work may wait for (a CUDA lane) or whose work
//! must not queue behind the pool's (CRC32 checks beside decode rounds): a
//! rayon worker joining parallel work picks up unrelated tasks meanwhile.

use std::sync::Mutex;

/// `f` of every item, in item order, on up to `threads` threads: the
/// caller's and scoped ones, each taking the next item until none is left
/// (so uneven items balance themselves). A thread that cannot be spawned
/// leaves its share to the others; a panic in `f` reaches the caller.
pub fn map<T: Send, R: Send>(items: Vec<T>, threads: usize, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let n = items.len();
    let queue = Mutex::new(items.into_iter().enumerate().rev().collect::<Vec<_>>());
    let done = Mutex::new(Vec::with_capacity(n));
    let work = || {
        loop {
            let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let Some((i, item)) = next else { break };
            let r = f(item);
            done.lock().unwrap_or_else(|p| p.into_inner()).push((i, r));
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads.min(n) {
            if std::thread::Builder::new().spawn_scoped(s, work).is_err() {
                break;
            }
        }
        work();
    });
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_item_order_whatever_the_threads() {
        let items: Vec<u64> = (0..200).collect();
        for threads in [0, 1, 3, 16, 500] {
            let got = map(items.clone(), threads, |x| x * x);
            assert_eq!(got, items.iter().map(|x| x * x).collect::<Vec<_>>());
        }
        assert!(map(Vec::<u8>::new(), 4, |x| x).is_empty());
    }
}
