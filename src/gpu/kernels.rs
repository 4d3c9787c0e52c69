//! The kernel sources compiled into the binary, and which entry point runs
//! each stage operation.

use crate::plan::StageOp;

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

/// GSST string decompression.
pub const GSST: KernelSource = KernelSource {
    file: "gsst.cu",
    text: include_str!("../../kernels/gsst.cu"),
};

/// Every kernel source.
pub const SOURCES: &[KernelSource] = &[ORC_RLE_V1, ORC_RLE_V2, ORC_BYTE_RLE, INFLATE, GSST];

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
        StageOp::Decompress(_) | StageOp::Parquet(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::IntType;

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
        for op in [StageOp::OrcByteRle, StageOp::OrcBoolRle] {
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
        for src in SOURCES {
            assert!(src.text.contains("#include \"codag.cuh\""));
        }
    }
}
