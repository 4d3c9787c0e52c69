//! The `warpread.*` settings: a DataFusion `ConfigExtension`, so that a
//! session sets them with `SET warpread.join_key_sets = false`,
//! `SessionConfig::options_mut().set(..)` or `warpread sql --set`, and a
//! table with `CREATE EXTERNAL TABLE ... OPTIONS ('warpread.group_mib'
//! '256')` (a table's values override the session's for its scans).
//!
//! The physical optimizer rules read them from the `ConfigOptions` they are
//! given; a scan takes them, with its table's overrides, when its plan is
//! created, and keeps them: nothing is read from the environment or from
//! state shared between sessions.
//!
//! This module imports no other module of the crate, so every module may
//! import it.

use std::fmt;
use std::str::FromStr;

use datafusion::common::config::{ConfigEntry, ConfigExtension, ExtensionOptions};
use datafusion::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result as DfResult};

use crate::orc::ReadTuning;

/// Which backend a scan decodes on (`warpread.backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendSetting {
    /// The session's backend (its [`WarpreadConfig`](crate::WarpreadConfig)),
    /// the CPU for a session without one.
    #[default]
    Auto,
    /// The CPU reference, whatever the session holds.
    Cpu,
    /// The session's backend, which must be a CUDA one: planning fails
    /// otherwise (a CUDA context is the application's to create).
    Cuda,
}

impl FromStr for BackendSetting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "cuda" => Ok(Self::Cuda),
            _ => Err("expected cpu, cuda or auto".into()),
        }
    }
}

impl fmt::Display for BackendSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Cpu => "cpu",
            Self::Cuda => "cuda",
        })
    }
}

/// Which scans start reading when the plan is executed
/// (`warpread.prefetch`; see [`StartScansEarly`](crate::StartScansEarly)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Prefetch {
    /// None: every scan reads when first polled.
    Off,
    /// Scans on a device backend whose files no other scan of the plan
    /// reads.
    #[default]
    Alone,
    /// Every scan on a device backend.
    All,
}

impl FromStr for Prefetch {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "false" | "0" => Ok(Self::Off),
            "alone" | "true" | "1" => Ok(Self::Alone),
            "all" => Ok(Self::All),
            _ => Err("expected off, alone or all".into()),
        }
    }
}

impl fmt::Display for Prefetch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Off => "off",
            Self::Alone => "alone",
            Self::All => "all",
        })
    }
}

/// Every `warpread.*` setting. Defaults are the tuned values; each field's
/// doc says what it trades.
#[derive(Debug, Clone, PartialEq)]
pub struct WarpreadOptions {
    /// Where scans decode: `auto` the session's backend, `cpu` the CPU
    /// reference, `cuda` the session's backend, required to be CUDA.
    pub backend: BackendSetting,
    /// Which of the session's devices scans decode on: `all` (default),
    /// one device number or several (`0,2`); scan partitions take them in
    /// turn. Only a session created with several device backends
    /// ([`WarpreadConfig::with_devices`](crate::WarpreadConfig::with_devices))
    /// has more than one.
    pub devices: crate::exec::Devices,
    /// Partial aggregates over warpread scans run as aggregate programs on
    /// a backend without a device too (the CPU reference of the device's
    /// kernels, for tests); on the CPU DataFusion's own operators were
    /// faster.
    pub cpu_aggregates: bool,
    /// Partial aggregates over warpread scans run as one program on the
    /// scan's device where they can; off keeps DataFusion's operators.
    pub device_aggregates: bool,
    /// Scan partitions under a device aggregate: more overlap more reads
    /// with the per-batch launches, at more memory in flight.
    pub aggregate_scan_partitions: usize,
    /// Scans drop the rows that fail the filters operators publish while
    /// the query runs (a hash join's keys, a `TopK`'s cut-off): less work
    /// above the scan against the cost of evaluating them per row.
    pub dynamic_filters: bool,
    /// A scan's static pushed filters run on their own while they keep few
    /// rows (not only alongside a dynamic filter): cheaper operators above
    /// against filtering twice when they keep most rows.
    pub fixed_row_filters: bool,
    /// A dynamic filter keeping at least this share (0 to 1) of its sample
    /// of rows stops being applied in the scan (until its operator
    /// publishes a new one): lower gives up on weakly selective filters
    /// sooner. A join probe's lookup costs about what the join's own
    /// repartition and probe would, so only a filter that removes most rows
    /// pays: TPC-H SF 10 on the device, eight join queries, 5.87 s with
    /// 0.25 against 7.14 s with 0.75 (benchmarks/tpch.md).
    pub dynamic_filter_max_kept: f64,
    /// The same share for a filter tested against a join's build key set:
    /// a bit test costs about a nanosecond a row, far less than the
    /// repartitioning and probing a removed row spares, so such a filter
    /// stays until it keeps three rows in four.
    pub key_set_max_kept: f64,
    /// Batches of one scan stream whose dynamic filters are evaluated at
    /// once: more parallel filtering against more batches held. A device
    /// scan has 4 partitions for the host's 16 threads, and the filters'
    /// lookups are host work on its critical path: eight TPC-H SF 10 join
    /// queries took 11.25 s with one batch at a time against 5.87-7.14 s
    /// with four (benchmarks/tpch.md).
    pub dynamic_filters_in_flight: usize,
    /// Hash joins on integer keys record their build keys into an exact
    /// set the probe scan tests instead of DataFusion's hash lookup: a bit
    /// test a row against building the set.
    pub join_key_sets: bool,
    /// `LIKE` patterns of literal pieces in filters are evaluated by a
    /// substring search of their own (session-wide: filters are not a
    /// table's).
    pub fast_like: bool,
    /// Which scans start reading when the plan starts (`off`, `alone`,
    /// `all`): device time overlapped with the host building hash tables,
    /// against decoded groups held before they are consumed.
    pub prefetch: Prefetch,
    /// Groups of one scan partition in flight (the one consumed and those
    /// decoding meanwhile): overlap against memory.
    pub read_ahead: usize,
    /// Compressed MiB of stripes or row groups a scan reads and decodes in
    /// one go (unset: 256 MiB per scan read, the backend's choice within
    /// it): larger feeds the device more work per launch, smaller bounds
    /// memory. TPC-H SF 10 on Parquet GZIP, CUDA: 38.6 s in all with 256
    /// MiB scan reads against 44.4 s with 64 MiB (benchmarks/tpch.md).
    pub group_mib: Option<u64>,
    /// Read groups decoded side by side within one read (unset: the
    /// reader's default).
    pub groups_in_flight: Option<usize>,
    /// Scan partitions a table's scan reads with at most (unset: the
    /// backend's preference, four on CUDA, where a device decodes few large
    /// reads faster than many small ones; `0`: as many as DataFusion
    /// plans).
    pub scan_partitions: Option<usize>,
    /// Parquet: CRC-32s of pages that lie on the device are checked there
    /// (off: on the host).
    pub device_crc: bool,
    /// Parquet: inflated pages the host does not read stay on the device
    /// (needs `device_crc`; off: every page comes to the host).
    pub pages_on_device: bool,
    /// Parquet: byte-array dictionaries gathered by stages on every backend
    /// (`true`), on the host (`false`), or by stages where the pages lie on
    /// the device (`auto`).
    pub device_byte_dicts: Option<bool>,
    /// Parquet: dictionary-encoded Decimal128 chunks widened in the gather
    /// (off: on the host afterwards).
    pub widen_decimals: bool,
    /// A scan read that the device fails (a driver error, device memory
    /// even one stripe or row group at a time) is read again on the CPU
    /// reference, with a warning, instead of failing the query. Off, the
    /// query fails with the device's error, which names the file.
    pub cpu_fallback: bool,
}

impl Default for WarpreadOptions {
    fn default() -> Self {
        Self {
            backend: BackendSetting::Auto,
            devices: crate::exec::Devices::All,
            cpu_aggregates: false,
            device_aggregates: true,
            aggregate_scan_partitions: 8,
            dynamic_filters: true,
            fixed_row_filters: true,
            dynamic_filter_max_kept: 0.25,
            key_set_max_kept: 0.75,
            dynamic_filters_in_flight: 8,
            join_key_sets: true,
            fast_like: true,
            prefetch: Prefetch::Alone,
            read_ahead: 2,
            group_mib: None,
            groups_in_flight: None,
            scan_partitions: None,
            device_crc: true,
            pages_on_device: true,
            device_byte_dicts: None,
            widen_decimals: true,
            cpu_fallback: false,
        }
    }
}

impl ConfigExtension for WarpreadOptions {
    const PREFIX: &'static str = "warpread";
}

/// Keys that act on a session's whole plan rather than on a table's scans:
/// a table's `OPTIONS` may not set them.
const SESSION_ONLY: &[&str] = &["fast_like"];

fn parse<T: FromStr>(key: &str, value: &str, expected: &str) -> DfResult<T> {
    value.trim().parse().map_err(|_| bad(key, value, expected))
}

fn bad(key: &str, value: &str, expected: &str) -> DataFusionError {
    DataFusionError::Configuration(format!(
        "warpread.{key}: invalid value {value:?} ({expected})"
    ))
}

fn boolean(key: &str, value: &str) -> DfResult<bool> {
    parse(key, &value.to_ascii_lowercase(), "expected true or false")
}

fn positive<T: FromStr + PartialOrd + Default>(key: &str, value: &str) -> DfResult<T> {
    let n: T = parse(key, value, "expected a positive integer")?;
    if n > T::default() {
        Ok(n)
    } else {
        Err(bad(key, value, "expected a positive integer"))
    }
}

fn share(key: &str, value: &str) -> DfResult<f64> {
    let expected = "expected a share from 0 to 1";
    let s: f64 = parse(key, value, expected)?;
    if (0.0..=1.0).contains(&s) {
        Ok(s)
    } else {
        Err(bad(key, value, expected))
    }
}

/// A positive count, or unset for `none` or an empty value.
fn optional<T: FromStr + PartialOrd + Default>(key: &str, value: &str) -> DfResult<Option<T>> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "none" => Ok(None),
        _ => positive(key, value).map(Some),
    }
}

impl WarpreadOptions {
    /// Every key (without the `warpread.` prefix) with its value and doc
    /// line, in the order of the fields.
    fn listed(&self) -> Vec<(&'static str, Option<String>, &'static str)> {
        let s = |v: &dyn fmt::Display| Some(v.to_string());
        vec![
            (
                "backend",
                s(&self.backend),
                "Where scans decode: auto (the session's backend), cpu, or cuda (the session's backend, required to be CUDA).",
            ),
            (
                "devices",
                s(&self.devices),
                "Which of the session's devices scans decode on: all, a device number, or numbers separated by commas; scan partitions take them in turn.",
            ),
            (
                "cpu_aggregates",
                s(&self.cpu_aggregates),
                "Partial aggregates over warpread scans run as aggregate programs on a CPU backend too (the reference of the device's kernels).",
            ),
            (
                "device_aggregates",
                s(&self.device_aggregates),
                "Partial aggregates over warpread scans run as one program on the scan's device where they can.",
            ),
            (
                "aggregate_scan_partitions",
                s(&self.aggregate_scan_partitions),
                "Scan partitions under a device aggregate (more overlap reads with launches, at more memory).",
            ),
            (
                "dynamic_filters",
                s(&self.dynamic_filters),
                "Scans drop rows failing the filters operators publish while the query runs.",
            ),
            (
                "fixed_row_filters",
                s(&self.fixed_row_filters),
                "A scan's static filters also run on their own while they keep few rows.",
            ),
            (
                "dynamic_filter_max_kept",
                s(&self.dynamic_filter_max_kept),
                "Share of sampled rows (0 to 1) a dynamic filter may keep and still be applied in the scan.",
            ),
            (
                "key_set_max_kept",
                s(&self.key_set_max_kept),
                "The same share for filters tested against a join's build key set.",
            ),
            (
                "dynamic_filters_in_flight",
                s(&self.dynamic_filters_in_flight),
                "Batches of one scan stream filtered at once.",
            ),
            (
                "join_key_sets",
                s(&self.join_key_sets),
                "Hash joins on integer keys hand an exact set of their build keys to the probe scan.",
            ),
            (
                "fast_like",
                s(&self.fast_like),
                "LIKE patterns of literal pieces are evaluated by a substring search (session-wide).",
            ),
            (
                "prefetch",
                s(&self.prefetch),
                "Which device scans start reading when the plan starts: off, alone (files no other scan reads) or all.",
            ),
            (
                "read_ahead",
                s(&self.read_ahead),
                "Groups of one scan partition in flight (overlap against memory).",
            ),
            (
                "group_mib",
                self.group_mib.map(|v| v.to_string()),
                "Compressed MiB a scan reads and decodes in one go (unset: 256 per scan read, the backend's choice within it).",
            ),
            (
                "groups_in_flight",
                self.groups_in_flight.map(|v| v.to_string()),
                "Read groups decoded side by side within one read (unset: the reader's default).",
            ),
            (
                "scan_partitions",
                self.scan_partitions.map(|v| v.to_string()),
                "Scan partitions a scan reads with at most (unset: the backend's preference, 4 on CUDA; 0: as many as DataFusion plans).",
            ),
            (
                "device_crc",
                s(&self.device_crc),
                "Parquet: CRC-32s of pages on the device are checked there (false: on the host).",
            ),
            (
                "pages_on_device",
                s(&self.pages_on_device),
                "Parquet: inflated pages the host does not read stay on the device (needs device_crc).",
            ),
            (
                "device_byte_dicts",
                Some(
                    self.device_byte_dicts
                        .map_or("auto".into(), |b| b.to_string()),
                ),
                "Parquet: byte-array dictionaries gathered by stages on every backend (true), on the host (false), or where the pages lie on the device (auto).",
            ),
            (
                "widen_decimals",
                s(&self.widen_decimals),
                "Parquet: dictionary-encoded Decimal128 chunks widened in the gather (false: on the host afterwards).",
            ),
            (
                "cpu_fallback",
                s(&self.cpu_fallback),
                "A scan read the device fails is read again on the CPU, with a warning (false: the query fails with the device's error).",
            ),
        ]
    }

    /// The settings that differ from the defaults, as `key=value` (keys
    /// without the prefix): what a scan shows in a plan.
    pub fn changed(&self) -> Vec<String> {
        let defaults = Self::default().listed();
        self.listed()
            .into_iter()
            .zip(defaults)
            .filter(|((_, v, _), (_, d, _))| v != d)
            .map(|((k, v, _), _)| format!("{k}={}", v.unwrap_or_else(|| "none".into())))
            .collect()
    }

    /// The session's settings in `options`, or the defaults where the
    /// session has not registered them.
    pub fn of(options: &ConfigOptions) -> Self {
        options
            .extensions
            .get::<Self>()
            .cloned()
            .unwrap_or_default()
    }

    /// These settings with a table's `options` applied over them: keys of
    /// the `warpread.` namespace (with or without the prefix); an unknown
    /// key, a malformed value or a key that only a session may set is an
    /// error naming it.
    pub fn with_table_options<'a>(
        mut self,
        options: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> DfResult<Self> {
        for (key, value) in options {
            let inner = key.strip_prefix("warpread.").unwrap_or(key);
            if SESSION_ONLY.contains(&inner) {
                return Err(DataFusionError::Configuration(format!(
                    "warpread.{inner} applies to a session's plans, not to a table: \
                     use SET warpread.{inner}"
                )));
            }
            self.set(inner, value)?;
        }
        Ok(self)
    }
}

/// The reader tuning of `options` (the one place that maps `warpread.*`
/// keys onto [`ReadTuning`]; every other field is the default).
pub fn read_tuning(options: &WarpreadOptions) -> ReadTuning {
    let tuning = ReadTuning::default()
        .with_group_bytes(options.group_mib.map(|mib| mib.saturating_mul(1 << 20)))
        .with_device_crc(options.device_crc)
        .with_pages_on_device(options.pages_on_device)
        .with_device_byte_dicts(options.device_byte_dicts)
        .with_widen_decimals(options.widen_decimals);
    match options.groups_in_flight {
        Some(n) => tuning.with_groups_in_flight(n),
        None => tuning,
    }
}

impl ExtensionOptions for WarpreadOptions {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn cloned(&self) -> Box<dyn ExtensionOptions> {
        Box::new(self.clone())
    }

    /// Sets `key`, given with or without the `warpread.` prefix (the
    /// distributed engine hands a worker the keys [`Self::entries`] lists,
    /// which carry it).
    fn set(&mut self, key: &str, value: &str) -> DfResult<()> {
        let key = key.strip_prefix("warpread.").unwrap_or(key);
        match key {
            "backend" => self.backend = parse(key, value, "expected cpu, cuda or auto")?,
            "devices" => {
                self.devices = parse(
                    key,
                    value,
                    "expected all, a device number, or numbers separated by commas",
                )?
            }
            "cpu_aggregates" => self.cpu_aggregates = boolean(key, value)?,
            "device_aggregates" => self.device_aggregates = boolean(key, value)?,
            "aggregate_scan_partitions" => self.aggregate_scan_partitions = positive(key, value)?,
            "dynamic_filters" => self.dynamic_filters = boolean(key, value)?,
            "fixed_row_filters" => self.fixed_row_filters = boolean(key, value)?,
            "dynamic_filter_max_kept" => self.dynamic_filter_max_kept = share(key, value)?,
            "key_set_max_kept" => self.key_set_max_kept = share(key, value)?,
            "dynamic_filters_in_flight" => self.dynamic_filters_in_flight = positive(key, value)?,
            "join_key_sets" => self.join_key_sets = boolean(key, value)?,
            "fast_like" => self.fast_like = boolean(key, value)?,
            "prefetch" => self.prefetch = parse(key, value, "expected off, alone or all")?,
            "read_ahead" => self.read_ahead = positive(key, value)?,
            "group_mib" => self.group_mib = optional(key, value)?,
            "groups_in_flight" => self.groups_in_flight = optional(key, value)?,
            "scan_partitions" => {
                self.scan_partitions = match value.trim().to_ascii_lowercase().as_str() {
                    "" | "none" | "auto" => None,
                    _ => Some(parse(key, value, "expected a count, 0, or none")?),
                }
            }
            "device_crc" => self.device_crc = boolean(key, value)?,
            "pages_on_device" => self.pages_on_device = boolean(key, value)?,
            "device_byte_dicts" => {
                self.device_byte_dicts = match value.trim().to_ascii_lowercase().as_str() {
                    "auto" => None,
                    _ => Some(boolean(key, value)?),
                }
            }
            "widen_decimals" => self.widen_decimals = boolean(key, value)?,
            "cpu_fallback" => self.cpu_fallback = boolean(key, value)?,
            _ => {
                let known: Vec<_> = self.listed().iter().map(|(k, ..)| *k).collect();
                return Err(DataFusionError::Configuration(format!(
                    "unknown option warpread.{key} (known: {})",
                    known.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// The entries with their full keys (`warpread.read_ahead`): DataFusion
    /// lists extensions' entries as given, and `SHOW warpread.read_ahead`
    /// looks for the full key.
    fn entries(&self) -> Vec<ConfigEntry> {
        self.listed()
            .into_iter()
            .map(|(key, value, description)| ConfigEntry {
                key: format!("{}.{key}", Self::PREFIX),
                value,
                description,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_key_sets_and_reads_back() {
        let mut o = WarpreadOptions::default();
        for (key, value, _) in WarpreadOptions::default().listed() {
            let value = value.unwrap_or_else(|| "3".into());
            o.set(key, &value).unwrap();
        }
        assert_eq!(o.group_mib, Some(3));
        assert_eq!(o.entries().len(), o.listed().len());
        // The Parquet switches reach the reader's tuning.
        o.set("device_crc", "false").unwrap();
        o.set("device_byte_dicts", "true").unwrap();
        o.set("widen_decimals", "false").unwrap();
        o.set("scan_partitions", "0").unwrap();
        o.set("cpu_fallback", "true").unwrap();
        assert!(o.cpu_fallback);
        let t = read_tuning(&o);
        assert!(!t.device_crc && !t.widen_decimals && !t.keeps_pages_on_device());
        assert_eq!(t.device_byte_dicts, Some(true));
        assert_eq!(o.scan_partitions, Some(0));
        o.set("device_byte_dicts", "auto").unwrap();
        o.set("scan_partitions", "none").unwrap();
        assert_eq!((o.device_byte_dicts, o.scan_partitions), (None, None));
    }

    #[test]
    fn errors_name_the_key() {
        let mut o = WarpreadOptions::default();
        let e = o.set("no_such", "1").unwrap_err().to_string();
        assert!(e.contains("warpread.no_such"), "{e}");
        for (key, value) in [
            ("join_key_sets", "maybe"),
            ("read_ahead", "0"),
            ("dynamic_filter_max_kept", "1.5"),
            ("backend", "gpu"),
            ("prefetch", "some"),
            ("group_mib", "-1"),
            ("scan_partitions", "many"),
            ("device_byte_dicts", "sometimes"),
        ] {
            let e = o.set(key, value).unwrap_err().to_string();
            assert!(e.contains(&format!("warpread.{key}")), "{e}");
        }
        assert_eq!(o, WarpreadOptions::default(), "failed sets change nothing");
        let e = WarpreadOptions::default()
            .with_table_options([("warpread.fast_like", "false")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("warpread.fast_like"), "{e}");
    }

    #[test]
    fn keys_with_the_prefix_set_too() {
        let mut o = WarpreadOptions::default();
        o.set("warpread.read_ahead", "5").unwrap();
        assert_eq!(o.read_ahead, 5);
        let e = o.set("warpread.warpread.read_ahead", "5").unwrap_err();
        assert!(
            e.to_string().contains("warpread.warpread.read_ahead"),
            "{e}"
        );
    }

    #[test]
    fn set_through_config_options() {
        let mut c = ConfigOptions::new();
        c.extensions.insert(WarpreadOptions::default());
        c.set("warpread.join_key_sets", "false").unwrap();
        c.set("warpread.group_mib", "64").unwrap();
        let o = WarpreadOptions::of(&c);
        assert!(!o.join_key_sets);
        assert_eq!(o.group_mib, Some(64));
        c.set("warpread.group_mib", "none").unwrap();
        assert_eq!(WarpreadOptions::of(&c).group_mib, None);
    }
}
