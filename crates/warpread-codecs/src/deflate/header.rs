//! A dynamic block's header (RFC 1951 3.2.7): the code-length code, then
//! the literal/length and distance code lengths, checked in zlib's order
//! and by zlib's rules, so a header this accepts is one zlib accepts.

use super::bits::BitReader;
use super::code::{Code, CodeKind};

/// The order in which the code-length code's lengths are stored.
pub(crate) const CL_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// A dynamic block's two codes.
pub(crate) struct DynamicCodes {
    pub(crate) lit: Code,
    pub(crate) dist: Code,
}

/// Reads the header that follows a dynamic block's three header bits;
/// `None` if zlib would reject it (or it runs past the input).
pub(crate) fn read_dynamic(r: &mut BitReader<'_>) -> Option<DynamicCodes> {
    let lens = read_lengths(r)?;
    let (nlen, lens) = lens;
    let lit = Code::build(&lens[..nlen], CodeKind::LitLen).ok()?;
    let dist = Code::build(&lens[nlen..], CodeKind::Dist).ok()?;
    Some(DynamicCodes { lit, dist })
}

/// Whether the bits at `r` (just after the three header bits) are a dynamic
/// block header zlib accepts, without building the decoding tables.
pub(crate) fn is_valid_dynamic(r: &mut BitReader<'_>) -> bool {
    let Some((nlen, lens)) = read_lengths(r) else {
        return false;
    };
    lengths_form_code(&lens[..nlen], CodeKind::LitLen)
        && lengths_form_code(&lens[nlen..], CodeKind::Dist)
}

/// HLIT, HDIST, HCLEN, the code-length code and the code lengths it
/// codes: the number of literal/length lengths and all lengths.
fn read_lengths(r: &mut BitReader<'_>) -> Option<(usize, Vec<u8>)> {
    let nlen = r.take(5) as usize + 257;
    let ndist = r.take(5) as usize + 1;
    let ncode = r.take(4) as usize + 4;
    if nlen > 286 || ndist > 30 {
        return None;
    }
    let mut cl = [0u8; 19];
    for &i in &CL_ORDER[..ncode] {
        cl[i] = r.take(3) as u8;
    }
    if !lengths_form_code(&cl, CodeKind::CodeLengths) {
        return None;
    }
    let cl_code = Code::build(&cl, CodeKind::CodeLengths).ok()?;
    let total = nlen + ndist;
    let mut lens = vec![0u8; total];
    let mut have = 0;
    // Kraft sums of the two codes so far (in units of 2^-15): a code that
    // is over-subscribed already is rejected now, not after all its
    // lengths (the block finder meets mostly such headers).
    let mut used = [0u32; 2];
    while have < total {
        if r.past_end() {
            return None;
        }
        let sym = cl_code.decode(r)?;
        let (value, repeat) = match sym {
            0..=15 => (sym as u8, 1),
            16 => {
                if have == 0 {
                    return None;
                }
                (lens[have - 1], 3 + r.take(2) as usize)
            }
            17 => (0, 3 + r.take(3) as usize),
            _ => (0, 11 + r.take(7) as usize),
        };
        if have + repeat > total {
            return None;
        }
        lens[have..have + repeat].fill(value);
        if value != 0 {
            // A run may cross from the literal/length lengths into the
            // distance lengths: each part counts for its own code.
            let lit = (nlen.saturating_sub(have)).min(repeat) as u32;
            let unit = 1u32 << (15 - value);
            used[0] += lit * unit;
            used[1] += (repeat as u32 - lit) * unit;
            if used[0] > 1 << 15 || used[1] > 1 << 15 {
                return None;
            }
        }
        have += repeat;
    }
    if r.past_end() || lens[256] == 0 {
        return None;
    }
    Some((nlen, lens))
}

/// zlib's acceptance of a code's lengths (`Code::build`'s checks without
/// the table).
fn lengths_form_code(lens: &[u8], kind: CodeKind) -> bool {
    let mut count = [0i32; 16];
    for &l in lens {
        count[l as usize] += 1;
    }
    let max = (1..16).rev().find(|&l| count[l] != 0).unwrap_or(0);
    if max == 0 {
        return kind != CodeKind::CodeLengths;
    }
    let mut left = 1i32;
    for &c in &count[1..] {
        left = (left << 1) - c;
        if left < 0 {
            return false;
        }
    }
    !(left > 0 && (kind == CodeKind::CodeLengths || max != 1))
}
