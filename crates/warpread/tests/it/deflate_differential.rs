//! Raw deflate: the CUDA inflate kernel against the CPU reference (zlib-rs)
//! on fresh streams of every block kind, and on corrupt streams.

use warpread::codecs::deflate;
use warpread::codecs::deflate::symbols::{DIST_BASE, DIST_EXTRA, LEN_BASE, LEN_EXTRA};
use warpread::exec::{Backend, CpuBackend, StageOutput, host_share};
use warpread::plan::{ChunkJob, ParquetOp, Stage, StageOp};

use crate::common::{Rng, cuda, cuda_host_share, mutate};

/// Data of one shape; each stresses a different part of inflate.
fn data(rng: &mut Rng, n: usize, shape: u64) -> Vec<u8> {
    match shape {
        // incompressible: stored blocks
        0 => (0..n).map(|_| rng.next() as u8).collect(),
        // period-3 text: overlapping copies (distance 3, length 258)
        1 => b"abc".iter().cycle().take(n).copied().collect(),
        // one byte repeated: distance-1 copies
        2 => vec![rng.next() as u8; n],
        // a random kilobyte repeated ~32 KiB later: the longest distances
        3 => {
            let block: Vec<u8> = (0..1024).map(|_| rng.next() as u8).collect();
            let mut v = Vec::with_capacity(n);
            while v.len() < n {
                v.extend_from_slice(&block);
                v.extend((0..31_000).map(|_| (rng.below(16) + b'a' as u64) as u8));
            }
            v.truncate(n);
            v
        }
        // word soup: dynamic Huffman with a skewed alphabet and short matches
        _ => {
            let words = [
                "the ", "of ", "warp ", "lane ", "decode ", "GPU ", "chunk ", "\n", "ORC ", "zlib ",
            ];
            let mut v = Vec::with_capacity(n + 8);
            while v.len() < n {
                v.extend_from_slice(words[rng.below(words.len() as u64) as usize].as_bytes());
                if rng.below(7) == 0 {
                    v.push(rng.next() as u8);
                }
            }
            v.truncate(n);
            v
        }
    }
}

/// Independent chunks of random sizes and levels, at every input alignment,
/// some with spare output capacity (as ORC's block size gives).
fn random_stage(rng: &mut Rng, raw: &[u8]) -> (Vec<u8>, Stage) {
    let mut bytes = Vec::new();
    let mut jobs = Vec::new();
    let mut at = 0usize;
    let mut out_at = 0u64;
    while at < raw.len() {
        let len = match rng.below(5) {
            0 => 0,
            1 => 1 + rng.below(3) as usize,
            _ => rng.below(200_000) as usize,
        }
        .min(raw.len() - at);
        bytes.extend(std::iter::repeat_n(0xEEu8, rng.below(4) as usize));
        let start = bytes.len() as u64;
        bytes.extend(deflate::deflate(&raw[at..at + len], rng.below(10) as u32));
        let spare = if rng.below(3) == 0 { rng.below(100) } else { 0 };
        jobs.push(ChunkJob {
            input: start..bytes.len() as u64,
            output_offset: out_at,
            values: len as u64 + spare,
            aux: 0,
        });
        out_at += len as u64 + spare;
        at += len;
    }
    let stage = Stage {
        op: StageOp::Inflate,
        jobs,
        output_values: out_at,
        location: Default::default(),
    };
    (bytes, stage)
}

/// Statuses and bytes of an inflate stage on the device against the CPU's:
/// the same acceptance, and where accepted the same size and bytes.
pub(crate) fn assert_same(stage: &Stage, got: &StageOutput, want: &StageOutput, what: &str) {
    for (i, (g, w)) in got.statuses.iter().zip(&want.statuses).enumerate() {
        assert_eq!(g.is_ok(), w.is_ok(), "{what}: chunk {i}: gpu {g}, cpu {w}");
        if w.is_ok() {
            assert_eq!(g.produced, w.produced, "{what}: chunk {i} size");
            let j = &stage.jobs[i];
            let r = j.output_offset as usize..(j.output_offset + w.produced) as usize;
            assert!(
                got.data.as_bytes()[r.clone()] == want.data.as_bytes()[r],
                "{what}: chunk {i} bytes differ"
            );
        }
    }
}

#[test]
fn every_block_kind_matches_the_cpu() {
    let mut rng = Rng::fresh("every_block_kind_matches_the_cpu");
    let cpu = CpuBackend::new();
    let gpu = cuda("every_block_kind_matches_the_cpu");
    for shape in 0..5 {
        let n = rng.below(600_000) as usize;
        let raw = data(&mut rng, n, shape);
        let (bytes, stage) = random_stage(&mut rng, &raw);
        let want = cpu.run_stage(&stage, &bytes).unwrap();
        want.check(&stage).unwrap();
        if let Some(gpu) = gpu {
            let got = gpu.run_stage(&stage, &bytes).unwrap();
            assert_eq!(got.statuses, want.statuses, "shape {shape}");
            assert!(got.data == want.data, "shape {shape}: output differs");
        }
    }
}

#[test]
fn corrupt_deflate_streams_are_rejected_alike() {
    let mut rng = Rng::fresh("corrupt_deflate_streams_are_rejected_alike");
    let cpu = CpuBackend::new();
    let gpu = cuda("corrupt_deflate_streams_are_rejected_alike");
    let mut failures = 0;
    // At least 40 rounds, more until the mutations have broken enough
    // chunks for the comparison to mean something (a fixed round count
    // fell short for about one seed in 500).
    for round in 0..400 {
        if round >= 40 && failures > 20 {
            break;
        }
        let n = rng.below(100_000) as usize;
        let raw = data(&mut rng, n, round % 5);
        let (mut bytes, mut stage) = random_stage(&mut rng, &raw);
        mutate(&mut rng, &mut bytes, &mut stage);
        let want = cpu.run_stage(&stage, &bytes).unwrap();
        failures += want.statuses.iter().filter(|s| !s.is_ok()).count();
        if let Some(gpu) = gpu {
            let got = gpu.run_stage(&stage, &bytes).unwrap();
            assert_same(&stage, &got, &want, &format!("round {round}"));
        }
    }
    assert!(failures > 20, "mutations produced only {failures} failures");
}

/// A stage the CUDA backend splits: two 4 MiB streams would each hold one
/// warp for far longer than 2000 small ones take the whole device, so the
/// host inflates those two (`exec::host_share`) while the kernel runs the
/// rest; a stage of a few large streams runs on the host whole. Output and
/// statuses, corrupt streams included, must be the CPU backend's.
#[test]
fn host_share_of_inflate_stages_matches_the_cpu() {
    let mut rng = Rng::fresh("host_share_of_inflate_stages_matches_the_cpu");
    let cpu = CpuBackend::new();
    let gpu = cuda_host_share("host_share_of_inflate_stages_matches_the_cpu");
    let chunk = |rng: &mut Rng, n: usize| {
        let raw = data(rng, n, 4);
        let packed = deflate::deflate(&raw, 6);
        (raw, packed)
    };
    for (small, large) in [(2000usize, 2usize), (0, 3)] {
        let mut bytes = Vec::new();
        let mut jobs = Vec::new();
        let mut out_at = 0u64;
        for i in 0..small + large {
            let big = small == 0 || i == 7 || i == 1500;
            let n = if big { 4 << 20 } else { 4096 };
            let (raw, packed) = chunk(&mut rng, n);
            let start = bytes.len() as u64;
            bytes.extend_from_slice(&packed);
            jobs.push(ChunkJob {
                input: start..bytes.len() as u64,
                output_offset: out_at,
                values: raw.len() as u64,
                aux: 0,
            });
            out_at += raw.len() as u64;
        }
        // One truncated stream among the small ones, one among the large
        // (raw deflate has no checksum: a flipped bit may decode to other
        // bytes without an error, a cut stream cannot).
        let sizes: Vec<u64> = jobs.iter().map(|j| j.values).collect();
        let largest = (0..jobs.len()).max_by_key(|&i| sizes[i]).unwrap();
        let small_one = (0..jobs.len()).find(|&i| sizes[i] == 4096);
        for i in std::iter::once(largest).chain(small_one) {
            let r = &mut jobs[i].input;
            r.end = r.start + (r.end - r.start) / 2;
        }
        let stage = Stage {
            op: StageOp::Inflate,
            jobs,
            output_values: out_at,
            location: Default::default(),
        };
        let want = cpu.run_stage(&stage, &bytes).unwrap();
        let broken = want.statuses.iter().filter(|s| !s.is_ok()).count();
        assert_eq!(broken, 1 + usize::from(small > 0), "cut streams must fail");
        // The host takes the large streams (all of them when there are no
        // small ones): the split below is the one the backend makes.
        let sizes: Vec<u64> = stage.jobs.iter().map(|j| j.values).collect();
        let threads = rayon::current_num_threads();
        let host = host_share::split(&sizes, threads, &host_share::Model::INFLATE);
        assert_eq!(
            host.len(),
            large,
            "host jobs of {small} small, {large} large"
        );
        if let Some(gpu) = gpu {
            let what = format!("{small} small, {large} large");
            let got = gpu.run_stage(&stage, &bytes).unwrap();
            assert_same(&stage, &got, &want, &what);
            // The next stage reads the output's device mirror: the host's
            // jobs must be there too. A copy of every byte must equal it.
            let out = got.data.as_bytes();
            assert!(gpu.holds_on_device(out), "{what}: no device mirror");
            let copy = Stage::single(
                StageOp::Parquet(ParquetOp::PlainFixed { width: 1 }),
                0..out.len() as u64,
                out.len() as u64,
            );
            let copied = gpu.run_stage(&copy, out).unwrap();
            copied.check(&copy).unwrap();
            assert!(copied.data.as_bytes() == out, "{what}: the mirror differs");
        }
    }
}

/// Deflate written token by token with the fixed codes (RFC 1951 3.2.6),
/// for streams whose exact symbol sequence a test needs.
struct FixedWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl FixedWriter {
    fn new() -> Self {
        Self {
            out: Vec::new(),
            acc: 0,
            n: 0,
        }
    }

    /// `bits` low bits of `v`, least significant first (headers, extra bits).
    fn bits(&mut self, v: u32, bits: u32) {
        self.acc |= u64::from(v) << self.n;
        self.n += bits;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code of `len` bits, most significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        self.bits(code.reverse_bits() >> (32 - len), len);
    }

    fn align(&mut self) {
        if self.n > 0 {
            self.bits(0, 8 - self.n);
        }
    }

    fn stored(&mut self, data: &[u8]) {
        self.bits(0, 3); // not final, stored
        self.align();
        let len = data.len() as u32;
        self.bits(len, 16);
        self.bits(!len & 0xffff, 16);
        self.out.extend_from_slice(data);
    }

    fn symbol(&mut self, s: u32) {
        match s {
            0..=143 => self.code(0x30 + s, 8),
            144..=255 => self.code(0x190 + s - 144, 9),
            256..=279 => self.code(s - 256, 7),
            _ => self.code(0xc0 + s - 280, 8),
        }
    }

    /// A copy of `len` (3..=258) bytes from `dist` (1..=32768) back.
    fn copy(&mut self, len: u32, dist: u32) {
        // The last symbol whose base is at or below the value.
        let symbol = |bases: &[u16], v: u32| bases.iter().rposition(|&b| u32::from(b) <= v);
        let li = symbol(&LEN_BASE, len).expect("a length of 3..=258");
        self.symbol(257 + li as u32);
        self.bits(len - u32::from(LEN_BASE[li]), u32::from(LEN_EXTRA[li]));
        let di = symbol(&DIST_BASE, dist).expect("a distance of 1..=32768");
        self.code(di as u32, 5);
        self.bits(dist - u32::from(DIST_BASE[di]), u32::from(DIST_EXTRA[di]));
    }

    fn finish(mut self) -> Vec<u8> {
        self.align();
        self.out
    }
}

/// A batch of the CUDA kernel's 32 symbols whose output runs past the
/// window room its copies assume: a copy reaching back 3,048 bytes whose
/// destination wraps the 4 KiB window (done last, in order), three long
/// copies up to 766 bytes, 27 literals and a last 258-byte copy, 1,051
/// bytes in all. A kernel that let literals take a batch past its budget
/// wrote the last copy's end over the first copy's source before reading
/// it. The CPU's bytes are checked against the tokens too.
#[test]
fn a_batch_of_literals_after_long_copies_keeps_its_sources() {
    let gpu = cuda("a_batch_of_literals_after_long_copies_keeps_its_sources");
    let mut rng = Rng::fresh("a_batch_of_literals_after_long_copies_keeps_its_sources");
    // 8,187 bytes first: the next output position is 4,091 in the window.
    let head: Vec<u8> = (0..8187).map(|_| rng.next() as u8).collect();
    let mut w = FixedWriter::new();
    w.stored(&head);
    w.bits(0b011, 3); // final, fixed codes
    let mut want = head.clone();
    let copy = |w: &mut FixedWriter, want: &mut Vec<u8>, len: u32, dist: u32| {
        w.copy(len, dist);
        for _ in 0..len {
            want.push(want[want.len() - dist as usize]);
        }
    };
    copy(&mut w, &mut want, 10, 3048);
    for len in [258, 258, 240] {
        copy(&mut w, &mut want, len, 2000);
    }
    for _ in 0..27 {
        let b = rng.next() as u8;
        w.symbol(u32::from(b));
        want.push(b);
    }
    copy(&mut w, &mut want, 258, 1800);
    w.symbol(256);
    let bytes = w.finish();
    assert_eq!(want.len(), 8187 + 1051);

    let stage = Stage::single(StageOp::Inflate, 0..bytes.len() as u64, want.len() as u64);
    let cpu = CpuBackend::new().run_stage(&stage, &bytes).unwrap();
    cpu.check(&stage).unwrap();
    assert!(
        cpu.data.as_bytes() == &want[..],
        "the CPU reference decodes the tokens"
    );
    if let Some(gpu) = gpu {
        let got = gpu.run_stage(&stage, &bytes).unwrap();
        assert_eq!(got.statuses, cpu.statuses);
        let at = got
            .data
            .as_bytes()
            .iter()
            .zip(&want)
            .position(|(g, w)| g != w);
        assert_eq!(at, None, "first differing byte");
    }
}
