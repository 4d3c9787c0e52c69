//! The `warpread` command line.

mod bench;
mod cat;
pub mod cluster;
mod convert;
mod demo;
pub mod env;
mod gsst;
mod info;
pub mod input;
mod inspect;
mod inspect_parquet;
mod output;
mod sql;
mod usage;

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use crate::error::{Error, Result};
use crate::exec::column_sets::Split;
use crate::exec::{Backend, BackendChoice, CudaBackend, CudaOptions, Devices, SyncMode};
use crate::gsst::GsstShape;
use crate::orc::ReadTuning;

/// Read compressed ORC and Parquet with the GPU doing the heavy work.
#[derive(Debug, Parser)]
#[command(name = "warpread", version, about)]
pub struct Cli {
    /// Which backend decodes: cpu, cuda, or auto (CUDA when a device is usable).
    #[arg(long, global = true, default_value = "auto")]
    pub backend: BackendChoice,
    /// CUDA devices: all, one number, or numbers separated by commas. SQL
    /// scans spread their partitions over them; commands that read one
    /// file use the first.
    #[arg(long, global = true, default_value = "all")]
    pub devices: Devices,
    /// How reads and the CUDA backend run.
    #[command(flatten)]
    pub options: OptionArgs,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Flags that tune reads and the CUDA backend (every one optional: the
/// defaults are the libraries'). They change speed, never results; the
/// benchmark scripts pass them to compare settings.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OptionArgs {
    /// MiB of compressed stripes or row groups read and decoded together
    /// (default: the backend's, 1 GiB on CUDA, 256 MiB on the CPU).
    #[arg(long, global = true, value_name = "MIB")]
    pub group_mib: Option<u64>,
    /// Read groups in flight side by side (default 1; `cat`'s streaming
    /// read: the backend's choice).
    #[arg(long, global = true, value_name = "N")]
    pub groups_in_flight: Option<usize>,
    /// Most column sets a read group splits into, decoded side by side
    /// (default 8; 1 turns the split off).
    #[arg(long, global = true, value_name = "N")]
    pub column_sets: Option<usize>,
    /// MiB of host memory a read's decode stages may hold at once (sizes
    /// the file claims, checked before they are allocated); a read group
    /// over it is read again one stripe or row group at a time (default: no
    /// limit).
    #[arg(long, global = true, value_name = "MIB")]
    pub host_memory_mib: Option<u64>,
    /// Parquet: check page CRC32s on the host even where the pages lie on
    /// the device.
    #[arg(long, global = true)]
    pub no_device_crc: bool,
    /// Parquet: bring every inflated page to the host, also those the host
    /// does not read.
    #[arg(long, global = true)]
    pub no_pages_on_device: bool,
    /// Parquet: gather byte-array dictionaries by stages on every backend
    /// (on), on the host (off), or by stages where the pages lie on the
    /// device (auto, the default).
    #[arg(long, global = true, value_enum, default_value = "auto")]
    pub device_byte_dicts: Switch,
    /// Parquet: widen dictionary-encoded Decimal128 chunks on the host
    /// after the gather rather than in it.
    #[arg(long, global = true)]
    pub no_widen_decimals: bool,
    /// CUDA: run every job of inflate stages on the device (none on the
    /// host's cores).
    #[arg(long, global = true)]
    pub no_host_share: bool,
    /// CUDA: host threads one stage's host share of inflate jobs runs on
    /// (default: all of the process's, divided among the devices opened).
    #[arg(long, global = true, value_name = "N")]
    pub host_threads: Option<usize>,
    /// CUDA: how host threads wait for the device: blocking (default),
    /// yield, spin or auto (CUDA's choice).
    #[arg(long, global = true, value_name = "MODE")]
    pub cuda_sync: Option<SyncMode>,
    /// CUDA: MiB of pinned host memory the output pool holds at most (0
    /// turns the pool off; default a quarter of the host's memory, 8 to 64
    /// GiB).
    #[arg(long, global = true, value_name = "MIB")]
    pub pinned_pool_mib: Option<usize>,
    /// CUDA: MiB of device memory that device mirrors of decompressed data
    /// hold at most (0 turns mirrors off; default half the device's).
    #[arg(long, global = true, value_name = "MIB")]
    pub device_mirror_mib: Option<usize>,
    /// CUDA: MiB of device memory one decode stage may take (its input and
    /// output); a read group over it is read again one stripe or row group
    /// at a time (default: half the memory free at start, divided among
    /// the backend's 8 lanes).
    #[arg(long, global = true, value_name = "MIB")]
    pub device_memory_mib: Option<usize>,
    /// CUDA: how many times a request's size a free pinned block may be and
    /// still serve it (default 4; 1: only its own size class).
    #[arg(long, global = true, value_name = "N")]
    pub pinned_larger: Option<usize>,
    /// CUDA: scan partitions a query reads with (default 4; 0: as many as
    /// DataFusion plans).
    #[arg(long, global = true, value_name = "N")]
    pub scan_partitions: Option<usize>,
    /// CUDA: threads per block of the GSST kernels (default 64).
    #[arg(long, global = true, value_name = "N")]
    pub gsst_threads: Option<u32>,
    /// CUDA: resident blocks per SM the GSST kernels are compiled for
    /// (default 8).
    #[arg(long, global = true, value_name = "N")]
    pub gsst_min_blocks: Option<u32>,
    /// CUDA: 16-byte granules of the GSST splits decoder's input ring
    /// (default 24).
    #[arg(long, global = true, value_name = "N")]
    pub gsst_ring: Option<u32>,
    /// CUDA: folder whose kernel sources replace the built-in ones of the
    /// same name (to compare kernel variants with one binary).
    #[arg(long, global = true, value_name = "DIR")]
    pub kernel_dir: Option<PathBuf>,
    /// CUDA: compressed KiB per span of the speculative parallel inflate of
    /// long streams (default 64; 0: one warp per stream).
    #[arg(long, global = true, value_name = "KIB")]
    pub span_kib: Option<u64>,
}

/// A three-way switch: on, off, or the library's own choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    /// The library decides.
    #[default]
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

impl Switch {
    /// `None` for auto.
    pub fn as_option(self) -> Option<bool> {
        match self {
            Switch::Auto => None,
            Switch::On => Some(true),
            Switch::Off => Some(false),
        }
    }
}

impl OptionArgs {
    /// The read tuning the flags ask for.
    pub fn read_tuning(&self) -> ReadTuning {
        let mut t = ReadTuning::default()
            .with_group_bytes(self.group_mib.map(|m| m.saturating_mul(1 << 20)))
            .with_device_crc(!self.no_device_crc)
            .with_pages_on_device(!self.no_pages_on_device)
            .with_device_byte_dicts(self.device_byte_dicts.as_option())
            .with_widen_decimals(!self.no_widen_decimals)
            .with_host_memory_limit(self.host_memory_mib.map(|m| m.saturating_mul(1 << 20)));
        if let Some(n) = self.groups_in_flight {
            t = t.with_groups_in_flight(n);
        }
        if let Some(n) = self.column_sets {
            t = t.with_column_sets(Split::max_sets(n));
        }
        t
    }

    /// The CUDA options the flags ask for, with compiled kernels kept in
    /// `kernel_cache`; an invalid GSST shape is an error.
    pub fn cuda_options(&self, kernel_cache: Option<PathBuf>) -> Result<CudaOptions> {
        let mib = |m: Option<usize>| m.map(|m| m.saturating_mul(1 << 20));
        let shape = GsstShape::with_parts(self.gsst_threads, self.gsst_min_blocks, self.gsst_ring)
            .map_err(Error::Unsupported)?;
        let mut o = CudaOptions::default()
            .with_kernel_cache(kernel_cache)
            .with_kernel_dir(self.kernel_dir.clone())
            .with_pinned_pool_bytes(mib(self.pinned_pool_mib))
            .with_device_mirror_bytes(mib(self.device_mirror_mib))
            .with_host_share(!self.no_host_share)
            .with_host_threads(self.host_threads)
            .with_gsst_shape(shape);
        if let Some(mode) = self.cuda_sync {
            o = o.with_sync(mode);
        }
        if let Some(kib) = self.span_kib {
            o = o.with_span_inflate((kib > 0).then(|| {
                warpread::codecs::deflate::speculative::SpanOptions::default()
                    .with_span_bytes(kib.saturating_mul(1024))
            }));
        }
        if let Some(n) = self.pinned_larger {
            o = o.with_pinned_larger(n);
        }
        if let Some(mib) = self.device_memory_mib {
            o = o.with_device_memory_limit(Some(mib.saturating_mul(1 << 20)));
        }
        if let Some(n) = self.scan_partitions {
            o = o.with_scan_partitions(Some(n));
        }
        Ok(o)
    }
}

/// What every subcommand runs with: the backend choice, its CUDA options
/// and the tuning of reads.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Which backend decodes.
    pub backend: BackendChoice,
    /// Which CUDA devices.
    pub devices: Devices,
    /// How a CUDA backend runs.
    pub cuda: CudaOptions,
    /// How reads run.
    pub tuning: ReadTuning,
}

impl Settings {
    /// The settings of a command line, with the kernel cache of the
    /// environment ([`env::kernel_cache`]).
    pub fn of(cli: &Cli) -> Result<Self> {
        Ok(Self {
            backend: cli.backend,
            devices: cli.devices.clone(),
            cuda: cli.options.cuda_options(env::kernel_cache())?,
            tuning: cli.options.read_tuning(),
        })
    }

    /// The same settings on another backend choice.
    pub fn on(&self, backend: BackendChoice) -> Self {
        Self {
            backend,
            ..self.clone()
        }
    }

    /// The backend of the choice.
    pub fn select(&self) -> Result<Box<dyn Backend>> {
        Ok(
            match CudaBackend::for_choice_on(self.backend, self.first_device(), &self.cuda)? {
                Some(cuda) => Box::new(cuda),
                None => Box::new(crate::exec::CpuBackend::new()),
            },
        )
    }

    /// One backend per device of the choice (the CPU alone for `cpu`):
    /// what SQL sessions spread their scans over.
    pub fn select_devices(&self) -> Result<Vec<Arc<dyn Backend>>> {
        crate::exec::devices::open(self.backend, &self.cuda, &self.devices)
    }

    /// The CUDA backend of the choice (`None` for the CPU, or for `auto`
    /// without a device).
    pub fn cuda_backend(&self) -> Result<Option<CudaBackend>> {
        CudaBackend::for_choice_on(self.backend, self.first_device(), &self.cuda)
    }

    /// The device a command that reads one file decodes on.
    pub(crate) fn first_device(&self) -> usize {
        match &self.devices {
            Devices::List(l) => l.first().copied().unwrap_or(0),
            Devices::All => 0,
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Benchmarks (codec kernels against the CPU reference).
    Bench {
        /// What to benchmark.
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
    /// GSST string compression (docs/gsst-format.md).
    Gsst {
        /// compress or decompress.
        #[command(subcommand)]
        what: gsst::GsstCommand,
    },
    /// Shows whether CUDA is usable and which device and backend `auto` picks.
    Info,
    /// The embedded default: generates TPC-H at scale 0.1 as ZLIB ORC into
    /// the cache ($WARPREAD_CACHE, else ~/.cache/warpread) on first run, runs
    /// TPC-H Q1 through the warpread provider and shows where the time went.
    Demo,
    /// Runs SQL over ORC and Parquet files read by warpread (Parquet by
    /// DataFusion's built-in reader with `--parquet-reader datafusion`);
    /// without a query, an interactive shell reading `;`-terminated
    /// statements from stdin.
    Sql {
        /// A table: NAME=PATH, where PATH is a file, a folder or a glob of
        /// .orc or .parquet files, local or a URL (s3://, gs://, az://,
        /// http(s)://; credentials from the environment; repeatable).
        #[arg(long = "table")]
        tables: Vec<String>,
        /// Reader of .parquet tables: warpread, or datafusion (its built-in
        /// reader, to compare).
        #[arg(long, default_value = "warpread")]
        parquet_reader: warpread_datafusion::ParquetReader,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: sql::OutputFormat,
        /// A session setting KEY=VALUE, as `SET` takes it (repeatable):
        /// `warpread.*` (e.g. warpread.join_key_sets=false) or DataFusion's
        /// `datafusion.*`; an unknown key is an error.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        settings: Vec<String>,
        /// Where the queries' stages run.
        #[command(flatten)]
        cluster: cluster::ClusterArgs,
        /// The SQL (one or more `;`-separated statements).
        query: Option<String>,
    },
    /// Serves the stages of distributed SQL queries (`sql --cluster`) on
    /// an address until killed, decoding on `--backend` and `--devices`;
    /// prints `warpread worker listening on URL` once it listens.
    Worker {
        /// Address to listen on (port 0: any free port).
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: String,
    },
    /// Converts a Parquet, ORC, CSV or Arrow IPC file to an Arrow IPC file
    /// whose columns are GSST- or Huffman-compressed (docs/gsst-format.md,
    /// "File container"), printing what each column became and its ratio;
    /// `cat`, `sql` (`STORED AS GSST`) and the libraries decode it.
    Convert {
        /// Parquet, ORC, CSV (header line, types inferred) or Arrow IPC.
        input: PathBuf,
        /// The Arrow IPC file to write.
        output: PathBuf,
        /// How columns are stored [default: gsst].
        #[arg(long, value_enum)]
        codec: Option<convert::Codec>,
        /// Deprecated: `--strings gsst` is `--codec gsst`, `--strings plain`
        /// is `--codec none`.
        #[arg(long, value_enum, conflicts_with = "codec")]
        strings: Option<convert::Strings>,
        /// GSST code layout: splits or coalesced (GSST and GSST+Huffman
        /// columns).
        #[arg(long, default_value = "splits")]
        layout: crate::gsst::GsstLayout,
        /// Rows per record batch; each batch of a compressed column is one
        /// frame, so larger batches give the GPU more blocks at once.
        #[arg(long, default_value_t = 1 << 20)]
        batch_size: usize,
        /// Uncompressed KiB per GSST block (default: derived from the device).
        #[arg(long)]
        block_kib: Option<usize>,
        /// Splits per GSST block (default: one per kernel thread).
        #[arg(long)]
        splits: Option<usize>,
    },
    /// Generates data sets.
    Gen {
        /// What to generate.
        #[command(subcommand)]
        what: GenCommand,
    },
    /// Shows a file's schema, stripes, streams, encodings, compression and
    /// statistics.
    Inspect {
        /// The ORC or Parquet file: a path or a URL (as `cat` takes it).
        file: String,
        /// List every stripe or row group (default: the first three).
        #[arg(long)]
        all_stripes: bool,
    },
    /// Decodes a file (or some columns) to Arrow IPC, CSV or JSON lines,
    /// streaming: batches are written as read groups finish.
    Cat {
        /// The ORC, Parquet or Arrow IPC file (GSST columns of a `convert`
        /// container are decoded on the backend): a path, or a URL
        /// (s3://, gs://, az://, http(s)://, file://; credentials from the
        /// environment, e.g. AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL).
        file: String,
        /// Only these top-level columns (comma-separated).
        #[arg(long, value_delimiter = ',')]
        columns: Vec<String>,
        /// Skip stripes and row groups whose statistics rule out `COLUMN
        /// OP LITERAL` (ORC row groups by the row index), and Parquet pages
        /// whose page index does (repeatable; rows of kept stripes, row
        /// groups and pages are not filtered).
        #[arg(long = "where")]
        predicates: Vec<crate::orc::Predicate>,
        /// Output format.
        #[arg(long, value_enum, default_value = "arrow")]
        format: cat::Format,
        /// Output file (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Rows per record batch.
        #[arg(long, default_value_t = 65536)]
        batch_size: usize,
    },
}

/// `warpread gen` subcommands.
#[derive(Debug, Subcommand)]
pub enum GenCommand {
    /// TPC-H tables generated in-process (tpchgen), one file per table.
    Tpch {
        /// Scale factor (1 = lineitem of 6 million rows).
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// File format: parquet, or orc (warpread's writer: RLE v1, no
        /// dictionaries; for pyarrow-style ORC convert the Parquet output
        /// with scripts/parquet_to_orc.py).
        #[arg(long, value_enum, default_value = "parquet")]
        format: crate::datagen::tpch::GenFormat,
        /// Compression: gzip (Parquet), zlib (ORC), snappy, zstd or none
        /// (default: snappy for Parquet, zlib for ORC).
        #[arg(long, value_enum)]
        compression: Option<crate::datagen::tpch::GenCompression>,
        /// Rows per ORC stripe or Parquet row group.
        #[arg(long, default_value_t = 1 << 18)]
        rows_per_group: usize,
        /// Only these tables (comma-separated).
        #[arg(long, value_delimiter = ',')]
        tables: Vec<String>,
        /// Output folder.
        out_dir: PathBuf,
    },
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    // A GSST launch shape that does not hold is an error up front rather
    // than a failure after minutes of compression.
    let settings = Settings::of(&cli)?;
    match cli.command {
        Command::Bench { what } => bench::run(what, &settings),
        Command::Gsst { what } => gsst::run(what, &settings),
        Command::Info => info::run(&settings),
        Command::Demo => demo::run(&settings),
        Command::Sql {
            tables,
            parquet_reader,
            format,
            settings: sets,
            cluster,
            query,
        } => sql::run(
            sql::SqlArgs {
                tables,
                parquet_reader,
                format,
                settings: sets,
                cluster,
                query,
            },
            &settings,
        ),
        Command::Worker { listen } => cluster::run_worker(&listen, &settings),
        Command::Convert {
            input,
            output,
            codec,
            strings,
            layout,
            batch_size,
            block_kib,
            splits,
        } => convert::run(
            convert::ConvertArgs {
                input,
                output,
                codec: convert::codec_of(codec, strings),
                layout,
                batch_size,
                block_kib,
                splits,
            },
            &settings,
        ),
        Command::Gen {
            what:
                GenCommand::Tpch {
                    scale,
                    format,
                    compression,
                    rows_per_group,
                    tables,
                    out_dir,
                },
        } => {
            use crate::datagen::tpch::{GenCompression, GenFormat, GenOptions};
            if scale.is_nan() || scale <= 0.0 || rows_per_group == 0 {
                return Err(crate::error::Error::Unsupported(format!(
                    "scale factor {scale}, {rows_per_group} rows per group"
                )));
            }
            let compression = compression.unwrap_or(match format {
                GenFormat::Parquet => GenCompression::Snappy,
                GenFormat::Orc => GenCompression::Zlib,
            });
            let options = GenOptions {
                rows_per_group,
                ..GenOptions::new(format, compression)
            };
            for (path, rows) in crate::datagen::tpch::generate(scale, &options, &out_dir, &tables)?
            {
                println!("{}: {rows} rows", path.display());
            }
            Ok(())
        }
        Command::Inspect { file, all_stripes } => inspect::run(&file, all_stripes),
        Command::Cat {
            file,
            columns,
            predicates,
            format,
            output,
            batch_size,
        } => cat::run(
            cat::CatArgs {
                input: file,
                columns,
                predicates,
                format,
                output,
                batch_size,
                groups_in_flight: cli.options.groups_in_flight,
            },
            &settings,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(["warpread"].iter().chain(args).chain(&["info"])).unwrap()
    }

    #[test]
    fn no_flags_give_the_library_defaults() {
        let cli = parse(&[]);
        assert_eq!(cli.options.read_tuning(), ReadTuning::default());
        assert_eq!(
            cli.options.cuda_options(None).unwrap(),
            CudaOptions::default()
        );
    }

    #[test]
    fn flags_map_onto_the_options() {
        let cli = parse(&[
            "--group-mib=64",
            "--groups-in-flight=2",
            "--column-sets=1",
            "--no-device-crc",
            "--no-pages-on-device",
            "--device-byte-dicts=off",
            "--no-widen-decimals",
            "--no-host-share",
            "--cuda-sync=spin",
            "--pinned-pool-mib=0",
            "--device-mirror-mib=3",
            "--pinned-larger=1",
            "--scan-partitions=0",
            "--gsst-threads=128",
            "--gsst-ring=8",
            "--kernel-dir=/k",
        ]);
        let t = cli.options.read_tuning();
        assert_eq!(t.group_bytes, Some(64 << 20));
        assert_eq!(t.groups_in_flight, 2);
        assert_eq!(t.column_sets.max_sets, 1);
        assert!(!t.device_crc && !t.pages_on_device && !t.widen_decimals);
        assert_eq!(t.device_byte_dicts, Some(false));
        let c = cli.options.cuda_options(Some("/kc".into())).unwrap();
        assert!(!c.host_share);
        assert_eq!(c.sync, SyncMode::Spin);
        assert_eq!(c.pinned_pool_bytes, Some(0));
        assert_eq!(c.device_mirror_bytes, Some(3 << 20));
        assert_eq!(c.pinned_larger, 1);
        assert_eq!(c.scan_partitions, None);
        assert_eq!(
            c.gsst_shape,
            GsstShape::with_parts(Some(128), None, Some(8)).unwrap()
        );
        assert_eq!(c.kernel_dir.as_deref(), Some(std::path::Path::new("/k")));
        assert_eq!(c.kernel_cache.as_deref(), Some(std::path::Path::new("/kc")));
    }

    #[test]
    fn bad_values_are_errors() {
        let shape = parse(&["--gsst-threads=200"]).options.cuda_options(None);
        assert!(shape.unwrap_err().to_string().contains("multiple of 32"));
        let args = ["warpread", "--cuda-sync=sometimes", "info"];
        assert!(Cli::try_parse_from(args).is_err());
    }
}
