//! An encoder for tests: RLE runs for repeats of eight or more, bit-packed
//! groups otherwise.

/// Encodes `vals` (each below `2^bit_width`) as a hybrid stream.
pub fn encode(vals: &[u32], bit_width: u8) -> Vec<u8> {
    let bw = usize::from(bit_width);
    let mut out = Vec::new();
    let mut i = 0;
    while i < vals.len() {
        let run = vals[i..].iter().take_while(|&&v| v == vals[i]).count();
        if run >= 8 {
            crate::varint::write(&mut out, (run as u64) << 1);
            out.extend_from_slice(&vals[i].to_le_bytes()[..bw.div_ceil(8)]);
            i += run;
            continue;
        }
        // Bit-pack groups of eight up to the next long run (or the end).
        let mut end = i;
        while end < vals.len() {
            let r = vals[end..].iter().take_while(|&&v| v == vals[end]).count();
            if r >= 8 {
                break;
            }
            end += r;
        }
        let groups = (end - i).div_ceil(8);
        let take = (groups * 8).min(vals.len() - i);
        crate::varint::write(&mut out, ((groups as u64) << 1) | 1);
        let mut bits = vec![0u8; groups * bw];
        for (k, &v) in vals[i..i + take].iter().enumerate() {
            for b in 0..bw {
                if (v >> b) & 1 == 1 {
                    let at = k * bw + b;
                    bits[at / 8] |= 1 << (at % 8);
                }
            }
        }
        out.extend_from_slice(&bits);
        i += take;
    }
    out
}
