//! `LIKE` patterns made of literal pieces between `%` wildcards, matched by
//! searching for the pieces in order.
//!
//! arrow's `like` kernel matches `%a%` and `a%` with a substring or prefix
//! test, but a pattern of two pieces or more (TPC-H Q13's
//! `o_comment NOT LIKE '%special%requests%'`, Q16's
//! `s_comment LIKE '%Customer%Complaints%'`) goes to a regular expression.
//! On SF 10 on the H100 host Q13's `FilterExec` spent 2.26 s of thread time
//! on 15 M comments, about 150 ns a row (benchmarks/tpch.md). With
//! only `%` wildcards, matching the pieces leftmost first is exact: the
//! first piece is a prefix (unless the pattern starts with `%`), each
//! middle piece is found at or after the end of the one before, and the
//! last is a suffix starting no earlier than that (unless the pattern ends
//! with `%`). [`FastLike`] (a physical optimizer rule) puts [`PiecesLike`]
//! in place of such a `LIKE` in filters; every other pattern (`_`, an
//! escape, `ILIKE`) stays arrow's.

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use arrow::array::{Array, AsArray, BooleanArray};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::{DataType, Schema};
use arrow::record_batch::RecordBatch;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{LikeExpr, Literal};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::filter::{FilterExec, FilterExecBuilder};
use datafusion::scalar::ScalarValue;
use memchr::memmem::Finder;

use super::options::WarpreadOptions;

/// A pattern's literal pieces, split at `%`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pieces {
    /// The text before the first `%` (empty when the pattern starts with one).
    first: Vec<u8>,
    /// The pieces between `%`s, in order, none empty.
    middle: Vec<Vec<u8>>,
    /// The text after the last `%`.
    last: Vec<u8>,
}

impl Pieces {
    /// The pieces of `pattern` when it is literal text and at least two
    /// `%`-separated non-empty pieces (fewer are arrow's fast cases); no
    /// `_`, no backslash (arrow's default escape).
    pub fn of(pattern: &str) -> Option<Pieces> {
        if pattern.contains(['_', '\\']) {
            return None;
        }
        let mut parts: Vec<&str> = pattern.split('%').collect();
        if parts.len() < 2 {
            return None; // no wildcard: equality
        }
        let last = parts.pop()?.as_bytes().to_vec();
        let first = parts.remove(0).as_bytes().to_vec();
        let middle: Vec<Vec<u8>> = parts
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(|p| p.as_bytes().to_vec())
            .collect();
        let non_empty =
            middle.len() + usize::from(!first.is_empty()) + usize::from(!last.is_empty());
        (non_empty >= 2).then_some(Pieces {
            first,
            middle,
            last,
        })
    }

    fn finders(&self) -> Vec<Finder<'_>> {
        self.middle.iter().map(Finder::new).collect()
    }

    fn matches(&self, s: &[u8], finders: &[Finder<'_>]) -> bool {
        if !s.starts_with(&self.first) {
            return false;
        }
        self.rest_matches(s, self.first.len(), finders)
    }

    /// Whether `finders`' pieces follow in order from `at` on, then the
    /// last piece as a suffix.
    fn rest_matches(&self, s: &[u8], mut at: usize, finders: &[Finder<'_>]) -> bool {
        for f in finders {
            match f.find(&s[at..]) {
                Some(i) => at += i + f.needle().len(),
                None => return false,
            }
        }
        s.len() - at >= self.last.len() && s.ends_with(&self.last)
    }

    /// Which of the strings `offsets` cut out of `values` match. A pattern
    /// that starts with `%` searches the buffer for its first piece from a
    /// row's start to the buffer's end, and again from the next undecided
    /// row's start after each hit (a long search is much faster than a
    /// short one per row, and most rows hold no hit), then tests the rest
    /// only in rows with a hit.
    fn matches_offsets<O: arrow::array::OffsetSizeTrait>(
        &self,
        values: &[u8],
        offsets: &[O],
        finders: &[Finder<'_>],
    ) -> BooleanBuffer {
        let n = offsets.len() - 1;
        let row = |i: usize| &values[offsets[i].as_usize()..offsets[i + 1].as_usize()];
        let Some((head, rest)) = finders.split_first().filter(|_| self.first.is_empty()) else {
            return BooleanBuffer::collect_bool(n, |i| self.matches(row(i), finders));
        };
        let mut hit = arrow::array::BooleanBufferBuilder::new(n);
        hit.append_n(n, false);
        let end = offsets[n].as_usize();
        let len = head.needle().len();
        // Each search starts at a row's start: a hit found from an earlier
        // row that runs into this one must not hide a hit that starts
        // inside it ("xa" then "aaz" for `%aa%z`).
        let (mut r, mut from) = (0, offsets[0].as_usize());
        while r < n {
            let Some(p) = head.find(&values[from..end]).map(|p| from + p) else {
                break;
            };
            while r < n && offsets[r + 1].as_usize() <= p {
                r += 1;
            }
            if r == n {
                break;
            }
            let (lo, hi) = (offsets[r].as_usize(), offsets[r + 1].as_usize());
            // The row's first hit is its leftmost, so greedy is exact; a
            // hit running past the row's end may overlap one that starts
            // later inside the row.
            let first = if p + len <= hi {
                Some(p)
            } else {
                head.find(&values[p + 1..hi]).map(|q| p + 1 + q)
            };
            if first.is_some_and(|q| self.rest_matches(&values[lo..hi], q - lo + len, rest)) {
                hit.set_bit(r, true);
            }
            r += 1;
            from = offsets.get(r).map_or(end, |o| o.as_usize());
        }
        hit.finish()
    }
}

/// `expr [NOT] LIKE pattern` for a pattern of [`Pieces`].
#[derive(Debug, Eq)]
pub struct PiecesLike {
    expr: Arc<dyn PhysicalExpr>,
    pieces: Pieces,
    negated: bool,
    /// The pattern as written, for display.
    pattern: String,
}

impl PartialEq for PiecesLike {
    fn eq(&self, other: &Self) -> bool {
        self.expr.eq(&other.expr) && self.pieces == other.pieces && self.negated == other.negated
    }
}

impl Hash for PiecesLike {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.expr.hash(state);
        self.pieces.hash(state);
        self.negated.hash(state);
    }
}

impl fmt::Display for PiecesLike {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let not = if self.negated { "NOT " } else { "" };
        write!(f, "{} {not}LIKE {}", self.expr, self.pattern)
    }
}

impl PiecesLike {
    /// The replacement of `like` when its pattern is a literal of
    /// [`Pieces`] over a string column.
    pub fn of(like: &LikeExpr, schema: &Schema) -> Option<PiecesLike> {
        if like.case_insensitive() {
            return None;
        }
        let pattern = match like.pattern().as_ref().downcast_ref::<Literal>()?.value() {
            ScalarValue::Utf8(Some(p))
            | ScalarValue::LargeUtf8(Some(p))
            | ScalarValue::Utf8View(Some(p)) => p.clone(),
            _ => return None,
        };
        if !matches!(
            like.expr().data_type(schema).ok()?,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        ) {
            return None;
        }
        Some(PiecesLike {
            expr: Arc::clone(like.expr()),
            pieces: Pieces::of(&pattern)?,
            negated: like.negated(),
            pattern,
        })
    }

    fn eval(&self, strings: &dyn Array) -> DfResult<BooleanArray> {
        let finders = self.pieces.finders();
        let test = |s: &[u8]| self.pieces.matches(s, &finders) != self.negated;
        let n = strings.len();
        let negate = |b: BooleanBuffer| if self.negated { !&b } else { b };
        let bits = match strings.data_type() {
            DataType::Utf8 => {
                let a = strings.as_string::<i32>();
                negate(
                    self.pieces
                        .matches_offsets(a.value_data(), a.value_offsets(), &finders),
                )
            }
            DataType::LargeUtf8 => {
                let a = strings.as_string::<i64>();
                negate(
                    self.pieces
                        .matches_offsets(a.value_data(), a.value_offsets(), &finders),
                )
            }
            DataType::Utf8View => {
                let a = strings.as_string_view();
                BooleanBuffer::collect_bool(n, |i| test(a.value(i).as_bytes()))
            }
            t => {
                return Err(DataFusionError::Internal(format!(
                    "LIKE over {t}: not a string"
                )));
            }
        };
        Ok(BooleanArray::new(bits, strings.logical_nulls()))
    }
}

impl PhysicalExpr for PiecesLike {
    fn data_type(&self, _schema: &Schema) -> DfResult<DataType> {
        Ok(DataType::Boolean)
    }

    fn nullable(&self, schema: &Schema) -> DfResult<bool> {
        self.expr.nullable(schema)
    }

    fn evaluate(&self, batch: &RecordBatch) -> DfResult<ColumnarValue> {
        match self.expr.evaluate(batch)? {
            ColumnarValue::Array(a) => Ok(ColumnarValue::Array(Arc::new(self.eval(a.as_ref())?))),
            ColumnarValue::Scalar(s) => {
                let a = s.to_array_of_size(1)?;
                let v = self.eval(a.as_ref())?;
                Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&v, 0)?))
            }
        }
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.expr]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> DfResult<Arc<dyn PhysicalExpr>> {
        let [expr] = <[_; 1]>::try_from(children)
            .map_err(|_| DataFusionError::Internal("LIKE has one input".into()))?;
        Ok(Arc::new(PiecesLike {
            expr,
            pieces: self.pieces.clone(),
            negated: self.negated,
            pattern: self.pattern.clone(),
        }))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.expr.fmt_sql(f)?;
        let not = if self.negated { "NOT " } else { "" };
        write!(f, " {not}LIKE '{}'", self.pattern.replace('\'', "''"))
    }
}

/// The physical optimizer rule that puts [`PiecesLike`] in filters'
/// predicates (see the module docs), unless the session sets
/// `warpread.fast_like = false`.
#[derive(Debug, Default)]
pub struct FastLike;

impl PhysicalOptimizerRule for FastLike {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        options: &ConfigOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        if !WarpreadOptions::of(options).fast_like {
            return Ok(plan);
        }
        plan.transform_up(|node| {
            let Some(filter) = node.downcast_ref::<FilterExec>() else {
                return Ok(Transformed::no(node));
            };
            let schema = filter.input().schema();
            let predicate = Arc::clone(filter.predicate()).transform_up(|e| {
                Ok(match e.as_ref().downcast_ref::<LikeExpr>() {
                    Some(like) => match PiecesLike::of(like, &schema) {
                        Some(fast) => Transformed::yes(Arc::new(fast) as Arc<dyn PhysicalExpr>),
                        None => Transformed::no(e),
                    },
                    None => Transformed::no(e),
                })
            })?;
            if !predicate.transformed {
                return Ok(Transformed::no(node));
            }
            let rebuilt = FilterExecBuilder::from(filter)
                .with_predicate(predicate.data)
                .build()?;
            Ok(Transformed::yes(Arc::new(rebuilt) as Arc<dyn ExecutionPlan>))
        })
        .data()
    }

    fn name(&self) -> &str {
        "warpread_fast_like"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{LargeStringArray, StringArray, StringViewArray};
    use arrow::compute::kernels::comparison::{like, nlike};
    use datafusion::physical_expr::expressions::Column;

    fn check(pattern: &str, strings: &[Option<&str>]) {
        let pieces = Pieces::of(pattern).unwrap_or_else(|| panic!("{pattern} has pieces"));
        let a = StringArray::from(strings.to_vec());
        for negated in [false, true] {
            let expr = PiecesLike {
                expr: Arc::new(Column::new("s", 0)),
                pieces: pieces.clone(),
                negated,
                pattern: pattern.to_string(),
            };
            let ours = expr.eval(&a).unwrap();
            let p = StringArray::new_scalar(pattern);
            let arrow = if negated { nlike(&a, &p) } else { like(&a, &p) }.unwrap();
            assert_eq!(ours, arrow, "{pattern} negated={negated}");
            // The other string layouts give the same answer.
            let large = LargeStringArray::from(strings.to_vec());
            let view = StringViewArray::from(strings.to_vec());
            assert_eq!(expr.eval(&large).unwrap(), ours);
            assert_eq!(expr.eval(&view).unwrap(), ours);
        }
    }

    #[test]
    fn pieces_match_as_arrow_matches() {
        let strings = [
            Some("special requests"),
            Some("specialrequests"),
            Some("requests special"),
            Some("xx special yy requests zz"),
            Some("special"),
            Some(""),
            None,
            Some("spespecial requestsx"),
            Some("aba"),
            Some("ab"),
            Some("abab"),
            Some("a"),
            Some("special requests special"),
            // A hit that spans two rows is no hit.
            Some("xspe"),
            Some("cial requests"),
            Some("specialrequest"),
            Some("s"),
        ];
        // Pieces that overlap themselves, across row ends.
        let overlapping = [
            Some("xa"),
            Some("aaz"),
            Some("ban"),
            Some("anas"),
            Some("zab"),
            Some("ababx"),
            Some("aaaz"),
            Some("a"),
            Some("az"),
        ];
        for pattern in ["%aa%z", "%ana%s", "%abab%x", "%aa%a%z"] {
            check(pattern, &overlapping);
        }
        for pattern in [
            "%special%requests%",
            "special%requests",
            "special%requests%",
            "%special%requests",
            "a%a",
            "ab%ab",
            "a%b%a",
            "%a%b%",
            "%%special%%requests%%",
        ] {
            check(pattern, &strings);
        }
    }

    #[test]
    fn sliced_arrays_match_their_own_rows() {
        let a = StringArray::from(vec![
            "special requests",
            "x",
            "a special b requests",
            "special",
        ]);
        let sliced = a.slice(1, 3);
        let expr = PiecesLike {
            expr: Arc::new(Column::new("s", 0)),
            pieces: Pieces::of("%special%requests%").unwrap(),
            negated: false,
            pattern: "%special%requests%".into(),
        };
        let got = expr.eval(&sliced).unwrap();
        assert_eq!(
            got.values().iter().collect::<Vec<_>>(),
            [false, true, false]
        );
    }

    #[test]
    fn other_patterns_stay_arrows() {
        for p in [
            "%special%",
            "special%",
            "%special",
            "plain",
            "%a_b%c%",
            "a\\%b%c",
            "%",
        ] {
            assert!(Pieces::of(p).is_none(), "{p}");
        }
    }
}
