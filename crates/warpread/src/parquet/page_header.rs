//! Page headers: a small reader of the Thrift compact protocol, enough for
//! `PageHeader` and its data, dictionary and v2 headers. The parquet crate
//! parses footers but its page reader decompresses pages, and decompression
//! is a plan stage here, so page headers are parsed by hand. Every read is
//! bounds-checked; unknown fields are skipped, nesting is capped.

/// A page's kind (`PageType` in parquet.thrift).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// DATA_PAGE (v1).
    Data,
    /// INDEX_PAGE (never written in practice; skipped).
    Index,
    /// DICTIONARY_PAGE.
    Dictionary,
    /// DATA_PAGE_V2.
    DataV2,
    /// A type number this reader does not know (skipped).
    Other(i32),
}

/// The fields of a page header the reader uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageHeader {
    /// Page kind.
    pub kind: PageKind,
    /// Size after decompression (v2: levels included).
    pub uncompressed_size: i32,
    /// Size of the page body in the file.
    pub compressed_size: i32,
    /// Level and value count (data pages) or dictionary entries.
    pub num_values: i32,
    /// Value encoding (parquet.thrift `Encoding` number).
    pub encoding: i32,
    /// v2: nulls in the page.
    pub num_nulls: i32,
    /// v2: rows in the page.
    pub num_rows: i32,
    /// v2: bytes of (uncompressed) definition levels at the body's start.
    pub def_levels_len: i32,
    /// v2: bytes of repetition levels before them.
    pub rep_levels_len: i32,
    /// v2: whether the values are compressed (default true).
    pub is_compressed: bool,
    /// v1: encoding of definition levels.
    pub def_level_encoding: i32,
    /// v1: encoding of repetition levels.
    pub rep_level_encoding: i32,
    /// Bytes the header took.
    pub header_len: usize,
}

/// Why a header could not be parsed.
pub type ParseError = String;

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Non-empty collections of bools are errors ([`check_footer`]).
    no_bool_collections: bool,
}

const MAX_DEPTH: u32 = 32;

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, ParseError> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| format!("page header truncated at byte {}", self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, ParseError> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(format!(
            "overlong varint in page header at byte {}",
            self.pos
        ))
    }

    fn zigzag(&mut self) -> Result<i64, ParseError> {
        let v = self.varint()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    fn i32(&mut self) -> Result<i32, ParseError> {
        let v = self.zigzag()?;
        i32::try_from(v).map_err(|_| format!("i32 field out of range: {v}"))
    }

    /// Next field header: (field id, type), or None at a stop byte.
    fn field(&mut self, last: &mut i16) -> Result<Option<(i16, u8)>, ParseError> {
        let b = self.byte()?;
        if b == 0 {
            return Ok(None);
        }
        let ty = b & 0x0f;
        let delta = (b >> 4) as i16;
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?).map_err(|_| "field id out of range".to_string())?
        } else {
            last.wrapping_add(delta)
        };
        *last = id;
        Ok(Some((id, ty)))
    }

    fn skip(&mut self, ty: u8, depth: u32) -> Result<(), ParseError> {
        if depth > MAX_DEPTH {
            return Err("page header nested too deeply".into());
        }
        match ty {
            1 | 2 => Ok(()),
            3 => self.byte().map(drop),
            4..=6 => self.varint().map(drop),
            7 => self.advance(8),
            8 => {
                let n = self.varint()?;
                self.advance(usize::try_from(n).unwrap_or(usize::MAX))
            }
            9 | 10 => {
                let h = self.byte()?;
                let et = h & 0x0f;
                let mut n = u64::from(h >> 4);
                if n == 15 {
                    n = self.varint()?;
                }
                self.fits(n, 1)?;
                if n > 0 {
                    self.no_bools(&[et])?;
                }
                for _ in 0..n {
                    self.element(et, depth + 1)?;
                }
                Ok(())
            }
            11 => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                self.fits(n, 2)?;
                self.no_bools(&[kv >> 4, kv & 0x0f])?;
                for _ in 0..n {
                    self.element(kv >> 4, depth + 1)?;
                    self.element(kv & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            12 => {
                let mut last = 0;
                while let Some((_, t)) = self.field(&mut last)? {
                    self.skip(t, depth + 1)?;
                }
                Ok(())
            }
            // A UUID, as the parquet crate's skip reads it.
            13 => self.advance(16),
            t => Err(format!("unknown thrift type {t} in page header")),
        }
    }

    /// Skips one element of a list, set or map: as a field of its type,
    /// except that a bool inside a collection takes a byte (in a field it
    /// lives in the field header).
    fn element(&mut self, ty: u8, depth: u32) -> Result<(), ParseError> {
        if ty == 1 || ty == 2 {
            self.byte().map(drop)
        } else {
            self.skip(ty, depth)
        }
    }

    /// Fails on bool element types when [`check_footer`] walks.
    fn no_bools(&self, types: &[u8]) -> Result<(), ParseError> {
        if self.no_bool_collections && types.iter().any(|&t| t == 1 || t == 2) {
            return Err(format!(
                "a non-empty collection of bools at byte {}",
                self.pos
            ));
        }
        Ok(())
    }

    /// Fails unless `n` elements of at least `bytes` bytes each fit in
    /// what is left: every element takes a byte or more, so a count past
    /// that is a lie (and a loop over it would run on without reading).
    fn fits(&self, n: u64, bytes: u64) -> Result<(), ParseError> {
        let left = (self.buf.len() - self.pos) as u64;
        if n.saturating_mul(bytes) > left {
            return Err(format!(
                "page header: a collection of {n} elements in {left} bytes at byte {}",
                self.pos
            ));
        }
        Ok(())
    }

    fn advance(&mut self, n: usize) -> Result<(), ParseError> {
        if self.buf.len() - self.pos < n {
            return Err(format!("page header truncated at byte {}", self.pos));
        }
        self.pos += n;
        Ok(())
    }

    fn bool(&mut self, ty: u8) -> Result<bool, ParseError> {
        match ty {
            1 => Ok(true),
            2 => Ok(false),
            t => Err(format!("expected a bool, found thrift type {t}")),
        }
    }

    fn expect_i32(&mut self, ty: u8) -> Result<i32, ParseError> {
        if ty != 5 {
            return Err(format!("expected an i32, found thrift type {ty}"));
        }
        self.i32()
    }

    /// The fields of a nested header struct, by id.
    fn sub_header(&mut self, h: &mut PageHeader, which: u8) -> Result<(), ParseError> {
        let mut last = 0;
        while let Some((id, ty)) = self.field(&mut last)? {
            match (which, id) {
                // DataPageHeader
                (5, 1) | (7, 1) | (8, 1) => h.num_values = self.expect_i32(ty)?,
                (5, 2) | (7, 2) => h.encoding = self.expect_i32(ty)?,
                (5, 3) => h.def_level_encoding = self.expect_i32(ty)?,
                (5, 4) => h.rep_level_encoding = self.expect_i32(ty)?,
                // DataPageHeaderV2
                (8, 2) => h.num_nulls = self.expect_i32(ty)?,
                (8, 3) => h.num_rows = self.expect_i32(ty)?,
                (8, 4) => h.encoding = self.expect_i32(ty)?,
                (8, 5) => h.def_levels_len = self.expect_i32(ty)?,
                (8, 6) => h.rep_levels_len = self.expect_i32(ty)?,
                (8, 7) => h.is_compressed = self.bool(ty)?,
                _ => self.skip(ty, 1)?,
            }
        }
        Ok(())
    }
}

/// Whether the Thrift struct at the start of `buf` has field `id` (used on
/// the footer: `FileMetaData` field 8 is `encryption_algorithm`, set by
/// writers that encrypt columns under a plaintext footer).
pub fn struct_has_field(buf: &[u8], id: i16) -> Result<bool, ParseError> {
    let mut r = Reader {
        buf,
        pos: 0,
        no_bool_collections: false,
    };
    let mut last = 0;
    while let Some((fid, ty)) = r.field(&mut last)? {
        if fid == id {
            return Ok(true);
        }
        r.skip(ty, 0)?;
    }
    Ok(false)
}

/// Walks the whole Thrift struct at the start of `buf` (a footer) before
/// the parquet crate decodes it: every collection must fit in the bytes
/// left, and none may hold bools. The crate's skip of unknown fields
/// (parquet 59.3, `skip_till_depth`) reads no byte for a bool element,
/// where the compact protocol gives it one, so an unknown list of bools
/// claiming 2^31 elements loops without reading (a fuzzed footer of
/// `parquet_file`: 3 s for one, nested ones far longer), and past a
/// non-empty one the crate's parse parts from this walk. The footer's
/// structs (`FileMetaData` and what it holds) have no bool collections.
pub fn check_footer(buf: &[u8]) -> Result<(), ParseError> {
    let mut r = Reader {
        buf,
        pos: 0,
        no_bool_collections: true,
    };
    r.skip(12, 0)
}

/// Parses the page header at the start of `buf`.
pub fn parse_page_header(buf: &[u8]) -> Result<PageHeader, ParseError> {
    let mut r = Reader {
        buf,
        pos: 0,
        no_bool_collections: false,
    };
    let mut h = PageHeader {
        kind: PageKind::Other(-1),
        uncompressed_size: -1,
        compressed_size: -1,
        num_values: -1,
        encoding: 0,
        num_nulls: 0,
        num_rows: 0,
        def_levels_len: 0,
        rep_levels_len: 0,
        is_compressed: true,
        def_level_encoding: 3,
        rep_level_encoding: 3,
        header_len: 0,
    };
    let mut kind = None;
    let mut last = 0;
    while let Some((id, ty)) = r.field(&mut last)? {
        match id {
            1 => kind = Some(r.expect_i32(ty)?),
            2 => h.uncompressed_size = r.expect_i32(ty)?,
            3 => h.compressed_size = r.expect_i32(ty)?,
            5 | 7 | 8 if ty == 12 => r.sub_header(&mut h, id as u8)?,
            _ => r.skip(ty, 0)?,
        }
    }
    h.kind = match kind.ok_or("page header without a page type")? {
        0 => PageKind::Data,
        1 => PageKind::Index,
        2 => PageKind::Dictionary,
        3 => PageKind::DataV2,
        k => PageKind::Other(k),
    };
    if h.compressed_size < 0 || h.uncompressed_size < 0 {
        return Err(format!(
            "page header with negative sizes ({} compressed, {} uncompressed)",
            h.compressed_size, h.uncompressed_size
        ));
    }
    h.header_len = r.pos;
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v1 data page header: type 0, sizes 10/8, data header {values 3,
    /// encoding 0, def 3, rep 3}, with an unknown field and a crc.
    #[test]
    fn parses_a_data_page_header() {
        let bytes = [
            0x15, 0x00, // 1: i32 0
            0x15, 0x14, // 2: i32 10
            0x15, 0x10, // 3: i32 8
            0x15, 0x02, // 4: crc 1 (skipped)
            0x1c, // 5: struct
            0x15, 0x06, 0x15, 0x00, 0x15, 0x06, 0x15, 0x06, 0x00, // fields, stop
            0x00, // stop
        ];
        let h = parse_page_header(&bytes).unwrap();
        assert_eq!(h.kind, PageKind::Data);
        assert_eq!((h.uncompressed_size, h.compressed_size), (10, 8));
        assert_eq!((h.num_values, h.encoding), (3, 0));
        assert_eq!(h.header_len, bytes.len());
        for cut in 0..bytes.len() {
            assert!(parse_page_header(&bytes[..cut]).is_err(), "cut {cut}");
        }
    }

    /// A fuzzed footer (a timeout in `parquet_file`): a map of bools
    /// claiming billions of entries, whose skip read nothing per entry.
    /// Counts past the bytes left are errors, and collection bools take a
    /// byte each.
    #[test]
    fn collections_claiming_more_elements_than_bytes_are_errors() {
        let map_of_bools = |n: u8| vec![0x1b, n, 0x11, 0x01, 0x00, 0x01, 0x00, 0x00];
        // 1: map<bool, bool> of 2 entries (4 bytes), then stop.
        assert_eq!(struct_has_field(&map_of_bools(0x02), 8), Ok(false));
        // The same map claiming 2^35 entries (varint), in far fewer bytes.
        let huge = [0x1b, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x11, 0x01, 0x00];
        let t = std::time::Instant::now();
        let e = struct_has_field(&huge, 8).unwrap_err();
        assert!(e.contains("elements"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        // A list of 1000 i32 in 3 bytes.
        let list = [0x19, 0xf5, 0xe8, 0x07, 0x00];
        assert!(struct_has_field(&list, 8).unwrap_err().contains("elements"));
        // Two entries need four bytes.
        assert!(struct_has_field(&map_of_bools(0x02)[..5], 8).is_err());
    }

    /// A fuzzed footer (a `parquet_file` timeout on the GPU host): an
    /// unknown field holding a list of bools that claims 2^31 - 1 elements;
    /// the parquet crate's skip read no byte per element and looped 3 s.
    /// The footer walk refuses it at once, and any bool collection.
    #[test]
    fn footers_with_bool_collections_are_refused() {
        // Field 100 (explicit id, zigzag 200), list: header 0xf1 (size
        // follows, bools), size 2^31 - 1; stop.
        let footer = [0x09, 0xc8, 0x01, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00];
        let t = std::time::Instant::now();
        let e = check_footer(&footer).unwrap_err();
        assert!(e.contains("elements"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        // Two bools, in the two bytes they take: still refused.
        let two = [0x09, 0xc8, 0x01, 0x21, 0x01, 0x02, 0x00];
        assert!(check_footer(&two).unwrap_err().contains("bools"));
        // A map with bool values too.
        assert!(
            check_footer(&[0x1b, 0x01, 0x51, 0x02, 0x01, 0x00])
                .unwrap_err()
                .contains("bools")
        );
        // An empty one, and other collections, are fine.
        assert_eq!(check_footer(&[0x09, 0xc8, 0x01, 0x01, 0x00]), Ok(()));
        assert_eq!(check_footer(&[0x19, 0x25, 0x02, 0x04, 0x00]), Ok(()));
        assert!(check_footer(&footer[..5]).is_err());
    }
}
