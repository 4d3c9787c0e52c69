//! A hash join's build keys as an exact bit set, for the dynamic filter a
//! warpread scan applies to the join's probe side.
//!
//! DataFusion publishes a join's filter as `bounds AND hash_lookup`: the
//! probe key is hashed and looked up in the join's hash table (or, for a
//! partitioned join, routed by `hash % partitions` to one partition's
//! table). On TPC-H SF 10 on the H100 host that lookup was the scans' main
//! host cost: 1.1 to 3.3 s of thread time per `lineitem` scan (60 M rows,
//! about 20 to 55 ns a row; BENCHMARKS.md, session 21), on the few threads
//! that hand a device scan's batches on. Join keys are mostly integers in a
//! dense range (order, part, supplier and customer keys), so the build keys
//! fit a bit set over `min..=max`, and a probe row costs a subtraction, a
//! compare and one bit test.
//!
//! [`JoinKeySets`] (a physical optimizer rule) puts a [`BuildKeysExec`]
//! over the build side of each hash join on one integer key whose dynamic
//! filter a warpread scan applies. It records the key values of every
//! build batch as they pass; once every build partition has ended (before
//! the join can publish its filter), the scan's row filter tests the probe
//! key against the set instead of evaluating DataFusion's expression
//! ([`super::dynamic_filter`]). A key is in the set exactly when it is in
//! some partition's table, which for a partitioned join is the table its
//! routing picks (both sides are routed by the same hash of the key), so
//! the set keeps the rows DataFusion's filter keeps, without its hash
//! collisions. Where the set cannot be built (a key range too wide for its
//! key count, a build partition that did not run to its end), DataFusion's
//! expression is applied as before.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::{
    DataType, Date32Type, Date64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type, UInt64Type,
};
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode, TreeNodeRecursion};
use datafusion::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::joins::HashJoinExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
    SendableRecordBatchStream,
};
use futures::StreamExt;
use rayon::prelude::*;

use super::dynamic_filter::dynamic_ids;
use super::source::WarpSource;

/// Most bits a set takes (256 MiB).
const MAX_BITS: u64 = 1 << 31;
/// Bits a set may take whatever its key count (8 MiB): a few keys spread
/// over a table's whole key range (TPC-H Q18's 624 orders) still cost one
/// bit test a row.
const FREE_BITS: u64 = 1 << 26;
/// Past [`FREE_BITS`], bits a set may take per key: wider ranges go to
/// DataFusion's hash lookup, whose table grows with the keys only.
const BITS_PER_KEY: u64 = 1024;

/// Whether the rule is on (`WARPREAD_JOIN_KEY_SETS=0` turns it off, for
/// comparisons).
fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("WARPREAD_JOIN_KEY_SETS").as_deref() != Ok("0"))
}

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
        match array.data_type() {
            DataType::Int8 => {
                let $a = array.as_primitive::<Int8Type>();
                let $key = |v: i8| signed(i64::from(v));
                $body
            }
            DataType::Int16 => {
                let $a = array.as_primitive::<Int16Type>();
                let $key = |v: i16| signed(i64::from(v));
                $body
            }
            DataType::Int32 => {
                let $a = array.as_primitive::<Int32Type>();
                let $key = |v: i32| signed(i64::from(v));
                $body
            }
            DataType::Int64 => {
                let $a = array.as_primitive::<Int64Type>();
                let $key = signed;
                $body
            }
            DataType::Date32 => {
                let $a = array.as_primitive::<Date32Type>();
                let $key = |v: i32| signed(i64::from(v));
                $body
            }
            DataType::Date64 => {
                let $a = array.as_primitive::<Date64Type>();
                let $key = signed;
                $body
            }
            DataType::UInt8 => {
                let $a = array.as_primitive::<UInt8Type>();
                let $key = u64::from;
                $body
            }
            DataType::UInt16 => {
                let $a = array.as_primitive::<UInt16Type>();
                let $key = u64::from;
                $body
            }
            DataType::UInt32 => {
                let $a = array.as_primitive::<UInt32Type>();
                let $key = u64::from;
                $body
            }
            DataType::UInt64 => {
                let $a = array.as_primitive::<UInt64Type>();
                let $key = |v: u64| v;
                $body
            }
            _ => $other,
        }
    }};
}

/// Calls `each` with every non-null key of `array` in the ordered domain;
/// false for an unsupported type.
fn each_key(array: &dyn Array, mut each: impl FnMut(u64)) -> bool {
    with_keys!(
        array,
        |a, key| {
            match a.nulls().filter(|n| n.null_count() > 0) {
                None => a.values().iter().for_each(|&v| each(key(v))),
                Some(nulls) => nulls.valid_indices().for_each(|i| each(key(a.values()[i]))),
            }
            true
        },
        false
    )
}

/// The build keys of a join: bit `k - min` is set for every key `k`.
pub struct KeySet {
    min: u64,
    len: u64,
    words: Vec<u64>,
    keys: usize,
}

impl fmt::Debug for KeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeySet")
            .field("keys", &self.keys)
            .field("bits", &self.len)
            .finish()
    }
}

impl KeySet {
    /// The set of the non-null keys of `arrays` (all of one supported
    /// type); `None` when a type is not supported or the range is too wide
    /// for the key count.
    pub fn build(arrays: &[ArrayRef]) -> Option<KeySet> {
        let (mut min, mut max, mut keys) = (u64::MAX, 0u64, 0usize);
        for a in arrays {
            let ok = each_key(a.as_ref(), |k| {
                min = min.min(k);
                max = max.max(k);
                keys += 1;
            });
            if !ok {
                return None;
            }
        }
        if keys == 0 {
            return Some(KeySet {
                min: 0,
                len: 0,
                words: Vec::new(),
                keys,
            });
        }
        let len = (max - min).checked_add(1)?;
        let limit = MAX_BITS.min(FREE_BITS.max(BITS_PER_KEY.saturating_mul(keys as u64)));
        if len > limit {
            return None;
        }
        let words: Vec<AtomicU64> = std::iter::repeat_with(|| AtomicU64::new(0))
            .take(len.div_ceil(64) as usize)
            .collect();
        arrays.par_iter().for_each(|a| {
            each_key(a.as_ref(), |k| {
                let d = k - min;
                words[(d >> 6) as usize].fetch_or(1 << (d & 63), Ordering::Relaxed);
            });
        });
        Some(KeySet {
            min,
            len,
            words: words.into_iter().map(AtomicU64::into_inner).collect(),
            keys,
        })
    }

    #[inline]
    fn has(&self, k: u64) -> bool {
        let d = k.wrapping_sub(self.min);
        d < self.len && (self.words[(d >> 6) as usize] >> (d & 63)) & 1 == 1
    }

    /// Which rows of `array` hold a key of the set (nulls: not kept);
    /// `None` for a type the set does not take.
    pub fn contains(&self, array: &dyn Array) -> Option<BooleanArray> {
        with_keys!(
            array,
            |a, key| {
                let values = a.values();
                let bits = BooleanBuffer::collect_bool(values.len(), |i| self.has(key(values[i])));
                let bits = match a.nulls() {
                    Some(nulls) => &bits & nulls.inner(),
                    None => bits,
                };
                Some(BooleanArray::new(bits, None))
            },
            None
        )
    }
}

/// A join's build keys as its build partitions produce them.
pub struct BuildKeys {
    /// Build partitions to wait for.
    partitions: usize,
    finished: Mutex<Vec<bool>>,
    done: AtomicUsize,
    arrays: Mutex<Vec<ArrayRef>>,
    /// A batch whose keys could not be taken: no set.
    spoiled: AtomicBool,
    set: OnceLock<Option<Arc<KeySet>>>,
}

impl fmt::Debug for BuildKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuildKeys")
            .field("partitions", &self.partitions)
            .field("done", &self.done.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl BuildKeys {
    /// Keys of a build side of `partitions` partitions.
    pub fn new(partitions: usize) -> Self {
        Self {
            partitions,
            finished: Mutex::new(vec![false; partitions]),
            done: AtomicUsize::new(0),
            arrays: Mutex::new(Vec::new()),
            spoiled: AtomicBool::new(false),
            set: OnceLock::new(),
        }
    }

    fn record(&self, keys: DfResult<ArrayRef>) {
        match keys {
            Ok(a) if supported(a.data_type()) => {
                if self.set.get().is_none() {
                    lock(&self.arrays).push(a);
                }
            }
            _ => self.spoiled.store(true, Ordering::Release),
        }
    }

    fn finish(&self, partition: usize) {
        let mut finished = lock(&self.finished);
        if let Some(f) = finished.get_mut(partition)
            && !*f
        {
            *f = true;
            self.done.fetch_add(1, Ordering::AcqRel);
        }
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

    /// The set, once every build partition has ended (built by the first
    /// caller); `None` before, or when it cannot be built.
    pub fn ready(&self) -> Option<Arc<KeySet>> {
        if self.spoiled() || self.done.load(Ordering::Acquire) < self.partitions {
            return None;
        }
        self.set
            .get_or_init(|| {
                let arrays = std::mem::take(&mut *lock(&self.arrays));
                KeySet::build(&arrays).map(Arc::new)
            })
            .clone()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Build keys by the id of the dynamic filter of their join (ids are
/// process-wide); entries die with their plan.
fn registry() -> &'static Mutex<HashMap<u64, Weak<BuildKeys>>> {
    static R: OnceLock<Mutex<HashMap<u64, Weak<BuildKeys>>>> = OnceLock::new();
    R.get_or_init(Default::default)
}

fn register(id: u64, keys: &Arc<BuildKeys>) {
    let mut r = lock(registry());
    r.retain(|_, w| w.strong_count() > 0);
    r.insert(id, Arc::downgrade(keys));
}

/// The build keys of the join whose dynamic filter has id `id`, if the
/// rule collects them.
pub fn lookup(id: u64) -> Option<Arc<BuildKeys>> {
    lock(registry()).get(&id)?.upgrade()
}

/// Passes a join's build side through, recording its keys.
pub struct BuildKeysExec {
    input: Arc<dyn ExecutionPlan>,
    /// The join's build key, over `input`'s schema.
    key: Arc<dyn PhysicalExpr>,
    keys: Arc<BuildKeys>,
}

impl fmt::Debug for BuildKeysExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuildKeysExec")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl BuildKeysExec {
    /// Records `key` of `input`'s batches into `keys`.
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        key: Arc<dyn PhysicalExpr>,
        keys: Arc<BuildKeys>,
    ) -> Self {
        Self { input, key, keys }
    }
}

impl DisplayAs for BuildKeysExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match t {
            DisplayFormatType::TreeRender => writeln!(f, "key={}", self.key),
            _ => write!(f, "BuildKeysExec: key={}", self.key),
        }
    }
}

impl ExecutionPlan for BuildKeysExec {
    fn name(&self) -> &str {
        "BuildKeysExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        f(&self.key)
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let [input] = <[_; 1]>::try_from(children)
            .map_err(|_| DataFusionError::Internal("BuildKeysExec has one input".into()))?;
        // Another partitioning would leave the registered keys waiting for
        // partitions that never come: such a copy records into keys of its
        // own, which no scan looks up.
        let keys = if input.output_partitioning().partition_count() == self.keys.partitions {
            Arc::clone(&self.keys)
        } else {
            Arc::new(BuildKeys::new(0))
        };
        Ok(Arc::new(Self::new(input, Arc::clone(&self.key), keys)))
    }

    fn reset_state(self: Arc<Self>) -> DfResult<Arc<dyn ExecutionPlan>> {
        // A plan run again gets a join with a new filter (and its id).
        let partitions = self.keys.partitions;
        Ok(Arc::new(Self::new(
            Arc::clone(&self.input),
            Arc::clone(&self.key),
            Arc::new(BuildKeys::new(partitions)),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let schema = input.schema();
        let (keys, key) = (Arc::clone(&self.keys), Arc::clone(&self.key));
        let end = Arc::clone(&self.keys);
        let stream = input
            .map(move |batch| {
                match &batch {
                    Ok(b) => keys.record(key.evaluate(b).and_then(|v| v.into_array(b.num_rows()))),
                    // Rows may be missing: the set would drop their keys.
                    Err(_) => keys.spoiled.store(true, Ordering::Release),
                }
                batch
            })
            // Reached once the input has ended.
            .chain(
                futures::stream::once(async move {
                    end.finish(partition);
                })
                .filter_map(|()| async { None }),
            );
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
}

/// The physical optimizer rule (see the module docs). It must run after
/// DataFusion's filter pushdown, which gives joins their dynamic filters,
/// as rules added to a session do.
#[derive(Debug, Default)]
pub struct JoinKeySets;

/// The ids of the dynamic filters the warpread scans of `plan` apply.
fn scan_filter_ids(plan: &Arc<dyn ExecutionPlan>) -> HashSet<u64> {
    let mut ids = HashSet::new();
    let _ = plan.apply(|node| {
        if let Some((_, source)) = WarpSource::of(node.as_ref()) {
            for f in source.dynamic_filters() {
                ids.extend(dynamic_ids(f));
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    ids
}

impl PhysicalOptimizerRule for JoinKeySets {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _options: &ConfigOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        if !enabled() {
            return Ok(plan);
        }
        let ids = scan_filter_ids(&plan);
        if ids.is_empty() {
            return Ok(plan);
        }
        plan.transform_up(|node| {
            let Some(join) = node.downcast_ref::<HashJoinExec>() else {
                return Ok(Transformed::no(node));
            };
            // A hash join produces one dynamic filter, its own.
            let produced = join.dynamic_expressions_produced();
            let [filter] = &produced[..] else {
                return Ok(Transformed::no(node));
            };
            let Some(id) = filter.expression_id() else {
                return Ok(Transformed::no(node));
            };
            let [(build, probe)] = join.on() else {
                return Ok(Transformed::no(node));
            };
            let build_type = build.data_type(&join.left().schema())?;
            let probe_type = probe.data_type(&join.right().schema())?;
            if !ids.contains(&id)
                || build_type != probe_type
                || !supported(&build_type)
                || join.left().downcast_ref::<BuildKeysExec>().is_some()
            {
                return Ok(Transformed::no(node));
            }
            let partitions = join.left().output_partitioning().partition_count();
            let keys = Arc::new(BuildKeys::new(partitions));
            register(id, &keys);
            let left = Arc::new(BuildKeysExec::new(
                Arc::clone(join.left()),
                Arc::clone(build),
                keys,
            ));
            let right = Arc::clone(join.right());
            let options = ReplaceChildrenOptions::new(ChildrenPropertiesMode::Keep);
            Ok(Transformed::yes(
                node.replace_children(vec![left, right], options)?,
            ))
        })
        .data()
    }

    fn name(&self) -> &str {
        "warpread_join_key_sets"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, Int64Array, UInt64Array};

    fn set(arrays: Vec<ArrayRef>) -> KeySet {
        KeySet::build(&arrays).unwrap()
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
        let kept = s.contains(&probe).unwrap();
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
        let kept = s.contains(&probe).unwrap();
        assert_eq!(
            kept.values().iter().collect::<Vec<_>>(),
            [false, false, true, false, false]
        );
        let u: ArrayRef = Arc::new(UInt64Array::from(vec![0, 3]));
        let s = set(vec![u]);
        let probe = UInt64Array::from(vec![u64::MAX, 3, 2]);
        let kept = s.contains(&probe).unwrap();
        assert_eq!(
            kept.values().iter().collect::<Vec<_>>(),
            [false, true, false]
        );
    }

    #[test]
    fn wide_ranges_and_other_types_get_no_set() {
        let wide: ArrayRef = Arc::new(Int64Array::from(vec![0, 1 << 40]));
        assert!(KeySet::build(&[wide]).is_none());
        let strings: ArrayRef = Arc::new(arrow::array::StringArray::from(vec!["a"]));
        assert!(KeySet::build(&[strings]).is_none());
        // No keys at all: a set that keeps nothing.
        let empty: ArrayRef = Arc::new(Int32Array::from(vec![None, None]));
        let s = set(vec![empty]);
        let kept = s.contains(&Int32Array::from(vec![1, 2])).unwrap();
        assert_eq!(kept.true_count(), 0);
    }

    #[test]
    fn keys_are_ready_once_every_partition_ended() {
        let keys = BuildKeys::new(2);
        keys.record(Ok(Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef));
        keys.finish(0);
        keys.finish(0);
        assert!(keys.ready().is_none(), "partition 1 has not ended");
        keys.record(Ok(Arc::new(Int32Array::from(vec![7])) as ArrayRef));
        keys.finish(1);
        let s = keys.ready().unwrap();
        let kept = s.contains(&Int32Array::from(vec![1, 3, 7])).unwrap();
        assert_eq!(
            kept.values().iter().collect::<Vec<_>>(),
            [true, false, true]
        );
        let spoiled = BuildKeys::new(1);
        spoiled.record(Err(DataFusionError::Internal("no keys".into())));
        spoiled.finish(0);
        assert!(spoiled.spoiled() && spoiled.ready().is_none());
    }
}
