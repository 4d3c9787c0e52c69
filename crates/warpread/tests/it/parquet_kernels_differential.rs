//! Parquet decoder kernels (hybrid, PLAIN fixed-width and booleans,
//! dictionary gathers, BYTE_STREAM_SPLIT, DELTA_BINARY_PACKED, BYTE_ARRAY
//! lengths and data in PLAIN, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY):
//! CUDA against
//! the CPU reference on fresh random streams of every shape, width and
//! alignment, on hand-made edge cases, and on damaged inputs (statuses equal
//! exactly, outputs of OK jobs equal); the CPU against the values encoded.

use warpread::codecs::varint::{write, zigzag};
use warpread::codecs::{
    parquet_byte_stream_split, parquet_delta_binary_packed, parquet_delta_byte_array,
    parquet_delta_length_byte_array, parquet_dict, parquet_hybrid, parquet_plain,
};
use warpread::exec::{Backend, CpuBackend, StageOutput};
use warpread::plan::{
    ByteArrayEncoding, ChunkJob, ChunkStatus, IntType, ParquetOp, Stage, StageOp, StatusCode,
};

use crate::common::{Rng, cuda, mutate};

/// Job inputs laid end to end with 0..7 junk bytes before each, so chunk
/// starts take every alignment; `counts[i]` values asked of input `i`.
fn stage_of(rng: &mut Rng, op: ParquetOp, inputs: &[Vec<u8>], counts: &[u64]) -> (Vec<u8>, Stage) {
    stage_of_aux(rng, op, inputs, counts, &vec![0; inputs.len()])
}

/// [`stage_of`] with each job's `aux` parameter.
fn stage_of_aux(
    rng: &mut Rng,
    op: ParquetOp,
    inputs: &[Vec<u8>],
    counts: &[u64],
    auxes: &[u64],
) -> (Vec<u8>, Stage) {
    let mut bytes = Vec::new();
    let mut jobs = Vec::new();
    let mut out = 0u64;
    for ((input, &n), &aux) in inputs.iter().zip(counts).zip(auxes) {
        bytes.extend(std::iter::repeat_n(0xEEu8, rng.below(8) as usize));
        let start = bytes.len() as u64;
        bytes.extend_from_slice(input);
        jobs.push(ChunkJob {
            input: start..bytes.len() as u64,
            output_offset: out,
            values: n,
            aux,
        });
        out += n;
    }
    // Junk after the last chunk too, so a read past a chunk's end would see
    // bytes rather than the allocation's end.
    bytes.extend(std::iter::repeat_n(0xEEu8, rng.below(8) as usize));
    let stage = Stage {
        op: StageOp::Parquet(op),
        jobs,
        output_values: out,
        location: Default::default(),
    };
    (bytes, stage)
}

/// Runs `stage` on the CPU and, with a device, on the GPU: statuses must be
/// equal, and the bytes of every OK job's produced elements too. Returns the
/// CPU's output.
fn both(test: &str, stage: &Stage, bytes: &[u8]) -> StageOutput {
    let want = CpuBackend::new().run_stage(stage, bytes).unwrap();
    for st in &want.statuses {
        assert_ne!(st.status(), StatusCode::Pending, "{test}");
    }
    if let Some(gpu) = cuda(test) {
        let got = gpu.run_stage(stage, bytes).unwrap();
        let w = stage.op.output_width();
        for (i, (job, (g, c))) in stage
            .jobs
            .iter()
            .zip(got.statuses.iter().zip(&want.statuses))
            .enumerate()
        {
            assert_eq!(
                g,
                c,
                "{test} {}: job {i} ({} input bytes, {} values): GPU status {g}, CPU {c}",
                stage.op.name(),
                job.input.end - job.input.start,
                job.values
            );
            if c.is_ok() {
                let r = job.output_offset as usize * w
                    ..(job.output_offset as usize + c.produced as usize) * w;
                assert!(
                    got.data.as_bytes()[r.clone()] == want.data.as_bytes()[r],
                    "{test} {}: job {i}: GPU output differs from the CPU reference",
                    stage.op.name()
                );
            }
        }
    }
    want
}

/// Random chunk sizes, some empty or of one value, a few large.
fn chunk_len(rng: &mut Rng) -> usize {
    match rng.below(8) {
        0 => 0,
        1 => 1,
        2 => rng.below(40) as usize,
        3 => 31 + rng.below(3) as usize,
        4 => rng.below(600) as usize,
        _ => rng.below(20_000) as usize,
    }
}

/// Hybrid values below 2^bw in one of several shapes.
fn hybrid_values(rng: &mut Rng, n: usize, bw: u8) -> Vec<u32> {
    let max = if bw == 32 { u32::MAX } else { (1u32 << bw) - 1 };
    let mut v = Vec::with_capacity(n);
    let shape = rng.below(5);
    while v.len() < n {
        match shape {
            // long runs (RLE runs with multi-byte headers)
            0 => {
                let x = rng.next() as u32 & max;
                v.extend(std::iter::repeat_n(x, 1 + rng.below(3000) as usize));
            }
            // random (bit-packed)
            1 => v.push(rng.next() as u32 & max),
            // mixed short and long runs, as levels look
            2 => {
                let x = rng.next() as u32 & max;
                v.extend(std::iter::repeat_n(x, 1 + rng.below(12) as usize));
            }
            // extremes
            3 => v.push([0, max, max >> 1, 1 & max][rng.below(4) as usize]),
            // small values in a wide width
            _ => v.push(rng.below(3) as u32 & max),
        }
    }
    v.truncate(n);
    v
}

#[test]
fn hybrid_every_width_matches() {
    let test = "hybrid_every_width_matches";
    let mut rng = Rng::fresh(test);
    for bw in 0..=32u8 {
        let mut inputs = Vec::new();
        let mut counts = Vec::new();
        let mut wants = Vec::new();
        for _ in 0..1 + rng.below(40) {
            let n = chunk_len(&mut rng);
            let vals = hybrid_values(&mut rng, n, bw);
            let mut enc = parquet_hybrid::encode(&vals, bw);
            // Ask for a prefix now and then (pages hold more levels than a
            // column needs; the rest of the stream is ignored).
            let ask = if n > 0 && rng.below(4) == 0 {
                rng.below(n as u64 + 1) as usize
            } else {
                n
            };
            // Or cut the padding of the last bit-packed group: the values
            // asked for are still all there.
            if ask == n && rng.below(4) == 0 && bw > 0 {
                let pad_bits = (8 - n % 8) % 8 * bw as usize;
                let cut = pad_bits / 8;
                if enc.len() > cut
                    && vals.len() >= 8
                    && vals[n - 8..].windows(2).any(|w| w[0] != w[1])
                {
                    // only bit-packed endings have padding to cut safely
                    enc.truncate(enc.len() - cut);
                }
            }
            inputs.push(enc);
            counts.push(ask as u64);
            wants.extend_from_slice(&vals[..ask]);
        }
        let (bytes, stage) = stage_of(
            &mut rng,
            ParquetOp::Hybrid { bit_width: bw },
            &inputs,
            &counts,
        );
        let out = both(test, &stage, &bytes);
        // The cut may have hit an RLE ending; those jobs fail alike on both
        // backends, and are left out of the value check.
        for (job, st) in stage.jobs.iter().zip(&out.statuses) {
            if st.is_ok() {
                let r = job.output_offset as usize..(job.output_offset + job.values) as usize;
                assert_eq!(&out.data.typed::<u32>()[r.clone()], &wants[r], "bw {bw}");
            } else {
                assert_eq!(st.status(), StatusCode::InputTruncated, "bw {bw}: {st}");
            }
        }
    }
}

/// Hand-made hybrid streams: (bit width, bytes, count, expected status).
fn hybrid_cases() -> Vec<(u8, Vec<u8>, u64, StatusCode)> {
    use StatusCode::*;
    let mut huge_rle = Vec::new();
    write(&mut huge_rle, (0x7fff_ffffu64) << 1); // 2^31 - 1 copies
    huge_rle.push(5);
    let mut huge_packed = Vec::new();
    write(&mut huge_packed, ((0x7fff_ffffu64) << 1) | 1);
    huge_packed.extend((0..200u8).map(|i| i.wrapping_mul(37)));
    vec![
        (33, vec![0], 0, InputCorrupt),
        (40, vec![2, 1], 1, InputCorrupt),
        (3, vec![], 0, Ok),
        (3, vec![], 4, OutputShort),
        (3, vec![0x80], 4, InputTruncated),
        (3, vec![0x80, 0x80, 0x80, 0x80, 0x80, 1], 4, VarintOverlong),
        (3, vec![0x80, 0x80, 0x80, 0x80, 0x10], 4, ValueOutOfRange),
        (3, vec![0xfe, 0xff, 0xff, 0xff, 0x0f, 1], 4, Ok),
        (3, vec![8, 9], 4, ValueOutOfRange),
        (3, vec![8, 7], 4, Ok),
        (16, vec![8, 1], 4, InputTruncated),
        (16, vec![8, 1, 0], 4, Ok),
        (32, vec![8, 0xff, 0xff, 0xff, 0xff], 4, Ok),
        (31, vec![8, 0xff, 0xff, 0xff, 0xff], 4, ValueOutOfRange),
        (3, vec![4, 1], 4, OutputShort),
        (8, vec![0x03, 1, 2], 4, InputTruncated),
        (8, vec![0x03, 1, 2], 2, Ok),
        (0, vec![0x03], 8, Ok),
        (0, vec![0x03], 9, OutputShort),
        (0, vec![0x02], 1, Ok),
        (0, vec![0x00, 0x02], 1, Ok),
        (5, vec![0x01, 0x02, 1], 1, Ok),
        (5, vec![0x01, 0x01, 0x02, 1], 1, Ok),
        (7, huge_rle, 100_000, Ok),
        (7, huge_packed.clone(), 228, Ok),
        (7, huge_packed, 229, InputTruncated),
    ]
}

#[test]
fn hybrid_edge_cases_match() {
    let test = "hybrid_edge_cases_match";
    let mut rng = Rng::fresh(test);
    for (bw, input, n, code) in hybrid_cases() {
        let (bytes, stage) = stage_of(
            &mut rng,
            ParquetOp::Hybrid { bit_width: bw },
            std::slice::from_ref(&input),
            &[n],
        );
        let out = both(test, &stage, &bytes);
        assert_eq!(
            out.statuses[0].status(),
            code,
            "bw {bw} {input:x?} n {n}: {}",
            out.statuses[0]
        );
    }
}

#[test]
fn plain_bool_and_fixed_match() {
    let test = "plain_bool_and_fixed_match";
    let mut rng = Rng::fresh(test);
    // Booleans.
    for _ in 0..4 {
        let mut inputs = Vec::new();
        let mut counts = Vec::new();
        let mut wants = Vec::new();
        for _ in 0..1 + rng.below(60) {
            let n = chunk_len(&mut rng);
            let vals: Vec<bool> = (0..n).map(|_| rng.below(2) == 0).collect();
            let mut enc = parquet_plain::encode_bool(&vals);
            // Trailing bytes are ignored.
            enc.extend(std::iter::repeat_n(0xA5u8, rng.below(3) as usize));
            inputs.push(enc);
            counts.push(n as u64);
            wants.extend(vals.iter().map(|&b| u8::from(b)));
        }
        let (bytes, stage) = stage_of(&mut rng, ParquetOp::PlainBool, &inputs, &counts);
        let out = both(test, &stage, &bytes);
        out.check(&stage).unwrap();
        assert_eq!(out.data.as_bytes(), wants.as_slice());
    }
    // Fixed widths, INT96 and odd FIXED_LEN_BYTE_ARRAY widths included.
    for width in [1u32, 2, 3, 4, 5, 7, 8, 12, 16, 33] {
        let mut inputs = Vec::new();
        let mut counts = Vec::new();
        let mut wants = Vec::new();
        for _ in 0..1 + rng.below(40) {
            let n = chunk_len(&mut rng) / if width > 8 { 4 } else { 1 };
            let vals: Vec<u8> = (0..n * width as usize).map(|_| rng.next() as u8).collect();
            let mut enc = vals.clone();
            enc.extend(std::iter::repeat_n(
                0xA5u8,
                rng.below(2 * width as u64) as usize,
            ));
            inputs.push(enc);
            counts.push(n as u64);
            wants.extend(vals);
        }
        let (bytes, stage) = stage_of(&mut rng, ParquetOp::PlainFixed { width }, &inputs, &counts);
        let out = both(test, &stage, &bytes);
        out.check(&stage).unwrap();
        assert_eq!(out.data.as_bytes(), wants.as_slice(), "width {width}");
    }
}

#[test]
fn dict_gather_and_byte_stream_split_match() {
    let test = "dict_gather_and_byte_stream_split_match";
    let mut rng = Rng::fresh(test);
    for width in [1u32, 2, 3, 4, 8, 12, 16] {
        let w = width as usize;
        // Dictionary gathers.
        let mut inputs = Vec::new();
        let mut counts = Vec::new();
        let mut wants = Vec::new();
        for _ in 0..1 + rng.below(40) {
            let n = chunk_len(&mut rng);
            let dict_len = 1 + rng.below(300) as usize;
            let dict: Vec<u8> = (0..dict_len * w).map(|_| rng.next() as u8).collect();
            let idx: Vec<u32> = (0..n).map(|_| rng.below(dict_len as u64) as u32).collect();
            let mut enc = Vec::new();
            parquet_dict::encode_input(&dict, w, &idx, &mut enc);
            inputs.push(enc);
            counts.push(n as u64);
            for &k in &idx {
                wants.extend_from_slice(&dict[k as usize * w..(k as usize + 1) * w]);
            }
        }
        let (bytes, stage) = stage_of(&mut rng, ParquetOp::DictGather { width }, &inputs, &counts);
        let out = both(test, &stage, &bytes);
        out.check(&stage).unwrap();
        assert_eq!(
            out.data.as_bytes(),
            wants.as_slice(),
            "gather width {width}"
        );

        // BYTE_STREAM_SPLIT, sometimes asking for fewer values than the page
        // holds.
        let mut inputs = Vec::new();
        let mut counts = Vec::new();
        let mut wants = Vec::new();
        for _ in 0..1 + rng.below(40) {
            let n = chunk_len(&mut rng);
            let vals: Vec<u8> = (0..n * w).map(|_| rng.next() as u8).collect();
            let ask = if rng.below(4) == 0 {
                rng.below(n as u64 + 1) as usize
            } else {
                n
            };
            inputs.push(parquet_byte_stream_split::encode(&vals, w));
            counts.push(ask as u64);
            wants.extend_from_slice(&vals[..ask * w]);
        }
        let (bytes, stage) = stage_of(
            &mut rng,
            ParquetOp::ByteStreamSplit { width },
            &inputs,
            &counts,
        );
        let out = both(test, &stage, &bytes);
        out.check(&stage).unwrap();
        assert_eq!(out.data.as_bytes(), wants.as_slice(), "bss width {width}");
    }
}

/// A dictionary page job of `n` indices below `d` (some shapes of
/// `hybrid_values`, at the smallest bit width that holds them or wider),
/// with 0..7 junk bytes between the dictionary and the indices (as a
/// column chunk has other pages and levels there); returns it with its aux.
fn dict_page(rng: &mut Rng, dict: &[u8], d: usize, n: usize) -> (Vec<u8>, u64) {
    let need = (usize::BITS - (d - 1).leading_zeros()) as u8;
    let bw = (need + rng.below(3) as u8).min(32);
    let idx: Vec<u32> = hybrid_values(rng, n, bw)
        .into_iter()
        .map(|v| v % d as u32)
        .collect();
    let mut e = dict.to_vec();
    e.extend(std::iter::repeat_n(0xEEu8, rng.below(8) as usize));
    let at = e.len();
    e.push(bw);
    e.extend(parquet_hybrid::encode(&idx, bw));
    (e, parquet_dict::page_aux(dict.len() as u32, at as u32))
}

#[test]
fn dict_pages_match() {
    let test = "dict_pages_match";
    let mut rng = Rng::fresh(test);
    for width in [1u32, 2, 3, 4, 8, 12, 16] {
        let w = width as usize;
        let mut inputs = Vec::new();
        let mut auxes = Vec::new();
        let mut counts = Vec::new();
        let mut wants = Vec::new();
        for _ in 0..1 + rng.below(30) {
            let n = chunk_len(&mut rng);
            let most = [2, 300, 70_000][rng.below(3) as usize];
            let d = 1 + rng.below(most) as usize;
            let dict: Vec<u8> = (0..d * w).map(|_| rng.next() as u8).collect();
            let (input, aux) = dict_page(&mut rng, &dict, d, n);
            // The reference: the hybrid decoder's indices, gathered.
            let at = (aux >> 32) as usize;
            let bw = input[at];
            let mut idx = vec![0u32; n];
            assert!(parquet_hybrid::decode(bw, &input[at + 1..], &mut idx).is_ok());
            for k in idx {
                wants.extend_from_slice(&dict[k as usize * w..(k as usize + 1) * w]);
            }
            inputs.push(input);
            auxes.push(aux);
            counts.push(n as u64);
        }
        let op = ParquetOp::DictPage { width };
        let (bytes, stage) = stage_of_aux(&mut rng, op, &inputs, &counts, &auxes);
        let out = both(test, &stage, &bytes);
        out.check(&stage).unwrap();
        assert_eq!(out.data.as_bytes(), wants.as_slice(), "width {width}");
    }
}

/// A byte dictionary job (`ParquetOp::ByteDictOffsets` / `ByteDictData`)
/// of 1..6 pages over a dictionary of `d` random entries of 0..max bytes;
/// with `bad`, some indices lie past the dictionary. Returns the input and
/// the gathered strings.
fn byte_dict_job(rng: &mut Rng, d: usize, max: u64, bad: bool) -> (Vec<u8>, Vec<Vec<u8>>) {
    let entries: Vec<Vec<u8>> = (0..d)
        .map(|_| (0..rng.below(max + 1)).map(|_| rng.next() as u8).collect())
        .collect();
    let refs: Vec<&[u8]> = entries.iter().map(|e| e.as_slice()).collect();
    let mut sections = Vec::new();
    let mut want = Vec::new();
    for _ in 0..1 + rng.below(6) {
        let n = if rng.below(5) == 0 {
            0
        } else {
            chunk_len(rng).min(20_000)
        };
        let need = (usize::BITS - d.max(2).saturating_sub(1).leading_zeros()) as u8;
        let bw = (need + rng.below(3) as u8 + u8::from(bad)).min(32);
        let idx: Vec<u32> = hybrid_values(rng, n, bw)
            .into_iter()
            .map(|v| if bad { v } else { v % d as u32 })
            .collect();
        want.extend(idx.iter().filter_map(|&k| entries.get(k as usize).cloned()));
        let mut sec = vec![bw];
        sec.extend(parquet_hybrid::encode(&idx, bw));
        sections.push((
            n as u32,
            if n == 0 && rng.below(2) == 0 {
                vec![]
            } else {
                sec
            },
        ));
    }
    let pages: Vec<(u32, &[u8])> = sections.iter().map(|(n, s)| (*n, s.as_slice())).collect();
    (parquet_dict::bytes::encode_job(&refs, &pages), want)
}

/// Byte dictionary gathers, kernel against the CPU: offsets, then bytes
/// sized by them; with indices past the dictionary, wrong output sizes and
/// damaged inputs, the same statuses.
#[test]
fn byte_dict_gathers_match() {
    let test = "byte_dict_gathers_match";
    let mut rng = Rng::fresh(test);
    for round in 0..4 {
        let mut inputs = Vec::new();
        let mut wants = Vec::new();
        for _ in 0..1 + rng.below(20) {
            let most = [3, 40, 3000][rng.below(3) as usize];
            let d = 1 + rng.below(most) as usize;
            let max = [1, 12, 40, 200][rng.below(4) as usize];
            let bad = round == 3 && rng.below(2) == 0;
            let (input, want) = byte_dict_job(&mut rng, d, max, bad);
            inputs.push(input);
            wants.push(want);
        }
        let counts: Vec<u64> = wants.iter().map(|w| w.len() as u64 + 1).collect();
        let (bytes, stage) = stage_of(&mut rng, ParquetOp::ByteDictOffsets, &inputs, &counts);
        let ends = both(test, &stage, &bytes);
        let totals: Vec<u64> = wants
            .iter()
            .map(|w| w.iter().map(|e| e.len() as u64).sum())
            .collect();
        let (bytes, stage) = stage_of(&mut rng, ParquetOp::ByteDictData, &inputs, &totals);
        let data = both(test, &stage, &bytes);
        if round < 3 {
            data.check(&stage).unwrap();
            assert_eq!(
                data.data.as_bytes(),
                wants.concat().concat().as_slice(),
                "round {round}"
            );
            let mut want_ends = Vec::new();
            for w in &wants {
                want_ends.push(0u32);
                let mut o = 0u32;
                for e in w {
                    o += e.len() as u32;
                    want_ends.push(o);
                }
            }
            assert_eq!(
                ends.data.typed::<u32>(),
                want_ends.as_slice(),
                "round {round}"
            );
        }
    }
    // Wrong sizes (one value or byte off either way) and damaged inputs.
    for _ in 0..300 {
        let d = 1 + rng.below(50) as usize;
        let bad = rng.below(8) == 0;
        let (input, want) = byte_dict_job(&mut rng, d, 20, bad);
        let total: u64 = want.iter().map(|e| e.len() as u64).sum();
        let skew = rng.below(3) as i64 - 1;
        let values = (want.len() as i64 + 1 + skew).max(0) as u64;
        let bytes_len = (total as i64 + skew).max(0) as u64;
        for (op, n) in [
            (ParquetOp::ByteDictOffsets, values),
            (ParquetOp::ByteDictData, bytes_len),
        ] {
            let (mut bytes, mut stage) = stage_of(&mut rng, op, std::slice::from_ref(&input), &[n]);
            if rng.below(2) == 0 {
                mutate(&mut rng, &mut bytes, &mut stage);
            }
            both(test, &stage, &bytes);
        }
    }
}

#[test]
fn dict_page_edge_cases_match() {
    use StatusCode::*;
    let test = "dict_page_edge_cases_match";
    let mut rng = Rng::fresh(test);
    let page = |dict: &[u8], bw: u8, idx: &[u32]| {
        parquet_dict::page_input(dict, bw, &parquet_hybrid::encode(idx, bw))
    };
    let aux = parquet_dict::page_aux;
    let dict = [1u8, 2, 3, 4, 5, 6];
    let mut packed_bad = vec![0u32; 70];
    packed_bad[45] = 3;
    packed_bad[3] = 2;
    let (mut wide, wide_aux) = page(&dict, 2, &[1; 10]);
    wide[6] = 33;
    let (ok4, ok4_aux) = page(&dict, 2, &[0, 2, 1, 2]);
    let n = ok4.len() as u32;
    // (input, aux, count, status, detail, produced)
    let cases: Vec<(Vec<u8>, u64, u64, StatusCode, u32, u64)> = vec![
        (vec![], 0, 0, Ok, 0, 0),
        (vec![], 0, 1, InputTruncated, 0, 0),
        (dict.to_vec(), aux(6, 6), 1, InputTruncated, 6, 0),
        (ok4.clone(), ok4_aux, 4, Ok, 0, 4),
        // A dictionary not of whole entries, past the input; indices
        // inside the dictionary or past the input.
        (ok4.clone(), aux(5, 6), 4, InputCorrupt, 0, 0),
        (ok4.clone(), aux(n + 2, n + 2), 4, InputCorrupt, 0, 0),
        (ok4.clone(), aux(6, 4), 4, InputCorrupt, 0, 0),
        (ok4.clone(), aux(6, n + 1), 4, InputCorrupt, 0, 0),
        // Only the dictionary's bytes are entries: a shorter one makes
        // index 2 out of range.
        (ok4, aux(4, 6), 4, ValueOutOfRange, 7, 1),
        {
            let (v, a) = page(&dict, 2, &[]);
            (v, a, 0, Ok, 0, 0)
        },
        {
            let (v, a) = page(&dict, 0, &[0; 9]);
            (v, a, 9, Ok, 0, 9)
        },
        {
            let (v, a) = page(&[], 0, &[0; 9]);
            (v, a, 9, ValueOutOfRange, 1, 0)
        },
        {
            let (v, a) = page(&dict, 2, &[3; 20]);
            (v, a, 20, ValueOutOfRange, 7, 0)
        },
        {
            let (v, a) = page(&dict, 2, &packed_bad);
            (v, a, 70, ValueOutOfRange, 12, 45)
        },
        {
            let (v, a) = page(&dict, 2, &[1; 10]);
            (v, a, 11, OutputShort, 9, 10)
        },
        (wide, wide_aux, 10, InputCorrupt, 6, 0),
    ];
    let inputs: Vec<Vec<u8>> = cases.iter().map(|c| c.0.clone()).collect();
    let auxes: Vec<u64> = cases.iter().map(|c| c.1).collect();
    let counts: Vec<u64> = cases.iter().map(|c| c.2).collect();
    let op = ParquetOp::DictPage { width: 2 };
    let (bytes, stage) = stage_of_aux(&mut rng, op, &inputs, &counts, &auxes);
    let out = both(test, &stage, &bytes);
    for (i, (st, c)) in out.statuses.iter().zip(&cases).enumerate() {
        assert_eq!(
            (st.status(), st.detail, st.produced),
            (c.3, c.4, c.5),
            "case {i}"
        );
    }
}

#[test]
fn plain_gather_split_edge_cases_match() {
    use StatusCode::*;
    let test = "plain_gather_split_edge_cases_match";
    let mut rng = Rng::fresh(test);
    let mut dict = Vec::new();
    parquet_dict::encode_input(&[1, 2, 3, 4, 5, 6], 2, &[0, 2, 1, 3, 0], &mut dict);
    let cases: Vec<(ParquetOp, Vec<u8>, u64, StatusCode)> = vec![
        (ParquetOp::PlainBool, vec![], 0, Ok),
        (ParquetOp::PlainBool, vec![0xff], 8, Ok),
        (ParquetOp::PlainBool, vec![0xff], 9, InputTruncated),
        (ParquetOp::PlainFixed { width: 0 }, vec![1, 2], 5, Ok),
        (
            ParquetOp::PlainFixed { width: 4 },
            vec![1, 2, 3, 4, 5],
            2,
            InputTruncated,
        ),
        (ParquetOp::PlainFixed { width: 3 }, vec![0; 9], 3, Ok),
        (
            ParquetOp::DictGather { width: 2 },
            vec![1, 0, 0],
            0,
            InputTruncated,
        ),
        (ParquetOp::DictGather { width: 0 }, vec![1, 0, 0, 0], 3, Ok),
        (ParquetOp::DictGather { width: 2 }, dict.clone(), 3, Ok),
        (
            ParquetOp::DictGather { width: 2 },
            dict.clone(),
            4,
            ValueOutOfRange,
        ),
        (
            ParquetOp::DictGather { width: 2 },
            dict.clone(),
            6,
            InputTruncated,
        ),
        (
            ParquetOp::DictGather { width: 2 },
            dict[..dict.len() - 1].to_vec(),
            5,
            InputTruncated,
        ),
        (
            ParquetOp::DictGather { width: 4 },
            vec![0xff, 0xff, 0xff, 0xff],
            0,
            InputTruncated,
        ),
        (
            ParquetOp::ByteStreamSplit { width: 0 },
            vec![],
            0,
            InputCorrupt,
        ),
        (
            ParquetOp::ByteStreamSplit { width: 4 },
            vec![0; 7],
            1,
            InputCorrupt,
        ),
        (
            ParquetOp::ByteStreamSplit { width: 4 },
            vec![0; 8],
            3,
            OutputShort,
        ),
        (ParquetOp::ByteStreamSplit { width: 4 }, vec![], 0, Ok),
    ];
    for (op, input, n, code) in cases {
        let (bytes, stage) = stage_of(&mut rng, op, std::slice::from_ref(&input), &[n]);
        let out = both(test, &stage, &bytes);
        assert_eq!(
            out.statuses[0].status(),
            code,
            "{op:?} {input:x?} n {n}: {}",
            out.statuses[0]
        );
    }
    // An out-of-range index deep in a long job: the lowest one wins.
    let idx: Vec<u32> = (0..5000u32)
        .map(|i| if i == 3333 || i == 4000 { 9 } else { i % 3 })
        .collect();
    let mut input = Vec::new();
    parquet_dict::encode_input(&[7; 24], 8, &idx, &mut input);
    let (bytes, stage) = stage_of(
        &mut rng,
        ParquetOp::DictGather { width: 8 },
        &[input],
        &[5000],
    );
    let st = both(test, &stage, &bytes).statuses[0];
    assert_eq!(
        (st.status(), st.produced, st.detail),
        (ValueOutOfRange, 3333, 4 + 24 + 4 * 3333)
    );
}

fn delta_values(rng: &mut Rng, n: usize, bits: u32) -> Vec<u64> {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let mut v = Vec::with_capacity(n);
    let mut cur = rng.next();
    let shape = rng.below(6);
    while v.len() < n {
        match shape {
            // constant steps: zero-width miniblocks
            0 => cur = cur.wrapping_add(7),
            // small random steps
            1 => {
                let bits = rng.below(20);
                cur = cur.wrapping_add(rng.below(1 << bits)).wrapping_sub(1 << 10);
            }
            // full-width random: widths at the type's maximum
            2 => cur = rng.next(),
            // extremes: wrapping deltas
            3 => cur = [0, mask, mask >> 1, (mask >> 1) + 1, 1][rng.below(5) as usize],
            // mostly constant with rare jumps: mixed widths per miniblock
            4 => {
                cur = if rng.below(50) == 0 {
                    rng.next()
                } else {
                    cur.wrapping_add(1)
                };
            }
            // widths around 56..64 bits
            _ => cur = cur.wrapping_add(rng.next() >> rng.below(10)),
        }
        v.push(cur & mask);
    }
    v
}

fn sext_bytes(vals: &[u64], bits: u32) -> Vec<u8> {
    if bits == 32 {
        vals.iter()
            .flat_map(|&v| (v as u32).to_le_bytes())
            .collect()
    } else {
        vals.iter().flat_map(|&v| v.to_le_bytes()).collect()
    }
}

#[test]
fn delta_binary_packed_matches() {
    let test = "delta_binary_packed_matches";
    let mut rng = Rng::fresh(test);
    let shapes: [(usize, usize); 6] =
        [(128, 4), (128, 1), (256, 8), (256, 2), (512, 4), (1024, 32)];
    for (ty, bits) in [(IntType::I32, 32u32), (IntType::I64, 64)] {
        for round in 0..6 {
            let mut inputs = Vec::new();
            let mut counts = Vec::new();
            let mut wants = Vec::new();
            for _ in 0..1 + rng.below(30) {
                let n = chunk_len(&mut rng);
                let vals = delta_values(&mut rng, n, bits);
                let enc = if round == 0 {
                    parquet_delta_binary_packed::encode(&vals, bits)
                } else {
                    let (b, m) = shapes[rng.below(shapes.len() as u64) as usize];
                    parquet_delta_binary_packed::encode_shaped(&vals, bits, b, m)
                };
                let ask = if n > 0 && rng.below(4) == 0 {
                    rng.below(n as u64 + 1) as usize
                } else {
                    n
                };
                inputs.push(enc);
                counts.push(ask as u64);
                wants.extend(sext_bytes(&vals[..ask], bits));
            }
            let (bytes, stage) =
                stage_of(&mut rng, ParquetOp::DeltaBinaryPacked(ty), &inputs, &counts);
            let out = both(test, &stage, &bytes);
            out.check(&stage).unwrap();
            assert_eq!(
                out.data.as_bytes(),
                wants.as_slice(),
                "{ty:?} round {round}"
            );
        }
    }
}

/// Hand-made DELTA_BINARY_PACKED streams: (i64?, bytes, count, status,
/// detail, produced).
fn delta_cases() -> Vec<(bool, Vec<u8>, u64, StatusCode, u32, u64)> {
    use StatusCode::*;
    let head = |block: u64, minis: u64, total: u64, first: i64| {
        let mut v = Vec::new();
        write(&mut v, block);
        write(&mut v, minis);
        write(&mut v, total);
        write(&mut v, zigzag(first));
        v
    };
    let mut cases = vec![
        (true, vec![], 0, InputTruncated, 0, 0),
        (true, vec![0x80, 1], 0, InputTruncated, 2, 0),
        (
            true,
            vec![0x80, 0x80, 0x80, 0x80, 0x80, 1],
            0,
            VarintOverlong,
            0,
            0,
        ),
        (
            true,
            vec![0x80, 1, 0x80, 0x80, 0x80, 0x80, 0x10],
            0,
            ValueOutOfRange,
            2,
            0,
        ),
        (true, vec![0x40, 1, 4, 0], 0, InputCorrupt, 0, 0),
        (true, vec![0x80, 1, 3, 4, 0], 0, InputCorrupt, 0, 0),
        (true, vec![0x80, 1, 8, 4, 0], 0, InputCorrupt, 0, 0),
        (true, vec![0x80, 1, 1, 2, 0], 4, OutputShort, 5, 0),
        (true, vec![0x80, 1, 1, 2, 0], 0, Ok, 0, 0),
        (true, vec![0x80, 1, 1, 2, 0], 1, Ok, 0, 0),
        // The second value needs a block header the input lacks.
        (true, vec![0x80, 1, 1, 2, 0], 2, InputTruncated, 5, 1),
    ];
    // Ten-byte first value with a bad top byte.
    let mut v = vec![0x80, 1, 4, 4];
    v.extend([0xff; 9]);
    v.push(2);
    cases.push((true, v, 1, ValueOutOfRange, 4, 0));
    // First value only: no block header is read.
    cases.push((true, head(128, 4, 1, -5), 1, Ok, 0, 0));
    // Missing block header.
    let h = head(128, 4, 3, 9);
    let hl = h.len() as u32;
    cases.push((true, h.clone(), 2, InputTruncated, hl, 1));
    // Widths cut short.
    let mut v = h.clone();
    v.extend([0, 1, 1]);
    cases.push((true, v, 2, InputTruncated, hl, 1));
    // A width over the type's in a miniblock that is entered, and one that
    // is not.
    let mut v = h.clone();
    v.extend([0, 33, 0, 0, 0]);
    v.extend([0u8; 132]);
    cases.push((false, v.clone(), 2, InputCorrupt, hl, 1));
    cases.push((true, v, 3, Ok, 0, 0));
    let mut v = h.clone();
    v.extend([0, 0, 65, 0, 0]);
    cases.push((true, v, 3, Ok, 0, 0));
    // Zero-width miniblocks need no body, even past the input's end.
    let mut v = head(128, 4, 200, 1);
    let vl = v.len() as u32;
    v.extend([2, 0, 0, 0, 0]);
    cases.push((true, v.clone(), 129, Ok, 0, 0));
    // ... but the next block header must exist.
    cases.push((true, v, 130, InputTruncated, vl + 5, 129));
    // A miniblock whose body ends early: the first value without bits.
    let mut v = head(128, 4, 100, 0);
    let vl = v.len() as u32;
    v.extend([0, 8, 8, 8, 8]);
    v.extend([1u8; 20]);
    cases.push((true, v.clone(), 21, Ok, 0, 0));
    cases.push((true, v.clone(), 22, InputTruncated, vl, 21));
    cases.push((true, v, 90, InputTruncated, vl, 21));
    // 64-bit widths straddling bytes, min delta at the extremes (a
    // 15-byte header); as i32 the width is over 32.
    let mut v = head(128, 1, 129, i64::MIN);
    let mut md = Vec::new();
    write(&mut md, zigzag(i64::MAX));
    v.extend(md);
    v.push(63);
    v.extend((0..128 * 63 / 8).map(|i| (i * 29 + 3) as u8));
    cases.push((true, v.clone(), 129, Ok, 0, 0));
    cases.push((false, v, 129, InputCorrupt, 15, 1));
    cases
}

#[test]
fn delta_edge_cases_match() {
    let test = "delta_edge_cases_match";
    let mut rng = Rng::fresh(test);
    for (k, (wide, input, n, code, detail, produced)) in delta_cases().into_iter().enumerate() {
        let ty = if wide { IntType::I64 } else { IntType::I32 };
        let (bytes, stage) = stage_of(
            &mut rng,
            ParquetOp::DeltaBinaryPacked(ty),
            std::slice::from_ref(&input),
            &[n],
        );
        let st = both(test, &stage, &bytes).statuses[0];
        if code == StatusCode::Ok {
            assert_eq!(st, ChunkStatus::ok(n), "case {k}: {input:x?}");
        } else {
            assert_eq!(
                (st.status(), st.detail, st.produced),
                (code, detail, produced),
                "case {k}: {input:x?} n {n}"
            );
        }
    }
}

/// Clean stages of every op with a kernel, for the damage test.
fn clean_stage(rng: &mut Rng, round: usize) -> (Vec<u8>, Stage) {
    let mut inputs = Vec::new();
    let mut counts = Vec::new();
    let mut auxes = Vec::new();
    let kind = round % 7;
    let width = [1u32, 2, 3, 4, 8, 12, 16][rng.below(7) as usize];
    let bw = rng.below(33) as u8;
    let op = match kind {
        0 => ParquetOp::Hybrid { bit_width: bw },
        1 => ParquetOp::PlainBool,
        2 => ParquetOp::PlainFixed { width },
        3 => ParquetOp::DictGather { width },
        4 => ParquetOp::ByteStreamSplit { width },
        5 => ParquetOp::DictPage { width },
        _ => ParquetOp::DeltaBinaryPacked(if rng.below(2) == 0 {
            IntType::I32
        } else {
            IntType::I64
        }),
    };
    for _ in 0..1 + rng.below(30) {
        let n = chunk_len(rng) / 4;
        let w = width as usize;
        let enc = match op {
            ParquetOp::Hybrid { .. } => parquet_hybrid::encode(&hybrid_values(rng, n, bw), bw),
            ParquetOp::PlainBool => {
                parquet_plain::encode_bool(&(0..n).map(|_| rng.below(2) == 0).collect::<Vec<_>>())
            }
            ParquetOp::PlainFixed { .. } => (0..n * w).map(|_| rng.next() as u8).collect(),
            ParquetOp::DictPage { .. } => {
                let d = 1 + rng.below(50) as usize;
                let dict: Vec<u8> = (0..d * w).map(|_| rng.next() as u8).collect();
                let (input, aux) = dict_page(rng, &dict, d, n);
                auxes.push(aux);
                input
            }
            ParquetOp::DictGather { .. } => {
                let d = 1 + rng.below(50) as usize;
                let dict: Vec<u8> = (0..d * w).map(|_| rng.next() as u8).collect();
                let idx: Vec<u32> = (0..n).map(|_| rng.below(d as u64) as u32).collect();
                let mut e = Vec::new();
                parquet_dict::encode_input(&dict, w, &idx, &mut e);
                e
            }
            ParquetOp::ByteStreamSplit { .. } => {
                let vals: Vec<u8> = (0..n * w).map(|_| rng.next() as u8).collect();
                parquet_byte_stream_split::encode(&vals, w)
            }
            ParquetOp::DeltaBinaryPacked(t) => {
                let bits = t.bits();
                let vals = delta_values(rng, n, bits);
                if rng.below(2) == 0 {
                    parquet_delta_binary_packed::encode(&vals, bits)
                } else {
                    parquet_delta_binary_packed::encode_shaped(&vals, bits, 256, 2)
                }
            }
            _ => unreachable!(),
        };
        inputs.push(enc);
        counts.push(n as u64);
        auxes.resize(inputs.len(), 0);
    }
    stage_of_aux(rng, op, &inputs, &counts, &auxes)
}

#[test]
fn damaged_parquet_streams_give_equal_statuses() {
    let test = "damaged_parquet_streams_give_equal_statuses";
    let mut rng = Rng::fresh(test);
    let mut seen =
        std::collections::HashMap::<String, std::collections::HashSet<StatusCode>>::new();
    for round in 0..240 {
        let (mut bytes, mut stage) = clean_stage(&mut rng, round);
        mutate(&mut rng, &mut bytes, &mut stage);
        // Now and then ask for more values than encoded, too.
        if rng.below(4) == 0 {
            let extra = 1 + rng.below(40);
            if let Some(last) = stage.jobs.last_mut() {
                last.values += extra;
                stage.output_values += extra;
            }
        }
        let out = both(test, &stage, &bytes);
        let kind = stage
            .op
            .name()
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        seen.entry(kind)
            .or_default()
            .extend(out.statuses.iter().map(|s| s.status()));
    }
    // The damage must reach the error paths of every op.
    for (kind, codes) in &seen {
        assert!(
            codes.iter().any(|c| *c != StatusCode::Ok),
            "{kind}: only {codes:?}"
        );
    }
    let hybrid = &seen["parquet-hybrid"];
    assert!(hybrid.len() >= 3, "hybrid saw only {hybrid:?}");
}

#[test]
fn garbage_streams_give_equal_statuses() {
    // Pure random bytes of random lengths for every op and width: most
    // fail, some decode; both backends must say the same.
    let test = "garbage_streams_give_equal_statuses";
    let mut rng = Rng::fresh(test);
    let mut ops: Vec<ParquetOp> = (0..=33)
        .map(|bit_width| ParquetOp::Hybrid { bit_width })
        .collect();
    for width in [0u32, 1, 2, 4, 8, 12] {
        ops.push(ParquetOp::PlainFixed { width });
        ops.push(ParquetOp::DictGather { width });
        ops.push(ParquetOp::DictPage { width });
        ops.push(ParquetOp::ByteStreamSplit { width });
    }
    ops.extend([
        ParquetOp::PlainBool,
        ParquetOp::DeltaBinaryPacked(IntType::I32),
        ParquetOp::DeltaBinaryPacked(IntType::I64),
    ]);
    for op in ops {
        let mut inputs = Vec::new();
        let mut counts = Vec::new();
        let mut auxes = Vec::new();
        for _ in 0..200 {
            let cap = if rng.below(4) == 0 { 2000 } else { 24 };
            let len = rng.below(cap) as usize;
            // Dictionary pages: a dictionary and indices anywhere near.
            auxes.push(match op {
                ParquetOp::DictPage { .. } => {
                    let near = len as u64 + 2;
                    parquet_dict::page_aux(rng.below(near) as u32, rng.below(near) as u32)
                }
                _ => 0,
            });
            let mut input: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            // Plausible delta headers now and then, so the block paths run.
            if matches!(op, ParquetOp::DeltaBinaryPacked(_)) && rng.below(2) == 0 {
                let mut h = Vec::new();
                write(&mut h, 128 * (1 + rng.below(3)));
                write(&mut h, [1, 2, 4][rng.below(3) as usize]);
                write(&mut h, rng.below(3000));
                write(&mut h, rng.next() >> rng.below(64));
                h.extend(input);
                input = h;
            }
            inputs.push(input);
            let cap = if rng.below(3) == 0 { 3000 } else { 40 };
            counts.push(rng.below(cap));
        }
        let (bytes, stage) = stage_of_aux(&mut rng, op, &inputs, &counts, &auxes);
        both(test, &stage, &bytes);
    }
}

// ---------------------------------------------------------------------------
// BYTE_ARRAY: lengths pass and data pass, every encoding.
// ---------------------------------------------------------------------------

const BA_ENCODINGS: [ByteArrayEncoding; 3] = [
    ByteArrayEncoding::Plain,
    ByteArrayEncoding::DeltaLength,
    ByteArrayEncoding::Delta,
];

/// DELTA_BINARY_PACKED block shapes (values per block, miniblocks) the
/// byte-array length streams are written in now and then.
const BA_SHAPES: [(usize, usize); 5] = [(128, 4), (128, 1), (256, 8), (512, 4), (1024, 32)];

fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next() as u8).collect()
}

/// `n` byte strings in one of several shapes: all empty, tiny, short,
/// sorted with long shared prefixes (DELTA_BYTE_ARRAY's case), a few values
/// over 64 KiB, or mostly short with some long ones.
fn ba_values(rng: &mut Rng, n: usize) -> Vec<Vec<u8>> {
    let shape = rng.below(6);
    let mut vals: Vec<Vec<u8>> = Vec::with_capacity(n);
    for i in 0..n {
        let v = match shape {
            0 => Vec::new(),
            1 => {
                let l = rng.below(4) as usize;
                random_bytes(rng, l)
            }
            2 => {
                let l = rng.below(100) as usize;
                random_bytes(rng, l)
            }
            3 => {
                // keep part of the previous value, append a short suffix
                let prev = vals.last().cloned().unwrap_or_default();
                let keep = rng.below(prev.len() as u64 + 1) as usize;
                let mut v = prev[..keep].to_vec();
                let l = rng.below(12) as usize;
                v.extend((0..l).map(|_| b'a' + rng.below(3) as u8));
                v
            }
            4 => {
                if i < 3 {
                    let l = 65_536 + rng.below(80_000) as usize;
                    let mut v = random_bytes(rng, l);
                    // ... sharing a long prefix with the previous one
                    if let Some(p) = vals.last() {
                        let k = p.len().min(v.len()) / 2;
                        v[..k].copy_from_slice(&p[..k]);
                    }
                    v
                } else {
                    let l = rng.below(10) as usize;
                    random_bytes(rng, l)
                }
            }
            _ => {
                let l = if rng.below(20) == 0 {
                    200 + rng.below(3000)
                } else {
                    rng.below(16)
                };
                random_bytes(rng, l as usize)
            }
        };
        vals.push(v);
    }
    vals
}

fn ba_encode(rng: &mut Rng, e: ByteArrayEncoding, vals: &[Vec<u8>]) -> Vec<u8> {
    let refs: Vec<&[u8]> = vals.iter().map(Vec::as_slice).collect();
    let shape = |rng: &mut Rng| BA_SHAPES[rng.below(BA_SHAPES.len() as u64) as usize];
    match e {
        ByteArrayEncoding::Plain => parquet_plain::encode_byte_array(&refs),
        ByteArrayEncoding::DeltaLength => {
            if rng.below(2) == 0 {
                parquet_delta_length_byte_array::encode(&refs)
            } else {
                parquet_delta_length_byte_array::encode_shaped(&refs, shape(rng))
            }
        }
        ByteArrayEncoding::Delta => {
            if rng.below(2) == 0 {
                parquet_delta_byte_array::encode(&refs)
            } else {
                let (a, b) = (shape(rng), shape(rng));
                parquet_delta_byte_array::encode_shaped(&refs, a, b)
            }
        }
    }
}

/// Byte-array pages of `e` for both passes: the lengths stage (values =
/// values asked), the data stage (values = their bytes), the lengths and
/// bytes expected.
struct BaPages {
    inputs: Vec<Vec<u8>>,
    counts: Vec<u64>,
    sizes: Vec<u64>,
    lens: Vec<u32>,
    data: Vec<u8>,
}

fn ba_pages(rng: &mut Rng, e: ByteArrayEncoding, jobs: u64, scale: usize) -> BaPages {
    let mut p = BaPages {
        inputs: Vec::new(),
        counts: Vec::new(),
        sizes: Vec::new(),
        lens: Vec::new(),
        data: Vec::new(),
    };
    for _ in 0..1 + rng.below(jobs) {
        let n = chunk_len(rng) / scale;
        let vals = ba_values(rng, n);
        let mut enc = ba_encode(rng, e, &vals);
        // Trailing bytes after a page's values are ignored.
        if rng.below(4) == 0 {
            enc.extend(std::iter::repeat_n(0xA5u8, 1 + rng.below(9) as usize));
        }
        // Ask for a prefix of the values now and then.
        let ask = if n > 0 && rng.below(4) == 0 {
            rng.below(n as u64 + 1) as usize
        } else {
            n
        };
        let bytes: usize = vals[..ask].iter().map(Vec::len).sum();
        p.inputs.push(enc);
        p.counts.push(ask as u64);
        p.sizes.push(bytes as u64);
        for v in &vals[..ask] {
            p.lens.push(v.len() as u32);
            p.data.extend_from_slice(v);
        }
    }
    p
}

#[test]
fn byte_arrays_match() {
    let test = "byte_arrays_match";
    let mut rng = Rng::fresh(test);
    for e in BA_ENCODINGS {
        for round in 0..5 {
            let p = ba_pages(&mut rng, e, 20, 1 + round % 2 * 3);
            let (bytes, stage) = stage_of(
                &mut rng,
                ParquetOp::ByteArrayLengths(e),
                &p.inputs,
                &p.counts,
            );
            let out = both(test, &stage, &bytes);
            out.check(&stage).unwrap();
            assert_eq!(
                out.data.typed::<u32>(),
                p.lens.as_slice(),
                "{e:?} lengths, round {round}"
            );
            let (bytes, stage) =
                stage_of(&mut rng, ParquetOp::ByteArrayData(e), &p.inputs, &p.sizes);
            let out = both(test, &stage, &bytes);
            out.check(&stage).unwrap();
            assert!(
                out.data.as_bytes() == p.data.as_slice(),
                "{e:?} data, round {round}"
            );
        }
    }
}

/// A DELTA_BINARY_PACKED header.
fn dbp_head(block: u64, minis: u64, total: u64, first: i64) -> Vec<u8> {
    let mut v = Vec::new();
    write(&mut v, block);
    write(&mut v, minis);
    write(&mut v, total);
    write(&mut v, zigzag(first));
    v
}

/// `total` zeros as one block of `minis` zero-width miniblocks.
fn dbp_zeros(total: u64, block: u64, minis: u64) -> Vec<u8> {
    let mut v = dbp_head(block, minis, total, 0);
    v.push(0); // min delta
    v.extend(std::iter::repeat_n(0u8, minis as usize));
    v
}

/// Lengths (as i32 bit patterns) as a length stream of the parquet
/// writers' shape.
fn dbp_i32(vals: &[i32]) -> Vec<u8> {
    let v: Vec<u64> = vals.iter().map(|&x| x as u32 as u64).collect();
    parquet_delta_binary_packed::encode(&v, 32)
}

/// Hand-made byte-array pages: (op, input, count, status, detail, produced),
/// detail and produced checked when `Some`.
#[allow(clippy::type_complexity)]
fn ba_cases() -> Vec<(ParquetOp, Vec<u8>, u64, StatusCode, Option<(u32, u64)>)> {
    use ByteArrayEncoding::*;
    use ParquetOp::{ByteArrayData as D, ByteArrayLengths as L};
    use StatusCode::*;
    let plain = parquet_plain::encode_byte_array(&[b"ab", b"", b"cde"]);
    let hello = parquet_delta_length_byte_array::encode(&[b"Hello", b"World"]);
    let hello_end = (hello.len() - 10) as u32;
    let words: [&[u8]; 6] = [b"axis", b"axle", b"babble", b"babyhood", b"", b"b"];
    let axis = parquet_delta_byte_array::encode(&words);
    let mut empties: Vec<&[u8]> = vec![b""; 1000];
    empties.push(b"x");
    let long: Vec<u8> = (0..70_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let long2 = {
        let mut v = long.clone();
        v[69_000] ^= 1;
        v.extend_from_slice(b"tail");
        v
    };
    let longs: [&[u8]; 3] = [&long, &long2, b"z"];
    let long_total = (long.len() + long2.len() + 1) as u64;

    // DELTA_BYTE_ARRAY pieces by hand: prefixes, then suffixes as DLBA.
    let dba = |prefixes: &[i32], suffixes: &[&[u8]]| {
        let mut v = dbp_i32(prefixes);
        v.extend(parquet_delta_length_byte_array::encode(suffixes));
        v
    };
    let ab_c = dba(&[0, 5], &[b"ab", b"c"]);
    let neg = dba(&[0, -1], &[b"ab", b"c"]);
    let abcd = dba(&[0, 0], &[b"ab", b"cd"]);
    let abcd_at = (abcd.len() - 4) as u32;
    let abd = dba(&[0, 2], &[b"abc", b"d"]);
    let none = dba(&[], &[]);
    // Prefix stream fine, suffix stream's header corrupt or cut: offsets
    // are shifted by where the suffix stream starts.
    let pre = dbp_i32(&[0, 0]);
    let pre_len = pre.len() as u32;
    let mut bad_suffix = pre.clone();
    bad_suffix.extend([0x40, 1, 4, 0]);
    let mut cut_suffix = pre.clone();
    cut_suffix.extend([0x80, 1, 4, 0x80]);
    // A million empty values from a few header bytes.
    let zeros = |block: u64, minis: u64| {
        let mut v = dbp_zeros(1_000_003, block, minis);
        v.extend(dbp_zeros(1_000_003, block, minis));
        v
    };
    // A length stream whose second block is missing: found by the end walk.
    let mut no_block = dbp_head(128, 4, 200, 3);
    let nb_at = no_block.len() as u32;
    no_block.extend([0, 0, 0, 0, 0]);
    // ... and one with a width over 32 in a miniblock the end walk enters.
    let mut wide = dbp_head(128, 4, 40, 1);
    let wide_at = wide.len() as u32;
    wide.extend([0, 0, 33, 0, 0]);
    wide.extend([0u8; 64]);

    vec![
        // PLAIN
        (L(Plain), vec![], 0, Ok, None),
        // Not ASCII: the data job's status says so.
        (
            D(Plain),
            parquet_plain::encode_byte_array(&["é".as_bytes(), b"x"]),
            3,
            Ok,
            None,
        ),
        (L(Plain), vec![], 1, OutputShort, Some((0, 0))),
        (L(Plain), vec![1, 0, 0], 1, InputTruncated, Some((0, 0))),
        (
            L(Plain),
            vec![5, 0, 0, 0, b'a'],
            1,
            InputTruncated,
            Some((0, 0)),
        ),
        (
            L(Plain),
            vec![0xf0, 0xff, 0xff, 0xff, 1],
            1,
            InputTruncated,
            Some((0, 0)),
        ),
        (L(Plain), plain.clone(), 3, Ok, None),
        (L(Plain), plain.clone(), 4, OutputShort, Some((17, 3))),
        (D(Plain), vec![], 0, Ok, None),
        (D(Plain), plain.clone(), 5, Ok, None),
        (D(Plain), plain.clone(), 4, OutputOverflow, Some((10, 2))),
        (D(Plain), plain.clone(), 6, OutputShort, Some((17, 5))),
        (
            D(Plain),
            plain[..plain.len() - 1].to_vec(),
            5,
            InputTruncated,
            Some((10, 2)),
        ),
        (
            L(Plain),
            parquet_plain::encode_byte_array(&empties),
            1001,
            Ok,
            None,
        ),
        (
            D(Plain),
            parquet_plain::encode_byte_array(&empties),
            1,
            Ok,
            None,
        ),
        (
            L(Plain),
            parquet_plain::encode_byte_array(&longs),
            3,
            Ok,
            None,
        ),
        (
            D(Plain),
            parquet_plain::encode_byte_array(&longs),
            long_total,
            Ok,
            None,
        ),
        (
            L(Plain),
            parquet_plain::encode_byte_array(&[b"one"]),
            1,
            Ok,
            None,
        ),
        // DELTA_LENGTH_BYTE_ARRAY
        (L(DeltaLength), vec![], 0, InputTruncated, Some((0, 0))),
        (D(DeltaLength), vec![], 0, InputTruncated, Some((0, 0))),
        (L(DeltaLength), hello.clone(), 2, Ok, None),
        (L(DeltaLength), hello.clone(), 3, OutputShort, Some((0, 2))),
        (
            L(DeltaLength),
            hello[..hello.len() - 1].to_vec(),
            2,
            InputTruncated,
            Some((hello_end, 0)),
        ),
        (
            L(DeltaLength),
            hello[..hello.len() - 1].to_vec(),
            1,
            Ok,
            None,
        ),
        (D(DeltaLength), hello.clone(), 10, Ok, None),
        (D(DeltaLength), hello.clone(), 3, Ok, None),
        (
            D(DeltaLength),
            hello.clone(),
            11,
            InputTruncated,
            Some((hello_end, 0)),
        ),
        (
            L(DeltaLength),
            {
                let mut v = dbp_i32(&[3, -1]);
                v.extend(b"abc");
                v
            },
            2,
            ValueOutOfRange,
            Some((0, 1)),
        ),
        (
            L(DeltaLength),
            parquet_delta_length_byte_array::encode(&empties),
            1001,
            Ok,
            None,
        ),
        (
            L(DeltaLength),
            parquet_delta_length_byte_array::encode(&longs),
            3,
            Ok,
            None,
        ),
        (
            D(DeltaLength),
            parquet_delta_length_byte_array::encode(&longs),
            long_total,
            Ok,
            None,
        ),
        (
            L(DeltaLength),
            no_block.clone(),
            1,
            InputTruncated,
            Some((nb_at + 5, 129)),
        ),
        (
            L(DeltaLength),
            no_block.clone(),
            130,
            InputTruncated,
            Some((nb_at + 5, 129)),
        ),
        (
            D(DeltaLength),
            no_block,
            0,
            InputTruncated,
            Some((nb_at + 5, 129)),
        ),
        (
            L(DeltaLength),
            wide.clone(),
            1,
            InputCorrupt,
            Some((wide_at, 33)),
        ),
        (
            D(DeltaLength),
            wide.clone(),
            0,
            InputCorrupt,
            Some((wide_at, 33)),
        ),
        (L(DeltaLength), wide, 66, InputCorrupt, Some((wide_at, 33))),
        // DELTA_BYTE_ARRAY
        (L(Delta), vec![], 0, InputTruncated, Some((0, 0))),
        (L(Delta), axis.clone(), 6, Ok, None),
        (L(Delta), axis.clone(), 7, OutputShort, Some((0, 6))),
        (D(Delta), axis.clone(), 23, Ok, None),
        (D(Delta), axis.clone(), 24, OutputShort, Some((0, 23))),
        (D(Delta), axis.clone(), 22, Ok, None),
        (D(Delta), axis.clone(), 21, OutputOverflow, Some((0, 14))),
        (L(Delta), ab_c.clone(), 2, InputCorrupt, Some((0, 1))),
        (D(Delta), ab_c, 100, InputCorrupt, Some((0, 2))),
        (L(Delta), neg.clone(), 2, ValueOutOfRange, Some((0, 1))),
        (D(Delta), neg, 100, ValueOutOfRange, Some((0, 1))),
        (L(Delta), abcd.clone(), 2, Ok, None),
        (
            L(Delta),
            abcd[..abcd.len() - 1].to_vec(),
            2,
            InputTruncated,
            Some((abcd_at, 1)),
        ),
        (
            D(Delta),
            abcd[..abcd.len() - 1].to_vec(),
            4,
            InputTruncated,
            Some((abcd_at, 2)),
        ),
        (D(Delta), abd.clone(), 4, OutputOverflow, Some((0, 3))),
        (D(Delta), abd.clone(), 6, Ok, None),
        (D(Delta), abd, 7, OutputShort, Some((0, 6))),
        (L(Delta), none.clone(), 0, Ok, None),
        (D(Delta), none.clone(), 0, Ok, None),
        (L(Delta), none, 1, OutputShort, Some((0, 0))),
        (
            L(Delta),
            bad_suffix.clone(),
            1,
            InputCorrupt,
            Some((pre_len, 0)),
        ),
        (D(Delta), bad_suffix, 1, InputCorrupt, Some((pre_len, 0))),
        (
            L(Delta),
            cut_suffix.clone(),
            1,
            InputTruncated,
            Some((pre_len + 3, 0)),
        ),
        (
            D(Delta),
            cut_suffix,
            1,
            InputTruncated,
            Some((pre_len + 3, 0)),
        ),
        (
            L(Delta),
            parquet_delta_byte_array::encode(&empties),
            1001,
            Ok,
            None,
        ),
        (
            D(Delta),
            parquet_delta_byte_array::encode(&empties),
            1,
            Ok,
            None,
        ),
        (
            L(Delta),
            parquet_delta_byte_array::encode(&longs),
            3,
            Ok,
            None,
        ),
        (
            D(Delta),
            parquet_delta_byte_array::encode(&longs),
            long_total,
            Ok,
            None,
        ),
        (
            L(Delta),
            parquet_delta_byte_array::encode(&[b"one"]),
            1,
            Ok,
            None,
        ),
        (
            D(Delta),
            parquet_delta_byte_array::encode(&[b"one"]),
            3,
            Ok,
            None,
        ),
        // A million empty values: all of them, then past them.
        (L(Delta), zeros(1 << 20, 1), 5000, Ok, None),
        (D(Delta), zeros(1 << 20, 1), 0, Ok, None),
        (D(Delta), zeros(1 << 20, 1), 1, OutputShort, Some((0, 0))),
        (D(Delta), zeros(1 << 20, 4), 1, OutputShort, Some((0, 0))),
        (
            D(Delta),
            zeros(1 << 20, 32768),
            1,
            OutputShort,
            Some((0, 0)),
        ),
    ]
}

#[test]
fn byte_array_edge_cases_match() {
    let test = "byte_array_edge_cases_match";
    let mut rng = Rng::fresh(test);
    for (k, (op, input, n, code, at)) in ba_cases().into_iter().enumerate() {
        let (bytes, stage) = stage_of(&mut rng, op, std::slice::from_ref(&input), &[n]);
        let out = both(test, &stage, &bytes);
        let st = out.statuses[0];
        if code == StatusCode::Ok {
            // Data jobs say whether their bytes are all ASCII.
            let want = match op {
                ParquetOp::ByteArrayData(_) => {
                    ChunkStatus::ok_bytes(n, out.data.as_bytes().is_ascii())
                }
                _ => ChunkStatus::ok(n),
            };
            assert_eq!(st, want, "case {k} {op:?} n {n}");
        } else {
            assert_eq!(st.status(), code, "case {k} {op:?} n {n}: {st}");
            if let Some((detail, produced)) = at {
                assert_eq!(
                    (st.detail, st.produced),
                    (detail, produced),
                    "case {k} {op:?} n {n}: {st}"
                );
            }
        }
    }
}

fn ba_op(rng: &mut Rng, round: usize) -> ParquetOp {
    let e = BA_ENCODINGS[round % 3];
    if rng.below(2) == 0 {
        ParquetOp::ByteArrayLengths(e)
    } else {
        ParquetOp::ByteArrayData(e)
    }
}

#[test]
fn damaged_byte_arrays_give_equal_statuses() {
    let test = "damaged_byte_arrays_give_equal_statuses";
    let mut rng = Rng::fresh(test);
    let mut seen =
        std::collections::HashMap::<String, std::collections::HashSet<StatusCode>>::new();
    for round in 0..300 {
        let op = ba_op(&mut rng, round);
        let e = match op {
            ParquetOp::ByteArrayLengths(e) | ParquetOp::ByteArrayData(e) => e,
            _ => unreachable!(),
        };
        let p = ba_pages(&mut rng, e, 12, 8);
        let counts = match op {
            ParquetOp::ByteArrayLengths(_) => &p.counts,
            _ => &p.sizes,
        };
        let (mut bytes, mut stage) = stage_of(&mut rng, op, &p.inputs, counts);
        mutate(&mut rng, &mut bytes, &mut stage);
        if rng.below(4) == 0 {
            let extra = 1 + rng.below(40);
            if let Some(last) = stage.jobs.last_mut() {
                last.values += extra;
                stage.output_values += extra;
            }
        }
        let out = both(test, &stage, &bytes);
        seen.entry(stage.op.name())
            .or_default()
            .extend(out.statuses.iter().map(|s| s.status()));
    }
    assert_eq!(seen.len(), 6, "{seen:?}");
    for (name, codes) in &seen {
        assert!(
            codes.iter().any(|c| *c != StatusCode::Ok),
            "{name}: only {codes:?}"
        );
    }
}

#[test]
fn garbage_byte_arrays_give_equal_statuses() {
    // Random bytes, behind plausible length-stream headers now and then so
    // the block paths run; every encoding and pass.
    let test = "garbage_byte_arrays_give_equal_statuses";
    let mut rng = Rng::fresh(test);
    for e in BA_ENCODINGS {
        for op in [ParquetOp::ByteArrayLengths(e), ParquetOp::ByteArrayData(e)] {
            let mut inputs = Vec::new();
            let mut counts = Vec::new();
            for _ in 0..300 {
                let cap = if rng.below(4) == 0 { 2000 } else { 40 };
                let len = rng.below(cap) as usize;
                let mut input = random_bytes(&mut rng, len);
                let header = |rng: &mut Rng| {
                    let mut h = Vec::new();
                    write(&mut h, 128 * (1 + rng.below(3)));
                    write(&mut h, [1, 2, 4][rng.below(3) as usize]);
                    write(&mut h, rng.below(300));
                    write(&mut h, rng.below(40));
                    h
                };
                match e {
                    ByteArrayEncoding::Plain => {
                        // small lengths, so walks go some way
                        for k in (0..input.len()).step_by(4 + rng.below(8) as usize) {
                            if k + 3 < input.len() && rng.below(2) == 0 {
                                input[k] %= 12;
                                input[k + 1] = 0;
                                input[k + 2] = 0;
                                input[k + 3] = 0;
                            }
                        }
                    }
                    ByteArrayEncoding::DeltaLength if rng.below(2) == 0 => {
                        let mut h = header(&mut rng);
                        h.extend(input);
                        input = h;
                    }
                    ByteArrayEncoding::Delta if rng.below(2) == 0 => {
                        // a whole plausible prefix stream, then garbage
                        let n = rng.below(200) as usize;
                        let pre: Vec<u64> = (0..n).map(|_| rng.below(3)).collect();
                        let mut h = parquet_delta_binary_packed::encode(&pre, 32);
                        if rng.below(2) == 0 {
                            h.extend(header(&mut rng));
                        }
                        h.extend(input);
                        input = h;
                    }
                    _ => {}
                }
                inputs.push(input);
                let cap = if rng.below(3) == 0 { 3000 } else { 40 };
                counts.push(rng.below(cap));
            }
            let (bytes, stage) = stage_of(&mut rng, op, &inputs, &counts);
            both(test, &stage, &bytes);
        }
    }
}
