//! Arrow arrays from levels (record shredding undone). Each leaf's level
//! entries are grouped into *slots*, one per value of the node being built:
//! rows at the top (a new row where the repetition level is 0), then, under
//! each list, one slot per element (a new element where the repetition
//! level equals the list's). A node's nulls and list lengths come from the
//! definition level of its slots' first entries in its first leaf; leaves
//! take their non-null values by rank.

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::sync::Arc;

use arrow::array::*;
use arrow::buffer::{BooleanBuffer, NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, FieldRef};

use rayon::prelude::*;

use super::decode::Leaf;
use super::levels::{Node, Shape};

type R<T> = std::result::Result<T, String>;
type Slots = Vec<(usize, usize)>;

/// The decoded leaves of one row group and their dense Arrow values.
pub struct Columns<'a> {
    /// Indexed by leaf column: (levels, dense values as Arrow) of the
    /// decoded leaves (a vector, not a map: levels are read per value).
    pub leaves: Vec<Option<(&'a Leaf, ArrayRef)>>,
}

/// An entry's definition level (0 when the column has none).
fn def_at(leaf: &Leaf, entry: usize) -> u16 {
    leaf.def_at(entry)
}

impl Columns<'_> {
    fn leaf(&self, c: usize) -> R<&(&Leaf, ArrayRef)> {
        self.leaves
            .get(c)
            .and_then(Option::as_ref)
            .ok_or_else(|| format!("leaf column {c} was not decoded"))
    }

    /// Rows of a leaf: entries split where the repetition level is 0.
    pub fn rows(&self, c: usize) -> R<Slots> {
        let leaf = self.leaf(c)?.0;
        if leaf.rep.is_empty() {
            return Ok((0..leaf.entries).map(|i| (i, i + 1)).collect());
        }
        Ok(split(&leaf.rep, 0, leaf.entries, 0))
    }
}

/// Splits entries `[s, e)` where the repetition level is at most `rep`.
fn split(rep: &[u16], s: usize, e: usize, level: i16) -> Slots {
    let mut out = Vec::new();
    let mut start = s;
    for (i, &r) in rep.iter().enumerate().take(e).skip(s + 1) {
        if r as i16 <= level {
            out.push((start, i));
            start = i;
        }
    }
    if e > s {
        out.push((start, e));
    }
    out
}

/// Builds the array of `node` whose leaves have the given slots.
pub fn build(node: &Node, slots: &HashMap<usize, Slots>, cols: &Columns<'_>) -> R<ArrayRef> {
    let first = node.first_leaf();
    let mine = slots
        .get(&first)
        .ok_or_else(|| format!("no slots for leaf {first}"))?;
    match &node.shape {
        Shape::Leaf(c) => leaf(node, *c, mine, cols),
        Shape::Struct(children) => {
            let lf = cols.leaf(first)?.0;
            let nulls = node.nullable.then(|| {
                NullBuffer::from(
                    mine.iter()
                        .map(|&(s, _)| def_at(lf, s) as i16 >= node.def)
                        .collect::<Vec<_>>(),
                )
            });
            let DataType::Struct(fields) = &node.data_type else {
                return Err(format!("struct node with type {}", node.data_type));
            };
            let arrays = children
                .iter()
                .map(|ch| build(ch, slots, cols))
                .collect::<R<Vec<_>>>()?;
            Ok(Arc::new(
                StructArray::try_new(fields.clone(), arrays, nulls).map_err(|e| e.to_string())?,
            ))
        }
        Shape::List(child) => {
            let mut leaves = Vec::new();
            node.leaves(&mut leaves);
            let mut child_slots = HashMap::with_capacity(leaves.len());
            let mut lengths = Vec::with_capacity(mine.len());
            let mut valid = Vec::with_capacity(mine.len());
            for &c in &leaves {
                let leaf = cols.leaf(c)?.0;
                let ls = &slots[&c];
                let mut out = Vec::new();
                for &(s, e) in ls {
                    let d = def_at(leaf, s) as i16;
                    if d >= node.def {
                        let parts = split(&leaf.rep, s, e, node.rep);
                        if c == first {
                            lengths.push(parts.len());
                            valid.push(true);
                        }
                        out.extend(parts);
                    } else if c == first {
                        lengths.push(0);
                        valid.push(!(node.nullable && d < node.def - 1));
                    }
                }
                child_slots.insert(c, out);
            }
            let values = build(child, &child_slots, cols)?;
            let nulls = valid
                .iter()
                .any(|v| !v)
                .then(|| NullBuffer::from(valid.clone()));
            list_array(&node.data_type, lengths, values, nulls)
        }
    }
}

fn list_array(
    dt: &DataType,
    lengths: Vec<usize>,
    values: ArrayRef,
    nulls: Option<NullBuffer>,
) -> R<ArrayRef> {
    let e = |e: arrow::error::ArrowError| e.to_string();
    let field = |f: &FieldRef| f.clone();
    match dt {
        DataType::List(f) => Ok(Arc::new(
            ListArray::try_new(field(f), OffsetBuffer::from_lengths(lengths), values, nulls)
                .map_err(e)?,
        )),
        DataType::LargeList(f) => Ok(Arc::new(
            LargeListArray::try_new(field(f), OffsetBuffer::from_lengths(lengths), values, nulls)
                .map_err(e)?,
        )),
        DataType::FixedSizeList(f, _) => {
            let l: ArrayRef = Arc::new(
                ListArray::try_new(field(f), OffsetBuffer::from_lengths(lengths), values, nulls)
                    .map_err(e)?,
            );
            arrow::compute::cast(&l, dt).map_err(e)
        }
        DataType::Map(f, sorted) => {
            let entries = values
                .as_any()
                .downcast_ref::<StructArray>()
                .ok_or("map entries are not a struct")?
                .clone();
            Ok(Arc::new(
                MapArray::try_new(
                    field(f),
                    OffsetBuffer::from_lengths(lengths),
                    entries,
                    nulls,
                    *sorted,
                )
                .map_err(e)?,
            ))
        }
        d => Err(format!("cannot build a list of type {d}")),
    }
}

fn leaf(node: &Node, c: usize, slots: &Slots, cols: &Columns<'_>) -> R<ArrayRef> {
    let (lf, dense) = cols.leaf(c)?;
    if lf.all_defined() && slots.len() == dense.len() {
        // Required and flat: the values are the column.
        return Ok(dense.clone());
    }
    // Rank of each entry's value among the non-null ones.
    let max = node.def;
    let mut rank = Vec::with_capacity(lf.entries);
    let mut k = 0u32;
    for i in 0..lf.entries {
        rank.push(k);
        if lf.def_at(i) as i16 >= max {
            k += 1;
        }
    }
    if k as usize != dense.len() {
        return Err(format!(
            "{} values decoded but the levels define {k}",
            dense.len()
        ));
    }
    let idx: Vec<Option<u32>> = slots
        .iter()
        .map(|&(s, _)| (def_at(lf, s) as i16 >= max).then(|| rank[s]))
        .collect();
    if idx.iter().enumerate().all(|(i, v)| *v == Some(i as u32)) && idx.len() == dense.len() {
        return Ok(dense.clone());
    }
    let idx = UInt32Array::from(idx);
    arrow::compute::take(dense.as_ref(), &idx, None).map_err(|e| e.to_string())
}

/// The array of a top-level leaf without repetition, straight from its
/// definition levels: one row per entry, no slots. `None` when `node` is
/// not such a leaf (the general path then builds it). The result is what
/// [`build`] gives for it.
pub fn flat(node: &Node, cols: &Columns<'_>) -> Option<R<ArrayRef>> {
    let Shape::Leaf(c) = node.shape else {
        return None;
    };
    let (lf, dense) = match cols.leaf(c) {
        Ok(l) => l,
        Err(e) => return Some(Err(e)),
    };
    if !lf.rep.is_empty() {
        return None;
    }
    Some(flat_leaf(node.def, lf, dense))
}

fn flat_leaf(max: i16, lf: &Leaf, dense: &ArrayRef) -> R<ArrayRef> {
    let defined = |k: usize| {
        if k == dense.len() {
            Ok(())
        } else {
            Err(format!(
                "{} values decoded but the levels define {k}",
                dense.len()
            ))
        }
    };
    if lf.all_defined() {
        defined(lf.entries)?;
        return Ok(dense.clone());
    }
    let valid = match &lf.valid {
        // Bits are levels 0 and 1: set where the level reaches `max` when
        // that is 1, never above it.
        Some(v) if v.len() == lf.entries && max == 1 => v.clone(),
        // `def_at` would index past them.
        Some(v) if v.len() != lf.entries => {
            return Err(format!(
                "{} validity bits for {} level entries",
                v.len(),
                lf.entries
            ));
        }
        _ => BooleanBuffer::collect_bool(lf.entries, |i| def_at(lf, i) as i16 >= max),
    };
    let k = valid.count_set_bits();
    defined(k)?;
    if k == lf.entries {
        return Ok(dense.clone());
    }
    if let Some(spread) = spread_fixed(dense, &valid) {
        return spread;
    }
    // Each defined entry takes the next value; null entries index 0, as
    // `leaf` gives them.
    let mut next = 0u32;
    let idx: Vec<u32> = valid
        .iter()
        .map(|v| {
            if v {
                next += 1;
                next - 1
            } else {
                0
            }
        })
        .collect();
    let idx = UInt32Array::new(idx.into(), Some(NullBuffer::new(valid)));
    arrow::compute::take(dense.as_ref(), &idx, None).map_err(|e| e.to_string())
}

/// Fixed-width values without nulls of their own spread over the set
/// bits of `valid`, null slots zeroed: one pass over the values, where an
/// index array and `take` cost two (on the taxi table's nullable columns
/// this assembly was the longest host step of a read). `None` for other
/// arrays.
fn spread_fixed(dense: &ArrayRef, valid: &BooleanBuffer) -> Option<R<ArrayRef>> {
    let w = dense.data_type().primitive_width()?;
    if dense.null_count() > 0 {
        return None;
    }
    let data = dense.to_data();
    let src = data.buffers().first()?.as_slice();
    let src = src.get(data.offset() * w..(data.offset() + dense.len()) * w)?;
    if !matches!(w, 1 | 2 | 4 | 8 | 16) {
        return None;
    }
    // Written once, runs and gaps alike, rather than zeroed first; in
    // 16-byte words, as Arrow asks decimals to be 16-aligned.
    let len = valid.len() * w;
    let words = len.div_ceil(16);
    let mut out: Vec<u128> = Vec::with_capacity(words);
    let spare = out.spare_capacity_mut();
    // SAFETY: the spare capacity holds `words * 16 >= len` bytes, and
    // `MaybeUninit<u8>` has no alignment or validity requirement.
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast::<MaybeUninit<u8>>(), words * 16)
    };
    let (dst, tail) = bytes.split_at_mut(len);
    tail.iter_mut().for_each(|b| _ = b.write(0));
    // Pieces of rows on all cores: a piece's first value is the count of
    // set bits before it (a million-row taxi chunk per task was the longest
    // step of its column set).
    let rows: Vec<(usize, usize)> = (0..valid.len())
        .step_by(SPREAD_PIECE)
        .map(|at| (at, SPREAD_PIECE.min(valid.len() - at)))
        .collect();
    let counts: Vec<usize> = rows
        .par_iter()
        .map(|&(at, n)| valid.slice(at, n).count_set_bits())
        .collect();
    let mut first = 0;
    let starts: Vec<usize> = counts
        .iter()
        .map(|&c| {
            first += c;
            first - c
        })
        .collect();
    if first * w > src.len() {
        return Some(Err(format!(
            "{} values decoded but the levels define {first}",
            src.len() / w
        )));
    }
    dst.par_chunks_mut(SPREAD_PIECE * w)
        .zip(rows.par_iter().zip(starts.par_iter().zip(&counts)))
        .for_each(|(d, (&(at, n), (&v, &c)))| {
            spread(&src[v * w..(v + c) * w], d, &valid.slice(at, n), w);
        });
    // SAFETY: `spread` wrote every byte of each piece, the pieces cover
    // the first `len` bytes end to end and the tail was zeroed: all of the
    // first `words` words are written.
    unsafe { out.set_len(words) };
    let built = ArrayData::builder(dense.data_type().clone())
        .len(valid.len())
        .add_buffer(arrow::buffer::Buffer::from_vec(out).slice_with_length(0, len))
        .nulls(Some(NullBuffer::new(valid.clone())))
        .build()
        .map_err(|e| e.to_string());
    Some(built.map(make_array))
}

/// Rows spread per task (fewer under Miri, so that its tests reach several
/// pieces in minutes rather than hours).
const SPREAD_PIECE: usize = if cfg!(miri) { 256 } else { 64 * 1024 };

/// Writes every byte of `dst` (`valid.len()` slots of `w` bytes): the
/// values of `src` in order at the set bits of `valid`, zeros at the
/// others, a run at a time: one copy per run between nulls rather than one
/// store per value (the taxi table's nullable columns are mostly runs of
/// ~45 values). Values `src` lacks (never, as the caller counts them) are
/// zeros too.
fn spread(src: &[u8], dst: &mut [MaybeUninit<u8>], valid: &BooleanBuffer, w: usize) {
    let zero = |d: &mut [MaybeUninit<u8>]| d.iter_mut().for_each(|b| _ = b.write(0));
    let (mut k, mut at) = (0, 0);
    for (s, e) in valid.set_slices() {
        zero(&mut dst[at * w..s * w]);
        let run = &mut dst[s * w..e * w];
        match src.get(k..k + run.len()) {
            Some(v) => _ = run.write_copy_of_slice(v),
            None => zero(run),
        }
        k += run.len();
        at = e;
    }
    zero(&mut dst[at * w..]);
}

/// Slots of every leaf under `node` at the top level.
pub fn root_slots(node: &Node, cols: &Columns<'_>) -> R<HashMap<usize, Slots>> {
    let mut leaves = Vec::new();
    node.leaves(&mut leaves);
    leaves.into_iter().map(|c| Ok((c, cols.rows(c)?))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_values_fill_the_valid_slots_in_order() {
        // Every width the fast path takes, nulls at the ends and in runs;
        // one piece and several.
        for rows in [1000usize, 3 * SPREAD_PIECE + 77] {
            let valid: Vec<bool> = (0..rows)
                .map(|i| i % 7 != 0 && !(300..340).contains(&i))
                .collect();
            let k = valid.iter().filter(|&&v| v).count();
            let valid = BooleanBuffer::from(valid);
            let arrays: Vec<ArrayRef> = vec![
                Arc::new(Int8Array::from_iter_values((0..k).map(|i| i as i8))),
                Arc::new(Int16Array::from_iter_values((0..k).map(|i| i as i16))),
                Arc::new(Float32Array::from_iter_values((0..k).map(|i| i as f32))),
                Arc::new(Int64Array::from_iter_values((0..k).map(|i| i as i64 * 3))),
                Arc::new(
                    Decimal128Array::from_iter_values((0..k).map(|i| i as i128 - 5))
                        .with_precision_and_scale(20, 2)
                        .unwrap(),
                ),
            ];
            for dense in arrays {
                let got = spread_fixed(&dense, &valid).unwrap().unwrap();
                let mut next = 0u32;
                let idx: Vec<Option<u32>> = valid
                    .iter()
                    .map(|v| {
                        v.then(|| {
                            next += 1;
                            next - 1
                        })
                    })
                    .collect();
                let want = arrow::compute::take(&dense, &UInt32Array::from(idx), None).unwrap();
                assert_eq!(&got, &want, "{} over {rows} rows", dense.data_type());
            }
        }
        let valid: Vec<bool> = (0..1000)
            .map(|i| i % 7 != 0 && !(300..340).contains(&i))
            .collect();
        let k = valid.iter().filter(|&&v| v).count();
        let valid = BooleanBuffer::from(valid);
        // A slice of a longer array (an offset into its buffer).
        let longer = Int64Array::from_iter_values((0..k as i64 + 9).map(|i| i * 5));
        let sliced: ArrayRef = Arc::new(longer.slice(9, k));
        let got = spread_fixed(&sliced, &valid).unwrap().unwrap();
        let got = got.as_any().downcast_ref::<Int64Array>().unwrap();
        let mut next = 9i64;
        for (i, v) in valid.iter().enumerate() {
            if v {
                assert_eq!(got.value(i), next * 5, "slot {i}");
                next += 1;
            } else {
                assert!(got.is_null(i));
            }
        }
        // Arrays the fast path does not take.
        let strings: ArrayRef = Arc::new(StringArray::from(vec!["a"; k]));
        assert!(spread_fixed(&strings, &valid).is_none());
    }
}
