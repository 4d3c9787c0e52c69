//! Parquet GZIP pages are gzip containers (RFC 1952), possibly of several
//! members. Headers and trailers are parsed here on the CPU; the raw deflate
//! bodies go to the `Inflate` stage. The trailer's ISIZE and CRC32 are
//! checked against the inflated bytes.

use std::ops::Range;

const FTEXT_MASK: u8 = 0x01;
const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;

/// One gzip member of a page: the deflate body and the trailer's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Byte range of the raw deflate data within the page.
    pub body: Range<usize>,
    /// CRC32 of the member's uncompressed bytes, from the trailer.
    pub crc: u32,
    /// Uncompressed size modulo 2^32, from the trailer.
    pub isize: u32,
}

/// Parses a member header at `page[at..]`; returns where the deflate data
/// starts.
pub fn header_end(page: &[u8], at: usize) -> Result<usize, String> {
    let h = page
        .get(at..at + 10)
        .ok_or_else(|| format!("gzip header truncated at page byte {at}"))?;
    if h[0] != 0x1f || h[1] != 0x8b {
        return Err(format!("no gzip magic at page byte {at}"));
    }
    if h[2] != 8 {
        return Err(format!("gzip compression method {} is not deflate", h[2]));
    }
    let flags = h[3];
    if flags & !(FTEXT_MASK | FHCRC | FEXTRA | FNAME | FCOMMENT) != 0 {
        return Err(format!("reserved gzip flags {flags:#x} set"));
    }
    let mut pos = at + 10;
    let truncated = || format!("gzip header truncated at page byte {at}");
    if flags & FEXTRA != 0 {
        let x = page.get(pos..pos + 2).ok_or_else(truncated)?;
        pos += 2 + usize::from(u16::from_le_bytes([x[0], x[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let rest = page.get(pos..).ok_or_else(truncated)?;
            let nul = rest.iter().position(|&b| b == 0).ok_or_else(truncated)?;
            pos += nul + 1;
        }
    }
    if flags & FHCRC != 0 {
        pos += 2;
    }
    if pos > page.len() {
        return Err(truncated());
    }
    Ok(pos)
}

/// The common case: one member filling the page, its trailer the last
/// eight bytes. Whether it really was one member shows only after
/// inflating (the trailer must match); [`members`] handles the rest.
pub fn single_member(page: &[u8]) -> Result<Member, String> {
    let start = header_end(page, 0)?;
    if page.len() < start + 8 {
        return Err("gzip member without room for its trailer".into());
    }
    let t = &page[page.len() - 8..];
    Ok(Member {
        body: start..page.len() - 8,
        crc: u32::from_le_bytes(t[..4].try_into().expect("4 bytes")),
        isize: u32::from_le_bytes(t[4..].try_into().expect("4 bytes")),
    })
}

/// Every member of a page, found by inflating each body on the CPU to learn
/// where it ends (gzip records no compressed length). Inflates at most
/// `limit` bytes in all.
pub fn members(page: &[u8], limit: usize) -> Result<Vec<Member>, String> {
    let mut out = Vec::new();
    let mut scratch = vec![0u8; limit.clamp(1, 1 << 20)];
    let mut pos = 0;
    let mut total = 0usize;
    while pos < page.len() {
        let start = header_end(page, pos)?;
        let mut d = flate2::Decompress::new(false);
        loop {
            let consumed = d.total_in() as usize;
            let before = d.total_out();
            let st = d
                .decompress(
                    &page[start + consumed..],
                    &mut scratch,
                    flate2::FlushDecompress::None,
                )
                .map_err(|e| format!("gzip member at page byte {pos}: {e}"))?;
            total += (d.total_out() - before) as usize;
            if total > limit {
                return Err(format!(
                    "gzip members inflate to more than the page's {limit} bytes"
                ));
            }
            match st {
                flate2::Status::StreamEnd => break,
                _ if d.total_in() as usize == consumed && d.total_out() == before => {
                    return Err(format!("gzip member at page byte {pos} is truncated"));
                }
                _ => {}
            }
        }
        let end = start + d.total_in() as usize;
        let t = page
            .get(end..end + 8)
            .ok_or_else(|| format!("gzip trailer truncated at page byte {end}"))?;
        out.push(Member {
            body: start..end,
            crc: u32::from_le_bytes(t[..4].try_into().expect("4 bytes")),
            isize: u32::from_le_bytes(t[4..].try_into().expect("4 bytes")),
        });
        pos = end + 8;
    }
    if out.is_empty() {
        return Err("empty gzip page".into());
    }
    Ok(out)
}

/// Checks inflated bytes against a member's trailer.
pub fn check(member: &Member, inflated: &[u8]) -> bool {
    if inflated.len() as u32 != member.isize {
        return false;
    }
    let mut crc = flate2::Crc::new();
    crc.update(inflated);
    crc.sum() == member.crc
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8], name: Option<&str>) -> Vec<u8> {
        let mut b = flate2::GzBuilder::new();
        if let Some(n) = name {
            b = b.filename(n).comment("c").extra(vec![1, 2, 3]);
        }
        let mut e = b.write(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn one_and_several_members() {
        let a = gz(b"hello hello hello", Some("x.txt"));
        let m = single_member(&a).unwrap();
        let mut out = vec![0u8; 100];
        let st = crate::codecs::deflate::inflate(&a[m.body.clone()], &mut out);
        let body = &out[..st.produced as usize];
        assert_eq!(body, b"hello hello hello");
        assert!(check(&m, body));
        let mut two = a.clone();
        two.extend(gz(b"world", None));
        let ms = members(&two, 100).unwrap();
        assert_eq!(ms.len(), 2);
        assert_eq!(ms[0], m);
        assert_eq!(ms[1].isize, 5);
        assert!(members(&two, 10).is_err());
        assert!(members(&two[..two.len() - 3], 100).is_err());
        assert!(header_end(&[0x1f, 0x8b, 8, 0xe0, 0, 0, 0, 0, 0, 0], 0).is_err());
        assert!(header_end(&[0x1f, 0x8b, 8, FNAME, 0, 0, 0, 0, 0, 0, b'a'], 0).is_err());
    }
}
