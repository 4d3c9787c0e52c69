//! Exact sets of a hash join's build keys: [`KeySet`] (bits over the
//! keys' range, or a hash table of them), [`BuildKeys`] (the keys of a build
//! side as its partitions produce them) and [`KeySlot`] (where the rule that
//! puts a recorder over a join's build side hands the keys to the probe
//! scan). See `join_keys` for why.
//!
//! This module imports no other module of the crate.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::datatypes::{
    DataType, Date32Type, Date64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type, UInt64Type,
};
use datafusion::error::Result as DfResult;
use rayon::prelude::*;

/// Most bits a set takes (256 MiB).
const MAX_BITS: u64 = 1 << 31;
/// Bits a set may take whatever its key count (8 MiB): a few keys spread
/// over a table's whole key range (TPC-H Q18's 624 orders) still cost one
/// bit test a row.
const FREE_BITS: u64 = 1 << 26;
/// Past [`FREE_BITS`], bits a set may take per key: wider ranges go to
/// DataFusion's hash lookup, whose table grows with the keys only.
const BITS_PER_KEY: u64 = 1024;

/// Most parts of a join key the rule takes (their ranges must pack into
/// 63 bits together).
pub(crate) const MAX_PARTS: usize = 4;
/// Whether keys of `t` go into a set: integers and dates, whose equality
/// is the equality of their values.
pub fn supported(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Date32
            | DataType::Date64
    )
}

/// A signed value in the order-preserving unsigned domain (so that a
/// wrapping subtraction of the minimum is an offset for every key at or
/// above it and at least the set's length for every key below).
#[inline]
fn signed(v: i64) -> u64 {
    (v as u64) ^ (1 << 63)
}

/// Calls `$body` with `$values` (the array's values slice) and `$key` (the
/// map of a value into the ordered domain) for each supported type;
/// `$other` otherwise. Build and probe keys share one type, so they share
/// one domain.
macro_rules! with_keys {
    ($array:expr, |$a:ident, $key:ident| $body:expr, $other:expr) => {{
        let array: &dyn Array = $array;
        macro_rules! arm {
            ($t:ty, $map:expr) => {{
                let $a = array.as_primitive::<$t>();
                let $key = $map;
                $body
            }};
        }
        match array.data_type() {
            DataType::Int8 => arm!(Int8Type, |v: i8| signed(i64::from(v))),
            DataType::Int16 => arm!(Int16Type, |v: i16| signed(i64::from(v))),
            DataType::Int32 => arm!(Int32Type, |v: i32| signed(i64::from(v))),
            DataType::Int64 => arm!(Int64Type, signed),
            DataType::Date32 => arm!(Date32Type, |v: i32| signed(i64::from(v))),
            DataType::Date64 => arm!(Date64Type, signed),
            DataType::UInt8 => arm!(UInt8Type, u64::from),
            DataType::UInt16 => arm!(UInt16Type, u64::from),
            DataType::UInt32 => arm!(UInt32Type, u64::from),
            DataType::UInt64 => arm!(UInt64Type, |v: u64| v),
            _ => $other,
        }
    }};
}

/// Calls `each` with every row's key of `array` in the ordered domain,
/// nulls included (with whatever value their slot holds); false for an
/// unsupported type.
fn each_slot(array: &dyn Array, each: impl FnMut(u64)) -> bool {
    with_keys!(
        array,
        |a, key| {
            a.values().iter().map(|&v| key(v)).for_each(each);
            true
        },
        false
    )
}

/// Marks a row of a tuple that is in no set (a null or out-of-range part).
const NONE: u64 = u64::MAX;

/// How the set holds its keys (tuples packed into one `u64` each).
enum Repr {
    /// Bit `k` for every packed key `k`, below `len`.
    Bits { len: u64, words: Vec<u64> },
    /// Open addressing, linear probing, [`NONE`] for an empty slot.
    Hash { slots: Vec<u64>, shift: u32 },
}

impl Repr {
    /// Bits over `0..len` where the range is narrow enough for `keys`
    /// keys, else a hash table of them.
    fn build(len: u64, keys: usize, fill: impl Fn(&(dyn Fn(u64) + Sync))) -> Option<Repr> {
        let limit = MAX_BITS.min(FREE_BITS.max(BITS_PER_KEY.saturating_mul(keys as u64)));
        if len <= limit {
            let words: Vec<AtomicU64> = std::iter::repeat_with(|| AtomicU64::new(0))
                .take(len.div_ceil(64) as usize)
                .collect();
            fill(&|k| {
                words[(k >> 6) as usize].fetch_or(1 << (k & 63), Ordering::Relaxed);
            });
            let words = words.into_iter().map(AtomicU64::into_inner).collect();
            return Some(Repr::Bits { len, words });
        }
        if keys > MAX_HASH_KEYS {
            return None;
        }
        let bits = (keys.max(8) * 2).next_power_of_two().trailing_zeros();
        let slots: Vec<AtomicU64> = std::iter::repeat_with(|| AtomicU64::new(NONE))
            .take(1 << bits)
            .collect();
        let (shift, mask) = (64 - bits, (1usize << bits) - 1);
        fill(&|k| {
            let mut i = hash_slot(k, shift);
            loop {
                match slots[i].compare_exchange(NONE, k, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => return,
                    Err(found) if found == k => return,
                    Err(_) => i = (i + 1) & mask,
                }
            }
        });
        let slots = slots.into_iter().map(AtomicU64::into_inner).collect();
        Some(Repr::Hash { slots, shift })
    }

    #[inline]
    fn has(&self, k: u64) -> bool {
        match self {
            Repr::Bits { len, words } => {
                k < *len && (words[(k >> 6) as usize] >> (k & 63)) & 1 == 1
            }
            Repr::Hash { slots, shift } => {
                let mask = slots.len() - 1;
                let mut i = hash_slot(k, *shift);
                loop {
                    match slots[i] {
                        s if s == k => return true,
                        NONE => return false,
                        _ => i = (i + 1) & mask,
                    }
                }
            }
        }
    }
}

/// Most keys a hash set takes (a table of 2 Mi slots, 16 MiB): a larger
/// set costs more to build than DataFusion's lookup into the join's own
/// table, which exists anyway (TPC-H Q9's 8 M `partsupp` key pairs made
/// the query about 0.1 s slower on SF 10, benchmarks/tpch.md; its
/// filter keeps every row and is dropped after its sample either way).
const MAX_HASH_KEYS: usize = 1 << 20;

#[inline]
fn hash_slot(k: u64, shift: u32) -> usize {
    (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

/// One part of a tuple key: its minimum, its span (maximum less minimum)
/// and where its offset from the minimum sits in the packed key.
#[derive(Clone, Copy)]
struct Part {
    min: u64,
    span: u64,
    shift: u32,
}

/// The build keys of a join (one key, or a tuple packed into 64 bits).
pub struct KeySet {
    parts: Vec<Part>,
    repr: Repr,
    keys: usize,
}

impl fmt::Debug for KeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let repr = match &self.repr {
            Repr::Bits { len, .. } => format!("{len} bits"),
            Repr::Hash { slots, .. } => format!("{} slots", slots.len()),
        };
        f.debug_struct("KeySet")
            .field("keys", &self.keys)
            .field("parts", &self.parts.len())
            .field("repr", &repr)
            .finish()
    }
}

/// Each row's packed key of `keys` (one array per part, `parts.len()` of
/// them), or [`NONE`] where a part is null or outside its span; `None` for
/// an unsupported type.
fn pack(keys: &[ArrayRef], parts: &[Part]) -> Option<Vec<u64>> {
    let n = keys.first()?.len();
    let mut packed = vec![0u64; n];
    for (a, p) in keys.iter().zip(parts) {
        let mut i = 0;
        let ok = each_slot(a.as_ref(), |k| {
            let d = k.wrapping_sub(p.min);
            let slot = &mut packed[i];
            *slot = if d > p.span || *slot == NONE {
                NONE
            } else {
                *slot | (d << p.shift)
            };
            i += 1;
        });
        if !ok {
            return None;
        }
        if let Some(nulls) = a.nulls() {
            for i in (0..n).filter(|&i| nulls.is_null(i)) {
                packed[i] = NONE;
            }
        }
    }
    Some(packed)
}

impl KeySet {
    /// The set of the keys of `batches` (per batch, one array per part of
    /// the key, all of supported types) whose parts are all non-null;
    /// `None` when a type is not supported, the parts' ranges do not pack
    /// into 63 bits or the set would be too large for its key count.
    pub fn build(batches: &[Vec<ArrayRef>]) -> Option<KeySet> {
        let width = batches.first().map_or(1, Vec::len);
        if width == 0 || batches.iter().any(|b| b.len() != width) {
            return None;
        }
        // Per part its lowest and highest key, and the keys, batch by batch
        // on all cores (a build side may hold tens of millions of keys).
        let bounds = |b: &Vec<ArrayRef>| -> Option<(Vec<u64>, Vec<u64>, usize)> {
            let mut lows = vec![u64::MAX; width];
            let mut highs = vec![0u64; width];
            // Rows with every part present.
            let present = b
                .iter()
                .fold(None, |acc, a| NullBuffer::union(acc.as_ref(), a.nulls()));
            for (j, a) in b.iter().enumerate() {
                let (mut i, lo, hi) = (0usize, &mut lows[j], &mut highs[j]);
                let ok = each_slot(a.as_ref(), |k| {
                    if present.as_ref().is_none_or(|p| p.is_valid(i)) {
                        *lo = (*lo).min(k);
                        *hi = (*hi).max(k);
                    }
                    i += 1;
                });
                ok.then_some(())?;
            }
            let keys = present
                .as_ref()
                .map_or(b[0].len(), |p| b[0].len() - p.null_count());
            Some((lows, highs, keys))
        };
        let merged = batches.par_iter().map(bounds).try_reduce(
            || (vec![u64::MAX; width], vec![0u64; width], 0usize),
            |(mut lo, mut hi, n), (l, h, m)| {
                for j in 0..width {
                    lo[j] = lo[j].min(l[j]);
                    hi[j] = hi[j].max(h[j]);
                }
                Some((lo, hi, n + m))
            },
        )?;
        let (lows, highs, keys) = merged;
        let mut parts = Vec::with_capacity(width);
        let mut shift = 0u32;
        for (&min, &max) in lows.iter().zip(&highs) {
            let span = max.saturating_sub(min);
            parts.push(Part { min, span, shift });
            shift += 64 - span.leading_zeros();
        }
        if keys == 0 {
            return Some(KeySet {
                parts,
                repr: Repr::Bits {
                    len: 0,
                    words: Vec::new(),
                },
                keys,
            });
        }
        if shift > 63 {
            return None;
        }
        // The largest packed key, plus one.
        let len = parts.iter().map(|p| p.span << p.shift).sum::<u64>() + 1;
        // The types were checked above: every batch packs.
        let repr = Repr::build(len, keys, |insert| {
            batches.par_iter().for_each(|b| {
                for k in pack(b, &parts).unwrap_or_default() {
                    if k != NONE {
                        insert(k);
                    }
                }
            });
        })?;
        Some(KeySet { parts, repr, keys })
    }

    /// Which rows of `keys` (one array per part) hold a key of the set
    /// (a null part: not kept); `None` for a type the set does not take.
    pub fn contains(&self, keys: &[ArrayRef]) -> Option<BooleanArray> {
        if keys.len() != self.parts.len() {
            return None;
        }
        // One part: its packed key is its offset from the minimum, and an
        // offset past the span (a key below the minimum wraps to one) is in
        // neither representation; no packing pass.
        if let ([a], [p]) = (keys, &self.parts[..]) {
            let has = |k: u64| self.repr.has(k.wrapping_sub(p.min));
            return with_keys!(
                a.as_ref(),
                |a, key| {
                    let values = a.values();
                    let bits = BooleanBuffer::collect_bool(values.len(), |i| has(key(values[i])));
                    let bits = match a.nulls() {
                        Some(nulls) => &bits & nulls.inner(),
                        None => bits,
                    };
                    Some(BooleanArray::new(bits, None))
                },
                None
            );
        }
        let packed = pack(keys, &self.parts)?;
        let bits = BooleanBuffer::collect_bool(packed.len(), |i| {
            packed[i] != NONE && self.repr.has(packed[i])
        });
        Some(BooleanArray::new(bits, None))
    }
}

/// A join's build keys as its build partitions produce them.
pub struct BuildKeys {
    /// Which build partitions (all to wait for) have ended.
    finished: Mutex<Vec<bool>>,
    /// Per build batch, its key's parts.
    arrays: Mutex<Vec<Vec<ArrayRef>>>,
    /// A batch whose keys could not be taken: no set.
    spoiled: AtomicBool,
    set: OnceLock<Option<Arc<KeySet>>>,
}

impl fmt::Debug for BuildKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuildKeys")
            .field(
                "ended",
                &lock(&self.finished).iter().filter(|&&f| f).count(),
            )
            .finish_non_exhaustive()
    }
}

impl BuildKeys {
    /// Keys of a build side of `partitions` partitions.
    pub fn new(partitions: usize) -> Self {
        Self {
            finished: Mutex::new(vec![false; partitions]),
            arrays: Mutex::new(Vec::new()),
            spoiled: AtomicBool::new(false),
            set: OnceLock::new(),
        }
    }

    /// Records one build batch's key parts (an error or an unsupported
    /// type spoils the set).
    pub(crate) fn record(&self, keys: DfResult<Vec<ArrayRef>>) {
        if self.spoiled() {
            return;
        }
        match keys {
            Ok(a) if a.iter().all(|a| supported(a.data_type())) => {
                if self.set.get().is_none() {
                    lock(&self.arrays).push(a);
                }
            }
            _ => self.spoiled.store(true, Ordering::Release),
        }
    }

    /// Marks `partition` ended; after the last one, builds the set on
    /// rayon's threads (not the caller's: a runtime thread, whose join is
    /// about to build its own table; nor a scan's, which holds its filters'
    /// lock and would stall the other scans waiting for the set).
    pub(crate) fn finish(self: &Arc<Self>, partition: usize) {
        let last = {
            let mut finished = lock(&self.finished);
            match finished.get_mut(partition) {
                Some(f) if !*f => {
                    *f = true;
                    finished.iter().all(|&f| f)
                }
                _ => false,
            }
        };
        if last && !self.spoiled() {
            let keys = Arc::clone(self);
            rayon::spawn(move || {
                keys.set.get_or_init(|| {
                    let arrays = std::mem::take(&mut *lock(&keys.arrays));
                    KeySet::build(&arrays).map(Arc::new)
                });
            });
        }
    }

    /// Build partitions to wait for.
    pub(crate) fn partitions(&self) -> usize {
        lock(&self.finished).len()
    }

    /// Gives up on the set: rows of the build side may be missing.
    pub(crate) fn spoil(&self) {
        self.spoiled.store(true, Ordering::Release);
    }

    /// Whether the set will never be built.
    pub fn spoiled(&self) -> bool {
        self.spoiled.load(Ordering::Acquire)
    }

    /// Whether [`BuildKeys::ready`] will give the same answer from now on:
    /// spoiled, or the set built (or found impossible).
    pub fn settled(&self) -> bool {
        self.spoiled() || self.set.get().is_some()
    }

    /// The set, once every build partition has ended and it is built;
    /// `None` before, or when it cannot be built. Never waits.
    pub fn ready(&self) -> Option<Arc<KeySet>> {
        if self.spoiled() {
            return None;
        }
        self.set.get().cloned().flatten()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where the build keys of one join are found by the scans that test them:
/// the rule that puts a recorder over the join's build side gives the same
/// slot to the recorder and to the probe scans whose dynamic filter is the
/// join's. A plan run again (a recursive query's term) records into new
/// keys, which its recorder puts in the slot before the scans open files.
pub struct KeySlot(Mutex<Arc<BuildKeys>>);

impl fmt::Debug for KeySlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("KeySlot").field(&*lock(&self.0)).finish()
    }
}

impl KeySlot {
    /// A slot holding `keys`.
    pub fn new(keys: Arc<BuildKeys>) -> Self {
        Self(Mutex::new(keys))
    }

    /// The keys recorded now.
    pub fn keys(&self) -> Arc<BuildKeys> {
        Arc::clone(&lock(&self.0))
    }

    /// Hands on `keys` instead.
    pub(crate) fn replace(&self, keys: Arc<BuildKeys>) {
        *lock(&self.0) = keys;
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, Int64Array, UInt64Array};
    use datafusion::error::DataFusionError;

    fn set(arrays: Vec<ArrayRef>) -> KeySet {
        let batches: Vec<Vec<ArrayRef>> = arrays.into_iter().map(|a| vec![a]).collect();
        KeySet::build(&batches).unwrap()
    }

    fn one(a: impl Array + 'static) -> Vec<ArrayRef> {
        vec![Arc::new(a)]
    }

    #[test]
    fn the_set_holds_exactly_the_build_keys() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![Some(5), None, Some(-3), Some(64)]));
        let b: ArrayRef = Arc::new(Int64Array::from(vec![5, 130]));
        let s = set(vec![a, b]);
        let probe = Int64Array::from(vec![
            Some(-4),
            Some(-3),
            Some(0),
            Some(5),
            None,
            Some(63),
            Some(64),
            Some(130),
            Some(131),
            Some(i64::MIN),
            Some(i64::MAX),
        ]);
        let kept = s.contains(&one(probe)).unwrap();
        let want = [
            false, true, false, true, false, false, true, true, false, false, false,
        ];
        assert_eq!(kept.values().iter().collect::<Vec<_>>(), want);
        assert_eq!(kept.null_count(), 0);
    }

    #[test]
    fn keys_at_the_ends_of_the_domain_do_not_wrap_into_the_set() {
        // Keys near i64::MAX: a probe key near i64::MIN must not land in
        // the set through a wrapping subtraction.
        let a: ArrayRef = Arc::new(Int64Array::from(vec![i64::MAX - 1, i64::MAX]));
        let s = set(vec![a]);
        let probe = Int64Array::from(vec![i64::MIN, i64::MIN + 1, i64::MAX, -1, 0]);
        let kept = s.contains(&one(probe)).unwrap();
        assert_eq!(
            kept.values().iter().collect::<Vec<_>>(),
            [false, false, true, false, false]
        );
        let u: ArrayRef = Arc::new(UInt64Array::from(vec![0, 3]));
        let s = set(vec![u]);
        let probe = UInt64Array::from(vec![u64::MAX, 3, 2]);
        let kept = s.contains(&one(probe)).unwrap();
        assert_eq!(
            kept.values().iter().collect::<Vec<_>>(),
            [false, true, false]
        );
    }

    #[test]
    fn wide_ranges_are_hashed_and_other_types_get_no_set() {
        // A range far wider than its keys: hashed, still exact.
        let wide: ArrayRef = Arc::new(Int64Array::from(vec![0, 1 << 40]));
        let s = KeySet::build(&[vec![wide]]).unwrap();
        assert!(matches!(s.repr, Repr::Hash { .. }));
        let kept = s
            .contains(&one(Int64Array::from(vec![0, 1, 1 << 40, (1 << 40) + 1])))
            .unwrap();
        assert_eq!(
            kept.values().iter().collect::<Vec<_>>(),
            [true, false, true, false]
        );
        let strings: ArrayRef = Arc::new(arrow::array::StringArray::from(vec!["a"]));
        assert!(KeySet::build(&[vec![strings]]).is_none());
        // No keys at all: a set that keeps nothing.
        let empty: ArrayRef = Arc::new(Int32Array::from(vec![None, None]));
        let s = set(vec![empty]);
        let kept = s.contains(&one(Int32Array::from(vec![1, 2]))).unwrap();
        assert_eq!(kept.true_count(), 0);
    }

    /// Waits for the set built on rayon's threads.
    fn settle(keys: &BuildKeys) {
        let started = std::time::Instant::now();
        while !keys.settled() {
            assert!(started.elapsed().as_secs() < 30, "the set is never built");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn keys_are_ready_once_every_partition_ended() {
        let keys = Arc::new(BuildKeys::new(2));
        keys.record(Ok(one(Int32Array::from(vec![1, 2]))));
        keys.finish(0);
        keys.finish(0);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!keys.settled(), "partition 1 has not ended");
        assert!(keys.ready().is_none());
        keys.record(Ok(one(Int32Array::from(vec![7]))));
        keys.finish(1);
        settle(&keys);
        let s = keys.ready().unwrap();
        let kept = s.contains(&one(Int32Array::from(vec![1, 3, 7]))).unwrap();
        assert_eq!(
            kept.values().iter().collect::<Vec<_>>(),
            [true, false, true]
        );
        let spoiled = Arc::new(BuildKeys::new(1));
        spoiled.record(Err(DataFusionError::Internal("no keys".into())));
        spoiled.finish(0);
        assert!(spoiled.spoiled() && spoiled.settled() && spoiled.ready().is_none());
    }

    #[test]
    fn nulls_stay_out_whatever_their_slots_hold() {
        // A null slot holding a key's value must not count as that key,
        // on the build side or the probe side.
        let build = Int64Array::new(vec![5, 9].into(), Some(vec![true, false].into()));
        let s = set(vec![Arc::new(build)]);
        let probe = Int64Array::new(vec![5, 9, 5].into(), Some(vec![true, true, false].into()));
        let kept = s.contains(&one(probe)).unwrap();
        assert_eq!(
            kept.values().iter().collect::<Vec<_>>(),
            [true, false, false]
        );
        assert_eq!(kept.null_count(), 0);
        // Tuples: a null part with a hidden value of a key.
        let a: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        let b: ArrayRef = Arc::new(Int64Array::from(vec![10, 20]));
        let s = KeySet::build(&[vec![a, b]]).unwrap();
        let pa: ArrayRef = Arc::new(Int64Array::new(
            vec![1, 2].into(),
            Some(vec![false, true].into()),
        ));
        let pb: ArrayRef = Arc::new(Int64Array::new(
            vec![10, 20].into(),
            Some(vec![true, false].into()),
        ));
        let kept = s.contains(&[pa, pb]).unwrap();
        assert_eq!(kept.true_count(), 0);
    }

    #[test]
    fn tuples_are_kept_exactly_as_bits_or_hashed() {
        // (a, b) pairs; a null part keeps a row out of the set.
        let a: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), Some(1), Some(2), None]));
        let b: ArrayRef = Arc::new(Int32Array::from(vec![
            Some(10),
            Some(12),
            Some(10),
            Some(11),
        ]));
        let s = KeySet::build(&[vec![a, b]]).unwrap();
        assert!(matches!(s.repr, Repr::Bits { .. }));
        let pa: ArrayRef = Arc::new(Int64Array::from(vec![
            Some(1),
            Some(1),
            Some(2),
            Some(2),
            None,
            Some(0),
            Some(3),
        ]));
        let pb: ArrayRef = Arc::new(Int32Array::from(vec![
            Some(10),
            Some(11),
            Some(10),
            Some(12),
            Some(11),
            Some(10),
            Some(10),
        ]));
        let kept = s.contains(&[pa, pb]).unwrap();
        assert_eq!(
            kept.values().iter().collect::<Vec<_>>(),
            [true, false, true, false, false, false, false]
        );
        // Spread keys: too wide for bits, so hashed; still exact.
        let xs: Vec<i64> = (0..1000).map(|i| i * 1_000_003).collect();
        let ys: Vec<i64> = (0..1000).map(|i| (i * 7919) % 100_000).collect();
        let s = KeySet::build(&[vec![
            Arc::new(Int64Array::from(xs.clone())) as ArrayRef,
            Arc::new(Int64Array::from(ys.clone())),
        ]])
        .unwrap();
        assert!(matches!(s.repr, Repr::Hash { .. }));
        let mut px = xs.clone();
        let mut py = ys.clone();
        // Swapped partners are not keys.
        px.extend(&xs[..500]);
        py.extend(&ys[500..]);
        let kept = s
            .contains(&[
                Arc::new(Int64Array::from(px)) as ArrayRef,
                Arc::new(Int64Array::from(py)),
            ])
            .unwrap();
        let want: Vec<bool> = (0..1500).map(|i| i < 1000).collect();
        assert_eq!(kept.values().iter().collect::<Vec<_>>(), want);
    }

    #[test]
    fn tuples_too_wide_to_pack_get_no_set() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![0, i64::MAX]));
        let b: ArrayRef = Arc::new(Int64Array::from(vec![0, 5]));
        assert!(KeySet::build(&[vec![a, b]]).is_none());
    }
}
