//! The field nodes and buffers of an Arrow IPC message, walked in the
//! order arrow-ipc's decoder takes them, to check the few sizes it slices
//! or wraps without checking.
//!
//! arrow-ipc validates most arrays through `ArrayData`, which returns
//! errors, but any node's validity becomes a `BooleanBuffer` of the node's
//! length before that validation (which panics when the buffer is shorter:
//! a struct's directly, every other type's inside `ArrayDataBuilder::build`),
//! a union's type ids and dense offsets are sliced to the node's length
//! (which panics the same way), and offsets, sizes, views, dictionary keys
//! and run ends are viewed as typed slices (which panics when a buffer's
//! length is not a multiple of the type's width). A hostile file reaches
//! all of them, so they are checked here first, against the bytes each
//! buffer holds once decompressed.

use arrow::datatypes::{DataType, Field, UnionMode};
use arrow::ipc::MetadataVersion;

/// One field node: its length and null count, as the message gives them
/// (already checked non-negative).
#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    /// Rows (or elements) of the node.
    pub length: u64,
    /// Nulls among them.
    pub nulls: u64,
}

/// Walks `fields` over `nodes` and `holds` (the bytes each buffer holds
/// once decompressed), taking variadic buffer counts from `variadic` in
/// order. Running out of nodes, buffers or counts is left to arrow-ipc,
/// which reports it as an error; a size that would make it panic is an
/// error here, naming the node.
pub(super) fn check_layout<'a>(
    fields: impl IntoIterator<Item = &'a Field>,
    version: MetadataVersion,
    nodes: &[Node],
    holds: &[u64],
    variadic: &[u64],
) -> Result<(), String> {
    let mut walk = Walk {
        version,
        nodes,
        holds,
        variadic,
        node: 0,
        buffer: 0,
        counts: 0,
    };
    for f in fields {
        if walk.field(f.data_type())?.is_none() {
            break;
        }
    }
    Ok(())
}

/// The decoder's position in the message.
struct Walk<'m> {
    version: MetadataVersion,
    nodes: &'m [Node],
    holds: &'m [u64],
    variadic: &'m [u64],
    node: usize,
    buffer: usize,
    counts: usize,
}

impl Walk<'_> {
    /// The next node, with its index.
    fn node(&mut self) -> Option<(usize, Node)> {
        let i = self.node;
        self.node += 1;
        self.nodes.get(i).map(|&n| (i, n))
    }

    /// The bytes of the next buffer.
    fn buffer(&mut self) -> Option<u64> {
        let i = self.buffer;
        self.buffer += 1;
        self.holds.get(i).copied()
    }

    /// The next buffer, which arrow-data views as `width`-byte values:
    /// its length must be a multiple of `width`.
    fn typed(&mut self, i: usize, width: u64, what: &str) -> Result<Option<()>, String> {
        match self.buffer() {
            None => Ok(None),
            Some(len) if len % width != 0 => Err(format!(
                "field node {i}: {len} bytes of {what}, not a multiple of {width}"
            )),
            Some(_) => Ok(Some(())),
        }
    }

    /// Skips `n` buffers.
    fn skip(&mut self, n: u64) -> Option<()> {
        for _ in 0..n {
            self.buffer()?;
        }
        Some(())
    }

    /// Walks one field of type `t`: `Ok(None)` once the message runs out.
    fn field(&mut self, t: &DataType) -> Result<Option<()>, String> {
        self.field_typed(t, false)
    }

    /// [`field`](Self::field); with `typed`, a primitive's values must
    /// fill whole values (a run-end array's run ends are read as a typed
    /// slice).
    fn field_typed(&mut self, t: &DataType, typed: bool) -> Result<Option<()>, String> {
        use DataType::*;
        let Some((i, node)) = self.node() else {
            return Ok(None);
        };
        // Every type but these starts with its validity buffer, read when
        // the node has nulls.
        if !matches!(t, Null | Union(..) | RunEndEncoded(..)) {
            let Some(validity) = self.buffer() else {
                return Ok(None);
            };
            if node.nulls > 0 && validity.saturating_mul(8) < node.length {
                return Err(format!(
                    "field node {i}: {} rows ({t}) with {} nulls have a \
                     {validity}-byte validity buffer",
                    node.length, node.nulls
                ));
            }
        }
        // The width of offsets (and list view sizes).
        let offsets = if matches!(t, LargeUtf8 | LargeBinary | LargeList(_) | LargeListView(_)) {
            8
        } else {
            4
        };
        let walked = match t {
            Null => Some(()),
            Utf8 | Binary | LargeUtf8 | LargeBinary => self
                .typed(i, offsets, "offsets")?
                .and_then(|()| self.skip(1)),
            BinaryView | Utf8View => {
                let Some(&c) = self.variadic.get(self.counts) else {
                    return Ok(None);
                };
                self.counts += 1;
                self.typed(i, 16, "views")?.and_then(|()| self.skip(c))
            }
            List(f) | LargeList(f) | Map(f, _) => {
                if self.typed(i, offsets, "offsets")?.is_none() {
                    return Ok(None);
                }
                let child = f.data_type().clone();
                self.nested(0, &[child])?
            }
            ListView(f) | LargeListView(f) => {
                if self.typed(i, offsets, "offsets")?.is_none()
                    || self.typed(i, offsets, "sizes")?.is_none()
                {
                    return Ok(None);
                }
                let child = f.data_type().clone();
                self.nested(0, &[child])?
            }
            FixedSizeList(f, _) => {
                let child = f.data_type().clone();
                self.nested(0, &[child])?
            }
            Struct(fields) => {
                let children: Vec<DataType> =
                    fields.iter().map(|f| f.data_type().clone()).collect();
                self.nested(0, &children)?
            }
            RunEndEncoded(ends, values) => {
                if self.field_typed(ends.data_type(), true)?.is_none() {
                    return Ok(None);
                }
                self.nested(0, &[values.data_type().clone()])?
            }
            // The dictionary's values come from its own batch; its keys are
            // read as a typed slice.
            Dictionary(key, _) => match key.primitive_width() {
                Some(w) => self.typed(i, w as u64, "dictionary keys")?,
                None => self.skip(1),
            },
            Union(fields, mode) => {
                if self.version < MetadataVersion::V5 && self.buffer().is_none() {
                    return Ok(None);
                }
                let Some(ids) = self.buffer() else {
                    return Ok(None);
                };
                if ids < node.length {
                    return Err(format!(
                        "field node {i}: a union of {} rows has {ids} bytes of type ids",
                        node.length
                    ));
                }
                if *mode == UnionMode::Dense {
                    let Some(offsets) = self.buffer() else {
                        return Ok(None);
                    };
                    if offsets / 4 < node.length || offsets % 4 != 0 {
                        return Err(format!(
                            "field node {i}: a dense union of {} rows has {offsets} \
                             bytes of offsets",
                            node.length
                        ));
                    }
                }
                let children: Vec<DataType> =
                    fields.iter().map(|(_, f)| f.data_type().clone()).collect();
                self.nested(0, &children)?
            }
            _ => match t.primitive_width() {
                Some(w) if typed => self.typed(i, w as u64, "values")?,
                _ => self.skip(1),
            },
        };
        Ok(walked)
    }

    /// Skips `buffers` of a nested type, then walks its children.
    fn nested(&mut self, buffers: u64, children: &[DataType]) -> Result<Option<()>, String> {
        if self.skip(buffers).is_none() {
            return Ok(None);
        }
        for c in children {
            if self.field(c)?.is_none() {
                return Ok(None);
            }
        }
        Ok(Some(()))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::datatypes::{Fields, UnionFields};

    use super::*;

    fn node(length: u64, nulls: u64) -> Node {
        Node { length, nulls }
    }

    fn strukt() -> Field {
        Field::new(
            "s",
            DataType::Struct(Fields::from(vec![
                Field::new("a", DataType::Int32, true),
                Field::new("b", DataType::Utf8, true),
            ])),
            true,
        )
    }

    #[test]
    fn a_struct_validity_shorter_than_its_rows_is_an_error() {
        let f = strukt();
        let nodes = [node(100, 3), node(100, 0), node(100, 0)];
        // struct validity, a: validity + values, b: validity + offsets + data
        let fine = [13, 0, 400, 0, 404, 10];
        check_layout([&f], MetadataVersion::V5, &nodes, &fine, &[]).unwrap();
        let short = [12, 0, 400, 0, 404, 10];
        let e = check_layout([&f], MetadataVersion::V5, &nodes, &short, &[]).unwrap_err();
        assert!(
            e.contains("field node 0") && e.contains("12-byte validity"),
            "{e}"
        );
        // Without nulls the validity buffer is not read.
        let nodes = [node(100, 0), node(100, 0), node(100, 0)];
        check_layout([&f], MetadataVersion::V5, &nodes, &short, &[]).unwrap();
    }

    #[test]
    fn any_validity_shorter_than_its_rows_is_an_error() {
        // A fuzzed container: an Int32 node of 6e18 rows with nulls and a
        // 13-byte validity buffer made arrow-data panic.
        for t in [DataType::Int32, DataType::Utf8, DataType::Boolean] {
            let f = Field::new("v", t.clone(), true);
            let buffers = if t == DataType::Utf8 { 3 } else { 2 };
            let holds: Vec<u64> = std::iter::once(13).chain([4000; 2]).take(buffers).collect();
            let fine = [node(100, 3)];
            check_layout([&f], MetadataVersion::V5, &fine, &holds, &[]).unwrap();
            for length in [105, 6_124_895_493_223_874_660] {
                let e = check_layout([&f], MetadataVersion::V5, &[node(length, 3)], &holds, &[])
                    .unwrap_err();
                assert!(
                    e.contains("field node 0") && e.contains("13-byte validity"),
                    "{e}"
                );
            }
            // Without nulls arrow-ipc does not read it.
            check_layout([&f], MetadataVersion::V5, &[node(105, 0)], &holds, &[]).unwrap();
        }
        // A list's child is checked too, after the list's own buffers.
        let l = Field::new_list("l", Field::new_list_field(DataType::Int64, true), true);
        let nodes = [node(10, 0), node(100, 5)];
        let holds = [0, 44, 12, 800];
        let e = check_layout([&l], MetadataVersion::V5, &nodes, &holds, &[]).unwrap_err();
        assert!(e.contains("field node 1"), "{e}");
    }

    #[test]
    fn typed_buffers_must_hold_whole_values() {
        // A fuzzed container: LargeBinary offsets of 13 bytes made
        // arrow-data's typed view of them panic.
        let cases = [
            (
                DataType::LargeBinary,
                vec![0, 13, 5],
                "offsets, not a multiple of 8",
            ),
            (
                DataType::Utf8,
                vec![0, 10, 5],
                "offsets, not a multiple of 4",
            ),
            (
                DataType::Utf8View,
                vec![0, 40],
                "views, not a multiple of 16",
            ),
            (
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                vec![0, 6],
                "dictionary keys, not a multiple of 4",
            ),
        ];
        for (t, holds, message) in cases {
            let f = Field::new("v", t.clone(), true);
            let nodes = [node(1, 0)];
            let variadic = [0];
            let e = check_layout([&f], MetadataVersion::V5, &nodes, &holds, &variadic).unwrap_err();
            assert!(e.contains(message), "{t}: {e}");
            // Whole values pass.
            let mut fine = holds.clone();
            fine[1] = 48;
            check_layout([&f], MetadataVersion::V5, &nodes, &fine, &variadic).unwrap();
        }
        // Run ends are typed; a run-end array's values are not.
        let ree = Field::new(
            "r",
            DataType::RunEndEncoded(
                Arc::new(Field::new("run_ends", DataType::Int32, false)),
                Arc::new(Field::new("values", DataType::Int64, true)),
            ),
            true,
        );
        let nodes = [node(4, 0), node(2, 0), node(2, 0)];
        let e = check_layout([&ree], MetadataVersion::V5, &nodes, &[0, 7, 0, 16], &[]).unwrap_err();
        assert!(e.contains("field node 1") && e.contains("values"), "{e}");
        check_layout([&ree], MetadataVersion::V5, &nodes, &[0, 8, 0, 16], &[]).unwrap();
    }

    #[test]
    fn the_struct_is_found_after_other_fields() {
        let a = Field::new("a", DataType::Utf8View, true);
        let l = Field::new_list("l", Field::new_list_field(DataType::Int64, true), true);
        let s = strukt();
        let nodes = [
            node(5, 0),
            node(5, 0),
            node(9, 0),
            node(1 << 60, 1),
            node(0, 0),
            node(0, 0),
        ];
        // views: validity, views, 2 variadic; list: validity, offsets;
        // item: validity, values; then the struct's validity.
        let holds = [0, 80, 7, 7, 0, 24, 0, 72, 1, 0, 0, 0, 0, 0];
        let e = check_layout([&a, &l, &s], MetadataVersion::V5, &nodes, &holds, &[2]).unwrap_err();
        assert!(e.contains("field node 3"), "{e}");
    }

    #[test]
    fn union_type_ids_and_offsets_must_cover_the_rows() {
        let fields = UnionFields::try_new(
            [0, 1],
            [
                Field::new("i", DataType::Int32, true),
                Field::new("f", DataType::Float64, true),
            ],
        )
        .unwrap();
        let dense = Field::new(
            "u",
            DataType::Union(fields.clone(), UnionMode::Dense),
            false,
        );
        let nodes = [node(10, 0), node(4, 0), node(6, 0)];
        let ok = [10, 40, 0, 16, 0, 48];
        check_layout([&dense], MetadataVersion::V5, &nodes, &ok, &[]).unwrap();
        let e = check_layout([&dense], MetadataVersion::V5, &nodes, &[9, 40], &[]).unwrap_err();
        assert!(e.contains("type ids"), "{e}");
        let e = check_layout([&dense], MetadataVersion::V5, &nodes, &[10, 39], &[]).unwrap_err();
        assert!(e.contains("offsets"), "{e}");
        // Before V5 a union has a validity buffer first.
        let sparse = Field::new("u", DataType::Union(fields, UnionMode::Sparse), false);
        let e = check_layout([&sparse], MetadataVersion::V4, &nodes, &[100, 9], &[]).unwrap_err();
        assert!(e.contains("type ids"), "{e}");
    }

    #[test]
    fn a_short_message_is_left_to_arrow_ipc() {
        let f = Arc::new(strukt());
        check_layout([f.as_ref()], MetadataVersion::V5, &[], &[], &[]).unwrap();
        check_layout([f.as_ref()], MetadataVersion::V5, &[node(8, 1)], &[], &[]).unwrap();
    }
}
