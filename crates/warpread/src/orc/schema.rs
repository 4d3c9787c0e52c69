//! The ORC type tree (the footer's flattened `types`, column ids in
//! pre-order) and its Arrow schema, mapped as pyarrow maps it.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{
    DataType, Field, Fields, Schema, SchemaRef, TimeUnit, UnionFields, UnionMode,
};

use super::proto;
use crate::error::{Error, Location, Result};

/// Deepest type nesting accepted; deeper trees come from hostile files and
/// would exhaust the stack of recursive readers.
const MAX_DEPTH: usize = 100;

/// An ORC type kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// boolean
    Boolean,
    /// tinyint
    Byte,
    /// smallint
    Short,
    /// int
    Int,
    /// bigint
    Long,
    /// float
    Float,
    /// double
    Double,
    /// string
    String,
    /// binary
    Binary,
    /// timestamp (wall clock, writer time zone)
    Timestamp,
    /// array
    List,
    /// map
    Map,
    /// struct
    Struct,
    /// uniontype
    Union,
    /// decimal(precision, scale)
    Decimal,
    /// date
    Date,
    /// varchar(n)
    Varchar,
    /// char(n)
    Char,
    /// timestamp with local time zone (an instant)
    TimestampInstant,
}

impl Kind {
    fn from_proto(v: i32) -> Option<Self> {
        use Kind::*;
        Some(match v {
            0 => Boolean,
            1 => Byte,
            2 => Short,
            3 => Int,
            4 => Long,
            5 => Float,
            6 => Double,
            7 => String,
            8 => Binary,
            9 => Timestamp,
            10 => List,
            11 => Map,
            12 => Struct,
            13 => Union,
            14 => Decimal,
            15 => Date,
            16 => Varchar,
            17 => Char,
            18 => TimestampInstant,
            _ => return None,
        })
    }

    /// The name ORC schemas use.
    pub fn name(self) -> &'static str {
        use Kind::*;
        match self {
            Boolean => "boolean",
            Byte => "tinyint",
            Short => "smallint",
            Int => "int",
            Long => "bigint",
            Float => "float",
            Double => "double",
            String => "string",
            Binary => "binary",
            Timestamp => "timestamp",
            List => "array",
            Map => "map",
            Struct => "struct",
            Union => "uniontype",
            Decimal => "decimal",
            Date => "date",
            Varchar => "varchar",
            Char => "char",
            TimestampInstant => "timestamp with local time zone",
        }
    }
}

/// One node of the type tree: a column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Column id (index into the footer's types; 0 is the root).
    pub id: u32,
    /// Field name (the parent's field name; `item`, `key`, `value` or the
    /// tag number under lists, maps and unions).
    pub name: String,
    /// Type kind.
    pub kind: Kind,
    /// Children in declaration order.
    pub children: Vec<Column>,
    /// Decimal precision (0 for Hive 0.11's decimals without one).
    pub precision: u32,
    /// Decimal scale.
    pub scale: u32,
    /// Largest id in this subtree (columns `id..=last_id` belong to it).
    pub last_id: u32,
    /// The type's attributes (e.g. Iceberg's field ids), which pyarrow
    /// copies into the Arrow field's metadata at every nesting level.
    pub attributes: HashMap<String, String>,
}

impl Column {
    /// ORC's type string, e.g. `struct<a:int,b:array<string>>`.
    pub fn type_string(&self) -> String {
        match self.kind {
            Kind::Struct => format!(
                "struct<{}>",
                self.children
                    .iter()
                    .map(|c| format!("{}:{}", c.name, c.type_string()))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Kind::List | Kind::Map | Kind::Union => format!(
                "{}<{}>",
                self.kind.name(),
                self.children
                    .iter()
                    .map(Column::type_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Kind::Decimal => format!("decimal({},{})", self.precision, self.scale),
            k => k.name().to_string(),
        }
    }

    /// The Arrow type pyarrow reads this column as.
    pub fn arrow_type(&self) -> DataType {
        match self.kind {
            Kind::Boolean => DataType::Boolean,
            Kind::Byte => DataType::Int8,
            Kind::Short => DataType::Int16,
            Kind::Int => DataType::Int32,
            Kind::Long => DataType::Int64,
            Kind::Float => DataType::Float32,
            Kind::Double => DataType::Float64,
            Kind::String | Kind::Varchar | Kind::Char => DataType::Utf8,
            Kind::Binary => DataType::Binary,
            Kind::Timestamp => DataType::Timestamp(TimeUnit::Nanosecond, None),
            Kind::TimestampInstant => DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
            Kind::Date => DataType::Date32,
            // pyarrow's choice for Hive 0.11 decimals without a precision.
            Kind::Decimal if self.precision == 0 => {
                DataType::Decimal128(38, super::decimal::HIVE11_SCALE as i8)
            }
            Kind::Decimal => DataType::Decimal128(self.precision as u8, self.scale as i8),
            Kind::Struct => DataType::Struct(self.arrow_fields()),
            Kind::List => DataType::List(Arc::new(self.children[0].arrow_field())),
            Kind::Map => {
                // The entries struct is Arrow's own: it has no ORC type and
                // so no attributes; key and value do.
                let key = self.children[0].arrow_field().with_nullable(false);
                let value = self.children[1].arrow_field();
                let entries = Field::new(
                    "entries",
                    DataType::Struct(Fields::from(vec![key, value])),
                    false,
                );
                DataType::Map(Arc::new(entries), false)
            }
            Kind::Union => {
                let fields = UnionFields::try_new(
                    0..self.children.len() as i8,
                    self.children.iter().map(Column::arrow_field),
                )
                .expect("union tags are distinct and at most 256 children were checked");
                DataType::Union(fields, UnionMode::Sparse)
            }
        }
    }

    /// This column as a nullable Arrow field, its attributes as metadata.
    pub fn arrow_field(&self) -> Field {
        Field::new(&self.name, self.arrow_type(), true).with_metadata(self.attributes.clone())
    }

    fn arrow_fields(&self) -> Fields {
        self.children.iter().map(Column::arrow_field).collect()
    }

    /// The Arrow schema of a root struct's children.
    pub fn arrow_schema(&self) -> SchemaRef {
        Arc::new(Schema::new(self.arrow_fields()))
    }

    /// Every column of the subtree, pre-order.
    pub fn walk(&self) -> Vec<&Column> {
        let mut out = vec![self];
        for c in &self.children {
            out.extend(c.walk());
        }
        out
    }
}

/// Builds the type tree from the footer's types, checking that ids are in
/// pre-order, every type is referenced once and kinds have the right number
/// of children. A root that is not a struct (valid ORC, rare) becomes a
/// struct of one column named `_col0`, which is how ORC readers present it.
pub fn build(types: &[proto::Type], at: &Location) -> Result<Column> {
    if types.is_empty() {
        return Err(Error::orc(at, "the footer lists no types"));
    }
    let mut next = 1u32;
    let root = build_node(types, 0, String::new(), &mut next, 0, at)?;
    if next as usize != types.len() {
        return Err(Error::orc(
            at,
            format!(
                "{} types listed but only {next} reachable from the root",
                types.len()
            ),
        ));
    }
    if root.kind == Kind::Struct {
        return Ok(root);
    }
    Ok(Column {
        id: u32::MAX,
        name: String::new(),
        kind: Kind::Struct,
        last_id: root.last_id,
        children: vec![Column {
            name: "_col0".into(),
            ..root
        }],
        precision: 0,
        scale: 0,
        attributes: HashMap::new(),
    })
}

fn build_node(
    types: &[proto::Type],
    id: u32,
    name: String,
    next: &mut u32,
    depth: usize,
    at: &Location,
) -> Result<Column> {
    let bad = |m: String| Error::orc(at, format!("type {id}: {m}"));
    if depth > MAX_DEPTH {
        return Err(bad(format!("nesting deeper than {MAX_DEPTH}")));
    }
    let t = &types[id as usize];
    let kind = Kind::from_proto(t.kind.unwrap_or(-1))
        .ok_or_else(|| bad(format!("unknown type kind {:?}", t.kind)))?;
    let arity = match kind {
        Kind::List => Some(1),
        Kind::Map => Some(2),
        Kind::Struct => None,
        Kind::Union => {
            if t.subtypes.is_empty() || t.subtypes.len() > 127 {
                return Err(bad(format!("a union of {} variants", t.subtypes.len())));
            }
            None
        }
        _ => Some(0),
    };
    if let Some(n) = arity
        && t.subtypes.len() != n
    {
        return Err(bad(format!(
            "{} has {} children, not {n}",
            kind.name(),
            t.subtypes.len()
        )));
    }
    if kind == Kind::Struct && t.field_names.len() != t.subtypes.len() {
        return Err(bad(format!(
            "struct has {} children but {} field names",
            t.subtypes.len(),
            t.field_names.len()
        )));
    }
    let (mut precision, mut scale) = (0u32, 0u32);
    if kind == Kind::Decimal {
        precision = t.precision.unwrap_or(0);
        scale = t.scale.unwrap_or(0);
        // Precision 0 (Hive 0.11's unbounded decimals) stays 0 here: values
        // are read at scale 6 whatever the declared scale, and Arrow sees
        // (38, 6) (`decimal::decode_hive11`).
        if precision > 38 || (precision > 0 && scale > precision) || scale > 38 {
            return Err(bad(format!("decimal({precision},{scale}) is out of range")));
        }
    }
    let mut children = Vec::with_capacity(t.subtypes.len());
    for (i, &sub) in t.subtypes.iter().enumerate() {
        if sub != *next || sub as usize >= types.len() {
            return Err(bad(format!(
                "child type id {sub} breaks pre-order (expected {next} of {})",
                types.len()
            )));
        }
        *next += 1;
        let child_name = match kind {
            Kind::Struct => t.field_names[i].clone(),
            Kind::List => "item".into(),
            Kind::Map if i == 0 => "key".into(),
            Kind::Map => "value".into(),
            _ => format!("_union_{i}"),
        };
        children.push(build_node(types, sub, child_name, next, depth + 1, at)?);
    }
    // Lossy UTF-8 because Arrow metadata is strings; a repeated key keeps
    // its last value, as in ORC C++'s attribute map.
    let text = |b: &Option<Vec<u8>>| {
        String::from_utf8_lossy(b.as_deref().unwrap_or_default()).into_owned()
    };
    let attributes = t
        .attributes
        .iter()
        .map(|a| (text(&a.key), text(&a.value)))
        .collect();
    Ok(Column {
        id,
        name,
        kind,
        last_id: *next - 1,
        children,
        precision,
        scale,
        attributes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(kind: i32, subtypes: &[u32], names: &[&str]) -> proto::Type {
        proto::Type {
            kind: Some(kind),
            subtypes: subtypes.to_vec(),
            field_names: names.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn builds_nested_tree_and_schema() {
        // struct<a:int,b:array<string>,m:map<string,double>>
        let types = vec![
            ty(12, &[1, 2, 4], &["a", "b", "m"]),
            ty(3, &[], &[]),
            ty(10, &[3], &[]),
            ty(7, &[], &[]),
            ty(11, &[5, 6], &[]),
            ty(7, &[], &[]),
            ty(6, &[], &[]),
        ];
        let root = build(&types, &Location::default()).unwrap();
        assert_eq!(
            root.type_string(),
            "struct<a:int,b:array<string>,m:map<string,double>>"
        );
        assert_eq!(root.children[1].last_id, 3);
        let schema = root.arrow_schema();
        assert_eq!(schema.fields().len(), 3);
        assert!(matches!(schema.field(2).data_type(), DataType::Map(..)));
    }

    #[test]
    fn rejects_hostile_trees() {
        let at = Location::default();
        // A cycle: the root names itself.
        assert!(build(&[ty(12, &[0], &["x"])], &at).is_err());
        // A child id out of range.
        assert!(build(&[ty(12, &[5], &["x"])], &at).is_err());
        // A list without an element type.
        assert!(build(&[ty(12, &[1], &["x"]), ty(10, &[], &[])], &at).is_err());
        // Unreferenced types.
        assert!(build(&[ty(12, &[], &[]), ty(3, &[], &[])], &at).is_err());
        // Unknown kind.
        assert!(build(&[ty(12, &[1], &["x"]), ty(99, &[], &[])], &at).is_err());
    }

    #[test]
    fn attributes_become_field_metadata_at_every_level() {
        let attr = |id: &str| proto::StringPair {
            key: Some(b"iceberg.id".to_vec()),
            value: Some(id.as_bytes().to_vec()),
        };
        // struct<l:array<int>,m:map<string,int>,u:uniontype<int>>
        let mut types = vec![
            ty(12, &[1, 3, 6], &["l", "m", "u"]),
            ty(10, &[2], &[]),
            ty(3, &[], &[]),
            ty(11, &[4, 5], &[]),
            ty(7, &[], &[]),
            ty(3, &[], &[]),
            ty(13, &[7], &[]),
            ty(3, &[], &[]),
        ];
        for (i, t) in types.iter_mut().enumerate() {
            t.attributes.push(attr(&i.to_string()));
        }
        let schema = build(&types, &Location::default()).unwrap().arrow_schema();
        let id = |f: &Field| f.metadata()["iceberg.id"].clone();
        assert_eq!(id(schema.field(0)), "1");
        let DataType::List(item) = schema.field(0).data_type() else {
            panic!("a list")
        };
        assert_eq!(id(item), "2");
        let DataType::Map(entries, _) = schema.field(1).data_type() else {
            panic!("a map")
        };
        assert!(entries.metadata().is_empty());
        let DataType::Struct(kv) = entries.data_type() else {
            panic!("entries are a struct")
        };
        assert_eq!((id(&kv[0]), kv[0].is_nullable()), ("4".into(), false));
        assert_eq!(id(&kv[1]), "5");
        let DataType::Union(variants, _) = schema.field(2).data_type() else {
            panic!("a union")
        };
        assert_eq!(id(variants.iter().next().unwrap().1), "7");
    }

    #[test]
    fn non_struct_root_becomes_one_column() {
        let root = build(&[ty(4, &[], &[])], &Location::default()).unwrap();
        assert_eq!(root.children.len(), 1);
        assert_eq!(root.children[0].name, "_col0");
        assert_eq!(root.children[0].id, 0);
    }
}
