//! CPU reference decoder for DELTA_BYTE_ARRAY.

use crate::parquet_delta_binary_packed::{Failure, Reader};
use crate::plan::{ChunkStatus, StatusCode};

fn status((code, at, produced): Failure) -> ChunkStatus {
    ChunkStatus::failed(code, at as u64, produced as u64)
}

/// The three parts of a page: prefix lengths, suffix lengths, suffix bytes.
struct Streams<'a> {
    prefixes: Reader<'a>,
    suffixes: Reader<'a>,
    bytes: &'a [u8],
    /// Offset of `bytes` in the page, for statuses.
    bytes_at: usize,
}

fn open(input: &[u8]) -> Result<Streams<'_>, Failure> {
    let suffix_at = Reader::new(input, 32)?.end()?;
    let rest = &input[suffix_at..];
    let shift = |(c, at, n): Failure| (c, at + suffix_at, n);
    let bytes_at = suffix_at + Reader::new(rest, 32).and_then(Reader::end).map_err(shift)?;
    Ok(Streams {
        prefixes: Reader::new(input, 32)?,
        suffixes: Reader::new(rest, 32).map_err(shift)?,
        bytes: &input[bytes_at..],
        bytes_at,
    })
}

/// Next (prefix, suffix) lengths, both non-negative.
fn next(s: &mut Streams<'_>, i: usize) -> Result<Option<(usize, usize)>, Failure> {
    let p = s.prefixes.next_value()?;
    let q = s.suffixes.next_value()?;
    match (p, q) {
        (Some(p), Some(q)) => {
            let (p, q) = (p as u32 as i32, q as u32 as i32);
            if p < 0 || q < 0 {
                return Err((StatusCode::ValueOutOfRange, 0, i));
            }
            Ok(Some((p as usize, q as usize)))
        }
        _ => Ok(None),
    }
}

/// Each of the first `out.len()` values' full length.
pub fn lengths(input: &[u8], out: &mut [u32]) -> ChunkStatus {
    let mut s = match open(input) {
        Ok(s) => s,
        Err(f) => return status(f),
    };
    let (mut prev, mut suffix_bytes) = (0usize, 0usize);
    for (i, slot) in out.iter_mut().enumerate() {
        match next(&mut s, i) {
            Ok(Some((p, q))) => {
                if p > prev {
                    return ChunkStatus::failed(StatusCode::InputCorrupt, 0, i as u64);
                }
                suffix_bytes += q;
                if suffix_bytes > s.bytes.len() {
                    return ChunkStatus::failed(
                        StatusCode::InputTruncated,
                        s.bytes_at as u64,
                        i as u64,
                    );
                }
                let Ok(len) = u32::try_from(p + q) else {
                    return ChunkStatus::failed(StatusCode::ValueOutOfRange, 0, i as u64);
                };
                *slot = len;
                prev = p + q;
            }
            Ok(None) => return ChunkStatus::failed(StatusCode::OutputShort, 0, i as u64),
            Err(f) => return status(f),
        }
    }
    ChunkStatus::ok(out.len() as u64)
}

/// Rebuilds values end to end until `out` is full.
pub fn data(input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let mut s = match open(input) {
        Ok(s) => s,
        Err(f) => return status(f),
    };
    let (mut written, mut prev_at, mut suffix_at, mut i) = (0usize, 0usize, 0usize, 0usize);
    while written < out.len() {
        // A run of empty values (both lengths 0, read from no byte) only
        // moves the previous value's start: one step for the run. Value by
        // value, a header claiming billions of them looped for seconds (a
        // fuzzed `parquet_ops` timeout).
        let k = s.prefixes.zeros_ahead().min(s.suffixes.zeros_ahead());
        if k > 0 {
            s.prefixes.skip_zeros(k);
            s.suffixes.skip_zeros(k);
            prev_at = written;
            i += k;
            continue;
        }
        let (p, q) = match next(&mut s, i) {
            Ok(Some(x)) => x,
            Ok(None) => return ChunkStatus::failed(StatusCode::OutputShort, 0, written as u64),
            Err(f) => return status(f),
        };
        if p > written - prev_at {
            return ChunkStatus::failed(StatusCode::InputCorrupt, 0, written as u64);
        }
        if p + q > out.len() - written {
            return ChunkStatus::failed(StatusCode::OutputOverflow, 0, written as u64);
        }
        if q > s.bytes.len() - suffix_at {
            return ChunkStatus::failed(
                StatusCode::InputTruncated,
                s.bytes_at as u64,
                written as u64,
            );
        }
        out.copy_within(prev_at..prev_at + p, written);
        out[written + p..written + p + q].copy_from_slice(&s.bytes[suffix_at..suffix_at + q]);
        suffix_at += q;
        prev_at = written;
        written += p + q;
        i += 1;
    }
    ChunkStatus::ok(written as u64)
}

#[cfg(test)]
mod tests {
    use super::super::encode;
    use super::*;

    /// A fuzzed `parquet_ops` timeout: prefix and suffix streams of 2^31 - 1
    /// zeros (a block of 2^31 values, miniblocks of width 0) in 17 bytes.
    /// The data pass looped over every empty value; it now steps over a
    /// miniblock's run at once, with the same status.
    #[test]
    fn billions_of_empty_values_are_stepped_over() {
        // Block 2^31 (varint), 4 miniblocks, 2^31 - 1 values, first 0;
        // the block: minimum delta 0, four widths of 0.
        let stream = [
            0x80, 0x80, 0x80, 0x80, 0x08, 0x04, 0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0, 0, 0,
        ];
        let input = [&stream[..], &stream[..]].concat();
        let t = std::time::Instant::now();
        let st = data(&input, &mut [0u8; 1]);
        assert_eq!(st.status(), StatusCode::OutputShort, "{st}");
        assert!(
            t.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            t.elapsed()
        );
        // Runs of empty values between others decode as before.
        let mut vals: Vec<&[u8]> = vec![b"axis"];
        vals.extend(std::iter::repeat_n(&b""[..], 300));
        vals.extend([&b"b"[..], &b""[..], &b"babble"[..]]);
        vals.extend(std::iter::repeat_n(&b""[..], 200));
        let bytes = encode(&vals);
        let want = vals.concat();
        let mut out = vec![0u8; want.len()];
        let st = data(&bytes, &mut out);
        assert!(st.is_ok(), "{st}");
        assert_eq!(out, want);
    }

    #[test]
    fn round_trips() {
        let vals: Vec<&[u8]> = vec![b"axis", b"axle", b"babble", b"babyhood", b"", b"b"];
        let bytes = encode(&vals);
        let mut lens = [0u32; 6];
        let st = lengths(&bytes, &mut lens);
        assert!(st.is_ok(), "{st}");
        assert_eq!(lens, [4, 4, 6, 8, 0, 1]);
        let mut out = vec![0u8; 23];
        let st = data(&bytes, &mut out);
        assert!(st.is_ok(), "{st}");
        assert_eq!(&out, b"axisaxlebabblebabyhoodb");
        let mut seven = [0u32; 7];
        assert_eq!(
            lengths(&bytes, &mut seven).status(),
            StatusCode::OutputShort
        );
        let mut long = vec![0u8; 24];
        assert_eq!(data(&bytes, &mut long).status(), StatusCode::OutputShort);
        assert!(!lengths(&bytes[..bytes.len() - 2], &mut lens).is_ok());
    }
}
