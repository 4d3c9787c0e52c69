//! Turns decoded streams into Arrow arrays, the way pyarrow presents ORC
//! data: values spread over present slots, strings gathered from
//! dictionaries, children of null structs null, null union slots as nulls of
//! the first variant.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Float32Array, Float64Array,
    Int16Array, Int32Array, Int64Array, ListArray, MapArray, PrimitiveArray, StringArray,
    StructArray, UInt32Array, UnionArray,
};
use arrow::buffer::{BooleanBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{ArrowPrimitiveType, DataType};

use super::decode::{ColumnState, Decoded, States};
use super::schema::{Column, Kind};
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

fn nulls(present: Option<&[u8]>) -> Option<NullBuffer> {
    present.map(|p| NullBuffer::new(BooleanBuffer::from_iter(p.iter().map(|&b| b != 0))))
}

/// Places `values` (one per present slot) into `slots` slots.
fn spread<T: Copy + Default>(values: &[T], present: Option<&[u8]>) -> Vec<T> {
    match present {
        None => values.to_vec(),
        Some(p) => {
            let mut out = Vec::with_capacity(p.len());
            let mut it = values.iter();
            for &b in p {
                out.push(if b != 0 {
                    *it.next().expect("nonnull counted from present")
                } else {
                    T::default()
                });
            }
            out
        }
    }
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

    fn primitive<T: ArrowPrimitiveType>(
        &self,
        st: &ColumnState,
        values: &[T::Native],
    ) -> PrimitiveArray<T> {
        let p = self.present(st);
        PrimitiveArray::<T>::new(ScalarBuffer::from(spread(values, p)), nulls(p))
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
                let v = spread(self.ints::<u8>(st), p);
                Arc::new(BooleanArray::new(
                    BooleanBuffer::from_iter(v.iter().map(|&b| b != 0)),
                    nulls(p),
                ))
            }
            Kind::Byte => {
                let v: Vec<i8> = self.ints::<u8>(st).iter().map(|&b| b as i8).collect();
                Arc::new(self.primitive::<arrow::datatypes::Int8Type>(st, &v)) as ArrayRef
            }
            Kind::Short => Arc::new(Int16Array::from(
                self.primitive::<arrow::datatypes::Int16Type>(st, self.ints::<i16>(st)),
            )),
            Kind::Int => Arc::new(Int32Array::from(
                self.primitive::<arrow::datatypes::Int32Type>(st, self.ints::<i32>(st)),
            )),
            Kind::Long => Arc::new(Int64Array::from(
                self.primitive::<arrow::datatypes::Int64Type>(st, self.ints::<i64>(st)),
            )),
            Kind::Date => Arc::new(Date32Array::from(
                self.primitive::<arrow::datatypes::Date32Type>(st, self.ints::<i32>(st)),
            )),
            Kind::Float => {
                let v = self.floats::<4>(g, col, st)?;
                let v: Vec<f32> = v.iter().map(|b| f32::from_le_bytes(*b)).collect();
                Arc::new(Float32Array::from(
                    self.primitive::<arrow::datatypes::Float32Type>(st, &v),
                ))
            }
            Kind::Double => {
                let v = self.floats::<8>(g, col, st)?;
                let v: Vec<f64> = v.iter().map(|b| f64::from_le_bytes(*b)).collect();
                Arc::new(Float64Array::from(
                    self.primitive::<arrow::datatypes::Float64Type>(st, &v),
                ))
            }
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
                let a = self.primitive::<arrow::datatypes::TimestampNanosecondType>(st, &v);
                Arc::new(a.with_data_type(col.arrow_type()))
            }
            Kind::Decimal if self.decimal64 && (1..=18).contains(&col.precision) => {
                let v: Vec<i128> = self
                    .ints::<i64>(st)
                    .iter()
                    .map(|&x| i128::from(x))
                    .collect();
                let a = self.primitive::<arrow::datatypes::Decimal128Type>(st, &v);
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
                let a = self.primitive::<arrow::datatypes::Decimal128Type>(st, &v);
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

    fn floats<const W: usize>(
        &self,
        g: usize,
        col: &Column,
        st: &ColumnState,
    ) -> Result<Vec<[u8; W]>> {
        let raw = self.raw(g, col, StreamKind::Data);
        let n = st.nonnull as usize;
        if raw.len() / W < n {
            return Err(Error::orc(
                &self.loc(g, col, StreamKind::Data),
                format!(
                    "{} bytes hold fewer than {n} values of {W} bytes",
                    raw.len()
                ),
            ));
        }
        Ok(raw[..n * W]
            .chunks_exact(W)
            .map(|c| c.try_into().expect("exact chunks"))
            .collect())
    }

    /// Offsets (spread over slots) from a decoded LENGTH stream.
    fn offsets(
        &self,
        g: usize,
        col: &Column,
        st: &ColumnState,
        lengths: &[u32],
    ) -> Result<OffsetBuffer<i32>> {
        let mut offsets = Vec::with_capacity(st.slots as usize + 1);
        offsets.push(0i32);
        let mut total = 0i64;
        let mut it = lengths.iter();
        let present = self.present(st);
        for i in 0..st.slots as usize {
            if present.is_none_or(|p| p[i] != 0) {
                total += i64::from(*it.next().expect("one length per present slot"));
                if total > i64::from(i32::MAX) {
                    return Err(Error::orc(
                        &self.loc(g, col, StreamKind::Length),
                        "lengths exceed Arrow's 32-bit offsets",
                    ));
                }
            }
            offsets.push(total as i32);
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
            let mut lengths = Vec::with_capacity(idx.len());
            let mut values = Vec::new();
            for &i in idx {
                let i = i as usize;
                if i >= dict_lengths.len() {
                    return Err(Error::orc(
                        &data_at(),
                        format!("dictionary index {i} but {} entries", dict_lengths.len()),
                    ));
                }
                values.extend_from_slice(&dict[starts[i] as usize..starts[i + 1] as usize]);
                lengths.push(dict_lengths[i]);
            }
            (self.offsets(g, col, st, &lengths)?, values)
        } else {
            let lengths: &[u32] = st.length.map_or(&[], |r| self.decoded.typed::<u32>(r));
            let offsets = self.offsets(g, col, st, lengths)?;
            let need = *offsets.last().expect("at least one offset") as usize;
            let data = self.raw(g, col, StreamKind::Data);
            if data.len() < need {
                return Err(Error::orc(
                    &data_at(),
                    format!(
                        "lengths sum to {need} but the stream has {} bytes",
                        data.len()
                    ),
                ));
            }
            (offsets, data[..need].to_vec())
        };
        let nulls = nulls(self.present(st));
        Ok(if col.kind == Kind::Binary {
            Arc::new(
                BinaryArray::try_new(offsets, values.into(), nulls)
                    .map_err(|e| Error::arrow(format!("building column {}", col.name), e))?,
            )
        } else {
            Arc::new(
                StringArray::try_new(offsets, values.into(), nulls).map_err(|e| {
                    Error::orc(&data_at(), format!("invalid UTF-8 in a string column: {e}"))
                })?,
            )
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
