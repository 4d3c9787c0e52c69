//! General-purpose block codecs that have no GPU kernel yet: Snappy, Zstd,
//! LZ4 and Brotli, decompressed with well-kept crates, and LZO with the
//! bounds-checked decoder of the `lzo` module. Each call fills at most
//! `out.len()` bytes and reports the decompressed size as `produced`, like
//! the inflate stage, so every backend can run them as plan stages.

use crate::plan::{BlockCodec, ChunkStatus, StatusCode};

/// Decompresses one block into `out`.
pub fn decompress(codec: BlockCodec, input: &[u8], out: &mut [u8]) -> ChunkStatus {
    let result = match codec {
        BlockCodec::Snappy => snappy(input, out),
        BlockCodec::Zstd => zstd(input, out),
        BlockCodec::Lz4 => lz4_flex::block::decompress_into(input, out).map_err(|e| match e {
            lz4_flex::block::DecompressError::OutputTooSmall { .. } => StatusCode::OutputOverflow,
            _ => StatusCode::InputCorrupt,
        }),
        BlockCodec::Lzo => {
            return match crate::lzo::decompress(input, out) {
                Ok(n) => ChunkStatus::ok(n as u64),
                Err(e) => ChunkStatus::failed(e.code, e.at as u64, e.produced as u64),
            };
        }
        BlockCodec::Lz4Hadoop => lz4_hadoop(input, out),
        BlockCodec::Brotli => brotli(input, out),
    };
    match result {
        Ok(n) => ChunkStatus::ok(n as u64),
        Err(code) => ChunkStatus::failed(code, 0, 0),
    }
}

fn snappy(input: &[u8], out: &mut [u8]) -> Result<usize, StatusCode> {
    let len = snap::raw::decompress_len(input).map_err(|_| StatusCode::InputCorrupt)?;
    if len > out.len() {
        return Err(StatusCode::OutputOverflow);
    }
    snap::raw::Decoder::new()
        .decompress(input, out)
        .map_err(|_| StatusCode::InputCorrupt)
}

fn zstd(input: &[u8], out: &mut [u8]) -> Result<usize, StatusCode> {
    // A frame may not record its size; decompressing into a bounded slice
    // turns an oversized frame into an error rather than an allocation.
    zstd::bulk::decompress_to_buffer(input, out).map_err(|e| {
        if e.to_string().contains("Destination buffer is too small") {
            StatusCode::OutputOverflow
        } else {
            StatusCode::InputCorrupt
        }
    })
}

/// Hadoop framing: `<u32 BE decompressed size> <u32 BE compressed size>
/// <raw LZ4 block>` repeated. Older writers used an LZ4 frame or one raw
/// block under the same codec name; the parquet crate falls back to those in
/// that order, and so does this.
fn lz4_hadoop(input: &[u8], out: &mut [u8]) -> Result<usize, StatusCode> {
    if let Some(n) = lz4_hadoop_frames(input, out) {
        return Ok(n);
    }
    if let Ok(n) = lz4_frame(input, out) {
        return Ok(n);
    }
    lz4_flex::block::decompress_into(input, out).map_err(|e| match e {
        lz4_flex::block::DecompressError::OutputTooSmall { .. } => StatusCode::OutputOverflow,
        _ => StatusCode::InputCorrupt,
    })
}

fn lz4_hadoop_frames(mut input: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut written = 0;
    while input.len() >= 8 {
        let raw = u32::from_be_bytes(input[..4].try_into().ok()?) as usize;
        let packed = u32::from_be_bytes(input[4..8].try_into().ok()?) as usize;
        input = &input[8..];
        if input.len() < packed || out.len() - written < raw {
            return None;
        }
        let n = lz4_flex::block::decompress_into(&input[..packed], &mut out[written..]).ok()?;
        if n != raw {
            return None;
        }
        written += n;
        input = &input[packed..];
    }
    input.is_empty().then_some(written)
}

fn read_bounded(mut r: impl std::io::Read, out: &mut [u8]) -> Result<usize, StatusCode> {
    let mut written = 0;
    loop {
        if written == out.len() {
            // Full: one more byte means the block is larger than announced.
            let mut probe = [0u8; 1];
            return match r.read(&mut probe) {
                Ok(0) => Ok(written),
                Ok(_) => Err(StatusCode::OutputOverflow),
                Err(_) => Err(StatusCode::InputCorrupt),
            };
        }
        match r.read(&mut out[written..]) {
            Ok(0) => return Ok(written),
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(StatusCode::InputCorrupt),
        }
    }
}

fn lz4_frame(input: &[u8], out: &mut [u8]) -> Result<usize, StatusCode> {
    read_bounded(lz4_flex::frame::FrameDecoder::new(input), out)
}

fn brotli(input: &[u8], out: &mut [u8]) -> Result<usize, StatusCode> {
    read_bounded(::brotli::Decompressor::new(input, 4096), out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let data: Vec<u8> = (0..10_000u32)
            .map(|i| (i % 251) as u8 ^ (i / 97) as u8)
            .collect();
        let snappy = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        let zstd = zstd::bulk::compress(&data, 3).unwrap();
        let lz4 = lz4_flex::block::compress(&data);
        for (codec, bytes) in [
            (BlockCodec::Snappy, snappy),
            (BlockCodec::Zstd, zstd),
            (BlockCodec::Lz4, lz4),
        ] {
            let mut out = vec![0u8; data.len() + 10];
            let st = decompress(codec, &bytes, &mut out);
            assert!(st.is_ok(), "{codec:?}: {st}");
            assert_eq!(&out[..st.produced as usize], &data[..]);
            let mut small = vec![0u8; 100];
            assert!(!decompress(codec, &bytes, &mut small).is_ok(), "{codec:?}");
            let mut out = vec![0u8; data.len()];
            let half = decompress(codec, &bytes[..bytes.len() / 2], &mut out);
            // A raw LZ4 block has no length or end marker: a prefix cut at a
            // sequence boundary is itself a valid, shorter block.
            assert!(
                !half.is_ok() || (codec == BlockCodec::Lz4 && half.produced < data.len() as u64),
                "{codec:?}: {half}"
            );
        }
        let mut out = vec![0u8; 100];
        assert!(!decompress(BlockCodec::Lzo, &[0xff; 7], &mut out).is_ok());
        let lzo = lzokay_native::compress(&data).unwrap();
        let mut out = vec![0u8; data.len()];
        let st = decompress(BlockCodec::Lzo, &lzo, &mut out);
        assert!(st.is_ok(), "{st}");
        assert_eq!(out, data);
        // A match reaching before the output's start (lzokay-native
        // panicked here): an error naming the input byte.
        let st = decompress(BlockCodec::Lzo, &[21, 1, 2, 3, 4, 0x40, 0x01], &mut out);
        assert_eq!(st.status(), StatusCode::InputCorrupt, "{st}");
        assert_eq!((st.detail, st.produced), (7, 4));
    }
}
