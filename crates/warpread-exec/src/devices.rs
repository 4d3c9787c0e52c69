//! Which devices reads decode on: every GPU of the host, some, or one. An
//! application opens one backend per device ([`open`]) and hands the list
//! to whatever spreads work over them (the DataFusion scans give each scan
//! partition one of them, [`for_partition`]).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::{Backend, BackendChoice, CpuBackend, CudaBackend, CudaOptions};

/// The devices asked for (`warpread.devices`, the CLI's `--devices`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Devices {
    /// Every device there is.
    #[default]
    All,
    /// These devices, by number (CUDA ordinal; for backends without one,
    /// their position in the list they were given in), in this order.
    List(Vec<usize>),
}

impl FromStr for Devices {
    type Err = Error;

    /// `all`, one number, or numbers separated by commas (`0,2`).
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("all") {
            return Ok(Self::All);
        }
        let mut list = Vec::new();
        for part in s.split(',') {
            let n: usize = part.trim().parse().map_err(|_| {
                Error::Unsupported(format!(
                    "devices `{s}`: expected all, a device number or numbers separated by commas"
                ))
            })?;
            if list.contains(&n) {
                return Err(Error::Unsupported(format!(
                    "devices `{s}`: device {n} named twice"
                )));
            }
            list.push(n);
        }
        Ok(Self::List(list))
    }
}

impl fmt::Display for Devices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::All => f.write_str("all"),
            Self::List(l) => {
                let names: Vec<String> = l.iter().map(|n| n.to_string()).collect();
                f.write_str(&names.join(","))
            }
        }
    }
}

/// The number a backend at `position` of a list goes by.
fn number(backend: &dyn Backend, position: usize) -> usize {
    backend.device_ordinal().unwrap_or(position)
}

impl Devices {
    /// The backends of `all` these devices name, in the order named; an
    /// error names a device `all` does not hold.
    pub fn pick(&self, all: &[Arc<dyn Backend>]) -> Result<Vec<Arc<dyn Backend>>> {
        match self {
            Self::All => Ok(all.to_vec()),
            Self::List(list) => list
                .iter()
                .map(|&n| {
                    all.iter()
                        .enumerate()
                        .find(|(i, b)| number(b.as_ref(), *i) == n)
                        .map(|(_, b)| Arc::clone(b))
                        .ok_or_else(|| {
                            let have: Vec<String> = all
                                .iter()
                                .enumerate()
                                .map(|(i, b)| number(b.as_ref(), i).to_string())
                                .collect();
                            Error::Unsupported(format!(
                                "device {n} is not one of this session's devices ({})",
                                have.join(", ")
                            ))
                        })
                })
                .collect(),
        }
    }
}

/// One backend per device for `choice`: the CPU reference alone for
/// `Cpu` (and for `Auto` without a usable device, logged); for CUDA, a
/// backend with `options` on each device `devices` names, opened side by
/// side (each creates a context). An error names a device the host does
/// not have.
pub fn open(
    choice: BackendChoice,
    options: &CudaOptions,
    devices: &Devices,
) -> Result<Vec<Arc<dyn Backend>>> {
    let cpu = || -> Vec<Arc<dyn Backend>> { vec![Arc::new(CpuBackend::new())] };
    if choice == BackendChoice::Cpu {
        return Ok(cpu());
    }
    let count = match crate::gpu::device_count() {
        Ok(n) => n,
        Err(why) if choice == BackendChoice::Auto => {
            tracing::warn!("no usable CUDA device ({why}): decoding on the CPU");
            return Ok(cpu());
        }
        Err(why) => return Err(Error::CudaUnavailable(why)),
    };
    let ordinals = match devices {
        Devices::All => (0..count).collect(),
        Devices::List(list) => {
            if list.is_empty() {
                return Err(Error::Unsupported("devices: none named".into()));
            }
            if let Some(&n) = list.iter().find(|&&n| n >= count) {
                return Err(Error::Unsupported(format!(
                    "device {n}: this host has {count} CUDA device(s)"
                )));
            }
            list.clone()
        }
    };
    let options = &shared_by(options, ordinals.len());
    let opened: Vec<Result<CudaBackend>> = std::thread::scope(|s| {
        let handles: Vec<_> = ordinals
            .iter()
            .map(|&o| s.spawn(move || CudaBackend::with_options(o, options.clone())))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Error::CudaUnavailable("opening a device panicked".into()))
                })
            })
            .collect()
    });
    let mut out: Vec<Arc<dyn Backend>> = Vec::with_capacity(opened.len());
    for b in opened {
        match b {
            Ok(b) => out.push(Arc::new(b)),
            Err(e) if choice == BackendChoice::Auto => {
                tracing::warn!("no usable CUDA device ({e}): decoding on the CPU");
                return Ok(cpu());
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// `options` for each of `n` backends of one process: what they leave
/// unset of the host's resources is divided among them, as each would
/// otherwise plan with all of the host's. The pinned pool's cap is split
/// `n` ways. The host threads of inflate's host share get the host's
/// threads over `n²`: each backend's share runs beside the other
/// backends' and beside the host work of every scan, and on the 4-GPU
/// host (64 cores, TPC-H SF 30 Q1, Q6 and Q14) 4 threads a device read in
/// 0.730 s against 0.865 s with 16 and 0.823 s with 2, while two devices
/// (32 cores) read as fast with 8 as with 16 (benchmarks/devices.md). A
/// value set is kept: the caller gave it per backend.
pub fn shared_by(options: &CudaOptions, n: usize) -> CudaOptions {
    let n = n.max(1);
    let mut o = options.clone();
    if n > 1 {
        if o.host_threads.is_none() {
            let share = rayon::current_num_threads() / n.saturating_mul(n);
            o.host_threads = Some(share.max(1));
        }
        if o.pinned_pool_bytes.is_none() {
            o.pinned_pool_bytes = Some((crate::gpu::pinned_pool::host_default_cap() / n).max(1));
        }
    }
    o
}

/// The backend of `list` that scan partition `partition` decodes on:
/// partitions take the devices in turn, so `n` devices share `k * n`
/// partitions evenly (`None` for an empty list).
pub fn for_partition(list: &[Arc<dyn Backend>], partition: usize) -> Option<&Arc<dyn Backend>> {
    list.get(partition.checked_rem(list.len())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_of_one_host_divide_what_is_left_unset() {
        let alone = shared_by(&CudaOptions::default(), 1);
        assert_eq!(alone, CudaOptions::default());
        let four = shared_by(&CudaOptions::default(), 4);
        let threads = four.host_threads.unwrap();
        assert_eq!(threads, (rayon::current_num_threads() / 16).max(1));
        let cap = crate::gpu::pinned_pool::host_default_cap();
        assert!(four.pinned_pool_bytes.unwrap() <= cap / 4 + 1);
        let set = CudaOptions::default()
            .with_host_threads(Some(7))
            .with_pinned_pool_bytes(Some(0));
        let kept = shared_by(&set, 4);
        assert_eq!(
            (kept.host_threads, kept.pinned_pool_bytes),
            (Some(7), Some(0))
        );
    }

    #[test]
    fn devices_parse_and_print() {
        assert_eq!("all".parse::<Devices>().unwrap(), Devices::All);
        assert_eq!(" ALL ".parse::<Devices>().unwrap(), Devices::All);
        assert_eq!("1".parse::<Devices>().unwrap(), Devices::List(vec![1]));
        let two: Devices = "2, 0".parse().unwrap();
        assert_eq!(two, Devices::List(vec![2, 0]));
        assert_eq!(two.to_string(), "2,0");
        for bad in ["", "x", "0,,1", "-1", "0,0"] {
            let e = bad.parse::<Devices>().unwrap_err().to_string();
            assert!(e.contains("devices"), "{bad}: {e}");
        }
    }

    #[test]
    fn pick_takes_devices_by_number_in_the_order_named() {
        let all: Vec<Arc<dyn Backend>> = (0..3)
            .map(|_| Arc::new(CpuBackend::new()) as Arc<dyn Backend>)
            .collect();
        let got = Devices::List(vec![2, 0]).pick(&all).unwrap();
        assert!(Arc::ptr_eq(&got[0], &all[2]) && Arc::ptr_eq(&got[1], &all[0]));
        assert_eq!(Devices::All.pick(&all).unwrap().len(), 3);
        let Err(e) = Devices::List(vec![3]).pick(&all) else {
            panic!("device 3 picked");
        };
        let e = e.to_string();
        assert!(e.contains("device 3") && e.contains("0, 1, 2"), "{e}");
    }

    #[test]
    fn partitions_take_the_devices_in_turn() {
        let all: Vec<Arc<dyn Backend>> = (0..2)
            .map(|_| Arc::new(CpuBackend::new()) as Arc<dyn Backend>)
            .collect();
        for p in 0..6 {
            assert!(Arc::ptr_eq(for_partition(&all, p).unwrap(), &all[p % 2]));
        }
        assert!(for_partition(&[], 0).is_none());
    }

    #[test]
    fn cpu_opens_one_backend_and_a_missing_device_is_an_error() {
        let cpu = open(BackendChoice::Cpu, &CudaOptions::default(), &Devices::All).unwrap();
        assert_eq!(cpu.len(), 1);
        assert_eq!(cpu[0].name(), "cpu");
        let auto = open(BackendChoice::Auto, &CudaOptions::default(), &Devices::All).unwrap();
        assert!(!auto.is_empty());
        let far = Devices::List(vec![1000]);
        match open(BackendChoice::Cuda, &CudaOptions::default(), &far) {
            Err(e) => assert!(!e.to_string().is_empty()),
            Ok(_) => panic!("device 1000 opened"),
        }
    }
}
