//! Turns decoded streams into Arrow arrays, the way pyarrow presents ORC
//! data: values spread over present slots, strings gathered from
//! dictionaries, children of null structs null, null union slots as nulls of
//! the first variant.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, ListArray, MapArray, PrimitiveArray, StringArray,
    StructArray, UInt32Array, UnionArray,
};
use arrow::buffer::{BooleanBuffer, Buffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{ArrowPrimitiveType, DataType};

use super::decode::{ColumnState, Decoded, States};
use super::schema::{Column, Kind};
use super::slots::{nulls, owned_slot_values, slot_values, spread};
use super::streams::{StreamKey, Streams};
use super::stripe::{StreamKind, StripeLayout};
use super::{decimal, timestamp};
use crate::error::{Error, Location, Result};

/// Everything assembly reads.
pub struct Assembler<'a> {
    /// The file, for error locations.
    pub file: &'a Location,
    /// The group's stripes.
    pub layouts: &'a [StripeLayout],
    /// Decompressed streams (raw DATA of floats, strings, decimals).
    pub streams: &'a Streams,
    /// Column states from the decode rounds.
    pub states: &'a States,
    /// Decoded streams.
    pub decoded: &'a Decoded,
    /// See [`Rounds::decimal64`](super::decode::Rounds).
    pub decimal64: bool,
}

impl Assembler<'_> {
    fn loc(&self, g: usize, col: &Column, kind: StreamKind) -> Location {
        self.file
            .clone()
            .with_stripe(self.layouts[g].info.index as u64)
            .with_column(format!("{} (id {})", col.name, col.id))
            .with_stream(kind.name())
    }

    fn raw(&self, g: usize, col: &Column, kind: StreamKind) -> &[u8] {
        self.streams.bytes(StreamKey {
            stripe: g,
            column: col.id,
            kind,
        })
    }

    fn present<'s>(&'s self, st: &ColumnState) -> Option<&'s [u8]> {
        st.present.map(|r| self.decoded.typed::<u8>(r))
    }

    /// A primitive array from a decoded stream of `T`'s width, sharing the
    /// decoded storage when no slot is null.
    fn decoded<T: ArrowPrimitiveType>(&self, st: &ColumnState) -> PrimitiveArray<T> {
        let p = self.present(st);
        let bytes = st
            .data
            .map_or_else(Buffer::default, |r| self.decoded.buffer(r));
        let n = st.nonnull as usize;
        PrimitiveArray::<T>::new(slot_values(bytes, n, p), nulls(p))
    }

    /// A primitive array from values computed on the host.
    fn owned<T: ArrowPrimitiveType>(
        &self,
        st: &ColumnState,
        values: Vec<T::Native>,
    ) -> PrimitiveArray<T> {
        let p = self.present(st);
        PrimitiveArray::<T>::new(owned_slot_values(values, p), nulls(p))
    }

    fn ints<T: crate::codecs::int::IntElem>(&self, st: &ColumnState) -> &[T] {
        st.data.map_or(&[], |r| self.decoded.typed::<T>(r))
    }

    /// The array of one column of stripe `g`, `slots` long.
    pub fn array(&self, g: usize, col: &Column) -> Result<ArrayRef> {
        let st = &self.states[&(g, col.id)];
        let p = self.present(st);
        Ok(match col.kind {
            Kind::Boolean => {
                let bits = self.ints::<u8>(st);
                let values = match p {
                    None => BooleanBuffer::collect_bool(bits.len(), |i| bits[i] != 0),
                    Some(p) => {
                        let v = spread(bits, p);
                        BooleanBuffer::collect_bool(v.len(), |i| v[i] != 0)
                    }
                };
                Arc::new(BooleanArray::new(values, nulls(p)))
            }
            Kind::Byte => Arc::new(self.decoded::<arrow::datatypes::Int8Type>(st)) as ArrayRef,
            Kind::Short => Arc::new(self.decoded::<arrow::datatypes::Int16Type>(st)),
            Kind::Int => Arc::new(self.decoded::<arrow::datatypes::Int32Type>(st)),
            Kind::Long => Arc::new(self.decoded::<arrow::datatypes::Int64Type>(st)),
            Kind::Date => Arc::new(self.decoded::<arrow::datatypes::Date32Type>(st)),
            Kind::Float => Arc::new(self.floats::<arrow::datatypes::Float32Type>(g, col, st)?),
            Kind::Double => Arc::new(self.floats::<arrow::datatypes::Float64Type>(g, col, st)?),
            Kind::String | Kind::Varchar | Kind::Char | Kind::Binary => self.bytes(g, col, st)?,
            Kind::Timestamp | Kind::TimestampInstant => {
                let secs = self.ints::<i64>(st);
                let nanos: &[u64] = st.secondary.map_or(&[], |r| self.decoded.typed::<u64>(r));
                let tz = if col.kind == Kind::TimestampInstant {
                    None
                } else {
                    self.layouts[g].writer_timezone.as_deref()
                };
                let v = timestamp::to_nanos(secs, nanos, tz)
                    .map_err(|m| Error::orc(&self.loc(g, col, StreamKind::Data), m))?;
                let a = self.owned::<arrow::datatypes::TimestampNanosecondType>(st, v);
                Arc::new(a.with_data_type(col.arrow_type()))
            }
            Kind::Decimal if self.decimal64 && (1..=18).contains(&col.precision) => {
                let v: Vec<i128> = self
                    .ints::<i64>(st)
                    .iter()
                    .map(|&x| i128::from(x))
                    .collect();
                let a = self.owned::<arrow::datatypes::Decimal128Type>(st, v);
                Arc::new(a.with_data_type(col.arrow_type()))
            }
            Kind::Decimal => {
                let scales: &[i32] = st.secondary.map_or(&[], |r| self.decoded.typed::<i32>(r));
                let data = self.raw(g, col, StreamKind::Data);
                let n = st.nonnull as usize;
                let v = if col.precision == 0 {
                    decimal::decode_hive11(data, scales, n)
                } else {
                    decimal::decode(data, scales, n, col.scale)
                }
                .map_err(|(at, m)| Error::orc(&self.loc(g, col, StreamKind::Data).at(at), m))?;
                let a = self.owned::<arrow::datatypes::Decimal128Type>(st, v);
                Arc::new(a.with_data_type(col.arrow_type()))
            }
            Kind::Struct => self.structure(g, col, st)?,
            Kind::List => {
                let (offsets, child) = self.list_parts(g, col, st)?;
                let field = Arc::new(col.children[0].arrow_field());
                Arc::new(
                    ListArray::try_new(field, offsets, child, nulls(p))
                        .map_err(|e| Error::arrow(format!("building list {}", col.name), e))?,
                )
            }
            Kind::Map => self.map(g, col, st)?,
            Kind::Union => self.union(g, col, st)?,
        })
    }

    /// Float and double DATA is stored plain: the stream (aligned in the
    /// group's buffer) is the Arrow buffer when no slot is null.
    fn floats<T: ArrowPrimitiveType>(
        &self,
        g: usize,
        col: &Column,
        st: &ColumnState,
    ) -> Result<PrimitiveArray<T>> {
        let raw = self.streams.buffer(StreamKey {
            stripe: g,
            column: col.id,
            kind: StreamKind::Data,
        });
        let n = st.nonnull as usize;
        let w = std::mem::size_of::<T::Native>();
        if raw.len() / w < n {
            return Err(Error::orc(
                &self.loc(g, col, StreamKind::Data),
                format!(
                    "{} bytes hold fewer than {n} values of {w} bytes",
                    raw.len()
                ),
            ));
        }
        let p = self.present(st);
        Ok(PrimitiveArray::<T>::new(slot_values(raw, n, p), nulls(p)))
    }

    /// Offsets (spread over slots) from a decoded LENGTH stream.
    fn offsets(
        &self,
        g: usize,
        col: &Column,
        st: &ColumnState,
        lengths: &[u32],
    ) -> Result<OffsetBuffer<i32>> {
        let slots = st.slots as usize;
        let mut offsets = Vec::with_capacity(slots + 1);
        offsets.push(0i32);
        // A u64 sum of at most 2^32 lengths below 2^32 cannot overflow, so
        // the 32-bit limit is checked once, at the end.
        let mut total = 0u64;
        match self.present(st) {
            None => {
                for &l in lengths.iter().take(slots) {
                    total += u64::from(l);
                    offsets.push(total as i32);
                }
                offsets.resize(slots + 1, total as i32);
            }
            Some(p) => {
                let mut k = 0usize;
                for &b in p.iter().take(slots) {
                    if b != 0 {
                        total += u64::from(lengths.get(k).copied().unwrap_or(0));
                        k += 1;
                    }
                    offsets.push(total as i32);
                }
            }
        }
        if total > i32::MAX as u64 {
            return Err(Error::orc(
                &self.loc(g, col, StreamKind::Length),
                "lengths exceed Arrow's 32-bit offsets",
            ));
        }
        Ok(OffsetBuffer::new(ScalarBuffer::from(offsets)))
    }

    fn bytes(&self, g: usize, col: &Column, st: &ColumnState) -> Result<ArrayRef> {
        let data_at = || self.loc(g, col, StreamKind::Data);
        let dictionary = self.layouts[g].encoding(col.id).0.is_dictionary();
        let (offsets, values) = if dictionary && col.kind != Kind::Binary {
            // Dictionary: gather entries by index.
            let dict_lengths: &[u32] = st.length.map_or(&[], |r| self.decoded.typed::<u32>(r));
            let dict = self.raw(g, col, StreamKind::DictionaryData);
            let mut starts = Vec::with_capacity(dict_lengths.len() + 1);
            let mut pos = 0u64;
            starts.push(0u64);
            for &l in dict_lengths {
                pos += u64::from(l);
                starts.push(pos);
            }
            if pos > dict.len() as u64 {
                return Err(Error::orc(
                    &self.loc(g, col, StreamKind::DictionaryData),
                    format!(
                        "dictionary lengths sum to {pos} but the stream has {} bytes",
                        dict.len()
                    ),
                ));
            }
            let idx = self.ints::<u32>(st);
            // Indexes checked and lengths taken first, so the values are
            // allocated once at their exact size.
            let mut lengths = Vec::with_capacity(idx.len());
            let mut total = 0u64;
            for &i in idx {
                let Some(&l) = dict_lengths.get(i as usize) else {
                    return Err(Error::orc(
                        &data_at(),
                        format!("dictionary index {i} but {} entries", dict_lengths.len()),
                    ));
                };
                total += u64::from(l);
                lengths.push(l);
            }
            if total > i32::MAX as u64 {
                return Err(Error::orc(
                    &self.loc(g, col, StreamKind::Length),
                    "lengths exceed Arrow's 32-bit offsets",
                ));
            }
            let mut values = Vec::with_capacity(total as usize);
            for &i in idx {
                let i = i as usize;
                values.extend_from_slice(&dict[starts[i] as usize..starts[i + 1] as usize]);
            }
            (
                self.offsets(g, col, st, &lengths)?,
                Buffer::from_vec(values),
            )
        } else {
            let lengths: &[u32] = st.length.map_or(&[], |r| self.decoded.typed::<u32>(r));
            let offsets = self.offsets(g, col, st, lengths)?;
            let need = *offsets.last().expect("at least one offset") as usize;
            let data = self.streams.buffer(StreamKey {
                stripe: g,
                column: col.id,
                kind: StreamKind::Data,
            });
            if data.len() < need {
                return Err(Error::orc(
                    &data_at(),
                    format!(
                        "lengths sum to {need} but the stream has {} bytes",
                        data.len()
                    ),
                ));
            }
            // The stream's bytes are the values buffer: no copy.
            (offsets, data.slice_with_length(0, need))
        };
        let nulls = nulls(self.present(st));
        Ok(if col.kind == Kind::Binary {
            Arc::new(
                BinaryArray::try_new(offsets, values, nulls)
                    .map_err(|e| Error::arrow(format!("building column {}", col.name), e))?,
            )
        } else {
            Arc::new(StringArray::try_new(offsets, values, nulls).map_err(|e| {
                Error::orc(&data_at(), format!("invalid UTF-8 in a string column: {e}"))
            })?)
        })
    }

    /// Children of a struct are stored for present rows only: spread them
    /// over the struct's slots with nulls where the struct is null.
    fn structure(&self, g: usize, col: &Column, st: &ColumnState) -> Result<ArrayRef> {
        let p = self.present(st);
        let mut children = Vec::with_capacity(col.children.len());
        for c in &col.children {
            let a = self.array(g, c)?;
            children.push(match p {
                None => a,
                Some(p) => {
                    let mut k = 0u32;
                    let idx: UInt32Array = p
                        .iter()
                        .map(|&b| {
                            (b != 0).then(|| {
                                k += 1;
                                k - 1
                            })
                        })
                        .collect();
                    arrow::compute::take(&a, &idx, None)
                        .map_err(|e| Error::arrow(format!("spreading struct {}", col.name), e))?
                }
            });
        }
        let fields = match col.arrow_type() {
            DataType::Struct(f) => f,
            _ => unreachable!("struct columns have struct types"),
        };
        Ok(Arc::new(
            StructArray::try_new_with_length(fields, children, nulls(p), st.slots as usize)
                .map_err(|e| Error::arrow(format!("building struct {}", col.name), e))?,
        ))
    }

    fn list_parts(
        &self,
        g: usize,
        col: &Column,
        st: &ColumnState,
    ) -> Result<(OffsetBuffer<i32>, ArrayRef)> {
        let lengths: &[u32] = st.length.map_or(&[], |r| self.decoded.typed::<u32>(r));
        let offsets = self.offsets(g, col, st, lengths)?;
        let child = self.array(g, &col.children[0])?;
        Ok((offsets, child))
    }

    fn map(&self, g: usize, col: &Column, st: &ColumnState) -> Result<ArrayRef> {
        let lengths: &[u32] = st.length.map_or(&[], |r| self.decoded.typed::<u32>(r));
        let offsets = self.offsets(g, col, st, lengths)?;
        let keys = self.array(g, &col.children[0])?;
        let values = self.array(g, &col.children[1])?;
        let DataType::Map(entries_field, _) = col.arrow_type() else {
            unreachable!("map columns have map types")
        };
        let DataType::Struct(fields) = entries_field.data_type().clone() else {
            unreachable!("map entries are structs")
        };
        if keys.null_count() > 0 {
            return Err(Error::orc(
                &self.loc(g, col, StreamKind::Present),
                "a map key is null (Arrow maps require keys)",
            ));
        }
        let entries = StructArray::try_new(fields, vec![keys, values], None)
            .map_err(|e| Error::arrow(format!("building map {}", col.name), e))?;
        Ok(Arc::new(
            MapArray::try_new(
                entries_field,
                offsets,
                entries,
                nulls(self.present(st)),
                false,
            )
            .map_err(|e| Error::arrow(format!("building map {}", col.name), e))?,
        ))
    }

    /// Sparse union (pyarrow's choice): every variant's array spans all
    /// slots, holding its values where the tag selects it and nulls
    /// elsewhere; a null slot is a null of variant 0 and an empty (valid,
    /// zero-length or zero) value of every other variant, which is what
    /// Arrow C++'s sparse union builder appends for a null.
    fn union(&self, g: usize, col: &Column, st: &ColumnState) -> Result<ArrayRef> {
        let tags = self.ints::<u8>(st);
        let present = self.present(st);
        let slots = st.slots as usize;
        let mut type_ids = Vec::with_capacity(slots);
        let mut index: Vec<Vec<Option<u32>>> = vec![Vec::with_capacity(slots); col.children.len()];
        let mut next = vec![0u32; col.children.len()];
        let mut t = tags.iter();
        for i in 0..slots {
            let tag = if present.is_none_or(|p| p[i] != 0) {
                Some(*t.next().expect("one tag per present slot") as usize)
            } else {
                None
            };
            type_ids.push(tag.unwrap_or(0) as i8);
            for (k, idx) in index.iter_mut().enumerate() {
                idx.push((tag == Some(k)).then(|| {
                    next[k] += 1;
                    next[k] - 1
                }));
            }
        }
        let null_slots: Vec<usize> = match present {
            Some(p) => (0..slots).filter(|&i| p[i] == 0).collect(),
            None => Vec::new(),
        };
        let mut children = Vec::with_capacity(col.children.len());
        for (k, (c, idx)) in col.children.iter().zip(index).enumerate() {
            let a = self.array(g, c)?;
            let idx: UInt32Array = idx.into_iter().collect();
            let mut taken = arrow::compute::take(&a, &idx, None)
                .map_err(|e| Error::arrow(format!("building union {}", col.name), e))?;
            if k > 0 && !null_slots.is_empty() {
                // take() leaves a null index as a zero/empty value; mark it valid.
                taken = valid_at(taken, &null_slots)
                    .map_err(|e| Error::arrow(format!("building union {}", col.name), e))?;
            }
            children.push(taken);
        }
        let DataType::Union(fields, _) = col.arrow_type() else {
            unreachable!("union columns have union types")
        };
        Ok(Arc::new(
            UnionArray::try_new(fields, type_ids.into(), None, children)
                .map_err(|e| Error::arrow(format!("building union {}", col.name), e))?,
        ))
    }
}

/// `a` with the given slots marked valid (their values are left as they are).
fn valid_at(
    a: ArrayRef,
    slots: &[usize],
) -> std::result::Result<ArrayRef, arrow::error::ArrowError> {
    let data = a.to_data();
    let mut bits = arrow::array::BooleanBufferBuilder::new(data.len());
    match data.nulls() {
        Some(n) => bits.append_buffer(n.inner()),
        None => bits.append_n(data.len(), true),
    }
    for &i in slots {
        bits.set_bit(i, true);
    }
    let nulls = arrow::buffer::NullBuffer::new(bits.finish());
    let data = data.into_builder().nulls(Some(nulls)).build()?;
    Ok(arrow::array::make_array(data))
}
