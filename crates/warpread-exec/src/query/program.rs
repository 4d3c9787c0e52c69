//! The aggregate program: what a fused scan-filter-aggregate computes, in
//! terms a backend can run without a query engine.
//!
//! Every number is a scaled integer held in 128 bits (integers and dates at
//! scale 0, decimals at their scale). Integer arithmetic wraps at the width
//! of the engine's result type, as DataFusion's wrapping kernels do;
//! decimal arithmetic (128 bits) and rescaling fail on overflow as arrow's
//! decimal kernels do (the CPU reference errs, the device refuses the
//! batch), so a program gives bit-identical results to the plan it
//! replaces, or none. Booleans are 0 or 1.
//! Nulls follow SQL: arithmetic and comparisons on a null are null, `AND`
//! and `OR` use three-valued logic, a row passes the filter only when the
//! predicate is true.

use std::borrow::Cow;

use arrow::datatypes::{DataType, SchemaRef};

/// How an input column's values load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    /// A little-endian integer of `bytes` bytes (1, 2, 4 or 8), signed or
    /// not (dates are signed 4-byte integers).
    Int {
        /// Bytes per value.
        bytes: u8,
        /// Two's complement.
        signed: bool,
    },
    /// A 16-byte decimal.
    Decimal128,
    /// Arrow booleans (bits).
    Bool,
    /// Variable-length bytes (strings); only as a group key.
    Bytes,
}

/// A column of the batch the program reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Input {
    /// Its index in the batch.
    pub column: usize,
    /// How its values load.
    pub load: Load,
}

/// Wrapping arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// Applies the comparison.
    pub fn holds(self, l: i128, r: i128) -> bool {
        match self {
            Self::Eq => l == r,
            Self::Ne => l != r,
            Self::Lt => l < r,
            Self::Le => l <= r,
            Self::Gt => l > r,
            Self::Ge => l >= r,
        }
    }
}

/// An expression over a row's inputs.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Input `i` of [`AggProgram::inputs`] (numeric or boolean loads).
    Input(usize),
    /// A scaled integer constant.
    Int(i128),
    /// A boolean constant.
    Bool(bool),
    /// `l op r`, both at the same scale (multiplication: any scales), the
    /// result wrapped to `bits` (8, 16, 32 or 64) as two's complement, or
    /// at 128 bits (decimals) an overflow.
    Arith {
        /// The operation.
        op: ArithOp,
        /// Result width in bits.
        bits: u8,
        /// Left operand.
        l: Box<Expr>,
        /// Right operand.
        r: Box<Expr>,
    },
    /// The operand multiplied by `factor` (a power of ten: a cast to a
    /// larger scale); past 128 bits an overflow.
    Scale {
        /// Operand.
        e: Box<Expr>,
        /// Multiplier.
        factor: i128,
    },
    /// A comparison of two operands at the same scale.
    Cmp {
        /// The comparison.
        op: CmpOp,
        /// Left operand.
        l: Box<Expr>,
        /// Right operand.
        r: Box<Expr>,
    },
    /// Three-valued `AND`.
    And(Box<Expr>, Box<Expr>),
    /// Three-valued `OR`.
    Or(Box<Expr>, Box<Expr>),
    /// `NOT`.
    Not(Box<Expr>),
    /// `IS NULL` (never null itself).
    IsNull(Box<Expr>),
    /// `IS NOT NULL`.
    IsNotNull(Box<Expr>),
}

impl Expr {
    /// Calls `f` on every input this expression reads.
    pub fn inputs(&self, f: &mut impl FnMut(usize)) {
        match self {
            Expr::Input(i) => f(*i),
            Expr::Int(_) | Expr::Bool(_) => {}
            Expr::Arith { l, r, .. } | Expr::Cmp { l, r, .. } => {
                l.inputs(f);
                r.inputs(f);
            }
            Expr::And(l, r) | Expr::Or(l, r) => {
                l.inputs(f);
                r.inputs(f);
            }
            Expr::Scale { e, .. } | Expr::Not(e) | Expr::IsNull(e) | Expr::IsNotNull(e) => {
                e.inputs(f)
            }
        }
    }
}

/// An aggregate function, with the state it hands to the final aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFn {
    /// `sum`: one state column, the wrapping sum at `bits` (64: `Int64`,
    /// 128: `Decimal128`), null where no value was seen.
    Sum {
        /// Width of the state.
        bits: u8,
    },
    /// `avg` of decimals: two state columns, the count (`UInt64`) and the
    /// wrapping 128-bit sum (`Decimal128`, null where the count is 0).
    Avg,
    /// `count`: one `Int64` state column, the non-null values.
    Count,
}

impl AggFn {
    /// Columns of state it emits.
    pub fn state_columns(self) -> usize {
        match self {
            AggFn::Avg => 2,
            AggFn::Sum { .. } | AggFn::Count => 1,
        }
    }
}

/// One aggregate of the program.
#[derive(Debug, Clone, PartialEq)]
pub struct Agg {
    /// The function.
    pub func: AggFn,
    /// Its argument (`count(*)` counts a constant).
    pub arg: Expr,
}

/// A filter, group keys and aggregates over the columns of a batch: the
/// partial aggregation of the rows that pass the filter.
#[derive(Debug, Clone)]
pub struct AggProgram {
    /// The batch columns read.
    pub inputs: Vec<Input>,
    /// Rows pass where this is true (all rows without it).
    pub filter: Option<Expr>,
    /// Group keys: inputs, grouped by value (nulls one group).
    pub keys: Vec<usize>,
    /// The aggregates.
    pub aggs: Vec<Agg>,
    /// The state batch's schema: one column per key, then each
    /// aggregate's [`AggFn::state_columns`].
    pub schema: SchemaRef,
}

impl AggProgram {
    /// The program as it reads `batch_schema`: a decimal input the batch
    /// holds at its stored width (`Decimal64`, `Decimal32`: scans that feed
    /// only programs skip widening them) loads as the signed integer it
    /// is, at the same scale. Keys encode either load as the same 128-bit
    /// value, so groups of the bound program are the program's.
    pub fn bound_to(&self, batch_schema: &arrow::datatypes::Schema) -> Cow<'_, AggProgram> {
        let narrow = |input: &Input| match (input.load, batch_schema.fields().get(input.column)) {
            (Load::Decimal128, Some(f)) => match f.data_type() {
                DataType::Decimal64(..) => Some(8),
                DataType::Decimal32(..) => Some(4),
                _ => None,
            },
            _ => None,
        };
        if !self.inputs.iter().any(|i| narrow(i).is_some()) {
            return Cow::Borrowed(self);
        }
        let mut bound = self.clone();
        for input in &mut bound.inputs {
            if let Some(bytes) = narrow(input) {
                input.load = Load::Int {
                    bytes,
                    signed: true,
                };
            }
        }
        Cow::Owned(bound)
    }

    /// The inputs any part of the program reads, in order.
    pub fn used_inputs(&self) -> Vec<usize> {
        let mut used = vec![false; self.inputs.len()];
        let mut mark = |i: usize| used[i] = true;
        if let Some(f) = &self.filter {
            f.inputs(&mut mark);
        }
        for &k in &self.keys {
            mark(k);
        }
        for a in &self.aggs {
            a.arg.inputs(&mut mark);
        }
        (0..used.len()).filter(|&i| used[i]).collect()
    }
}
