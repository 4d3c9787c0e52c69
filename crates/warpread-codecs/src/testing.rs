//! Helpers for unit tests.

/// A xorshift64 generator from `seed` (not 0): small, fast, and enough to
/// shape random test streams reproducibly.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
