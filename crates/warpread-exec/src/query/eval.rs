//! The CPU reference: an aggregate program over a record batch, a block of
//! rows at a time (each expression node evaluated over the block into a
//! vector of 128-bit values and validity), blocks side by side on rayon.

use arrow::array::{Array, AsArray, BooleanArray};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{
    DataType, Date32Type, Decimal32Type, Decimal64Type, Decimal128Type, Int8Type, Int16Type,
    Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow::record_batch::RecordBatch;
use rayon::prelude::*;

use super::groups::{Groups, KeyValue, encode_key};
use super::program::{AggProgram, ArithOp, Expr, Load};
use crate::error::{Error, Result};

/// Rows evaluated together: each node's values for them stay in cache.
const BLOCK: usize = 1024;
/// Rows per rayon task.
const TASK: usize = 64 * BLOCK;

/// An input column, typed.
enum Values<'a> {
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    Dec(&'a [i128]),
    Bool(&'a BooleanArray),
    Bytes(&'a dyn Array),
}

struct Column<'a> {
    values: Values<'a>,
    nulls: Option<&'a NullBuffer>,
}

impl Column<'_> {
    fn int(&self, i: usize) -> i128 {
        match &self.values {
            Values::I8(v) => v[i].into(),
            Values::I16(v) => v[i].into(),
            Values::I32(v) => v[i].into(),
            Values::I64(v) => v[i].into(),
            Values::U8(v) => v[i].into(),
            Values::U16(v) => v[i].into(),
            Values::U32(v) => v[i].into(),
            Values::U64(v) => v[i].into(),
            Values::Dec(v) => v[i],
            Values::Bool(b) => b.value(i).into(),
            Values::Bytes(_) => 0,
        }
    }

    fn valid(&self, i: usize) -> bool {
        self.nulls.is_none_or(|n| n.is_valid(i))
    }

    fn key(&self, i: usize) -> Option<KeyValue<'_>> {
        if !self.valid(i) {
            return None;
        }
        Some(match &self.values {
            Values::Bool(b) => KeyValue::Bool(b.value(i)),
            Values::Bytes(a) => KeyValue::Bytes(bytes_at(*a, i)),
            _ => KeyValue::Int(self.int(i)),
        })
    }
}

fn bytes_at(a: &dyn Array, i: usize) -> &[u8] {
    if let Some(s) = a.as_string_opt::<i32>() {
        s.value(i).as_bytes()
    } else if let Some(s) = a.as_string_opt::<i64>() {
        s.value(i).as_bytes()
    } else if let Some(s) = a.as_string_view_opt() {
        s.value(i).as_bytes()
    } else if let Some(s) = a.as_binary_opt::<i32>() {
        s.value(i)
    } else if let Some(s) = a.as_binary_opt::<i64>() {
        s.value(i)
    } else {
        a.as_binary_view().value(i)
    }
}

fn column<'a>(batch: &'a RecordBatch, column: usize, load: Load) -> Result<Column<'a>> {
    let a = batch
        .columns()
        .get(column)
        .ok_or_else(|| Error::InvalidPlan(format!("aggregate input column {column} is missing")))?;
    let bad = || {
        Error::InvalidPlan(format!(
            "aggregate input column {column} is {}, not {load:?}",
            a.data_type()
        ))
    };
    let values = match load {
        Load::Int { bytes, signed } => match (bytes, signed) {
            (1, true) => Values::I8(a.as_primitive_opt::<Int8Type>().ok_or_else(bad)?.values()),
            (2, true) => Values::I16(a.as_primitive_opt::<Int16Type>().ok_or_else(bad)?.values()),
            (4, true) => Values::I32(match a.data_type() {
                DataType::Date32 => a.as_primitive::<Date32Type>().values(),
                DataType::Decimal32(..) => a.as_primitive::<Decimal32Type>().values(),
                _ => a.as_primitive_opt::<Int32Type>().ok_or_else(bad)?.values(),
            }),
            (8, true) => Values::I64(match a.data_type() {
                DataType::Decimal64(..) => a.as_primitive::<Decimal64Type>().values(),
                _ => a.as_primitive_opt::<Int64Type>().ok_or_else(bad)?.values(),
            }),
            (1, false) => Values::U8(a.as_primitive_opt::<UInt8Type>().ok_or_else(bad)?.values()),
            (2, false) => Values::U16(a.as_primitive_opt::<UInt16Type>().ok_or_else(bad)?.values()),
            (4, false) => Values::U32(a.as_primitive_opt::<UInt32Type>().ok_or_else(bad)?.values()),
            (8, false) => Values::U64(a.as_primitive_opt::<UInt64Type>().ok_or_else(bad)?.values()),
            _ => return Err(bad()),
        },
        Load::Decimal128 => Values::Dec(
            a.as_primitive_opt::<Decimal128Type>()
                .ok_or_else(bad)?
                .values(),
        ),
        Load::Bool => Values::Bool(a.as_boolean_opt().ok_or_else(bad)?),
        Load::Bytes => {
            let ok = a.as_string_opt::<i32>().is_some()
                || a.as_string_opt::<i64>().is_some()
                || a.as_string_view_opt().is_some()
                || a.as_binary_opt::<i32>().is_some()
                || a.as_binary_opt::<i64>().is_some()
                || a.as_binary_view_opt().is_some();
            if !ok {
                return Err(bad());
            }
            Values::Bytes(a.as_ref())
        }
    };
    Ok(Column {
        values,
        nulls: a.nulls(),
    })
}

/// A node's values over a block: `valid` empty when every row is valid.
struct Vals {
    v: Vec<i128>,
    valid: Vec<bool>,
}

impl Vals {
    fn is_valid(&self, i: usize) -> bool {
        self.valid.is_empty() || self.valid[i]
    }
}

fn both_valid(a: &Vals, b: &Vals) -> Vec<bool> {
    match (a.valid.is_empty(), b.valid.is_empty()) {
        (true, true) => Vec::new(),
        (true, false) => b.valid.clone(),
        (false, true) => a.valid.clone(),
        (false, false) => a.valid.iter().zip(&b.valid).map(|(x, y)| x & y).collect(),
    }
}

fn wrap(v: i128, bits: u8) -> i128 {
    match bits {
        8 => v as i8 as i128,
        16 => v as i16 as i128,
        32 => v as i32 as i128,
        64 => v as i64 as i128,
        _ => v,
    }
}

/// Set when a decimal operation overflowed (the batch then fails, as
/// arrow's checked decimal kernels do).
type Overflow = std::cell::Cell<bool>;

fn eval(
    e: &Expr,
    cols: &[Option<Column<'_>>],
    rows: std::ops::Range<usize>,
    ov: &Overflow,
) -> Vals {
    let n = rows.len();
    match e {
        Expr::Input(i) => {
            let c = cols[*i].as_ref().expect("a used input is loaded");
            Vals {
                v: rows.clone().map(|r| c.int(r)).collect(),
                valid: if c.nulls.is_some() {
                    rows.map(|r| c.valid(r)).collect()
                } else {
                    Vec::new()
                },
            }
        }
        Expr::Int(x) => Vals {
            v: vec![*x; n],
            valid: Vec::new(),
        },
        Expr::Bool(b) => Vals {
            v: vec![*b as i128; n],
            valid: Vec::new(),
        },
        Expr::Arith { op, bits, l, r } => {
            let (a, b) = (eval(l, cols, rows.clone(), ov), eval(r, cols, rows, ov));
            let valid = both_valid(&a, &b);
            let v = if *bits == 128 {
                let f = match op {
                    ArithOp::Add => i128::checked_add,
                    ArithOp::Sub => i128::checked_sub,
                    ArithOp::Mul => i128::checked_mul,
                };
                // Null rows hold whatever their slots held: not checked.
                (0..n)
                    .map(|i| {
                        f(a.v[i], b.v[i]).unwrap_or_else(|| {
                            if valid.is_empty() || valid[i] {
                                ov.set(true);
                            }
                            0
                        })
                    })
                    .collect()
            } else {
                let f = match op {
                    ArithOp::Add => i128::wrapping_add,
                    ArithOp::Sub => i128::wrapping_sub,
                    ArithOp::Mul => i128::wrapping_mul,
                };
                a.v.iter()
                    .zip(&b.v)
                    .map(|(&x, &y)| wrap(f(x, y), *bits))
                    .collect()
            };
            Vals { v, valid }
        }
        Expr::Scale { e, factor } => {
            let mut a = eval(e, cols, rows, ov);
            for (i, x) in a.v.iter_mut().enumerate() {
                *x = x.checked_mul(*factor).unwrap_or_else(|| {
                    if a.valid.is_empty() || a.valid[i] {
                        ov.set(true);
                    }
                    0
                });
            }
            a
        }
        Expr::Cmp { op, l, r } => {
            let (a, b) = (eval(l, cols, rows.clone(), ov), eval(r, cols, rows, ov));
            Vals {
                v: a.v
                    .iter()
                    .zip(&b.v)
                    .map(|(&x, &y)| op.holds(x, y) as i128)
                    .collect(),
                valid: both_valid(&a, &b),
            }
        }
        Expr::And(l, r) | Expr::Or(l, r) => {
            let and = matches!(e, Expr::And(..));
            let (a, b) = (eval(l, cols, rows.clone(), ov), eval(r, cols, rows, ov));
            let mut v = Vec::with_capacity(n);
            let mut valid = Vec::new();
            let any_null = !a.valid.is_empty() || !b.valid.is_empty();
            if any_null {
                valid.reserve(n);
            }
            for i in 0..n {
                let (x, y) = (a.v[i] != 0, b.v[i] != 0);
                let (vx, vy) = (a.is_valid(i), b.is_valid(i));
                // The dominant value (false for AND, true for OR) wins over
                // a null; otherwise a null makes the result null.
                let dom = !and;
                let (val, ok) = if (vx && x == dom) || (vy && y == dom) {
                    (dom, true)
                } else if vx && vy {
                    (!dom, true)
                } else {
                    (false, false)
                };
                v.push(val as i128);
                if any_null {
                    valid.push(ok);
                }
            }
            Vals { v, valid }
        }
        Expr::Not(x) => {
            let mut a = eval(x, cols, rows, ov);
            for v in &mut a.v {
                *v = (*v == 0) as i128;
            }
            a
        }
        Expr::IsNull(x) | Expr::IsNotNull(x) => {
            let want_null = matches!(e, Expr::IsNull(_));
            let a = eval(x, cols, rows, ov);
            Vals {
                v: (0..n)
                    .map(|i| (a.is_valid(i) != want_null) as i128)
                    .collect(),
                valid: Vec::new(),
            }
        }
    }
}

/// The program's partial groups over `rows` of the loaded columns.
fn run_rows(
    program: &AggProgram,
    cols: &[Option<Column<'_>>],
    rows: std::ops::Range<usize>,
) -> Result<Groups> {
    let ov = Overflow::new(false);
    let mut groups = Groups::new(program);
    let mut key = Vec::new();
    let mut last: Option<(Vec<u8>, usize)> = None;
    let mut start = rows.start;
    while start < rows.end {
        let block = start..(start + BLOCK).min(rows.end);
        start = block.end;
        let pass: Vec<bool> = match &program.filter {
            Some(f) => {
                let p = eval(f, cols, block.clone(), &ov);
                (0..block.len())
                    .map(|i| p.is_valid(i) && p.v[i] != 0)
                    .collect()
            }
            None => vec![true; block.len()],
        };
        if !pass.contains(&true) {
            continue;
        }
        let mut gid = vec![0usize; block.len()];
        for (i, r) in block.clone().enumerate() {
            if !pass[i] {
                continue;
            }
            key.clear();
            for &k in &program.keys {
                let c = cols[k].as_ref().expect("a key input is loaded");
                encode_key(&mut key, c.key(r));
            }
            gid[i] = match &last {
                Some((k, g)) if *k == key => *g,
                _ => {
                    let g = groups.group(&key);
                    last = Some((key.clone(), g));
                    g
                }
            };
        }
        for (a, agg) in program.aggs.iter().enumerate() {
            let v = eval(&agg.arg, cols, block.clone(), &ov);
            for i in 0..block.len() {
                if pass[i] && v.is_valid(i) {
                    groups.add(gid[i], a, 1, v.v[i]);
                }
            }
        }
        if ov.get() {
            return Err(Error::Unsupported(
                "decimal overflow in an aggregate program (arrow's decimal kernels fail here too)"
                    .into(),
            ));
        }
    }
    Ok(groups)
}

/// Runs `program` over `batch` on the CPU: the reference every backend's
/// aggregation must match.
pub fn aggregate(program: &AggProgram, batch: &RecordBatch) -> Result<Groups> {
    let program = &*program.bound_to(&batch.schema());
    let used = program.used_inputs();
    let mut cols: Vec<Option<Column<'_>>> = (0..program.inputs.len()).map(|_| None).collect();
    for i in used {
        let input = program.inputs[i];
        cols[i] = Some(column(batch, input.column, input.load)?);
    }
    let n = batch.num_rows();
    let tasks: Vec<std::ops::Range<usize>> = (0..n.div_ceil(TASK))
        .map(|t| t * TASK..((t + 1) * TASK).min(n))
        .collect();
    let parts: Vec<Groups> = tasks
        .into_par_iter()
        .map(|rows| run_rows(program, &cols, rows))
        .collect::<Result<_>>()?;
    let mut all = Groups::new(program);
    for p in &parts {
        all.merge(p);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Array, AsArray, Decimal128Array, Int32Array, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Int64Type, Schema, UInt64Type};

    use super::*;
    use crate::query::{Agg, AggFn, CmpOp, Input};

    fn batch() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, true),
            Field::new("d", DataType::Decimal128(15, 2), true),
            Field::new("i", DataType::Int32, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec![
                    Some("A"),
                    Some("B"),
                    None,
                    Some("A"),
                    Some("B"),
                ])),
                Arc::new(
                    Decimal128Array::from(vec![Some(150), Some(-25), Some(7), None, Some(1000)])
                        .with_precision_and_scale(15, 2)
                        .unwrap(),
                ),
                Arc::new(Int32Array::from(vec![
                    Some(1),
                    None,
                    Some(3),
                    Some(4),
                    Some(5),
                ])),
            ],
        )
        .unwrap()
    }

    fn program(filter: Option<Expr>, keys: Vec<usize>, aggs: Vec<Agg>) -> AggProgram {
        let mut fields = Vec::new();
        if !keys.is_empty() {
            fields.push(Field::new("k", DataType::Utf8, true));
        }
        for a in &aggs {
            match a.func {
                AggFn::Sum { .. } => {
                    fields.push(Field::new("s", DataType::Decimal128(25, 2), true))
                }
                AggFn::Avg => {
                    fields.push(Field::new("c", DataType::UInt64, true));
                    fields.push(Field::new("s", DataType::Decimal128(25, 2), true));
                }
                AggFn::Count => fields.push(Field::new("n", DataType::Int64, true)),
            }
        }
        AggProgram {
            inputs: vec![
                Input {
                    column: 0,
                    load: Load::Bytes,
                },
                Input {
                    column: 1,
                    load: Load::Decimal128,
                },
                Input {
                    column: 2,
                    load: Load::Int {
                        bytes: 4,
                        signed: true,
                    },
                },
            ],
            filter,
            keys,
            aggs,
            schema: Arc::new(Schema::new(fields)),
        }
    }

    fn sorted(b: &RecordBatch) -> Vec<String> {
        crate::query::rows::sorted_rows(std::slice::from_ref(b))
            .into_iter()
            .map(|r| r.join("|"))
            .collect()
    }

    #[test]
    fn groups_nulls_and_sums_as_sql_does() {
        let p = program(
            None,
            vec![0],
            vec![
                Agg {
                    func: AggFn::Sum { bits: 128 },
                    arg: Expr::Input(1),
                },
                Agg {
                    func: AggFn::Avg,
                    arg: Expr::Input(1),
                },
                Agg {
                    func: AggFn::Count,
                    arg: Expr::Input(2),
                },
            ],
        );
        let out = aggregate(&p, &batch()).unwrap().to_batch(&p).unwrap();
        assert_eq!(
            sorted(&out),
            vec!["A|1.50|1|1.50|2", "B|9.75|2|9.75|1", "NULL|0.07|1|0.07|1"]
        );
    }

    #[test]
    fn filter_uses_three_valued_logic() {
        // i > 2 OR d < 0: row 1 has i null but d < 0 (true); row 3 has d
        // null but i > 2 (true); row 0 is false; rows 2 and 4 true.
        let cmp = |op, input, lit| {
            Box::new(Expr::Cmp {
                op,
                l: Box::new(Expr::Input(input)),
                r: Box::new(Expr::Int(lit)),
            })
        };
        let f = Expr::Or(cmp(CmpOp::Gt, 2, 2), cmp(CmpOp::Lt, 1, 0));
        let count = Agg {
            func: AggFn::Count,
            arg: Expr::Int(1),
        };
        let p = program(Some(f), vec![], vec![count.clone()]);
        let out = aggregate(&p, &batch()).unwrap().to_batch(&p).unwrap();
        assert_eq!(out.column(0).as_primitive::<Int64Type>().value(0), 4);
        // AND with a null side is null, which does not pass: rows 2, 4.
        let and = Expr::And(cmp(CmpOp::Gt, 2, 2), cmp(CmpOp::Gt, 1, 0));
        let p = program(Some(and), vec![], vec![count]);
        let out = aggregate(&p, &batch()).unwrap().to_batch(&p).unwrap();
        assert_eq!(out.column(0).as_primitive::<Int64Type>().value(0), 2);
    }

    #[test]
    fn no_rows_give_one_keyless_group_with_null_sums() {
        let p = program(
            Some(Expr::Bool(false)),
            vec![],
            vec![
                Agg {
                    func: AggFn::Sum { bits: 128 },
                    arg: Expr::Input(1),
                },
                Agg {
                    func: AggFn::Avg,
                    arg: Expr::Input(1),
                },
            ],
        );
        let out = aggregate(&p, &batch()).unwrap().to_batch(&p).unwrap();
        assert_eq!(out.num_rows(), 1);
        assert!(out.column(0).is_null(0));
        assert_eq!(out.column(1).as_primitive::<UInt64Type>().value(0), 0);
        assert!(out.column(2).is_null(0));
        // With keys, no rows give no groups.
        let p = program(Some(Expr::Bool(false)), vec![0], vec![]);
        assert!(aggregate(&p, &batch()).unwrap().is_empty());
    }

    #[test]
    fn integer_arithmetic_wraps_at_its_width_and_decimals_overflow() {
        let big = i64::MAX as i128;
        let e = Expr::Arith {
            op: ArithOp::Add,
            bits: 64,
            l: Box::new(Expr::Int(big)),
            r: Box::new(Expr::Int(1)),
        };
        let cols: Vec<Option<Column<'_>>> = vec![];
        let none = Overflow::new(false);
        assert_eq!(eval(&e, &cols, 0..1, &none).v[0], i64::MIN as i128);
        assert!(!none.get());
        // Decimals (128 bits) overflow instead, as arrow's kernels do.
        let e = Expr::Arith {
            op: ArithOp::Mul,
            bits: 128,
            l: Box::new(Expr::Int(i128::MAX)),
            r: Box::new(Expr::Int(2)),
        };
        let ov = Overflow::new(false);
        eval(&e, &cols, 0..1, &ov);
        assert!(ov.get());
        let scale = Expr::Scale {
            e: Box::new(Expr::Int(i128::MAX / 5)),
            factor: 10,
        };
        let ov = Overflow::new(false);
        eval(&scale, &cols, 0..1, &ov);
        assert!(ov.get());
    }

    #[test]
    fn sums_merge_across_tasks() {
        let n = TASK * 2 + 17;
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
        let b = RecordBatch::try_new(
            schema,
            vec![Arc::new(Int64Array::from_iter_values(0..n as i64))],
        )
        .unwrap();
        let p = AggProgram {
            inputs: vec![Input {
                column: 0,
                load: Load::Int {
                    bytes: 8,
                    signed: true,
                },
            }],
            filter: None,
            keys: vec![],
            aggs: vec![Agg {
                func: AggFn::Sum { bits: 64 },
                arg: Expr::Input(0),
            }],
            schema: Arc::new(Schema::new(vec![Field::new("s", DataType::Int64, true)])),
        };
        let out = aggregate(&p, &b).unwrap().to_batch(&p).unwrap();
        let want = (n as i64 - 1) * n as i64 / 2;
        assert_eq!(out.column(0).as_primitive::<Int64Type>().value(0), want);
    }
}
