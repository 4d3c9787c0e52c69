//! The Arrow schema (exactly the parquet crate's, embedded `ARROW:schema`
//! hints included) and, beside it, the tree that says how each Arrow field
//! is rebuilt from definition and repetition levels. The tree follows the
//! parquet crate's conversion rules (LIST three-level, two-level and
//! one-tuple forms, unannotated repeated fields as non-null lists, MAP and
//! MAP_KEY_VALUE), so the shapes agree with the schema it returns.

use arrow::datatypes::{DataType, FieldRef};
use parquet::basic::{ConvertedType, Repetition};
use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};

/// How an Arrow field is built from its leaves' levels.
#[derive(Debug, Clone)]
pub enum Shape {
    /// A leaf column (index into the file's leaf columns).
    Leaf(usize),
    /// A struct of the children.
    Struct(Vec<Node>),
    /// A list (or map entries) of the child.
    List(Box<Node>),
}

/// One Arrow field and its levels.
#[derive(Debug, Clone)]
pub struct Node {
    /// The Arrow data type to build.
    pub data_type: DataType,
    /// Definition level at which the node has a value (lists and maps: at
    /// least one element).
    pub def: i16,
    /// Repetition level of the node's elements (lists) or of the node.
    pub rep: i16,
    /// Whether the node itself may be null.
    pub nullable: bool,
    /// The node's structure.
    pub shape: Shape,
}

impl Node {
    /// Leaf columns under this node, in order.
    pub fn leaves(&self, out: &mut Vec<usize>) {
        match &self.shape {
            Shape::Leaf(c) => out.push(*c),
            Shape::Struct(ch) => ch.iter().for_each(|c| c.leaves(out)),
            Shape::List(c) => c.leaves(out),
        }
    }

    /// The first leaf, whose levels give this node's own structure.
    pub fn first_leaf(&self) -> usize {
        match &self.shape {
            Shape::Leaf(c) => *c,
            Shape::Struct(ch) => ch[0].first_leaf(),
            Shape::List(c) => c.first_leaf(),
        }
    }
}

#[derive(Clone, Copy)]
struct Ctx {
    def: i16,
    rep: i16,
}

fn rep_of(t: &Type) -> Repetition {
    let info = t.get_basic_info();
    if info.has_repetition() {
        info.repetition()
    } else {
        Repetition::REQUIRED
    }
}

/// Groups without any primitive below them have no Arrow field (the
/// parquet crate drops them).
fn has_leaves(t: &Type) -> bool {
    t.is_primitive() || t.get_fields().iter().any(|c| has_leaves(c))
}

fn levels(ctx: Ctx, r: Repetition) -> (i16, i16, bool) {
    match r {
        Repetition::OPTIONAL => (ctx.def + 1, ctx.rep, true),
        Repetition::REQUIRED => (ctx.def, ctx.rep, false),
        Repetition::REPEATED => (ctx.def + 1, ctx.rep + 1, false),
    }
}

/// Builds level trees for the top-level fields, given the Arrow fields the
/// parquet crate derived for them.
pub struct Builder<'a> {
    descr: &'a SchemaDescriptor,
    next_leaf: usize,
}

type R<T> = std::result::Result<T, String>;

impl<'a> Builder<'a> {
    /// A builder over a file's schema.
    pub fn new(descr: &'a SchemaDescriptor) -> Self {
        Self {
            descr,
            next_leaf: 0,
        }
    }

    /// One tree per top-level field, in file order.
    pub fn build(mut self, fields: &[FieldRef]) -> R<Vec<Node>> {
        let root = self.descr.root_schema();
        let top: Vec<&TypePtr> = root.get_fields().iter().filter(|t| has_leaves(t)).collect();
        if top.len() != fields.len() {
            return Err(format!(
                "{} top-level Parquet fields but {} Arrow fields",
                top.len(),
                fields.len()
            ));
        }
        let ctx = Ctx { def: 0, rep: 0 };
        top.iter()
            .zip(fields)
            .map(|(t, f)| self.dispatch(t, ctx, f.data_type()))
            .collect()
    }

    fn dispatch(&mut self, t: &TypePtr, ctx: Ctx, dt: &DataType) -> R<Node> {
        if t.is_primitive() {
            return self.primitive(t, ctx, dt);
        }
        match t.get_basic_info().converted_type() {
            ConvertedType::LIST => self.list(t, ctx, dt),
            ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE => self.map(t, ctx, dt),
            _ => self.group(t, ctx, dt),
        }
    }

    /// The element type of a list-like Arrow type.
    fn element(dt: &DataType) -> R<&DataType> {
        match dt {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                Ok(f.data_type())
            }
            d => Err(format!("expected an Arrow list, found {d}")),
        }
    }

    /// A repeated node that is a list of itself: the list node carries the
    /// element's levels and is never null.
    fn wrap_list(dt: &DataType, child: Node) -> Node {
        Node {
            data_type: dt.clone(),
            def: child.def,
            rep: child.rep,
            nullable: false,
            shape: Shape::List(Box::new(child)),
        }
    }

    fn primitive(&mut self, t: &TypePtr, ctx: Ctx, dt: &DataType) -> R<Node> {
        let col = self.next_leaf;
        self.next_leaf += 1;
        let r = rep_of(t);
        let (def, rep, nullable) = levels(ctx, r);
        if r == Repetition::REPEATED {
            // Only a list-typed Arrow field can hold a repeated primitive.
            let el = Self::element(dt)?;
            let leaf = Node {
                data_type: el.clone(),
                def,
                rep,
                nullable: false,
                shape: Shape::Leaf(col),
            };
            return Ok(Self::wrap_list(dt, leaf));
        }
        Ok(Node {
            data_type: dt.clone(),
            def,
            rep,
            nullable,
            shape: Shape::Leaf(col),
        })
    }

    fn group(&mut self, t: &TypePtr, ctx: Ctx, dt: &DataType) -> R<Node> {
        let r = rep_of(t);
        let (def, rep, nullable) = levels(ctx, r);
        let sdt = if r == Repetition::REPEATED {
            Self::element(dt)?
        } else {
            dt
        };
        let DataType::Struct(fields) = sdt else {
            return Err(format!(
                "expected an Arrow struct for {}, found {sdt}",
                t.name()
            ));
        };
        let children: Vec<&TypePtr> = t.get_fields().iter().filter(|c| has_leaves(c)).collect();
        if children.len() != fields.len() {
            return Err(format!("struct {} field count differs", t.name()));
        }
        let cctx = Ctx { def, rep };
        let kids = children
            .iter()
            .zip(fields.iter())
            .map(|(c, f)| self.dispatch(c, cctx, f.data_type()))
            .collect::<R<Vec<_>>>()?;
        if kids.is_empty() {
            return Err(format!("struct {} without fields", t.name()));
        }
        let node = Node {
            data_type: sdt.clone(),
            def,
            rep,
            nullable,
            shape: Shape::Struct(kids),
        };
        Ok(if r == Repetition::REPEATED {
            Self::wrap_list(dt, node)
        } else {
            node
        })
    }

    fn list(&mut self, t: &TypePtr, ctx: Ctx, dt: &DataType) -> R<Node> {
        let fields = t.get_fields();
        if fields.len() != 1 {
            return Err(format!("list {} must have one child", t.name()));
        }
        let repeated = &fields[0];
        if rep_of(repeated) != Repetition::REPEATED {
            return Err(format!("list {} child must be repeated", t.name()));
        }
        let (def, nullable) = match rep_of(t) {
            Repetition::REQUIRED => (ctx.def, false),
            Repetition::OPTIONAL => (ctx.def + 1, true),
            Repetition::REPEATED => return Err(format!("list {} is repeated", t.name())),
        };
        let el_dt = Self::element(dt)?;
        let inner = Ctx { def, rep: ctx.rep };
        let two_level = repeated.is_primitive() || {
            let items = repeated.get_fields();
            items.len() != 1
                || (repeated.get_basic_info().converted_type() != ConvertedType::LIST
                    && !(items.len() == 1 && rep_of(&items[0]) == Repetition::REPEATED)
                    && (repeated.name() == "array"
                        || repeated.name() == format!("{}_tuple", t.name())))
        };
        if two_level {
            // The repeated field is the element; its node is a non-null
            // list of it, which becomes nullable like the LIST group.
            let mut node = if repeated.is_primitive() {
                self.primitive(repeated, inner, dt)?
            } else {
                self.group(repeated, inner, dt)?
            };
            node.nullable = nullable;
            node.data_type = dt.clone();
            return Ok(node);
        }
        let item = &repeated.get_fields()[0];
        let ectx = Ctx {
            def: def + 1,
            rep: ctx.rep + 1,
        };
        let child = self.dispatch(item, ectx, el_dt)?;
        Ok(Node {
            data_type: dt.clone(),
            def: def + 1,
            rep: ctx.rep + 1,
            nullable,
            shape: Shape::List(Box::new(child)),
        })
    }

    fn map(&mut self, t: &TypePtr, ctx: Ctx, dt: &DataType) -> R<Node> {
        let rep = ctx.rep + 1;
        let (def, nullable) = match rep_of(t) {
            Repetition::REQUIRED => (ctx.def + 1, false),
            Repetition::OPTIONAL => (ctx.def + 2, true),
            Repetition::REPEATED => return Err(format!("map {} is repeated", t.name())),
        };
        let fields = t.get_fields();
        if fields.len() != 1 || rep_of(&fields[0]) != Repetition::REPEATED {
            return Err(format!(
                "map {} needs one repeated key_value child",
                t.name()
            ));
        }
        let kv = &fields[0];
        if kv.is_primitive() {
            return Err(format!("map {} key_value is not a group", t.name()));
        }
        if kv.get_fields().len() == 1 {
            return self.list(t, ctx, dt);
        }
        if kv.get_fields().len() != 2 {
            return Err(format!("map {} key_value must have two children", t.name()));
        }
        let DataType::Map(entries, _) = dt else {
            return Err(format!(
                "expected an Arrow map for {}, found {dt}",
                t.name()
            ));
        };
        let DataType::Struct(kvf) = entries.data_type() else {
            return Err(format!("map {} entries are not a struct", t.name()));
        };
        let kctx = Ctx { def, rep };
        let key = self.dispatch(&kv.get_fields()[0], kctx, kvf[0].data_type())?;
        let value = self.dispatch(&kv.get_fields()[1], kctx, kvf[1].data_type())?;
        let entries_node = Node {
            data_type: entries.data_type().clone(),
            def,
            rep,
            nullable: false,
            shape: Shape::Struct(vec![key, value]),
        };
        Ok(Node {
            data_type: dt.clone(),
            def,
            rep,
            nullable,
            shape: Shape::List(Box::new(entries_node)),
        })
    }
}
