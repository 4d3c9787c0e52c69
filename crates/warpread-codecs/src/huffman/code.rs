//! Code construction: Huffman code lengths from symbol counts, limited to a
//! maximum length the way E²MC limits them (a floor under every count,
//! raised until the tree fits), and the canonical code those lengths give.

/// Most bits one codeword may have in any stream: the decoders read a
/// 32-bit window, and a gap (at most the longest code less one) must fit
/// the smallest subsequence.
pub const MAX_CODE_LEN: u32 = 24;

/// Optimal (unlimited) Huffman code lengths for `counts`, indexed like it;
/// symbols of count 0 get length 0. One used symbol gets length 1.
/// Ties are broken by symbol index, so the result is deterministic.
///
/// Two queues instead of a heap (van Leeuwen): the leaves sorted by (count,
/// symbol), and the merged nodes, whose weights come out in order, so each
/// step takes the lighter head (a leaf on a tie). That is the tree a heap
/// ordered by (weight, creation order) builds, in O(n) after one sort: the
/// length limiter below builds several trees over up to 65,536 symbols.
pub fn huffman_lengths(counts: &[u64]) -> Vec<u32> {
    let mut lengths = vec![0u32; counts.len()];
    let mut leaves: Vec<(u64, usize)> = counts
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c > 0)
        .map(|(s, &c)| (c, s))
        .collect();
    match leaves.len() {
        0 => return lengths,
        1 => {
            lengths[leaves[0].1] = 1;
            return lengths;
        }
        _ => {}
    }
    leaves.sort_unstable();
    let n = leaves.len();
    // Nodes 0..n are the sorted leaves, n.. the merged nodes in creation
    // order; `parent` links each to the node that merged it.
    let mut parent = vec![usize::MAX; 2 * n - 1];
    let mut merged: Vec<u64> = Vec::with_capacity(n - 1);
    let (mut next_leaf, mut next_merged) = (0usize, 0usize);
    // The lighter head of the two queues, a leaf on a tie. While merging,
    // at least two nodes are left between them (n - i after i merges).
    let mut take = |merged: &Vec<u64>| -> (u64, usize) {
        let leaf_first = next_merged >= merged.len()
            || (next_leaf < n && leaves[next_leaf].0 <= merged[next_merged]);
        if leaf_first {
            next_leaf += 1;
            (leaves[next_leaf - 1].0, next_leaf - 1)
        } else {
            next_merged += 1;
            (merged[next_merged - 1], n + next_merged - 1)
        }
    };
    for _ in 0..n - 1 {
        let (w1, a) = take(&merged);
        let (w2, b) = take(&merged);
        let node = n + merged.len();
        parent[a] = node;
        parent[b] = node;
        merged.push(w1 + w2);
    }
    // A node's depth is its parent's plus one; parents come after their
    // children, so walk from the root (the last node) down.
    let mut depth = vec![0u32; 2 * n - 1];
    for k in (0..2 * n - 2).rev() {
        depth[k] = depth[parent[k]] + 1;
    }
    for (k, &(_, s)) in leaves.iter().enumerate() {
        lengths[s] = depth[k];
    }
    lengths
}

/// Huffman code lengths for `counts` with no length above `max_len`
/// (1..=[`MAX_CODE_LEN`]), by E²MC's method: every used symbol's count is
/// raised to at least a floor, which starts at the total over
/// 2^`max_len` and doubles until the optimal code of the floored counts
/// fits. Once the floor reaches the largest count every count is equal and
/// the code is flat (at most ⌈log2 used⌉ bits), so the loop ends within 64
/// rounds. `None` if more symbols are used than `max_len` bits can number.
pub fn limited_lengths(counts: &[u64], max_len: u32) -> Option<Vec<u32>> {
    let used = counts.iter().filter(|&&c| c > 0).count() as u64;
    if !(1..=MAX_CODE_LEN).contains(&max_len) || used > 1u64 << max_len {
        return None;
    }
    let lengths = huffman_lengths(counts);
    if lengths.iter().all(|&l| l <= max_len) {
        return Some(lengths);
    }
    let total: u64 = counts.iter().sum();
    let mut floor = (total >> max_len).max(1);
    loop {
        let floored: Vec<u64> = counts
            .iter()
            .map(|&c| if c > 0 { c.max(floor) } else { 0 })
            .collect();
        let lengths = huffman_lengths(&floored);
        if lengths.iter().all(|&l| l <= max_len) {
            return Some(lengths);
        }
        floor = floor.checked_mul(2)?;
    }
}

/// A canonical code: per used symbol, its length; codes of one length are
/// consecutive numbers in symbol order, shorter codes first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalCode {
    /// Longest length the stream allows (the header's bound, not
    /// necessarily used).
    pub max_len: u32,
    /// `counts[l]`: codes of length `l` (index 0 unused), `l` in
    /// 1..=`max_len`.
    pub counts: Vec<u32>,
    /// Used symbols in canonical order: by length, then by value.
    pub symbols: Vec<u16>,
}

impl CanonicalCode {
    /// The canonical code of `lengths` (indexed by symbol value; 0 = not
    /// coded), bounded by `max_len`. `None` if a length exceeds `max_len` or
    /// the lengths oversubscribe the code space (Kraft sum above 1).
    pub fn from_lengths(lengths: &[u32], max_len: u32) -> Option<Self> {
        if !(1..=MAX_CODE_LEN).contains(&max_len) || lengths.len() > 1 << 16 {
            return None;
        }
        let mut counts = vec![0u32; max_len as usize + 1];
        let mut symbols: Vec<(u32, u16)> = Vec::new();
        for (s, &l) in lengths.iter().enumerate() {
            if l == 0 {
                continue;
            }
            if l > max_len {
                return None;
            }
            counts[l as usize] += 1;
            symbols.push((l, s as u16));
        }
        symbols.sort_unstable();
        let code = Self {
            max_len,
            counts,
            symbols: symbols.into_iter().map(|(_, s)| s).collect(),
        };
        code.kraft_ok().then_some(code)
    }

    /// Whether the lengths fit the code space (Kraft sum at most 1).
    pub fn kraft_ok(&self) -> bool {
        let l = self.max_len;
        let used: u64 = (1..=l as usize)
            .map(|k| u64::from(self.counts[k]) << (l - k as u32))
            .sum();
        used <= 1u64 << l
    }

    /// Per symbol value (`alphabet` of them): its (code, length), length 0
    /// for symbols without a code. The code's bits are the low `length`
    /// bits, written most significant first.
    pub fn encode_table(&self, alphabet: usize) -> Vec<(u32, u32)> {
        let mut table = vec![(0u32, 0u32); alphabet];
        let mut code = 0u32;
        let mut i = 0usize;
        for l in 1..=self.max_len as usize {
            for _ in 0..self.counts[l] {
                if let Some(slot) = table.get_mut(usize::from(self.symbols[i])) {
                    *slot = (code, l as u32);
                }
                code += 1;
                i += 1;
            }
            code <<= 1;
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(counts: &[u64], lengths: &[u32]) -> u64 {
        counts
            .iter()
            .zip(lengths)
            .map(|(&c, &l)| c * u64::from(l))
            .sum()
    }

    /// The heap construction the two queues replace: (weight, creation
    /// order) as the key.
    fn heap_lengths(counts: &[u64]) -> Vec<u32> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut lengths = vec![0u32; counts.len()];
        let leaves: Vec<usize> = (0..counts.len()).filter(|&s| counts[s] > 0).collect();
        if leaves.len() < 2 {
            if let Some(&s) = leaves.first() {
                lengths[s] = 1;
            }
            return lengths;
        }
        let mut parent = vec![usize::MAX; leaves.len()];
        let mut heap: BinaryHeap<_> = leaves
            .iter()
            .enumerate()
            .map(|(k, &s)| Reverse((counts[s], k)))
            .collect();
        while heap.len() > 1 {
            let Reverse((w1, a)) = heap.pop().unwrap();
            let Reverse((w2, b)) = heap.pop().unwrap();
            let node = parent.len();
            parent.push(usize::MAX);
            parent[a] = node;
            parent[b] = node;
            heap.push(Reverse((w1 + w2, node)));
        }
        let mut depth = vec![0u32; parent.len()];
        for k in (0..parent.len()).rev() {
            if parent[k] != usize::MAX {
                depth[k] = depth[parent[k]] + 1;
            }
        }
        for (k, &s) in leaves.iter().enumerate() {
            lengths[s] = depth[k];
        }
        lengths
    }

    #[test]
    fn two_queues_build_the_heaps_tree() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..200 {
            let n = 1 + round * 7 % 600;
            let counts: Vec<u64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Many zeros and many ties.
                    if x.is_multiple_of(5) {
                        0
                    } else {
                        x % (1 + round as u64 % 40) + 1
                    }
                })
                .collect();
            assert_eq!(
                huffman_lengths(&counts),
                heap_lengths(&counts),
                "round {round}"
            );
        }
    }

    #[test]
    fn textbook_lengths() {
        // a:45 b:13 c:12 d:16 e:9 f:5 (CLRS): 1,3,3,3,4,4.
        let l = huffman_lengths(&[45, 13, 12, 16, 9, 5]);
        assert_eq!(l, vec![1, 3, 3, 3, 4, 4]);
        assert_eq!(huffman_lengths(&[0, 7, 0]), vec![0, 1, 0]);
        assert_eq!(huffman_lengths(&[0, 0]), vec![0, 0]);
    }

    #[test]
    fn limiting_bounds_lengths_and_costs_little() {
        // Fibonacci counts give the deepest tree: n-1 levels for n symbols.
        let mut fib = vec![1u64, 1];
        for i in 2..30 {
            fib.push(fib[i - 1] + fib[i - 2]);
        }
        let free = huffman_lengths(&fib);
        assert_eq!(*free.iter().max().unwrap(), 29);
        for max_len in [5u32, 8, 12, 16] {
            let l = limited_lengths(&fib, max_len).unwrap();
            assert!(l.iter().all(|&x| (1..=max_len).contains(&x)));
            assert!(CanonicalCode::from_lengths(&l, max_len).is_some());
            assert!(cost(&fib, &l) >= cost(&fib, &free));
        }
        // 32 symbols cannot be numbered by 4 bits.
        assert!(limited_lengths(&[1; 32], 4).is_none());
        assert_eq!(limited_lengths(&[1; 32], 5).unwrap(), vec![5; 32]);
    }

    #[test]
    fn canonical_codes_are_prefix_free_and_ordered() {
        let lengths = [0, 3, 2, 3, 0, 2, 2];
        let code = CanonicalCode::from_lengths(&lengths, 4).unwrap();
        assert_eq!(code.symbols, vec![2, 5, 6, 1, 3]);
        let t = code.encode_table(7);
        assert_eq!(t[2], (0b00, 2));
        assert_eq!(t[5], (0b01, 2));
        assert_eq!(t[6], (0b10, 2));
        assert_eq!(t[1], (0b110, 3));
        assert_eq!(t[3], (0b111, 3));
        assert_eq!(t[0], (0, 0));
        // Oversubscribed: three codes of length 1.
        assert!(CanonicalCode::from_lengths(&[1, 1, 1], 4).is_none());
        assert!(CanonicalCode::from_lengths(&[5], 4).is_none());
    }
}
