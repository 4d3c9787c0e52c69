//! What the calling thread has used: CPU time in user and kernel mode,
//! page faults and context switches, for `cat`'s debug line on how its
//! writer spends the run (busy copying, or waiting for a core).

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
    /// Times the thread gave up its core (waits).
    pub voluntary_switches: i64,
    /// Times the thread was taken off its core (contention).
    pub involuntary_switches: i64,
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
                minor_faults: ru.ru_minflt,
                voluntary_switches: ru.ru_nvcsw,
                involuntary_switches: ru.ru_nivcsw,
            };
        }
    }
    Usage::default()
}

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.3} s user, {:.3} s system, {} minor faults, {} waits, {} preemptions",
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
        let before = this_thread();
        let spin = std::time::Instant::now();
        let mut x = 0u64;
        while spin.elapsed().as_millis() < 50 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let after = this_thread();
        let busy = (after.user_s + after.system_s) - (before.user_s + before.system_s);
        assert!(busy >= 0.02, "{busy} s counted for 50 ms of spinning");
        // Another thread's work is not this thread's.
        let idle = this_thread();
        std::thread::spawn(|| {
            let spin = std::time::Instant::now();
            while spin.elapsed().as_millis() < 50 {
                std::hint::black_box(0u8);
            }
        })
        .join()
        .unwrap();
        let later = this_thread();
        assert!((later.user_s + later.system_s) - (idle.user_s + idle.system_s) < 0.03);
    }
}
