//! The kernel sources compiled into the binary, and which entry point runs
//! each stage operation.

use crate::plan::{ByteArrayEncoding, IntType, ParquetOp, StageOp};

/// One `.cu` file of `kernels/`.
#[derive(Debug)]
pub struct KernelSource {
    /// File name, used by NVRTC in messages and by the cache.
    pub file: &'static str,
    /// Source text.
    pub text: &'static str,
}

/// The framework header every kernel includes.
pub const CODAG_HEADER: KernelSource = KernelSource {
    file: "codag.cuh",
    text: include_str!("../../kernels/codag.cuh"),
};

/// What the two inflate kernels share (deflate's symbols, table entries).
pub const DEFLATE_HEADER: KernelSource = KernelSource {
    file: "deflate.cuh",
    text: include_str!("../../kernels/deflate.cuh"),
};

/// The headers a kernel may include, offered to every compilation.
pub const HEADERS: [KernelSource; 2] = [CODAG_HEADER, DEFLATE_HEADER];

/// ORC RLE v1.
pub const ORC_RLE_V1: KernelSource = KernelSource {
    file: "orc_rle_v1.cu",
    text: include_str!("../../kernels/orc_rle_v1.cu"),
};

/// ORC RLE v2.
pub const ORC_RLE_V2: KernelSource = KernelSource {
    file: "orc_rle_v2.cu",
    text: include_str!("../../kernels/orc_rle_v2.cu"),
};

/// ORC byte RLE and boolean RLE.
pub const ORC_BYTE_RLE: KernelSource = KernelSource {
    file: "orc_byte_rle.cu",
    text: include_str!("../../kernels/orc_byte_rle.cu"),
};

/// Raw deflate.
pub const INFLATE: KernelSource = KernelSource {
    file: "inflate.cu",
    text: include_str!("../../kernels/inflate.cu"),
};

/// Speculative parallel inflate of long streams: block finder, span
/// decoder, marker resolution (`cuda::span_inflate`).
pub const INFLATE_SPAN: KernelSource = KernelSource {
    file: "inflate_span.cu",
    text: include_str!("../../kernels/inflate_span.cu"),
};

/// GSST string decompression.
pub const GSST: KernelSource = KernelSource {
    file: "gsst.cu",
    text: include_str!("../../kernels/gsst.cu"),
};

/// Huffman decoding (gap arrays, self-synchronization).
pub const HUFFMAN: KernelSource = KernelSource {
    file: "huffman.cu",
    text: include_str!("../../kernels/huffman.cu"),
};

/// Huffman encoding: symbol counts, block sizes, block bytes
/// (`cuda::huffman_encode`).
pub const HUFFMAN_ENCODE: KernelSource = KernelSource {
    file: "huffman_encode.cu",
    text: include_str!("../../kernels/huffman_encode.cu"),
};

/// Parquet RLE/bit-packed hybrid.
pub const PARQUET_HYBRID: KernelSource = KernelSource {
    file: "parquet_hybrid.cu",
    text: include_str!("../../kernels/parquet_hybrid.cu"),
};

/// Parquet PLAIN (fixed-width, booleans), fixed-width dictionary gathers and
/// BYTE_STREAM_SPLIT.
pub const PARQUET_PLAIN: KernelSource = KernelSource {
    file: "parquet_plain.cu",
    text: include_str!("../../kernels/parquet_plain.cu"),
};

/// Parquet DELTA_BINARY_PACKED.
pub const PARQUET_DELTA: KernelSource = KernelSource {
    file: "parquet_delta.cu",
    text: include_str!("../../kernels/parquet_delta.cu"),
};

/// Parquet BYTE_ARRAY pages (PLAIN, DELTA_LENGTH_BYTE_ARRAY,
/// DELTA_BYTE_ARRAY): the lengths pass and the data pass.
pub const PARQUET_BYTE_ARRAY: KernelSource = KernelSource {
    file: "parquet_byte_array.cu",
    text: include_str!("../../kernels/parquet_byte_array.cu"),
};

/// CRC-32 of each job's bytes.
pub const CRC32: KernelSource = KernelSource {
    file: "crc32.cu",
    text: include_str!("../../kernels/crc32.cu"),
};

/// Fault injection: a kernel that stores through an invalid address
/// ([`Faults::sticky`](super::Faults::sticky)).
pub const FAULT: KernelSource = KernelSource {
    file: "fault.cu",
    text: include_str!("../../kernels/fault.cu"),
};

/// Device-resident Arrow output: bits (booleans, validity) to bytes for
/// DLPack (`cuda::device_output`).
pub const ARROW_DEVICE: KernelSource = KernelSource {
    file: "arrow_device.cu",
    text: include_str!("../../kernels/arrow_device.cu"),
};

/// Every kernel source.
pub const SOURCES: &[KernelSource] = &[
    ORC_RLE_V1,
    ORC_RLE_V2,
    ORC_BYTE_RLE,
    INFLATE,
    INFLATE_SPAN,
    GSST,
    HUFFMAN,
    HUFFMAN_ENCODE,
    PARQUET_HYBRID,
    PARQUET_PLAIN,
    PARQUET_DELTA,
    PARQUET_BYTE_ARRAY,
    CRC32,
    FAULT,
    ARROW_DEVICE,
];

/// The extra `u32` launch argument of a stage's entry point, after the
/// status array: Parquet entries take their op's parameter (bit width or
/// value width; 0 when the op has none), so one entry serves every width.
/// `None` for entries without it.
pub fn launch_param(op: &StageOp) -> Option<u32> {
    match op {
        StageOp::Parquet(p) => Some(match *p {
            ParquetOp::Hybrid { bit_width } => u32::from(bit_width),
            ParquetOp::PlainFixed { width }
            | ParquetOp::ByteStreamSplit { width }
            | ParquetOp::DictGather { width }
            | ParquetOp::DictPage { width } => width,
            _ => 0,
        }),
        _ => None,
    }
}

/// The Parquet ops with a kernel, and its entry.
fn parquet_entry(op: ParquetOp) -> Option<(&'static KernelSource, &'static str)> {
    match op {
        ParquetOp::Hybrid { .. } => Some((&PARQUET_HYBRID, "parquet_hybrid")),
        ParquetOp::PlainBool => Some((&PARQUET_PLAIN, "parquet_plain_bool")),
        ParquetOp::PlainFixed { .. } => Some((&PARQUET_PLAIN, "parquet_plain_fixed")),
        ParquetOp::DictGather { .. } => Some((&PARQUET_PLAIN, "parquet_dict_gather")),
        ParquetOp::DictPage { .. } => Some((&PARQUET_HYBRID, "parquet_dict_page")),
        ParquetOp::ByteDictOffsets => Some((&PARQUET_HYBRID, "parquet_byte_dict_offsets")),
        ParquetOp::ByteDictData => Some((&PARQUET_HYBRID, "parquet_byte_dict_data")),
        ParquetOp::ByteStreamSplit { .. } => Some((&PARQUET_PLAIN, "parquet_byte_stream_split")),
        // The CPU reference decodes I32 into i32 and every other type into
        // i64 (the reader asks for I32 and I64 only); other types stay on
        // the CPU rather than mimic that.
        ParquetOp::DeltaBinaryPacked(IntType::I32) => Some((&PARQUET_DELTA, "parquet_delta_i32")),
        ParquetOp::DeltaBinaryPacked(IntType::I64) => Some((&PARQUET_DELTA, "parquet_delta_i64")),
        ParquetOp::ByteArrayLengths(e) => Some((
            &PARQUET_BYTE_ARRAY,
            match e {
                ByteArrayEncoding::Plain => "parquet_byte_array_lengths_plain",
                ByteArrayEncoding::DeltaLength => "parquet_byte_array_lengths_delta_length",
                ByteArrayEncoding::Delta => "parquet_byte_array_lengths_delta",
            },
        )),
        ParquetOp::ByteArrayData(e) => Some((
            &PARQUET_BYTE_ARRAY,
            match e {
                ByteArrayEncoding::Plain => "parquet_byte_array_data_plain",
                ByteArrayEncoding::DeltaLength => "parquet_byte_array_data_delta_length",
                ByteArrayEncoding::Delta => "parquet_byte_array_data_delta",
            },
        )),
        ParquetOp::DeltaBinaryPacked(_) => None,
    }
}

/// The source file and `extern "C"` entry point for a stage operation, or
/// `None` for operations without a kernel, which the CUDA backend runs on
/// the CPU.
pub fn entry_for(op: &StageOp) -> Option<(&'static KernelSource, String)> {
    match op {
        StageOp::OrcRleV1(t) => Some((&ORC_RLE_V1, format!("orc_rle_v1_{}", t.name()))),
        StageOp::OrcRleV2(t) => Some((&ORC_RLE_V2, format!("orc_rle_v2_{}", t.name()))),
        StageOp::OrcByteRle => Some((&ORC_BYTE_RLE, "orc_byte_rle".to_string())),
        StageOp::OrcBoolRle => Some((&ORC_BYTE_RLE, "orc_bool_rle".to_string())),
        StageOp::Inflate => Some((&INFLATE, "inflate_raw".to_string())),
        StageOp::Gsst(layout) => Some((&GSST, format!("gsst_{}", layout.name()))),
        StageOp::Huffman(d) => Some((&HUFFMAN, format!("huffman_{}", d.name()))),
        StageOp::Parquet(p) => parquet_entry(*p).map(|(src, e)| (src, e.to_string())),
        StageOp::Crc32 => Some((&CRC32, "crc32_ieee".to_string())),
        StageOp::Decompress(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::StatusCode;

    #[test]
    fn status_codes_match_kernel_enum() {
        let src = include_str!("../../kernels/codag.cuh");
        for (name, code) in [
            ("OK", StatusCode::Ok),
            ("INPUT_TRUNCATED", StatusCode::InputTruncated),
            ("OUTPUT_OVERFLOW", StatusCode::OutputOverflow),
            ("OUTPUT_SHORT", StatusCode::OutputShort),
            ("VARINT_OVERLONG", StatusCode::VarintOverlong),
            ("VALUE_OUT_OF_RANGE", StatusCode::ValueOutOfRange),
            ("INPUT_CORRUPT", StatusCode::InputCorrupt),
        ] {
            let line = format!("{name} = {},", code as u32);
            assert!(src.contains(&line), "codag.cuh lacks `{line}`");
            assert_eq!(StatusCode::from_raw(code as u32), code);
        }
        assert_eq!(StatusCode::from_raw(77), StatusCode::Pending);
    }

    use super::*;

    #[test]
    fn every_entry_exists_in_its_source() {
        for t in IntType::ALL {
            for op in [StageOp::OrcRleV1(t), StageOp::OrcRleV2(t)] {
                let (src, entry) = entry_for(&op).unwrap();
                let needle = format!("({entry},");
                assert!(
                    src.text.contains(&needle),
                    "{} lacks entry {entry}",
                    src.file
                );
            }
        }
        for op in [StageOp::OrcByteRle, StageOp::OrcBoolRle, StageOp::Crc32] {
            let (src, entry) = entry_for(&op).unwrap();
            assert!(
                src.text.contains(&format!(" {entry}(")),
                "{} lacks {entry}",
                src.file
            );
        }
        for layout in crate::plan::GsstLayout::ALL {
            let (src, entry) = entry_for(&StageOp::Gsst(layout)).unwrap();
            assert!(
                src.text.contains(&format!(" {entry}(")),
                "{} lacks entry {entry}",
                src.file
            );
        }
        for d in crate::plan::HuffmanDecoder::ALL {
            let (src, entry) = entry_for(&StageOp::Huffman(d)).unwrap();
            assert!(
                src.text.contains(&format!(" {entry}(")),
                "{} lacks entry {entry}",
                src.file
            );
        }
        for src in SOURCES {
            assert!(src.text.contains("#include \"codag.cuh\""));
        }
    }

    #[test]
    fn parquet_entries_exist_and_take_their_parameter() {
        let mut ops = vec![
            ParquetOp::PlainBool,
            ParquetOp::DeltaBinaryPacked(IntType::I32),
            ParquetOp::DeltaBinaryPacked(IntType::I64),
        ];
        for w in [0u32, 1, 4, 12, 16] {
            ops.push(ParquetOp::PlainFixed { width: w });
            ops.push(ParquetOp::ByteStreamSplit { width: w });
            ops.push(ParquetOp::DictGather { width: w });
            ops.push(ParquetOp::DictPage { width: w });
        }
        ops.extend((0..=33).map(|bit_width| ParquetOp::Hybrid { bit_width }));
        ops.extend([ParquetOp::ByteDictOffsets, ParquetOp::ByteDictData]);
        for e in [
            ByteArrayEncoding::Plain,
            ByteArrayEncoding::DeltaLength,
            ByteArrayEncoding::Delta,
        ] {
            ops.push(ParquetOp::ByteArrayLengths(e));
            ops.push(ParquetOp::ByteArrayData(e));
        }
        for p in ops {
            let op = StageOp::Parquet(p);
            let (src, entry) = entry_for(&op).unwrap_or_else(|| panic!("{p:?} has no kernel"));
            // The entry is defined (directly or through a macro) with the
            // extra parameter the launcher passes.
            let direct = src.text.contains(&format!(" {entry}("));
            let macro_ = src.text.contains(&format!("({entry},"));
            assert!(direct || macro_, "{} lacks {entry}", src.file);
            assert!(src.text.contains("u32 param)"), "{} lacks param", src.file);
            assert!(launch_param(&op).is_some());
        }
        assert_eq!(
            launch_param(&StageOp::Parquet(ParquetOp::Hybrid { bit_width: 7 })),
            Some(7)
        );
        assert_eq!(
            launch_param(&StageOp::Parquet(ParquetOp::DictGather { width: 12 })),
            Some(12)
        );
        assert_eq!(launch_param(&StageOp::OrcByteRle), None);
        assert_eq!(launch_param(&StageOp::Crc32), None);
        assert_eq!(
            launch_param(&StageOp::Parquet(ParquetOp::ByteArrayData(
                ByteArrayEncoding::Delta
            ))),
            Some(0)
        );
        // Six distinct byte-array entries, one per encoding and pass.
        let mut names: Vec<String> = [
            ByteArrayEncoding::Plain,
            ByteArrayEncoding::DeltaLength,
            ByteArrayEncoding::Delta,
        ]
        .into_iter()
        .flat_map(|e| [ParquetOp::ByteArrayLengths(e), ParquetOp::ByteArrayData(e)])
        .map(|p| entry_for(&StageOp::Parquet(p)).unwrap().1)
        .collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 6);
        assert!(
            entry_for(&StageOp::Parquet(ParquetOp::DeltaBinaryPacked(
                IntType::U32
            )))
            .is_none()
        );
    }
}
