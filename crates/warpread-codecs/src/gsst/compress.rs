//! The GSST compressor: blocks of equal size compressed in parallel (rayon),
//! each with its own trained symbol table, its codes cut into splits of
//! (nearly) equal code counts at token boundaries.

use rayon::prelude::*;

use super::format::{
    ALIGN, BLOCK_FIXED_BYTES, ESCAPE, align_up, block_header_bytes, write_frame_header,
};
use super::params::GsstParams;
use super::symbols::SymbolTable;
use crate::plan::GsstLayout;

/// Compresses `data` into one GSST frame.
pub fn compress(data: &[u8], params: &GsstParams) -> Vec<u8> {
    let block_bytes = params.effective_block_bytes();
    // Equal block sizes (at most one byte apart would need a directory
    // anyway; the last block simply takes the rest).
    let blocks: Vec<Vec<u8>> = data
        .par_chunks(block_bytes)
        .map(|chunk| compress_block(chunk, params.splits_for(chunk.len()), params.layout))
        .collect();
    let sizes: Vec<(u32, u32)> = blocks
        .iter()
        .zip(data.chunks(block_bytes))
        .map(|(b, c)| (b.len() as u32, c.len() as u32))
        .collect();
    let mut frame = Vec::with_capacity(
        super::format::frame_data_offset(blocks.len()) + blocks.iter().map(Vec::len).sum::<usize>(),
    );
    write_frame_header(params.layout, &sizes, &mut frame);
    for b in &blocks {
        frame.extend_from_slice(b);
    }
    frame
}

/// Cuts `codes` into `splits` runs of about equal code counts, each ending
/// at a token boundary (never between an escape and its byte). Returns the
/// cumulative (code end, output end) of every split.
fn split_points(codes: &[u8], lengths: &[u8; 256], splits: usize) -> Vec<(u32, u32)> {
    let total = codes.len();
    let mut points = Vec::with_capacity(splits);
    let (mut pos, mut out) = (0usize, 0usize);
    for k in 1..splits {
        let target = total * k / splits;
        while pos < target {
            if codes[pos] == ESCAPE {
                pos += 2;
                out += 1;
            } else {
                out += usize::from(lengths[usize::from(codes[pos])]);
                pos += 1;
            }
        }
        points.push((pos as u32, out as u32));
    }
    while pos < total {
        if codes[pos] == ESCAPE {
            pos += 2;
            out += 1;
        } else {
            out += usize::from(lengths[usize::from(codes[pos])]);
            pos += 1;
        }
    }
    points.push((pos as u32, out as u32));
    points
}

/// One block: header, split table, symbol table, codes in `layout` order,
/// zero padding to a multiple of 16.
pub fn compress_block(data: &[u8], splits: usize, layout: GsstLayout) -> Vec<u8> {
    let table = SymbolTable::train(data);
    let mut codes = Vec::new();
    table.encode(data, &mut codes);
    let symbols = table.len();
    let mut lengths = [1u8; 256];
    for (c, l) in lengths.iter_mut().enumerate().take(symbols) {
        *l = table.symbol(c).1;
    }
    let points = split_points(&codes, &lengths, splits);
    debug_assert_eq!(points.last().map(|p| p.1 as usize), Some(data.len()));

    let codes_at = block_header_bytes(splits, symbols);
    let region = match layout {
        GsstLayout::Splits => codes,
        GsstLayout::Coalesced => interleave(&codes, &points),
    };
    let size = align_up(codes_at + region.len());
    let mut b = Vec::with_capacity(size);
    b.extend_from_slice(&(size as u32).to_le_bytes());
    b.extend_from_slice(&(data.len() as u32).to_le_bytes());
    b.extend_from_slice(&(splits as u16).to_le_bytes());
    b.push(symbols as u8);
    b.push(layout.code());
    b.extend_from_slice(&(region.len() as u32).to_le_bytes());
    debug_assert_eq!(b.len(), BLOCK_FIXED_BYTES);
    for &(code_end, out_end) in &points {
        b.extend_from_slice(&code_end.to_le_bytes());
        b.extend_from_slice(&out_end.to_le_bytes());
    }
    for c in 0..symbols {
        b.extend_from_slice(&table.symbol(c).0.to_le_bytes());
    }
    b.extend_from_slice(&lengths[..symbols]);
    b.resize(codes_at, 0);
    b.extend_from_slice(&region);
    b.resize(size, 0);
    b
}

/// The coalesced order: granule `x` (16 codes) of split `s` at granule
/// index `x * splits + s`; short splits leave zero filler.
fn interleave(codes: &[u8], points: &[(u32, u32)]) -> Vec<u8> {
    let n = points.len();
    let mut start = 0usize;
    let mut longest = 0usize;
    for &(end, _) in points {
        longest = longest.max(end as usize - start);
        start = end as usize;
    }
    let rows = longest.div_ceil(ALIGN);
    let mut region = vec![0u8; rows * n * ALIGN];
    let mut start = 0usize;
    for (s, &(end, _)) in points.iter().enumerate() {
        for (x, granule) in codes[start..end as usize].chunks(ALIGN).enumerate() {
            let at = (x * n + s) * ALIGN;
            region[at..at + granule.len()].copy_from_slice(granule);
        }
        start = end as usize;
    }
    region
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_points_never_separate_an_escape() {
        let mut lengths = [1u8; 256];
        lengths[0] = 3;
        // escape pairs everywhere, so that most targets land inside one
        let codes: Vec<u8> = (0..200)
            .flat_map(|i| {
                if i % 3 == 0 {
                    vec![0]
                } else {
                    vec![ESCAPE, i as u8]
                }
            })
            .collect();
        for splits in [1, 2, 7, 64, 333] {
            let p = split_points(&codes, &lengths, splits);
            assert_eq!(p.len(), splits);
            let mut prev = 0;
            for &(c, _) in &p {
                assert!(c >= prev);
                // a boundary is a token start: not right after an escape's first byte
                let mut i = 0usize;
                while i < c as usize {
                    i += if codes[i] == ESCAPE { 2 } else { 1 };
                }
                assert_eq!(i, c as usize);
                prev = c;
            }
            assert_eq!(p.last().unwrap().0 as usize, codes.len());
        }
    }

    #[test]
    fn interleave_places_granules_by_row() {
        let codes: Vec<u8> = (0..40).collect();
        let region = interleave(&codes, &[(20, 0), (40, 0)]);
        assert_eq!(region.len(), 2 * 2 * 16);
        assert_eq!(&region[..16], &codes[..16]);
        assert_eq!(&region[16..32], &codes[20..36]);
        assert_eq!(&region[32..36], &codes[16..20]);
        assert_eq!(&region[48..52], &codes[36..40]);
    }
}
