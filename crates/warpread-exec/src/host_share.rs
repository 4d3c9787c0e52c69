//! Which jobs of an inflate stage the CUDA backend hands to the host's
//! cores instead of the device.
//!
//! One warp inflates one page, and a warp is slow: about 20 MB/s of output
//! on literal-heavy data, against about 300 MB/s for one core running
//! zlib-rs. A stage of a few dozen large pages (the taxi table's two
//! timestamp columns: 54 pages of 1 MiB each) therefore takes a warp's time
//! for one page (64 ms measured), however idle the rest of the GPU is, while
//! the host's cores would inflate all of them in a fifth of that. Thousands of
//! pages fill the GPU and it wins by far. [`split`] weighs the two with a
//! simple throughput model and picks how many of the largest jobs go to the
//! host so that the stage ends soonest.

/// Throughputs the split assumes, in output bytes per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    /// One warp inflating one job.
    pub warp: f64,
    /// The whole device, when it has jobs enough to fill it.
    pub device: f64,
    /// One host core.
    pub core: f64,
    /// Host time is counted this many times over: the cores also do the
    /// read's other host work, and a misjudged host share costs a stage
    /// more than a misjudged device share does.
    pub host_penalty: f64,
    /// The host takes jobs only when the stage's slowest job would run this
    /// many times longer than the device needs for all of it at full
    /// occupancy: a device left mostly idle. A stage whose jobs fill the
    /// device (a lineitem SF 10 group: ~900 pages of 1 MiB, the tail warp
    /// ~2x the full-device time) stays there, as its read is bound by host
    /// work that a host share would only slow down (measured on the H100
    /// host: 8.33 GB/s with such a share against 9.13 without).
    pub min_idle: f64,
}

impl Model {
    /// Inflate on an H100 against zlib-rs on the same host's cores: one
    /// warp at ~20 MB/s on literal-heavy pages (benchmarks/deflate.md:
    /// 128 KiB chunks at 18-28 MB/s per warp with the SMs full), the
    /// device at ~40 GB/s on such data, one core at ~300 MB/s.
    pub const INFLATE: Model = Model {
        warp: 20e6,
        device: 40e6 * 1e3,
        core: 300e6,
        host_penalty: 2.0,
        min_idle: 8.0,
    };

    fn device_time(&self, largest: u64, total: u64) -> f64 {
        if total == 0 {
            return 0.0;
        }
        (largest as f64 / self.warp).max(total as f64 / self.device)
    }

    fn host_time(&self, largest: u64, total: u64, threads: usize) -> f64 {
        if total == 0 {
            return 0.0;
        }
        let spread = total as f64 / (threads.max(1) as f64 * self.core);
        self.host_penalty * spread.max(largest as f64 / self.core)
    }
}

/// The indices of the jobs (by their output `sizes` in bytes) to run on
/// `threads` host threads: the `k` largest, for the `k` with the soonest
/// estimated end of the stage (device and host working side by side); ties
/// keep jobs on the device. Empty when the device alone is soonest, or
/// when the jobs keep the device busy enough (`Model::min_idle`).
pub fn split(sizes: &[u64], threads: usize, model: &Model) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
    let total: u64 = sizes.iter().sum();
    let largest = order.first().map_or(0, |&i| sizes[i]);
    let full = total as f64 / model.device;
    if largest as f64 / model.warp <= model.min_idle * full {
        return Vec::new();
    }
    let mut best = (model.device_time(largest, total), 0usize);
    let mut host = 0u64;
    for (k, &i) in order.iter().enumerate() {
        host += sizes[i];
        let next = order.get(k + 1).map_or(0, |&j| sizes[j]);
        let t = model
            .device_time(next, total - host)
            .max(model.host_time(largest, host, threads));
        if t < best.0 {
            best = (t, k + 1);
        }
    }
    let mut chosen = order[..best.1].to_vec();
    chosen.sort_unstable();
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_few_large_pages_go_to_the_host() {
        // The taxi timestamps: 54 pages of 1 MiB, 16 cores.
        let sizes = vec![MIB; 54];
        assert_eq!(split(&sizes, 16, &Model::INFLATE).len(), 54);
    }

    #[test]
    fn thousands_of_pages_stay_on_the_device() {
        // A lineitem SF 10 group: ~900 pages of 1 MiB per stage, of sizes
        // that vary a little (a host share of the largest would otherwise
        // look like it shortened the tail).
        let sizes: Vec<u64> = (0..900).map(|i| MIB - i * 512).collect();
        assert!(split(&sizes, 16, &Model::INFLATE).is_empty());
        assert!(split(&sizes, 64, &Model::INFLATE).is_empty());
        assert!(split(&[], 16, &Model::INFLATE).is_empty());
    }

    #[test]
    fn only_the_outsized_jobs_of_a_skewed_stage_move() {
        // 2000 pages of 64 KiB fill the device; two 4 MiB dictionary pages
        // would each keep one warp busy for ~200 ms.
        let mut sizes = vec![64 << 10; 2000];
        sizes[7] = 4 * MIB;
        sizes[1500] = 4 * MIB;
        assert_eq!(split(&sizes, 16, &Model::INFLATE), vec![7, 1500]);
    }

    #[test]
    fn without_host_threads_to_spare_the_device_keeps_more() {
        let sizes = vec![MIB; 200];
        let many = split(&sizes, 64, &Model::INFLATE).len();
        let few = split(&sizes, 2, &Model::INFLATE).len();
        assert!(few < many, "{few} host jobs with 2 threads, {many} with 64");
    }
}
