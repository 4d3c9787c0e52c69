//! The partial result of an aggregate program: one entry per group key,
//! each aggregate's count of values and wrapping sum, and the Arrow state
//! batch they become.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryBuilder, BooleanBuilder, Decimal128Array, Int8Array, Int16Array, Int32Array,
    Int64Array, UInt8Array, UInt16Array, UInt32Array, UInt64Array,
};
use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;

use super::program::{AggFn, AggProgram, Load};
use crate::error::{Error, Result};

/// A multiply-rotate hash over 8-byte words: group keys are short and
/// trusted (they come from the batch being aggregated, not from a peer), so
/// SipHash's cost buys nothing here.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let x = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
        let mut tail = [0u8; 8];
        let rest = words.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        let x = u64::from_le_bytes(tail) ^ ((rest.len() as u64) << 56);
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// Groups by encoded key (see [`encode_key`]).
#[derive(Debug, Clone)]
pub struct Groups {
    aggs: usize,
    index: HashMap<Box<[u8]>, u32, BuildHasherDefault<KeyHasher>>,
    keys: Vec<Box<[u8]>>,
    /// Per group, per aggregate: values seen.
    counts: Vec<u64>,
    /// Per group, per aggregate: the wrapping sum of the values seen.
    sums: Vec<i128>,
}

impl Groups {
    /// No groups yet, for a program with `aggs` aggregates; a program
    /// without keys has its one group from the start (an aggregate without
    /// `GROUP BY` gives one row even over no rows).
    pub fn new(program: &AggProgram) -> Self {
        let mut g = Self {
            aggs: program.aggs.len(),
            index: HashMap::default(),
            keys: Vec::new(),
            counts: Vec::new(),
            sums: Vec::new(),
        };
        if program.keys.is_empty() {
            g.group(&[]);
        }
        g
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True without groups.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The group of an encoded key, created if new.
    pub fn group(&mut self, key: &[u8]) -> usize {
        if let Some(&g) = self.index.get(key) {
            return g as usize;
        }
        let g = self.keys.len();
        self.keys.push(key.into());
        self.index.insert(key.into(), g as u32);
        self.counts.resize(self.counts.len() + self.aggs, 0);
        self.sums.resize(self.sums.len() + self.aggs, 0);
        g
    }

    /// Adds `count` values summing to `sum` to aggregate `agg` of group `g`.
    pub fn add(&mut self, g: usize, agg: usize, count: u64, sum: i128) {
        let i = g * self.aggs + agg;
        self.counts[i] += count;
        self.sums[i] = self.sums[i].wrapping_add(sum);
    }

    /// Folds `other` (of the same program) into this one.
    pub fn merge(&mut self, other: &Groups) {
        for (k, key) in other.keys.iter().enumerate() {
            let g = self.group(key);
            for a in 0..self.aggs {
                let i = k * self.aggs + a;
                self.add(g, a, other.counts[i], other.sums[i]);
            }
        }
    }

    /// The state batch of `program` (its [`AggProgram::schema`]).
    pub fn to_batch(&self, program: &AggProgram) -> Result<RecordBatch> {
        let schema = &program.schema;
        let bad = |what: String| Error::Unsupported(format!("aggregate state: {what}"));
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
        let mut at = vec![0usize; self.keys.len()];
        for (j, &k) in program.keys.iter().enumerate() {
            let load = program.inputs[k].load;
            let target = schema.field(j).data_type();
            let mut vals: Vec<Option<&[u8]>> = Vec::with_capacity(self.keys.len());
            for (g, key) in self.keys.iter().enumerate() {
                let (v, used) = decode_key_part(&key[at[g]..], load)
                    .ok_or_else(|| bad(format!("group key {j} is damaged")))?;
                at[g] += used;
                vals.push(v);
            }
            columns.push(key_array(&vals, load, target).map_err(|e| bad(e.to_string()))?);
        }
        let n = self.keys.len();
        let mut field = program.keys.len();
        for (a, agg) in program.aggs.iter().enumerate() {
            let counts: Vec<u64> = (0..n).map(|g| self.counts[g * self.aggs + a]).collect();
            let sums: Vec<Option<i128>> = (0..n)
                .map(|g| (counts[g] > 0).then(|| self.sums[g * self.aggs + a]))
                .collect();
            let decimal = |f: usize| -> Result<ArrayRef> {
                match schema.field(f).data_type() {
                    DataType::Decimal128(p, s) => Ok(Arc::new(
                        Decimal128Array::from(sums.clone())
                            .with_precision_and_scale(*p, *s)
                            .map_err(|e| bad(e.to_string()))?,
                    )),
                    t => Err(bad(format!("sum state of type {t}"))),
                }
            };
            match agg.func {
                AggFn::Sum { bits: 128 } => columns.push(decimal(field)?),
                AggFn::Sum { .. } => columns.push(Arc::new(Int64Array::from(
                    sums.iter().map(|s| s.map(|v| v as i64)).collect::<Vec<_>>(),
                ))),
                AggFn::Avg => {
                    columns.push(Arc::new(UInt64Array::from(counts.clone())));
                    columns.push(decimal(field + 1)?);
                }
                AggFn::Count => columns.push(Arc::new(Int64Array::from(
                    counts.iter().map(|&c| c as i64).collect::<Vec<_>>(),
                ))),
            }
            field += agg.func.state_columns();
        }
        RecordBatch::try_new(schema.clone(), columns).map_err(|e| bad(e.to_string()))
    }
}

/// Appends one key part: a null flag byte, then the value (integers and
/// decimals 16 bytes little-endian, booleans one byte, bytes a `u32`
/// length and the bytes).
pub fn encode_key(out: &mut Vec<u8>, value: Option<KeyValue<'_>>) {
    match value {
        None => out.push(0),
        Some(KeyValue::Int(v)) => {
            out.push(1);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Some(KeyValue::Bool(b)) => {
            out.push(1);
            out.push(b as u8);
        }
        Some(KeyValue::Bytes(b)) => {
            out.push(1);
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        }
    }
}

/// One key part's value.
#[derive(Debug, Clone, Copy)]
pub enum KeyValue<'a> {
    /// An integer, date or decimal.
    Int(i128),
    /// A boolean.
    Bool(bool),
    /// Bytes.
    Bytes(&'a [u8]),
}

/// The value bytes of one key part as [`encode_key`] wrote them (`None`:
/// null), and the bytes the part takes.
fn decode_key_part(key: &[u8], load: Load) -> Option<(Option<&[u8]>, usize)> {
    let (&flag, rest) = key.split_first()?;
    if flag == 0 {
        return Some((None, 1));
    }
    let len = match load {
        Load::Int { .. } | Load::Decimal128 => 16,
        Load::Bool => 1,
        Load::Bytes => {
            let n = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
            return Some((Some(rest.get(4..4 + n)?), 5 + n));
        }
    };
    Some((Some(rest.get(..len)?), 1 + len))
}

fn key_array(
    vals: &[Option<&[u8]>],
    load: Load,
    target: &DataType,
) -> std::result::Result<ArrayRef, arrow::error::ArrowError> {
    let ints = || {
        vals.iter()
            .map(|v| v.map(|b| i128::from_le_bytes(b.try_into().expect("16 bytes"))))
    };
    let arr: ArrayRef = match load {
        Load::Int { bytes, signed } => match (bytes, signed) {
            (1, true) => Arc::new(Int8Array::from_iter(ints().map(|v| v.map(|x| x as i8)))),
            (2, true) => Arc::new(Int16Array::from_iter(ints().map(|v| v.map(|x| x as i16)))),
            (4, true) => Arc::new(Int32Array::from_iter(ints().map(|v| v.map(|x| x as i32)))),
            (8, true) => Arc::new(Int64Array::from_iter(ints().map(|v| v.map(|x| x as i64)))),
            (1, false) => Arc::new(UInt8Array::from_iter(ints().map(|v| v.map(|x| x as u8)))),
            (2, false) => Arc::new(UInt16Array::from_iter(ints().map(|v| v.map(|x| x as u16)))),
            (4, false) => Arc::new(UInt32Array::from_iter(ints().map(|v| v.map(|x| x as u32)))),
            _ => Arc::new(UInt64Array::from_iter(ints().map(|v| v.map(|x| x as u64)))),
        },
        Load::Decimal128 => {
            let a = Decimal128Array::from_iter(ints());
            match target {
                DataType::Decimal128(p, s) => Arc::new(a.with_precision_and_scale(*p, *s)?),
                _ => Arc::new(a),
            }
        }
        Load::Bool => {
            let mut b = BooleanBuilder::with_capacity(vals.len());
            for v in vals {
                b.append_option(v.map(|x| x[0] != 0));
            }
            Arc::new(b.finish())
        }
        Load::Bytes => {
            let mut b = BinaryBuilder::with_capacity(vals.len(), 0);
            for v in vals {
                b.append_option(*v);
            }
            Arc::new(b.finish())
        }
    };
    if arr.data_type() == target {
        Ok(arr)
    } else {
        arrow::compute::cast(&arr, target)
    }
}
