//! GPU differential fuzzing (issue 34, point 2): one process reads many
//! mutated ORC, Parquet and GSST-container files on the CPU backend and on
//! the CUDA backend, and checks that both give the same batches or both an
//! error.
//!
//! Mutants are made deterministically from seed files: mutant `i` of a run
//! with seed `S` is the same bytes on every machine (`--first i
//! --mutants 1` replays it), so a finding needs only its number. Each is a
//! stack of one to three mutations (bit flips, interesting values, long
//! varints, random bytes, truncation, chunk duplication, deletion and
//! copying, small increments), aimed at the metadata (Parquet footers and
//! page headers, ORC postscripts, footers and stripe footers, the IPC
//! footer and schema of a container) or at the data (page bodies, ORC
//! streams, compressed or not) or anywhere.
//!
//! Verdicts: both read and the batches are equal; both fail (a different
//! error variant is counted, not a finding); anything else is a
//! disagreement: different batches, one side failing, a panic on either
//! side, or a CUDA driver error (after which the CUDA backend is opened
//! afresh). `--dir` reads the files of a folder as they are instead
//! (replay of dumped findings); `--write` only writes the mutants.
//!
//! ```text
//! gpu_fuzz_diff --seeds testdata/orc --seeds testdata/parquet \
//!     [--containers DIR] [--seed 34] [--first 0] [--mutants 1000] \
//!     [--device 0] [--cpu-only] [--time-limit SECS] [--max-seed-bytes N] \
//!     [--dump DIR] [--log FILE] [--write DIR] [--dir DIR]
//! ```
//!
//! The last line is `SUMMARY key=value ...`; the exit status is 1 when
//! there was a disagreement.

use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use warpread::arrow::record_batch::RecordBatch;
use warpread::exec::{Backend, CpuBackend, CudaBackend, CudaOptions};

/// splitmix64, as the integration tests use.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, index: u64) -> Self {
        let mut r = Rng(seed ^ index.wrapping_mul(0xa076_1d64_78bd_642f));
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`; 0 when `n` is 0.
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T> {
        if xs.is_empty() {
            None
        } else {
            Some(&xs[self.below(xs.len())])
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Orc,
    Parquet,
    Gsst,
}

impl Format {
    fn of(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "orc" => Some(Self::Orc),
            "parquet" => Some(Self::Parquet),
            "gsst" => Some(Self::Gsst),
            _ => None,
        }
    }
    fn ext(self) -> &'static str {
        match self {
            Self::Orc => "orc",
            Self::Parquet => "parquet",
            Self::Gsst => "gsst",
        }
    }
}

/// A seed file and where its metadata and its data lie.
struct Seed {
    name: String,
    format: Format,
    bytes: Vec<u8>,
    /// Footers, page headers, stripe footers, postscripts, index pages.
    meta: Vec<Range<usize>>,
    /// Page bodies and stripe data (compressed streams included).
    data: Vec<Range<usize>>,
}

fn clip(r: Range<u64>, len: usize) -> Option<Range<usize>> {
    let s = usize::try_from(r.start).ok()?.min(len);
    let e = usize::try_from(r.end).ok()?.min(len);
    (s < e).then_some(s..e)
}

fn parquet_regions(seed: &mut Seed) {
    let len = seed.bytes.len();
    if len >= 8 {
        let flen = u32::from_le_bytes(seed.bytes[len - 8..len - 4].try_into().unwrap()) as usize;
        seed.meta.push(len.saturating_sub(8 + flen)..len);
    }
    let Ok(file) =
        warpread::parquet::ParquetFile::from_bytes("seed", Bytes::from(seed.bytes.clone()))
    else {
        return;
    };
    for rg in file.metadata().row_groups() {
        for cc in rg.columns() {
            for (off, n) in [
                (cc.column_index_offset(), cc.column_index_length()),
                (cc.offset_index_offset(), cc.offset_index_length()),
            ] {
                if let (Some(o), Some(n)) = (off, n) {
                    if let Some(r) = clip(o.max(0) as u64..(o.max(0) + n.max(0) as i64) as u64, len)
                    {
                        seed.meta.push(r);
                    }
                }
            }
            let Some((start, size)) = warpread::parquet::pages::chunk_range(cc) else {
                continue;
            };
            let Some(chunk) = clip(start..start.saturating_add(size), len) else {
                continue;
            };
            let mut pos = chunk.start;
            while pos < chunk.end {
                let Ok(h) =
                    warpread::parquet::page_header::parse_page_header(&seed.bytes[pos..chunk.end])
                else {
                    break;
                };
                seed.meta.push(pos..pos + h.header_len);
                let body = pos + h.header_len;
                let end = body
                    .saturating_add(h.compressed_size.max(0) as usize)
                    .min(chunk.end);
                if body < end {
                    seed.data.push(body..end);
                }
                if end <= pos {
                    break;
                }
                pos = end;
            }
        }
    }
}

fn orc_regions(seed: &mut Seed) {
    let len = seed.bytes.len();
    let Ok(file) = warpread::orc::OrcFile::from_bytes("seed", Bytes::from(seed.bytes.clone()))
    else {
        if len > 0 {
            seed.meta.push(len.saturating_sub(256)..len);
        }
        return;
    };
    let ps = &file.tail().postscript;
    let ps_len = seed.bytes[len - 1] as usize;
    let footer = ps.footer_length.unwrap_or(0) as usize;
    let metadata = ps.metadata_length.unwrap_or(0) as usize;
    // Postscript and its length byte, footer, metadata.
    seed.meta
        .push(len.saturating_sub(1 + ps_len + footer + metadata)..len);
    // The header "ORC".
    seed.meta.push(0..3.min(len));
    for s in file.stripes() {
        let index = s.offset..s.offset + s.index_length;
        let data = index.end..index.end + s.data_length;
        let sfooter = data.end..data.end + s.footer_length;
        for (r, is_meta) in [(index, true), (data, false), (sfooter, true)] {
            if let Some(r) = clip(r, len) {
                if is_meta {
                    seed.meta.push(r);
                } else {
                    seed.data.push(r);
                }
            }
        }
    }
}

fn gsst_regions(seed: &mut Seed) {
    let len = seed.bytes.len();
    // The IPC footer (schema, record batch blocks) and the first messages
    // (magic, schema); the body is everything between.
    seed.meta.push(len.saturating_sub(4096)..len);
    seed.meta.push(0..1024.min(len));
    if len > 5120 {
        seed.data.push(1024..len - 4096);
    }
}

impl Seed {
    fn load(path: &Path, format: Format) -> Option<Self> {
        let bytes = std::fs::read(path).ok()?;
        let mut seed = Seed {
            name: path.file_name()?.to_string_lossy().into_owned(),
            format,
            bytes,
            meta: Vec::new(),
            data: Vec::new(),
        };
        if seed.bytes.is_empty() {
            return None;
        }
        match format {
            Format::Parquet => parquet_regions(&mut seed),
            Format::Orc => orc_regions(&mut seed),
            Format::Gsst => gsst_regions(&mut seed),
        }
        seed.meta.retain(|r| r.start < r.end);
        seed.data.retain(|r| r.start < r.end);
        Some(seed)
    }
}

const INTERESTING: [u64; 22] = [
    0,
    1,
    2,
    7,
    8,
    16,
    0x3f,
    0x40,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    u64::MAX,
];

/// Where one mutation lands: a metadata region, a data region, or the
/// whole file.
fn target(rng: &mut Rng, seed: &Seed, len: usize) -> Range<usize> {
    let whole = 0..len;
    let r = match rng.below(20) {
        0..=8 => rng.pick(&seed.meta).cloned(),
        9..=15 => rng.pick(&seed.data).cloned(),
        _ => None,
    };
    match r {
        Some(r) if r.end <= len && r.start < r.end => r,
        _ => whole,
    }
}

fn pos_in(rng: &mut Rng, r: &Range<usize>) -> usize {
    r.start + rng.below(r.end - r.start)
}

/// One mutation of `b` (of the seed's layout: regions past an earlier
/// truncation or shift fall back to the whole file); its name.
fn mutate_once(rng: &mut Rng, seed: &Seed, b: &mut Vec<u8>) -> &'static str {
    if b.is_empty() {
        b.push(rng.next() as u8);
        return "grow";
    }
    let len = b.len();
    let r = target(rng, seed, len);
    match rng.below(11) {
        0 | 1 => {
            for _ in 0..1 + rng.below(8) {
                let p = pos_in(rng, &r);
                b[p] ^= 1 << rng.below(8);
            }
            "bitflip"
        }
        2 | 3 => {
            let v = INTERESTING[rng.below(INTERESTING.len())];
            let v = if rng.below(4) == 0 {
                v.wrapping_neg()
            } else {
                v
            };
            let width = [1, 2, 4, 8][rng.below(4)];
            let bytes = if rng.below(2) == 0 {
                v.to_le_bytes()
            } else {
                (v << (64 - 8 * width).min(63)).to_be_bytes()
            };
            let p = pos_in(rng, &r);
            for (i, x) in bytes[..width].iter().enumerate() {
                if p + i < len {
                    b[p + i] = *x;
                }
            }
            "interesting"
        }
        4 => {
            // A long varint (protobuf / Thrift compact lengths and counts).
            let v = INTERESTING[rng.below(INTERESTING.len())] >> rng.below(8);
            let mut p = pos_in(rng, &r);
            let mut v = v;
            loop {
                if p >= len {
                    break;
                }
                let more = v >= 0x80;
                b[p] = (v as u8 & 0x7f) | if more { 0x80 } else { 0 };
                v >>= 7;
                p += 1;
                if !more {
                    break;
                }
            }
            "varint"
        }
        5 => {
            let p = pos_in(rng, &r);
            let n = (1 + rng.below(64)).min(len - p);
            for x in &mut b[p..p + n] {
                *x = rng.next() as u8;
            }
            "random"
        }
        6 => {
            // Mostly near the end (footers), sometimes anywhere.
            let keep = if rng.below(2) == 0 {
                len.saturating_sub(1 + rng.below(len.min(4096)))
            } else {
                rng.below(len)
            };
            b.truncate(keep);
            "truncate"
        }
        7 => {
            let a = pos_in(rng, &r);
            let n = (1 + rng.below(256)).min(len - a);
            let chunk = b[a..a + n].to_vec();
            let at = rng.below(len + 1);
            b.splice(at..at, chunk);
            "duplicate"
        }
        8 => {
            let a = pos_in(rng, &r);
            let n = (1 + rng.below(256)).min(len - a);
            b.drain(a..a + n);
            "delete"
        }
        9 => {
            let a = rng.below(len);
            let at = pos_in(rng, &r);
            let n = (1 + rng.below(64)).min(len - a).min(len - at);
            b.copy_within(a..a + n, at);
            "copy"
        }
        _ => {
            let p = pos_in(rng, &r);
            let d = 1 + rng.below(16) as u8;
            b[p] = if rng.below(2) == 0 {
                b[p].wrapping_add(d)
            } else {
                b[p].wrapping_sub(d)
            };
            "increment"
        }
    }
}

/// Mutant `index` of `seeds` under `seed`: the seed it came from and the
/// mutations applied.
fn mutant(seeds: &[Seed], seed: u64, index: u64) -> (usize, Vec<u8>, String) {
    let mut rng = Rng::new(seed, index);
    // The formats in turn, then the seeds of one in turn.
    let mut formats: Vec<Format> = Vec::new();
    for s in seeds {
        if !formats.contains(&s.format) {
            formats.push(s.format);
        }
    }
    let f = formats[(index as usize) % formats.len()];
    let of: Vec<usize> = (0..seeds.len()).filter(|&i| seeds[i].format == f).collect();
    let s = of[(index as usize / formats.len()) % of.len()];
    let mut b = seeds[s].bytes.clone();
    let n = match rng.below(8) {
        0..=4 => 1,
        5 | 6 => 2,
        _ => 3,
    };
    let ops: Vec<&str> = (0..n)
        .map(|_| mutate_once(&mut rng, &seeds[s], &mut b))
        .collect();
    (s, b, ops.join("+"))
}

enum Outcome {
    Ok(Vec<RecordBatch>),
    Err(String, String),
    Panic(String),
}

impl Outcome {
    fn tag(&self) -> String {
        match self {
            Outcome::Ok(b) => format!("ok({} rows)", b.iter().map(|b| b.num_rows()).sum::<usize>()),
            Outcome::Err(v, m) => {
                let m: String = m.chars().take(160).collect();
                format!("err {v}: {}", m.replace(['\t', '\n'], " "))
            }
            Outcome::Panic(_) => "panic".into(),
        }
    }
}

fn variant(e: &warpread::Error) -> String {
    let d = format!("{e:?}");
    d.split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("")
        .to_string()
}

fn read_all(format: Format, name: &str, bytes: Bytes, backend: Arc<dyn Backend>) -> Outcome {
    macro_rules! read {
        ($builder:ty) => {{
            let reader = <$builder>::from_bytes(name, bytes)
                .and_then(|b| b.with_backend(backend).with_read_ahead(0).build());
            let mut reader = match reader {
                Ok(r) => r,
                Err(e) => return Outcome::Err(variant(&e), e.to_string()),
            };
            let mut batches = Vec::new();
            while let Some(b) = reader.next_batch() {
                match b {
                    Ok(b) => batches.push(b),
                    Err(e) => return Outcome::Err(variant(&e), e.to_string()),
                }
            }
            Outcome::Ok(batches)
        }};
    }
    let run = || match format {
        Format::Orc => read!(warpread::orc::OrcReaderBuilder),
        Format::Parquet => read!(warpread::parquet::ParquetReaderBuilder),
        Format::Gsst => read!(warpread::gsst::GsstReaderBuilder),
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(o) => o,
        Err(p) => Outcome::Panic(
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default(),
        ),
    }
}

/// `None` when equal, else the first difference.
fn compare(a: &[RecordBatch], b: &[RecordBatch]) -> Option<String> {
    let rows = |x: &[RecordBatch]| x.iter().map(|b| b.num_rows()).sum::<usize>();
    if rows(a) != rows(b) {
        return Some(format!("{} rows against {}", rows(a), rows(b)));
    }
    if a.is_empty() || b.is_empty() {
        return (a.len() != b.len() && rows(a) > 0).then(|| "batch counts".into());
    }
    if a[0].schema() != b[0].schema() {
        return Some(format!(
            "schemas {:?} against {:?}",
            a[0].schema(),
            b[0].schema()
        ));
    }
    let cat = |x: &[RecordBatch]| warpread::arrow::compute::concat_batches(&x[0].schema(), x);
    match (cat(a), cat(b)) {
        (Ok(x), Ok(y)) => {
            if x == y {
                return None;
            }
            for (i, (p, q)) in x.columns().iter().zip(y.columns()).enumerate() {
                if p != q {
                    return Some(format!(
                        "column {i} ({}) differs",
                        x.schema().field(i).name()
                    ));
                }
            }
            Some("batches differ".into())
        }
        (x, y) => Some(format!("cannot concatenate: {:?} / {:?}", x.err(), y.err())),
    }
}

struct Args {
    seeds: Vec<PathBuf>,
    containers: Vec<PathBuf>,
    seed: u64,
    first: u64,
    mutants: u64,
    device: usize,
    cpu_only: bool,
    time_limit: Option<Duration>,
    max_seed_bytes: usize,
    dump: Option<PathBuf>,
    log: Option<PathBuf>,
    write: Option<PathBuf>,
    dir: Option<PathBuf>,
    kernel_cache: Option<PathBuf>,
}

fn parse_args() -> Args {
    let mut a = Args {
        seeds: Vec::new(),
        containers: Vec::new(),
        seed: 34,
        first: 0,
        mutants: 1000,
        device: 0,
        cpu_only: false,
        time_limit: None,
        max_seed_bytes: 256 * 1024,
        dump: None,
        log: None,
        write: None,
        dir: None,
        kernel_cache: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || {
            it.next()
                .unwrap_or_else(|| usage(&format!("{k} needs a value")))
        };
        let num = |s: String| {
            s.parse::<u64>()
                .unwrap_or_else(|_| usage(&format!("bad number {s}")))
        };
        match k.as_str() {
            "--seeds" => a.seeds.push(v().into()),
            "--containers" => a.containers.push(v().into()),
            "--seed" => a.seed = num(v()),
            "--first" => a.first = num(v()),
            "--mutants" => a.mutants = num(v()),
            "--device" => a.device = num(v()) as usize,
            "--cpu-only" => a.cpu_only = true,
            "--time-limit" => a.time_limit = Some(Duration::from_secs(num(v()))),
            "--max-seed-bytes" => a.max_seed_bytes = num(v()) as usize,
            "--dump" => a.dump = Some(v().into()),
            "--log" => a.log = Some(v().into()),
            "--write" => a.write = Some(v().into()),
            "--dir" => a.dir = Some(v().into()),
            "--kernel-cache" => a.kernel_cache = Some(v().into()),
            "-h" | "--help" => usage(""),
            _ => usage(&format!("unknown argument {k}")),
        }
    }
    a
}

fn usage(why: &str) -> ! {
    eprintln!(
        "{why}\nusage: gpu_fuzz_diff --seeds DIR... [--seed S] [--first I] [--mutants N] [--device K] \
         [--containers DIR...] [--cpu-only] [--time-limit SECS] [--max-seed-bytes N] [--dump DIR] [--log FILE] \
         [--write DIR] [--dir DIR] [--kernel-cache DIR]"
    );
    std::process::exit(2)
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| usage(&format!("{}: {e}", dir.display())))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

#[derive(Default)]
struct Counts {
    mutants: u64,
    both_ok_equal: u64,
    both_err: u64,
    err_variant_differs: u64,
    disagreements: u64,
    panics: u64,
    gpu_driver_errors: u64,
    slowest_ms: u128,
    slowest: String,
    variant_pairs: BTreeMap<String, u64>,
    ops: BTreeMap<String, u64>,
}

fn open_cuda(a: &Args) -> Arc<CudaBackend> {
    let options = CudaOptions::default()
        .with_host_share(false)
        .with_kernel_cache(a.kernel_cache.clone());
    match CudaBackend::with_options(a.device, options) {
        Ok(b) => Arc::new(b),
        Err(e) => {
            eprintln!("cannot open CUDA device {}: {e}", a.device);
            std::process::exit(3)
        }
    }
}

fn main() {
    let a = parse_args();
    let mut log: Box<dyn Write> = match &a.log {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).unwrap_or_else(|e| usage(&format!("{}: {e}", p.display()))),
        )),
        None => Box::new(std::io::sink()),
    };
    // The work: (name, format, bytes, what) per mutant.
    let mut seeds = Vec::new();
    let dirs = a.seeds.iter().map(|d| (d, None));
    for (d, as_container) in dirs.chain(a.containers.iter().map(|d| (d, Some(Format::Gsst)))) {
        for p in files_in(d) {
            if std::fs::metadata(&p)
                .map(|m| m.len() as usize > a.max_seed_bytes)
                .unwrap_or(true)
            {
                continue;
            }
            let format = as_container.or_else(|| Format::of(&p));
            if let Some(s) = format.and_then(|f| Seed::load(&p, f)) {
                seeds.push(s);
            }
        }
    }
    for f in [Format::Orc, Format::Parquet, Format::Gsst] {
        let of = seeds.iter().filter(|s| s.format == f);
        let (n, meta, data) = of.fold((0, 0, 0), |(n, m, d), s| {
            (n + 1, m + s.meta.len(), d + s.data.len())
        });
        eprintln!("{f:?}: {n} seeds, {meta} metadata and {data} data regions");
    }
    let replay = a.dir.as_ref().map(|d| files_in(d));
    if replay.is_none() && seeds.is_empty() {
        usage("no seed files (.orc, .parquet, .gsst under --seeds; any file under --containers)");
    }
    let n = match &replay {
        Some(files) => files.len() as u64,
        None => a.mutants,
    };
    if let Some(w) = &a.write {
        std::fs::create_dir_all(w).unwrap();
        for i in a.first..a.first + n {
            let (s, b, _) = mutant(&seeds, a.seed, i);
            std::fs::write(w.join(format!("m{i:07}.{}", seeds[s].format.ext())), b).unwrap();
        }
        println!("SUMMARY wrote={n} seeds={}", seeds.len());
        return;
    }
    eprintln!(
        "gpu_fuzz_diff: {} seeds, mutants {}..{} of seed {}, {}",
        seeds.len(),
        a.first,
        a.first + n,
        a.seed,
        if a.cpu_only {
            "cpu against cpu".to_string()
        } else {
            format!("cpu against cuda:{}", a.device)
        }
    );
    let cpu: Arc<dyn Backend> = Arc::new(CpuBackend::new());
    // The CUDA backend, kept typed for its counters (stages it ran on the
    // device); a fresh one after a driver error adds to the count.
    let mut cuda: Option<Arc<CudaBackend>> = (!a.cpu_only).then(|| open_cuda(&a));
    let mut stages_before = 0;
    let mut gpu: Arc<dyn Backend> = match &cuda {
        Some(c) => c.clone(),
        None => Arc::new(CpuBackend::new()),
    };
    if let Some(d) = &a.dump {
        std::fs::create_dir_all(d).unwrap();
    }
    let start = Instant::now();
    let mut c = Counts::default();
    for i in a.first..a.first + n {
        if a.time_limit.is_some_and(|t| start.elapsed() >= t) {
            break;
        }
        let (name, format, bytes, what) = match &replay {
            Some(files) => {
                let p = &files[(i - a.first) as usize];
                let Some(f) = Format::of(p) else { continue };
                let b = std::fs::read(p).unwrap_or_default();
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    f,
                    b,
                    "file".to_string(),
                )
            }
            None => {
                let (s, b, ops) = mutant(&seeds, a.seed, i);
                let name = format!("m{i:07}-{}", seeds[s].name);
                (name, seeds[s].format, b, ops)
            }
        };
        for op in what.split('+') {
            *c.ops.entry(op.to_string()).or_default() += 1;
        }
        let bytes = Bytes::from(bytes);
        let t = Instant::now();
        let x = read_all(format, &name, bytes.clone(), cpu.clone());
        let y = read_all(format, &name, bytes.clone(), gpu.clone());
        let ms = t.elapsed().as_millis();
        if ms > c.slowest_ms {
            c.slowest_ms = ms;
            c.slowest = name.clone();
        }
        c.mutants += 1;
        let verdict = match (&x, &y) {
            (_, Outcome::Err(v, m)) if v == "Cuda" => {
                c.gpu_driver_errors += 1;
                Some(format!("CUDA driver error: {m}"))
            }
            (Outcome::Panic(p), _) | (_, Outcome::Panic(p)) => {
                c.panics += 1;
                Some(format!("panic: {p}"))
            }
            (Outcome::Ok(p), Outcome::Ok(q)) => match compare(p, q) {
                None => {
                    c.both_ok_equal += 1;
                    None
                }
                Some(d) => Some(format!("different batches: {d}")),
            },
            (Outcome::Err(v, _), Outcome::Err(w, _)) => {
                c.both_err += 1;
                if v != w {
                    c.err_variant_differs += 1;
                }
                *c.variant_pairs.entry(format!("{v}/{w}")).or_default() += 1;
                None
            }
            (Outcome::Ok(_), Outcome::Err(_, m)) => Some(format!("only the GPU fails: {m}")),
            (Outcome::Err(_, m), Outcome::Ok(_)) => Some(format!("only the CPU fails: {m}")),
        };
        let _ = writeln!(log, "{name}\t{what}\t{}\t{}\t{ms}ms", x.tag(), y.tag());
        // Flushed per mutant: a process killed at the call's time limit
        // still leaves its count.
        let _ = log.flush();
        if let Some(v) = verdict {
            c.disagreements += 1;
            println!("DISAGREEMENT {name} ({what}): {v}");
            let _ = writeln!(log, "DISAGREEMENT {name}: {v}");
            if let Some(d) = &a.dump {
                let _ = std::fs::write(d.join(format!("{name}.{}", format.ext())), &bytes);
            }
            if v.starts_with("CUDA driver error") && !a.cpu_only {
                // A sticky error poisons the context: start a fresh one.
                let fresh = open_cuda(&a);
                stages_before += cuda.as_ref().map_or(0, |c| c.profile().stages);
                gpu = fresh.clone();
                cuda = Some(fresh);
            }
        }
    }
    let _ = log.flush();
    let pairs: Vec<String> = c
        .variant_pairs
        .iter()
        .map(|(k, v)| format!("{k}:{v}"))
        .collect();
    let ops: Vec<String> = c.ops.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    eprintln!("error variants (cpu/gpu): {}", pairs.join(" "));
    eprintln!("mutations: {}", ops.join(" "));
    println!(
        "SUMMARY mutants={} both_ok_equal={} both_err={} err_variant_differs={} disagreements={} \
         panics={} gpu_driver_errors={} gpu_stages={} seconds={:.1} slowest_ms={} slowest={}",
        c.mutants,
        c.both_ok_equal,
        c.both_err,
        c.err_variant_differs,
        c.disagreements,
        c.panics,
        c.gpu_driver_errors,
        stages_before + cuda.as_ref().map_or(0, |c| c.profile().stages),
        start.elapsed().as_secs_f64(),
        c.slowest_ms,
        c.slowest
    );
    std::process::exit(if c.disagreements > 0 { 1 } else { 0 });
}
