//! An aggregate program as CUDA C++: one kernel per program, compiled by
//! NVRTC on first use (through the disk cache like every kernel).
//!
//! Each warp takes 32 consecutive rows per step (coalesced loads), lanes
//! evaluate the filter, pack their group key into 64 bits and evaluate the
//! aggregates' arguments in 128-bit two's complement (`W`, wrapping as the
//! CPU reference does). Lanes with equal keys find each other with
//! `__match_any_sync` and sum their values through shuffles, so only one
//! lane per distinct key and step touches the block's table in shared
//! memory ([`GROUPS`] slots, 128-bit sums added with a carry). Each block
//! writes its table out; the host merges the blocks' tables. One launch
//! reads several record batches as segments of one row space (each
//! segment's inputs at their own addresses): a launch has fixed costs
//! that a batch per row group multiplied.
//!
//! The kernel reads columns without nulls only, and keys that pack into
//! [`KEY_BITS`] bits (the host checks both per batch and otherwise runs the
//! CPU reference). Status per block: bit 0 the table overflowed, bit 1 a
//! key value did not fit its packed width, bit 2 decimal arithmetic
//! overflowed; the batch is then refused (its caller restarts on other
//! operators or runs the CPU reference), so none is ever a wrong result.

use std::fmt::Write;

use super::program::{AggFn, AggProgram, ArithOp, CmpOp, Expr, Load};

/// Slots of a block's group table.
pub const GROUPS: usize = 64;
/// Bits a packed key may use: the two values above them mark an empty slot
/// and a lane without a row.
pub const KEY_BITS: u32 = 62;
/// The kernel's entry point.
pub const ENTRY: &str = "warpread_aggregate";
/// Threads per block.
pub const THREADS: u32 = 256;
/// Status bit: the block's table overflowed.
pub const STATUS_GROUPS: u32 = 1;
/// Status bit: a key value did not fit its packed width.
pub const STATUS_KEY_RANGE: u32 = 2;
/// Status bit: decimal arithmetic overflowed (arrow's kernels fail there;
/// the batch is refused and DataFusion's plan reports it).
pub const STATUS_OVERFLOW: u32 = 4;
/// Most aggregates of a program the kernel takes: each adds 1 KiB of
/// shared memory to a block's table (48 KiB of static shared memory).
pub const MAX_AGGS: usize = 32;

/// How a key part packs: `bits` of the value (integers wider than 32 bits
/// pack as 32 and are range-checked); bytes keys take `8 * L` bits for the
/// batch's one value length `L`.
pub fn key_bits(load: Load) -> Option<u32> {
    match load {
        Load::Int { bytes, .. } => Some(u32::from(bytes).min(4) * 8),
        Load::Decimal128 => Some(32),
        Load::Bool | Load::Bytes => None,
    }
}

/// Whether the kernel can run the program at all (no boolean inputs, at
/// most [`MAX_AGGS`] aggregates).
pub fn supported(program: &AggProgram) -> bool {
    program.aggs.len() <= MAX_AGGS
        && program
            .used_inputs()
            .iter()
            .all(|&i| program.inputs[i].load != Load::Bool)
}

const PRELUDE: &str = r#"
struct W { unsigned long long lo, hi; };
__device__ __forceinline__ W w_i64(long long v) { W r; r.lo = (unsigned long long)v; r.hi = v < 0 ? ~0ull : 0ull; return r; }
__device__ __forceinline__ W w_u64(unsigned long long v) { W r; r.lo = v; r.hi = 0ull; return r; }
__device__ __forceinline__ W w_lit(unsigned long long lo, unsigned long long hi) { W r; r.lo = lo; r.hi = hi; return r; }
__device__ __forceinline__ W w_add(W a, W b) { W r; r.lo = a.lo + b.lo; r.hi = a.hi + b.hi + (r.lo < a.lo ? 1ull : 0ull); return r; }
__device__ __forceinline__ W w_sub(W a, W b) { W r; r.lo = a.lo - b.lo; r.hi = a.hi - b.hi - (a.lo < b.lo ? 1ull : 0ull); return r; }
__device__ __forceinline__ W w_mul(W a, W b) { W r; r.lo = a.lo * b.lo; r.hi = __umul64hi(a.lo, b.lo) + a.lo * b.hi + a.hi * b.lo; return r; }
// Checked two's complement 128-bit operations: `*ov` set on overflow
// (a product is checked on magnitudes, conservatively refusing -2^127).
__device__ __forceinline__ bool w_neg(W a) { return (long long)a.hi < 0; }
__device__ __forceinline__ W w_abs(W a) { if (!w_neg(a)) return a; W z; z.lo = 0ull; z.hi = 0ull; return w_sub(z, a); }
__device__ __forceinline__ W w_addc(W a, W b, unsigned* ov) { W r = w_add(a, b); if (w_neg(a) == w_neg(b) && w_neg(r) != w_neg(a)) *ov = 1u; return r; }
__device__ __forceinline__ W w_subc(W a, W b, unsigned* ov) { W r = w_sub(a, b); if (w_neg(a) != w_neg(b) && w_neg(r) != w_neg(a)) *ov = 1u; return r; }
__device__ __forceinline__ W w_mulc(W a, W b, unsigned* ov) {
  W x = w_abs(a), y = w_abs(b);
  if (x.hi != 0ull && y.hi != 0ull) *ov = 1u;
  if (y.hi != 0ull) { W t = x; x = y; y = t; }
  // x * y.lo, y.hi == 0 (else flagged above): 192 bits, the top must be 0.
  unsigned long long lo = x.lo * y.lo;
  unsigned long long c1 = __umul64hi(x.lo, y.lo);
  unsigned long long m_lo = x.hi * y.lo;
  unsigned long long m_hi = __umul64hi(x.hi, y.lo);
  unsigned long long hi = c1 + m_lo;
  if (m_hi != 0ull || hi < c1 || (long long)hi < 0) *ov = 1u;
  W p; p.lo = lo; p.hi = hi;
  if (w_neg(a) != w_neg(b)) { W z; z.lo = 0ull; z.hi = 0ull; p = w_sub(z, p); }
  return p;
}
__device__ __forceinline__ W w_wrap(W a, int bits) {
  if (bits == 64) return w_i64((long long)a.lo);
  if (bits == 32) return w_i64((long long)(int)(unsigned)a.lo);
  if (bits == 16) return w_i64((long long)(short)(unsigned short)a.lo);
  if (bits == 8) return w_i64((long long)(signed char)(unsigned char)a.lo);
  return a;
}
__device__ __forceinline__ bool w_nz(W a) { return (a.lo | a.hi) != 0ull; }
__device__ __forceinline__ bool w_eq(W a, W b) { return a.lo == b.lo && a.hi == b.hi; }
__device__ __forceinline__ bool w_lt(W a, W b) { return (long long)a.hi < (long long)b.hi || (a.hi == b.hi && a.lo < b.lo); }
__device__ __forceinline__ W w_dec(const unsigned char* p, unsigned long long row) {
  const unsigned long long* q = (const unsigned long long*)p + 2 * row; W r; r.lo = q[0]; r.hi = q[1]; return r;
}
__device__ __forceinline__ W w_peer_sum(W v, unsigned peers) {
  W acc; acc.lo = 0ull; acc.hi = 0ull;
  #pragma unroll
  for (int j = 0; j < 32; j++) {
    W x; x.lo = __shfl_sync(0xffffffffu, v.lo, j); x.hi = __shfl_sync(0xffffffffu, v.hi, j);
    if ((peers >> j) & 1u) acc = w_add(acc, x);
  }
  return acc;
}
__device__ __forceinline__ void w_atomic_add(unsigned long long* p, W v) {
  unsigned long long old = atomicAdd(p, v.lo);
  atomicAdd(p + 1, v.hi + ((old + v.lo) < old ? 1ull : 0ull));
}
#define EMPTY_KEY 0xffffffffffffffffull
#define IDLE_KEY 0xfffffffffffffffeull
__device__ __forceinline__ int find_slot(unsigned long long* keys, unsigned long long key, int slots) {
  unsigned h = (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 32);
  for (int p = 0; p < slots; p++) {
    int s = (int)((h + (unsigned)p) & (unsigned)(slots - 1));
    unsigned long long k = ((volatile unsigned long long*)keys)[s];
    if (k == key) return s;
    if (k == EMPTY_KEY) {
      unsigned long long prev = atomicCAS(keys + s, EMPTY_KEY, key);
      if (prev == EMPTY_KEY || prev == key) return s;
    }
  }
  return -1;
}
"#;

/// Which kind of C expression [`expr`] produced.
#[derive(PartialEq)]
enum Kind {
    Num,
    Bool,
}

fn load(program: &AggProgram, i: usize) -> String {
    match program.inputs[i].load {
        Load::Int { bytes, signed } => {
            let ty = match (bytes, signed) {
                (1, true) => "signed char",
                (2, true) => "short",
                (4, true) => "int",
                (8, true) => "long long",
                (1, false) => "unsigned char",
                (2, false) => "unsigned short",
                (4, false) => "unsigned int",
                _ => "unsigned long long",
            };
            let f = if signed {
                "w_i64((long long)"
            } else {
                "w_u64((unsigned long long)"
            };
            format!("{f}((const {ty}*)in{i})[row])")
        }
        Load::Decimal128 => format!("w_dec(in{i}, row)"),
        // Not reachable: `supported` and the compiler keep these out.
        Load::Bool | Load::Bytes => "w_u64(0ull)".into(),
    }
}

fn lit(v: i128) -> String {
    let u = v as u128;
    format!("w_lit({:#x}ull, {:#x}ull)", u as u64, (u >> 64) as u64)
}

fn expr(program: &AggProgram, e: &Expr) -> (String, Kind) {
    let num = |e: &Expr| {
        let (s, k) = expr(program, e);
        match k {
            Kind::Num => s,
            Kind::Bool => format!("w_u64(({s}) ? 1ull : 0ull)"),
        }
    };
    let boolean = |e: &Expr| {
        let (s, k) = expr(program, e);
        match k {
            Kind::Bool => s,
            Kind::Num => format!("w_nz({s})"),
        }
    };
    match e {
        Expr::Input(i) => (load(program, *i), Kind::Num),
        Expr::Int(v) => (lit(*v), Kind::Num),
        Expr::Bool(b) => (b.to_string(), Kind::Bool),
        Expr::Arith { op, bits, l, r } if *bits == 128 => {
            let f = match op {
                ArithOp::Add => "w_addc",
                ArithOp::Sub => "w_subc",
                ArithOp::Mul => "w_mulc",
            };
            (format!("{f}({}, {}, &ovf)", num(l), num(r)), Kind::Num)
        }
        Expr::Arith { op, bits, l, r } => {
            let f = match op {
                ArithOp::Add => "w_add",
                ArithOp::Sub => "w_sub",
                ArithOp::Mul => "w_mul",
            };
            (
                format!("w_wrap({f}({}, {}), {bits})", num(l), num(r)),
                Kind::Num,
            )
        }
        Expr::Scale { e, factor } => (
            format!("w_mulc({}, {}, &ovf)", num(e), lit(*factor)),
            Kind::Num,
        ),
        Expr::Cmp { op, l, r } => {
            let (a, b) = (num(l), num(r));
            let s = match op {
                CmpOp::Eq => format!("w_eq({a}, {b})"),
                CmpOp::Ne => format!("!w_eq({a}, {b})"),
                CmpOp::Lt => format!("w_lt({a}, {b})"),
                CmpOp::Le => format!("!w_lt({b}, {a})"),
                CmpOp::Gt => format!("w_lt({b}, {a})"),
                CmpOp::Ge => format!("!w_lt({a}, {b})"),
            };
            (s, Kind::Bool)
        }
        Expr::And(l, r) => (
            format!("(({}) && ({}))", boolean(l), boolean(r)),
            Kind::Bool,
        ),
        Expr::Or(l, r) => (
            format!("(({}) || ({}))", boolean(l), boolean(r)),
            Kind::Bool,
        ),
        Expr::Not(x) => (format!("(!({}))", boolean(x)), Kind::Bool),
        // Inputs without nulls (the kernel's precondition) are never null.
        Expr::IsNull(_) => ("false".into(), Kind::Bool),
        Expr::IsNotNull(_) => ("true".into(), Kind::Bool),
    }
}

/// The kernel's source. It reads `nseg` segments (record batches) as one
/// row space of `n` rows. Arguments: `P`, for each segment the device
/// addresses of its inputs (index = input; unused inputs 0), then the value
/// length of each bytes key in key order (the same in every segment), then
/// the first row of each segment and `n`; `nseg`; `n`; `out`, per block
/// [`GROUPS`] slots of `2 + 2 * aggs` words (key, rows, then each
/// aggregate's 128-bit sum, low word first); `status`, one word per block.
pub fn source(program: &AggProgram) -> String {
    let aggs = program.aggs.len();
    let ninputs = program.inputs.len();
    let mut s = String::from(PRELUDE);
    let _ = writeln!(s, "#define GROUPS {GROUPS}\n#define AGGS {}", aggs.max(1));
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void __launch_bounds__({THREADS}) {ENTRY}(\n  const unsigned long long* __restrict__ P, unsigned long long nseg, unsigned long long n,\n  unsigned long long* __restrict__ out, unsigned int* __restrict__ status) {{"
    );
    s.push_str(
        "  __shared__ unsigned long long skey[GROUPS];\n  __shared__ unsigned long long srows[GROUPS];\n  __shared__ unsigned long long ssum[GROUPS * AGGS * 2];\n  __shared__ unsigned int sflag;\n",
    );
    s.push_str("  for (int i = threadIdx.x; i < GROUPS; i += blockDim.x) { skey[i] = EMPTY_KEY; srows[i] = 0ull; }\n");
    s.push_str(
        "  for (int i = threadIdx.x; i < GROUPS * AGGS * 2; i += blockDim.x) ssum[i] = 0ull;\n",
    );
    s.push_str("  if (threadIdx.x == 0) sflag = 0u;\n  __syncthreads();\n");
    let _ = writeln!(
        s,
        "  const unsigned long long* __restrict__ K = P + nseg * {ninputs}ull;"
    );
    let mut bytes_keys = 0;
    for &k in &program.keys {
        if program.inputs[k].load == Load::Bytes {
            let _ = writeln!(
                s,
                "  const unsigned long long len{bytes_keys} = K[{bytes_keys}];"
            );
            bytes_keys += 1;
        }
    }
    let _ = writeln!(
        s,
        "  const unsigned long long* __restrict__ O = K + {bytes_keys};"
    );
    s.push_str("  const unsigned lane = threadIdx.x & 31u;\n");
    s.push_str("  const unsigned long long step = ((unsigned long long)gridDim.x * blockDim.x);\n");
    // A lane's rows only grow, so its segment only moves forward.
    s.push_str("  unsigned long long seg = 0ull;\n");
    s.push_str("  for (unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31u); base < n; base += step) {\n");
    s.push_str("    const unsigned long long grow = base + lane;\n    bool act = grow < n;\n    unsigned ovf = 0u;\n");
    s.push_str("    if (act) while (seg + 1ull < nseg && O[seg + 1ull] <= grow) seg++;\n");
    s.push_str("    const unsigned long long row = act ? grow - O[seg] : 0ull;\n");
    for i in 0..ninputs {
        let _ = writeln!(
            s,
            "    const unsigned char* __restrict__ in{i} = (const unsigned char*)P[seg * {ninputs}ull + {i}ull];"
        );
    }
    if let Some(f) = &program.filter {
        let (c, k) = expr(program, f);
        let c = if k == Kind::Bool {
            c
        } else {
            format!("w_nz({c})")
        };
        let _ = writeln!(s, "    if (act) act = {c};");
    }
    s.push_str("    unsigned long long key = IDLE_KEY;\n    unsigned bad = 0u;\n");
    for a in 0..aggs {
        let _ = writeln!(s, "    W v{a}; v{a}.lo = 0ull; v{a}.hi = 0ull;");
    }
    s.push_str("    if (act) {\n      key = 0ull; unsigned sh = 0u;\n");
    let mut bk = 0;
    for &k in &program.keys {
        match program.inputs[k].load {
            Load::Bytes => {
                let _ = writeln!(
                    s,
                    "      {{ const unsigned char* p = in{k} + row * len{bk}; unsigned long long x = 0ull;\n        for (unsigned long long b = 0; b < len{bk}; b++) x |= (unsigned long long)p[b] << (8u * (unsigned)b);\n        key |= x << sh; sh += 8u * (unsigned)len{bk}; }}"
                );
                bk += 1;
            }
            Load::Decimal128 => {
                let _ = writeln!(
                    s,
                    "      {{ W x = w_dec(in{k}, row); long long lo = (long long)x.lo;\n        if (x.hi != (lo < 0 ? ~0ull : 0ull) || lo < -2147483648ll || lo > 2147483647ll) bad = 1u;\n        key |= ((unsigned long long)lo & 0xffffffffull) << sh; sh += 32u; }}"
                );
            }
            load => {
                let bits = key_bits(load).unwrap_or(32);
                let signed = matches!(load, Load::Int { signed: true, .. });
                let wide = matches!(load, Load::Int { bytes: 8, .. });
                let _ = writeln!(s, "      {{ W x = {};", self::load(program, k));
                if wide {
                    if signed {
                        s.push_str("        if ((long long)x.lo < -2147483648ll || (long long)x.lo > 2147483647ll) bad = 1u;\n");
                    } else {
                        s.push_str("        if (x.lo > 0xffffffffull) bad = 1u;\n");
                    }
                }
                let _ = signed;
                let _ = writeln!(
                    s,
                    "        key |= (x.lo & {:#x}ull) << sh; sh += {bits}u; }}",
                    (1u64 << bits) - 1
                );
            }
        }
    }
    for (a, agg) in program.aggs.iter().enumerate() {
        if agg.func != AggFn::Count {
            let (c, _) = expr(program, &agg.arg);
            let _ = writeln!(s, "      v{a} = {c};");
        }
    }
    s.push_str("    }\n    if (bad) atomicOr(&sflag, 2u);\n    if (ovf) atomicOr(&sflag, 4u);\n");
    s.push_str("    const unsigned peers = __match_any_sync(0xffffffffu, key);\n");
    for (a, agg) in program.aggs.iter().enumerate() {
        if agg.func != AggFn::Count {
            let _ = writeln!(s, "    const W s{a} = w_peer_sum(v{a}, peers);");
        }
    }
    s.push_str("    if (key != IDLE_KEY && lane == (unsigned)(__ffs(peers) - 1)) {\n");
    s.push_str("      const int slot = find_slot(skey, key, GROUPS);\n");
    s.push_str("      if (slot < 0) atomicOr(&sflag, 1u);\n      else {\n");
    s.push_str("        atomicAdd(&srows[slot], (unsigned long long)__popc(peers));\n");
    for (a, agg) in program.aggs.iter().enumerate() {
        if agg.func != AggFn::Count {
            let _ = writeln!(
                s,
                "        w_atomic_add(&ssum[(slot * AGGS + {a}) * 2], s{a});"
            );
        }
    }
    s.push_str("      }\n    }\n  }\n  __syncthreads();\n");
    s.push_str("  for (int i = threadIdx.x; i < GROUPS; i += blockDim.x) {\n");
    s.push_str("    unsigned long long* o = out + ((unsigned long long)blockIdx.x * GROUPS + i) * (2ull + 2ull * AGGS);\n");
    s.push_str("    o[0] = skey[i]; o[1] = srows[i];\n");
    s.push_str("    for (int a = 0; a < AGGS; a++) { o[2 + 2 * a] = ssum[(i * AGGS + a) * 2]; o[3 + 2 * a] = ssum[(i * AGGS + a) * 2 + 1]; }\n");
    s.push_str("  }\n  if (threadIdx.x == 0) status[blockIdx.x] = sflag;\n}\n");
    s
}

/// Words per slot in the kernel's output for a program of `aggs` aggregates.
pub fn slot_words(aggs: usize) -> usize {
    2 + 2 * aggs.max(1)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::{DataType, Field, Schema};

    use super::*;
    use crate::query::{Agg, Input};

    #[test]
    fn source_declares_every_input_and_aggregate() {
        let p = AggProgram {
            inputs: vec![
                Input {
                    column: 0,
                    load: Load::Bytes,
                },
                Input {
                    column: 3,
                    load: Load::Decimal128,
                },
                Input {
                    column: 4,
                    load: Load::Int {
                        bytes: 4,
                        signed: true,
                    },
                },
            ],
            filter: Some(Expr::Cmp {
                op: CmpOp::Le,
                l: Box::new(Expr::Input(2)),
                r: Box::new(Expr::Int(-7)),
            }),
            keys: vec![0],
            aggs: vec![
                Agg {
                    func: AggFn::Sum { bits: 128 },
                    arg: Expr::Scale {
                        e: Box::new(Expr::Input(1)),
                        factor: 100,
                    },
                },
                Agg {
                    func: AggFn::Count,
                    arg: Expr::Int(1),
                },
            ],
            schema: Arc::new(Schema::new(vec![
                Field::new("k", DataType::Utf8, true),
                Field::new("s", DataType::Decimal128(38, 4), true),
                Field::new("n", DataType::Int64, true),
            ])),
        };
        let s = source(&p);
        // Shown with `--nocapture`, for reading the generated kernel.
        println!("{s}");
        assert_eq!(s.matches('{').count(), s.matches('}').count());
        assert_eq!(s.matches('(').count(), s.matches(')').count());
        for want in [
            ENTRY,
            "in0",
            "in1",
            "in2",
            "len0 = K[0]",
            "w_lit(0xfffffffffffffff9ull, 0xffffffffffffffffull)",
            "w_atomic_add(&ssum[(slot * AGGS + 0) * 2], s0)",
        ] {
            assert!(s.contains(want), "{want} in\n{s}");
        }
        assert!(!s.contains("s1 ="), "a count sums nothing");
    }
}
