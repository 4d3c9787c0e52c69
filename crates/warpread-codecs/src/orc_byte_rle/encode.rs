//! Byte RLE and boolean RLE encoders (for tests and benchmarks), choosing
//! runs the way the ORC writers do: a run of three or more equal bytes
//! becomes a run, everything else literals.

use super::{MAX_LITERALS, MAX_RUN, MIN_RUN};

/// Encodes bytes as ORC byte RLE.
pub fn encode(values: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() / 2 + 8);
    let mut i = 0;
    let mut lit_start = 0;
    let flush_literals = |out: &mut Vec<u8>, lits: &[u8]| {
        for part in lits.chunks(MAX_LITERALS) {
            out.push((-(part.len() as i16)) as u8);
            out.extend_from_slice(part);
        }
    };
    while i < values.len() {
        let mut run = 1;
        while i + run < values.len() && run < MAX_RUN && values[i + run] == values[i] {
            run += 1;
        }
        if run >= MIN_RUN {
            flush_literals(&mut out, &values[lit_start..i]);
            out.push((run - MIN_RUN) as u8);
            out.push(values[i]);
            i += run;
            lit_start = i;
        } else {
            i += run;
        }
    }
    flush_literals(&mut out, &values[lit_start..]);
    out
}

/// Encodes booleans (any non-zero byte is true) as ORC boolean RLE.
pub fn encode_bools(values: &[u8]) -> Vec<u8> {
    let bytes: Vec<u8> = values
        .chunks(8)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u8, |acc, (i, &b)| acc | (u8::from(b != 0) << (7 - i)))
        })
        .collect();
    encode(&bytes)
}

#[cfg(test)]
mod tests {
    use super::super::{decode, decode_bools};
    use super::*;

    #[test]
    fn round_trips() {
        let mut seed = 7u64;
        for len in [0usize, 1, 2, 3, 129, 130, 131, 1000, 5000] {
            let vals: Vec<u8> = (0..len)
                .map(|i| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    if (i / 50) % 2 == 0 {
                        7
                    } else {
                        (seed >> 60) as u8
                    }
                })
                .collect();
            let enc = encode(&vals);
            let mut out = vec![0u8; len];
            assert!(decode(&enc, &mut out).is_ok());
            assert_eq!(out, vals);
            let bools: Vec<u8> = vals.iter().map(|v| v & 1).collect();
            let enc = encode_bools(&bools);
            let mut out = vec![0u8; len];
            assert!(decode_bools(&enc, &mut out).is_ok());
            assert_eq!(out, bools);
        }
    }
}
