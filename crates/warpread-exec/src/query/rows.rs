//! Query results as sorted rows of text cells: how results of two plans or
//! two backends are compared (`Utf8` and `Utf8View`, or equal decimals,
//! render alike; row order is not part of a result).

use arrow::array::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};

/// Every row of `batches` as text cells (nulls as `NULL`), sorted.
pub fn sorted_rows(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for b in batches {
        let formatters: Vec<_> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).expect("displayable column"))
            .collect();
        for r in 0..b.num_rows() {
            rows.push(formatters.iter().map(|f| f.value(r).to_string()).collect());
        }
    }
    rows.sort();
    rows
}
