//! What the calling thread has used since it started: CPU time in user and
//! kernel mode, page faults and context switches. `cat` logs the
//! difference over its read and write, to tell a run whose writer is busy
//! (in the kernel, copying into the page cache) from one whose writer
//! blocks (waiting for batches, or throttled).

use std::fmt;

/// One thread's resource use so far.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    /// Seconds in user mode.
    pub user_s: f64,
    /// Seconds in the kernel.
    pub system_s: f64,
    /// Page faults served without I/O.
    pub minor_faults: i64,
    /// Voluntary context switches: the thread blocked (on a batch, a
    /// lock, a throttled write, a driver call).
    pub voluntary_switches: i64,
    /// Involuntary context switches: the thread was taken off its core.
    pub involuntary_switches: i64,
}

impl Usage {
    /// What was used between `earlier` and `self`.
    pub fn since(self, earlier: Usage) -> Usage {
        Usage {
            user_s: self.user_s - earlier.user_s,
            system_s: self.system_s - earlier.system_s,
            minor_faults: self.minor_faults - earlier.minor_faults,
            voluntary_switches: self.voluntary_switches - earlier.voluntary_switches,
            involuntary_switches: self.involuntary_switches - earlier.involuntary_switches,
        }
    }
}

/// The calling thread's use, or zeros where the platform has no per-thread
/// count.
pub fn this_thread() -> Usage {
    #[cfg(target_os = "linux")]
    {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: getrusage writes one `rusage` into the memory we own.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) } == 0 {
            // SAFETY: a zero return means the kernel filled it.
            let ru = unsafe { ru.assume_init() };
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            return Usage {
                user_s: secs(ru.ru_utime),
                system_s: secs(ru.ru_stime),
                minor_faults: count(ru.ru_minflt),
                voluntary_switches: count(ru.ru_nvcsw),
                involuntary_switches: count(ru.ru_nivcsw),
            };
        }
    }
    Usage::default()
}

/// A `c_long` count as `i64` (it is 32 bits on some targets).
#[cfg(target_os = "linux")]
#[allow(clippy::useless_conversion)]
fn count(n: libc::c_long) -> i64 {
    i64::from(n)
}

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.3} s user, {:.3} s system, {} minor faults, {} voluntary and {} involuntary switches",
            self.user_s,
            self.system_s,
            self.minor_faults,
            self.voluntary_switches,
            self.involuntary_switches
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn a_busy_thread_counts_its_own_time_only() {
        let cpu = |u: Usage| u.user_s + u.system_s;
        // Spins until 20 ms of CPU time are counted: on a loaded machine
        // that takes longer than 20 ms of wall time, never forever.
        let before = cpu(this_thread());
        let spin = std::time::Instant::now();
        let mut x = 0u64;
        while cpu(this_thread()) - before < 0.02 && spin.elapsed().as_secs() < 20 {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        assert!(
            cpu(this_thread()) - before >= 0.02,
            "20 s of spinning counted as under 20 ms"
        );
        // Another thread's work is not this thread's.
        let idle = this_thread();
        assert!(idle.since(idle).user_s == 0.0 && idle.since(idle).minor_faults == 0);
        std::thread::spawn(|| {
            let spin = std::time::Instant::now();
            while spin.elapsed().as_millis() < 50 {
                std::hint::black_box(0u8);
            }
        })
        .join()
        .unwrap();
        assert!(cpu(this_thread()) - cpu(idle) < 0.03);
    }
}
