//! Helpers shared by the fuzz targets: reading parameters off the front of
//! the fuzzer's input and sizing bounded output buffers.

/// Most output bytes any decoder target allocates (1 MiB).
pub const MAX_OUT_BYTES: usize = 1 << 20;

/// A cursor over the fuzzer's bytes; missing bytes read as 0.
pub struct Params<'a> {
    data: &'a [u8],
}

impl<'a> Params<'a> {
    /// Starts at the front of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// Takes one byte.
    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// Takes two bytes, little-endian.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// Takes eight bytes, little-endian.
    pub fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        for x in &mut b {
            *x = self.u8();
        }
        u64::from_le_bytes(b)
    }

    /// An element count for elements of `elem_bytes` bytes, at most
    /// [`MAX_OUT_BYTES`] in all (two bytes of input, scaled).
    pub fn count(&mut self, elem_bytes: usize) -> usize {
        let n = self.u16() as usize * 16;
        n.min(MAX_OUT_BYTES / elem_bytes.max(1))
    }

    /// The rest of the input, the encoded stream.
    pub fn rest(self) -> &'a [u8] {
        self.data
    }
}

/// The fuzz target of an integer decoder `$codec::decode::<T>` (ORC RLE
/// v1 and v2, Parquet DELTA_BINARY_PACKED): the first byte picks `T` (i64,
/// i32, u16 or u8), the next two the output count, the rest is the stream.
#[macro_export]
macro_rules! int_decoder_target {
    ($($codec:ident)::+) => {
        libfuzzer_sys::fuzz_target!(|data: &[u8]| {
            let mut p = $crate::Params::new(data);
            match p.u8() % 4 {
                0 => {
                    let n = p.count(8);
                    let _ = $($codec)::+::decode::<i64>(p.rest(), &mut vec![0i64; n]);
                }
                1 => {
                    let n = p.count(4);
                    let _ = $($codec)::+::decode::<i32>(p.rest(), &mut vec![0i32; n]);
                }
                2 => {
                    let n = p.count(2);
                    let _ = $($codec)::+::decode::<u16>(p.rest(), &mut vec![0u16; n]);
                }
                _ => {
                    let n = p.count(1);
                    let _ = $($codec)::+::decode::<u8>(p.rest(), &mut vec![0u8; n]);
                }
            }
        });
    };
}
