//! Which encoding each column of a container gets: the policy a writer is
//! given (`warpread convert --codec`), the encodings a column is eligible
//! for, and, where there is a choice, the measurement that makes it.
//!
//! A measurement encodes the column of every sample batch in each
//! candidate encoding, exactly as the writer would, and sums the bytes of
//! the stored arrays (a GSST column's 8 bytes of offsets a row included):
//! what the file would hold, not an estimate.

use arrow::array::{Array, RecordBatch};
use arrow::datatypes::{DataType, Schema};

use super::container::{ContainerOptions, encode_column};
use super::huffman_extension::{HuffmanEncoding, HuffmanValues};
use crate::codecs::huffman::SymbolWidth;
use crate::error::{Error, Result};

/// How a writer picks column encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CodecPolicy {
    /// Every column plain: an ordinary Arrow IPC file.
    None,
    /// Utf8 and LargeUtf8 columns GSST, others plain (the container's
    /// original behaviour).
    #[default]
    Gsst,
    /// Every eligible column (fixed-width primitives and strings) Huffman,
    /// at the symbol width that measures smaller.
    Huffman,
    /// Per column, the smallest eligible encoding by measured bytes, each
    /// decode stage weighted by [`STAGE_WEIGHT`]; plain when nothing beats
    /// it by that weight.
    Auto,
}

impl CodecPolicy {
    /// Every policy.
    pub const ALL: [CodecPolicy; 4] = [Self::Auto, Self::Gsst, Self::Huffman, Self::None];

    /// Lowercase name (`auto`, `gsst`, `huffman`, `none`).
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Gsst => "gsst",
            Self::Huffman => "huffman",
            Self::Auto => "auto",
        }
    }
}

impl std::str::FromStr for CodecPolicy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "codec `{s}` (expected auto, gsst, huffman or none)"
                ))
            })
    }
}

/// How one column is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnEncoding {
    /// As it is.
    Plain,
    /// GSST (strings), marked `warpread.gsst`.
    Gsst,
    /// Huffman, marked `warpread.huffman`.
    Huffman(HuffmanEncoding),
}

impl ColumnEncoding {
    /// Short name: `plain`, `gsst`, `huffman8`, `gsst+huffman16`, ...
    pub fn name(&self) -> String {
        match self {
            Self::Plain => "plain".into(),
            Self::Gsst => "gsst".into(),
            Self::Huffman(h) => h.name(),
        }
    }

    /// Decode stages a batch of the column takes.
    pub fn stages(&self) -> u32 {
        match self {
            Self::Plain => 0,
            Self::Gsst => 1,
            Self::Huffman(h) => h.stages(),
        }
    }
}

/// What `auto` multiplies an encoding's measured bytes by per decode stage
/// it takes: a stage must save more than 1 byte in 11 (about 9%) of what it
/// replaces to be chosen. Decoding costs a stage's launch and transfers on
/// the GPU and a pass over the data on the CPU, and a plain column is
/// zero-copy for every Arrow reader; a few percent of file size does not
/// pay for that.
pub const STAGE_WEIGHT: f64 = 1.1;

/// Bytes of leading batches (by their plain columns' size) that
/// measurements look at: the encodings are fixed by the schema, written
/// before the first batch, so a streamed source cannot be measured whole;
/// 32 MiB keeps a measurement to about a second of one core.
pub const SAMPLE_BYTES: u64 = 32 << 20;

/// One column's encoding, and the bytes each candidate measured on the
/// sample (empty when the policy left no choice).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnChoice {
    /// The encoding written.
    pub encoding: ColumnEncoding,
    /// Candidate encodings and their stored bytes on the sample.
    pub measured: Vec<(ColumnEncoding, u64)>,
}

/// The encodings `policy` lets a column of `data_type` have, in order of
/// preference among equals.
pub fn candidates(data_type: &DataType, policy: CodecPolicy) -> Vec<ColumnEncoding> {
    let values = HuffmanValues::of(data_type);
    let strings = matches!(values, Some(HuffmanValues::Strings { .. }));
    let huffman = |gsst: bool| {
        [SymbolWidth::U8, SymbolWidth::U16]
            .map(|width| ColumnEncoding::Huffman(HuffmanEncoding { width, gsst }))
    };
    match (policy, values) {
        (CodecPolicy::None, _) | (_, None) => vec![ColumnEncoding::Plain],
        (CodecPolicy::Gsst, _) if strings => vec![ColumnEncoding::Gsst],
        (CodecPolicy::Gsst, _) => vec![ColumnEncoding::Plain],
        (CodecPolicy::Huffman, _) => huffman(false).to_vec(),
        (CodecPolicy::Auto, _) => {
            let mut v = vec![ColumnEncoding::Plain];
            if strings {
                v.push(ColumnEncoding::Gsst);
            }
            v.extend(huffman(false));
            if strings {
                v.extend(huffman(true));
            }
            v
        }
    }
}

/// Whether `policy` needs a sample to choose encodings for `schema`.
pub fn needs_sample(schema: &Schema, policy: CodecPolicy) -> bool {
    schema
        .fields()
        .iter()
        .any(|f| candidates(f.data_type(), policy).len() > 1)
}

/// The bytes an array takes in an Arrow IPC file body (its buffers,
/// children included, as far as the array's slice reaches; padding aside).
pub fn stored_bytes(array: &dyn Array) -> u64 {
    let data = array.to_data();
    data.get_slice_memory_size()
        .unwrap_or_else(|_| array.get_buffer_memory_size()) as u64
}

/// The candidate `auto` (or a width choice) keeps: the least measured
/// bytes weighted by [`STAGE_WEIGHT`] per stage; the first among equals.
fn pick(measured: &[(ColumnEncoding, u64)]) -> ColumnEncoding {
    let weighted =
        |(e, bytes): &(ColumnEncoding, u64)| *bytes as f64 * STAGE_WEIGHT.powi(e.stages() as i32);
    let mut best = measured[0];
    for m in &measured[1..] {
        if weighted(m) < weighted(&best) {
            best = *m;
        }
    }
    best.0
}

/// Chooses each top-level column's encoding under `options.codec`,
/// measuring the candidates on `sample` (batches of `schema`) where there
/// is more than one.
pub fn choose(
    schema: &Schema,
    sample: &[RecordBatch],
    options: &ContainerOptions,
) -> Result<Vec<ColumnChoice>> {
    let mut out = Vec::with_capacity(schema.fields().len());
    for (i, field) in schema.fields().iter().enumerate() {
        let candidates = candidates(field.data_type(), options.codec);
        if candidates.len() == 1 {
            out.push(ColumnChoice {
                encoding: candidates[0],
                measured: Vec::new(),
            });
            continue;
        }
        let mut measured = Vec::with_capacity(candidates.len());
        for c in candidates {
            let mut bytes = 0u64;
            for b in sample {
                let column = b.column(i);
                bytes += match c {
                    ColumnEncoding::Plain => stored_bytes(column.as_ref()),
                    c => stored_bytes(encode_column(column, c, options)?.as_ref()),
                };
            }
            measured.push((c, bytes));
        }
        out.push(ColumnChoice {
            encoding: pick(&measured),
            measured,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H8: ColumnEncoding = ColumnEncoding::Huffman(HuffmanEncoding {
        width: SymbolWidth::U8,
        gsst: false,
    });
    const GH16: ColumnEncoding = ColumnEncoding::Huffman(HuffmanEncoding {
        width: SymbolWidth::U16,
        gsst: true,
    });

    #[test]
    fn candidates_follow_the_policy_and_the_type() {
        use CodecPolicy::*;
        assert_eq!(candidates(&DataType::Utf8, Gsst), [ColumnEncoding::Gsst]);
        assert_eq!(candidates(&DataType::Int32, Gsst), [ColumnEncoding::Plain]);
        assert_eq!(
            candidates(&DataType::Boolean, Auto),
            [ColumnEncoding::Plain]
        );
        assert_eq!(candidates(&DataType::Int32, None), [ColumnEncoding::Plain]);
        assert_eq!(candidates(&DataType::Float64, Huffman).len(), 2);
        assert_eq!(candidates(&DataType::Float64, Auto).len(), 3);
        assert_eq!(candidates(&DataType::LargeUtf8, Auto).len(), 6);
        for p in CodecPolicy::ALL {
            assert_eq!(p.name().parse::<CodecPolicy>().unwrap(), p);
        }
        assert!("zstd".parse::<CodecPolicy>().is_err());
    }

    #[test]
    fn pick_weighs_stages() {
        let plain = ColumnEncoding::Plain;
        // 10% smaller is not enough for one stage; 10% smaller again is
        // not enough for a second.
        assert_eq!(pick(&[(plain, 1000), (H8, 910)]), plain);
        assert_eq!(pick(&[(plain, 1000), (H8, 900)]), H8);
        assert_eq!(pick(&[(H8, 900), (GH16, 820)]), H8);
        assert_eq!(pick(&[(H8, 900), (GH16, 800)]), GH16);
        assert_eq!(pick(&[(plain, 0), (H8, 0)]), plain);
    }
}
