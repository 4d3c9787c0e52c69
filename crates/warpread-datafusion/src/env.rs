//! Settings of the DataFusion layer read from environment variables:
//! positive counts, the overrides that benchmarks set to compare a tuning
//! constant's values (group sizes, read-ahead, partitions), and switches
//! that turn a feature off for A/B runs. The layers below take typed
//! options instead.

/// The positive integer in variable `name`, if it is set to one.
pub fn count(name: &str) -> Option<usize> {
    positive(std::env::var(name).ok().as_deref())
}

/// Whether the feature that switch `name` controls is on: it is unless the
/// variable is `0`.
pub fn on_unless_zero(name: &str) -> bool {
    std::env::var(name).as_deref() != Ok("0")
}

fn positive(value: Option<&str>) -> Option<usize> {
    value?.trim().parse().ok().filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::positive;

    #[test]
    fn only_positive_integers_count() {
        assert_eq!(positive(Some("3")), Some(3));
        assert_eq!(positive(Some(" 7 ")), Some(7));
        for v in ["0", "-1", "x", ""] {
            assert_eq!(positive(Some(v)), None, "{v:?}");
        }
        assert_eq!(positive(None), None);
    }
}
