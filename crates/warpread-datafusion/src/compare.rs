//! Comparing query results of two readers: rows rendered as text (so
//! `Utf8` and `Utf8View`, or equal decimals, compare equal), sorted, and
//! floating-point cells compared with a relative tolerance (parallel sums
//! add in different orders).

use arrow::array::RecordBatch;

pub use crate::query::rows::sorted_rows;

fn cells_match(a: &str, b: &str, rel_tol: f64) -> bool {
    if a == b {
        return true;
    }
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => (x - y).abs() <= rel_tol * x.abs().max(y.abs()).max(f64::MIN_POSITIVE),
        _ => false,
    }
}

/// `Ok` when both results hold the same rows (in any order); else the
/// first difference.
pub fn compare_results(
    left: &[RecordBatch],
    right: &[RecordBatch],
    rel_tol: f64,
) -> Result<(), String> {
    let (a, b) = (sorted_rows(left), sorted_rows(right));
    if a.len() != b.len() {
        return Err(format!("{} rows against {} rows", a.len(), b.len()));
    }
    for (i, (ra, rb)) in a.iter().zip(&b).enumerate() {
        let same =
            ra.len() == rb.len() && ra.iter().zip(rb).all(|(x, y)| cells_match(x, y, rel_tol));
        if !same {
            return Err(format!("sorted row {i}: {ra:?} against {rb:?}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_applies_to_numbers_only() {
        assert!(cells_match("1.0000000001", "1.0", 1e-9));
        assert!(!cells_match("1.001", "1.0", 1e-9));
        assert!(!cells_match("abc", "abd", 1e-9));
    }
}
