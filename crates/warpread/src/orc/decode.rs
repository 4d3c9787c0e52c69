//! Decodes the integer, byte and boolean streams of a stripe group in
//! rounds, level by level of the type tree: a column's value count is only
//! known once its parent is decoded (struct presence, list lengths, union
//! tags). Each round is one stage per operation over every stripe and column
//! of that level, so the backend sees few large stages.

use std::collections::HashMap;

use super::schema::{Column, Kind};
use super::streams::{StreamKey, Streams};
use super::stripe::{Encoding, StreamKind, StripeLayout};
use crate::codecs::int::IntElem;
use crate::codecs::{orc_byte_rle, orc_rle_v1, orc_rle_v2};
use crate::error::{Error, Location, Result};
use crate::exec::Backend;
use crate::exec::batch::{BatchOutput, RequestId, StageBatch};
use crate::plan::{IntType, StageOp};

/// Most values one input byte can expand to in any ORC run-length encoding
/// (a boolean run of 130 bytes from 2 bytes is 520 per byte): a column
/// claiming more is corrupt, and the bound keeps allocations honest.
const MAX_VALUES_PER_BYTE: u64 = 1024;

/// A decoded stream: which round, which request, and how many leading
/// values belong to row groups before a window (decoded only because they
/// share the first run; dropped here).
#[derive(Debug, Clone, Copy)]
pub struct Ref {
    round: usize,
    id: RequestId,
    skip: usize,
}

/// Outputs of every round.
#[derive(Default)]
pub struct Decoded {
    rounds: Vec<BatchOutput>,
}

impl Decoded {
    /// A decoded stream's elements.
    pub fn typed<T: IntElem>(&self, r: Ref) -> &[T] {
        &self.rounds[r.round].typed::<T>(r.id)[r.skip..]
    }

    /// A decoded stream as an Arrow buffer sharing the round's storage.
    pub fn buffer(&self, r: Ref) -> arrow::buffer::Buffer {
        let out = &self.rounds[r.round];
        out.buffer(r.id).slice(r.skip * out.width(r.id))
    }
}

/// What the rounds learned about one column of one stripe.
#[derive(Debug, Clone, Default)]
pub struct ColumnState {
    /// Entries of this column (rows at the top level).
    pub slots: u64,
    /// One byte (0/1) per slot; `None` when every slot is present.
    pub present: Option<Ref>,
    /// Present slots, i.e. values in the data streams.
    pub nonnull: u64,
    /// The decoded DATA stream, if it is an integer/byte/boolean stream.
    pub data: Option<Ref>,
    /// The decoded LENGTH stream.
    pub length: Option<Ref>,
    /// The decoded SECONDARY stream.
    pub secondary: Option<Ref>,
    /// Dictionary entries (dictionary encodings).
    pub dictionary_size: u64,
}

/// States of every column of every stripe of a group.
pub type States = HashMap<(usize, u32), ColumnState>;

/// The decode rounds' context.
pub struct Rounds<'a> {
    /// The file, for error locations.
    pub file: &'a Location,
    /// The group's stripes.
    pub layouts: &'a [StripeLayout],
    /// Their decompressed streams.
    pub streams: &'a Streams,
    /// Where to decode.
    pub backend: &'a dyn Backend,
    /// Decimals of precision <= 18 are RLE v2 integers (files of the
    /// pre-2.0 "1.9999" version).
    pub decimal64: bool,
}

/// A batch that cuts long run-length streams into pieces at run boundaries
/// (`codecs::split`), so one stripe's stream decodes on many warps.
fn new_batch(buf: &[u8]) -> StageBatch<'_> {
    let mut batch = StageBatch::new(buf);
    for t in IntType::ALL {
        batch.split_with(StageOp::OrcRleV1(t), orc_rle_v1::split);
        batch.split_with(StageOp::OrcRleV2(t), orc_rle_v2::split);
    }
    batch.split_with(StageOp::OrcByteRle, orc_byte_rle::split);
    batch.split_with(StageOp::OrcBoolRle, orc_byte_rle::split_bools);
    batch
}

fn int_op(layout: &StripeLayout, col: u32, t: IntType) -> StageOp {
    if layout.encoding(col).0.is_v2() {
        StageOp::OrcRleV2(t)
    } else {
        StageOp::OrcRleV1(t)
    }
}

impl Rounds<'_> {
    fn loc(&self, g: usize, col: &Column, kind: StreamKind) -> Location {
        self.file
            .clone()
            .with_stripe(self.layouts[g].info.index as u64)
            .with_column(format!("{} (id {})", col.name, col.id))
            .with_stream(kind.name())
    }

    /// Adds a request for `values` elements of `op` from a column's stream,
    /// plus the values a window's seek skips; returns the request and that
    /// skip.
    fn request(
        &self,
        batch: &mut StageBatch<'_>,
        g: usize,
        col: &Column,
        kind: StreamKind,
        op: StageOp,
        values: u64,
    ) -> Result<Option<(RequestId, usize)>> {
        if values == 0 {
            return Ok(None);
        }
        let skip = self.layouts[g].seek(col.id, kind).values;
        let key = StreamKey {
            stripe: g,
            column: col.id,
            kind,
        };
        let at = self.loc(g, col, kind);
        let Some(range) = self.streams.range(key) else {
            return Err(Error::orc(
                &at,
                format!("stream missing for {values} values"),
            ));
        };
        // The seek's skip is at most a run (checked with the row index), so
        // this sum cannot overflow; the bound below covers it too.
        let values = values + skip;
        if values > (range.len() as u64).saturating_mul(MAX_VALUES_PER_BYTE) {
            return Err(Error::orc(
                &at,
                format!("{values} values cannot come from {} bytes", range.len()),
            ));
        }
        Ok(Some((batch.add(op, range, values, at), skip as usize)))
    }

    /// Runs every round and returns the state of each (stripe, column).
    pub fn run(&self, top: &[&Column]) -> Result<(States, Decoded)> {
        let mut states = States::new();
        let mut decoded = Decoded::default();
        let mut level: Vec<(usize, &Column, u64)> = (0..self.layouts.len())
            .flat_map(|g| top.iter().map(move |c| (g, *c, self.layouts[g].info.rows)))
            .collect();
        while !level.is_empty() {
            // Round A: presence.
            let mut batch = new_batch(self.streams.buf.as_slice());
            let mut present = Vec::with_capacity(level.len());
            for &(g, col, slots) in &level {
                let key = StreamKey {
                    stripe: g,
                    column: col.id,
                    kind: StreamKind::Present,
                };
                present.push(if self.streams.range(key).is_some() {
                    self.request(
                        &mut batch,
                        g,
                        col,
                        StreamKind::Present,
                        StageOp::OrcBoolRle,
                        slots,
                    )?
                } else {
                    None
                });
            }
            let round = decoded.rounds.len();
            let span = crate::trace::span("orc.round_a");
            decoded.rounds.push(batch.run(self.backend)?);
            drop(span);
            for (&(g, col, slots), p) in level.iter().zip(present) {
                let present = p.map(|(id, skip)| Ref { round, id, skip });
                let nonnull = match present {
                    Some(r) => decoded.typed::<u8>(r).iter().map(|&b| u64::from(b)).sum(),
                    None => slots,
                };
                states.insert(
                    (g, col.id),
                    ColumnState {
                        slots,
                        present,
                        nonnull,
                        ..Default::default()
                    },
                );
            }

            // Round B: values.
            let mut batch = new_batch(self.streams.buf.as_slice());
            let mut wanted = Vec::with_capacity(level.len());
            for &(g, col, _) in &level {
                let st = &states[&(g, col.id)];
                let n = st.nonnull;
                let layout = &self.layouts[g];
                let (enc, dict_size) = layout.encoding(col.id);
                if let (Encoding::Unknown(k), true) = (enc, n > 0 && col.kind != Kind::Struct) {
                    return Err(Error::orc(
                        &self.loc(g, col, StreamKind::Data),
                        format!("unknown column encoding {k}"),
                    ));
                }
                let mut req = |kind, op, values| self.request(&mut batch, g, col, kind, op, values);
                use StreamKind::{Data, Length, Secondary};
                let w = match col.kind {
                    Kind::Boolean => (req(Data, StageOp::OrcBoolRle, n)?, None, None, 0),
                    Kind::Byte => (req(Data, StageOp::OrcByteRle, n)?, None, None, 0),
                    Kind::Short => (
                        req(Data, int_op(layout, col.id, IntType::I16), n)?,
                        None,
                        None,
                        0,
                    ),
                    Kind::Int | Kind::Date => (
                        req(Data, int_op(layout, col.id, IntType::I32), n)?,
                        None,
                        None,
                        0,
                    ),
                    Kind::Long => (
                        req(Data, int_op(layout, col.id, IntType::I64), n)?,
                        None,
                        None,
                        0,
                    ),
                    Kind::String | Kind::Varchar | Kind::Char | Kind::Binary => {
                        let u32op = int_op(layout, col.id, IntType::U32);
                        if enc.is_dictionary() && col.kind != Kind::Binary {
                            let d = u64::from(dict_size);
                            (req(Data, u32op, n)?, req(Length, u32op, d)?, None, d)
                        } else {
                            (None, req(Length, u32op, n)?, None, 0)
                        }
                    }
                    Kind::Timestamp | Kind::TimestampInstant => (
                        req(Data, int_op(layout, col.id, IntType::I64), n)?,
                        None,
                        req(Secondary, int_op(layout, col.id, IntType::U64), n)?,
                        0,
                    ),
                    // RLE v2 whatever the column encoding says: the pre-2.0
                    // Java writer records DIRECT (v1) for these columns
                    // (decimal64_v2.orc), and ORC C++ always reads them as v2.
                    Kind::Decimal if self.decimal64 && (1..=18).contains(&col.precision) => (
                        req(Data, StageOp::OrcRleV2(IntType::I64), n)?,
                        None,
                        None,
                        0,
                    ),
                    Kind::Decimal => (
                        None,
                        None,
                        req(Secondary, int_op(layout, col.id, IntType::I32), n)?,
                        0,
                    ),
                    Kind::List | Kind::Map => (
                        None,
                        req(Length, int_op(layout, col.id, IntType::U32), n)?,
                        None,
                        0,
                    ),
                    Kind::Union => (req(Data, StageOp::OrcByteRle, n)?, None, None, 0),
                    Kind::Float | Kind::Double | Kind::Struct => (None, None, None, 0),
                };
                wanted.push(w);
            }
            let round = decoded.rounds.len();
            let span = crate::trace::span("orc.round_b");
            decoded.rounds.push(batch.run(self.backend)?);
            drop(span);
            let mut next = Vec::new();
            for (&(g, col, _), (data, length, secondary, dict)) in level.iter().zip(wanted) {
                let r =
                    |id: Option<(RequestId, usize)>| id.map(|(id, skip)| Ref { round, id, skip });
                let st = states.get_mut(&(g, col.id)).expect("inserted in round A");
                st.data = r(data);
                st.length = r(length);
                st.secondary = r(secondary);
                st.dictionary_size = dict;
                let st = st.clone();
                let at = || self.loc(g, col, StreamKind::Length);
                match col.kind {
                    Kind::Struct => next.extend(col.children.iter().map(|c| (g, c, st.nonnull))),
                    Kind::List | Kind::Map => {
                        let total: u64 = st.length.map_or(0, |r| {
                            decoded.typed::<u32>(r).iter().map(|&l| u64::from(l)).sum()
                        });
                        if total > i32::MAX as u64 {
                            return Err(Error::orc(
                                &at(),
                                format!("{total} child entries exceed Arrow's 32-bit offsets"),
                            ));
                        }
                        next.extend(col.children.iter().map(|c| (g, c, total)));
                    }
                    Kind::Union => {
                        let mut counts = vec![0u64; col.children.len()];
                        if let Some(r) = st.data {
                            for &t in decoded.typed::<u8>(r) {
                                *counts.get_mut(t as usize).ok_or_else(|| {
                                    Error::orc(
                                        &self.loc(g, col, StreamKind::Data),
                                        format!(
                                            "union tag {t} but {} variants",
                                            col.children.len()
                                        ),
                                    )
                                })? += 1;
                            }
                        }
                        next.extend(col.children.iter().zip(counts).map(|(c, n)| (g, c, n)));
                    }
                    _ => {}
                }
            }
            level = next;
        }
        Ok((states, decoded))
    }
}
