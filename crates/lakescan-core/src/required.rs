//! [`RequiredSubfields`]: which parts of a column's value a scan needs (subfield pruning
//! and extractions).
//!
//! A query that uses `s['a']` of a wide struct, `map_keys(m)` or `cardinality(a)` needs a
//! few of the column's Parquet leaves, not all of them. The needs are *logical paths* below
//! the column ([`PathStep`]s: struct member, list element, map key, map value, size only);
//! the Parquet reader resolves them to leaves of each file (`parquet::leaves`), decodes
//! only those, and rebuilds the column's full type with the unread members NULL.
//!
//! [`required_by`] derives the paths from an expression over the table schema:
//!
//! | expression                         | path(s) of column `c`             |
//! |------------------------------------|-----------------------------------|
//! | `get_field(c, 'a', 'b')` on structs | `a.b`                             |
//! | `get_field(m, 'k')` on a map        | `<key>` and `<value>`             |
//! | `array_element(c, 3)`               | `<element>`                       |
//! | `map_keys(m)` / `map_values(m)`     | `<key>` / `<value>`               |
//! | `cardinality(c)`, `array_length(c)` | `<size>` (any one leaf)           |
//! | anything else mentioning `c`        | the whole column                  |
//!
//! The chains compose (`get_field(array_element(a, 3), 'x')` → `<element>.x`).

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields, Schema};
use datafusion::common::ScalarValue;
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_plan::PhysicalExpr;

/// One step of a logical path below a column.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathStep {
    /// A member of a struct.
    Field(String),
    /// The elements of a list.
    Element,
    /// The keys of a map.
    MapKey,
    /// The values of a map.
    MapValue,
    /// Only the number of elements / entries of the list or map here (its offsets and
    /// nulls): any one leaf below suffices.
    Size,
}

impl fmt::Display for PathStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Field(name) => write!(f, "{name}"),
            Self::Element => write!(f, "<element>"),
            Self::MapKey => write!(f, "<key>"),
            Self::MapValue => write!(f, "<value>"),
            Self::Size => write!(f, "<size>"),
        }
    }
}

/// A logical path below a column; empty = the whole column.
pub type SubfieldPath = Vec<PathStep>;

/// What of one column's value the scan needs: all of it, or the subtrees at some paths.
///
/// Invariant: `Paths` never contains the empty path (that is `Whole`), and no path in it
/// is a prefix of another (the shorter one already covers the longer one).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RequiredSubfields {
    /// Nothing of the value (the column is only filtered, or not used at all).
    #[default]
    Nothing,
    /// The whole value.
    Whole,
    /// The subtrees at these paths; every other member reads as NULL.
    Paths(BTreeSet<SubfieldPath>),
}

impl RequiredSubfields {
    /// Adds the subtree at `path` (the whole value when `path` is empty).
    pub fn add(&mut self, path: SubfieldPath) {
        if path.is_empty() {
            *self = Self::Whole;
            return;
        }
        match self {
            Self::Whole => {}
            Self::Nothing => *self = Self::Paths(BTreeSet::from([path])),
            Self::Paths(paths) => {
                if paths.iter().any(|p| path.starts_with(p)) {
                    return;
                }
                paths.retain(|p| !p.starts_with(&path));
                paths.insert(path);
            }
        }
    }

    /// Adds everything `other` requires.
    pub fn merge(&mut self, other: &Self) {
        match other {
            Self::Nothing => {}
            Self::Whole => *self = Self::Whole,
            Self::Paths(paths) => {
                for p in paths {
                    self.add(p.clone());
                }
            }
        }
    }

    /// Whether the value is needed at all.
    pub fn is_needed(&self) -> bool {
        !matches!(self, Self::Nothing)
    }
}

impl fmt::Display for RequiredSubfields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Nothing => write!(f, "none"),
            Self::Whole => write!(f, "all"),
            Self::Paths(paths) => {
                let shown: Vec<String> = paths
                    .iter()
                    .map(|p| {
                        p.iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(".")
                    })
                    .collect();
                write!(f, "{}", shown.join(", "))
            }
        }
    }
}

/// The type a column has in the reader schema when only `required` of it is read: the
/// struct members no path reaches are left out (recursively, also inside list elements and
/// map values), so the reader never materializes them. Lists and maps keep their keys and
/// their element / value type otherwise; any other type is kept whole.
pub fn prune_type(t: &DataType, required: &RequiredSubfields) -> DataType {
    match required {
        RequiredSubfields::Paths(paths) => prune_paths(t, &paths.iter().collect::<Vec<_>>()),
        RequiredSubfields::Whole | RequiredSubfields::Nothing => t.clone(),
    }
}

fn prune_paths(t: &DataType, paths: &[&SubfieldPath]) -> DataType {
    if paths.iter().any(|p| p.is_empty()) {
        return t.clone();
    }
    let tails = |step: &PathStep| -> Vec<&[PathStep]> {
        paths
            .iter()
            .filter(|p| p.first() == Some(step))
            .map(|p| &p[1..])
            .collect()
    };
    let pruned = |t: &DataType, tails: Vec<&[PathStep]>| {
        let owned: Vec<SubfieldPath> = tails.iter().map(|t| t.to_vec()).collect();
        prune_paths(t, &owned.iter().collect::<Vec<_>>())
    };
    match t {
        DataType::Struct(fields) => {
            let kept: Vec<Field> = fields
                .iter()
                .filter_map(|f| {
                    let tails = tails(&PathStep::Field(f.name().clone()));
                    (!tails.is_empty()).then(|| {
                        f.as_ref()
                            .clone()
                            .with_data_type(pruned(f.data_type(), tails))
                    })
                })
                .collect();
            // Only struct members can be left out; anything else keeps the whole type.
            if kept.is_empty()
                || paths
                    .iter()
                    .any(|p| !matches!(p.first(), Some(PathStep::Field(_))))
            {
                return t.clone();
            }
            DataType::Struct(Fields::from(kept))
        }
        DataType::List(f) | DataType::LargeList(f) => {
            let element = tails(&PathStep::Element);
            if element.len() != paths.len() {
                return t.clone();
            }
            let item = Arc::new(
                f.as_ref()
                    .clone()
                    .with_data_type(pruned(f.data_type(), element)),
            );
            match t {
                DataType::List(_) => DataType::List(item),
                _ => DataType::LargeList(item),
            }
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return t.clone();
            };
            let values = tails(&PathStep::MapValue);
            let (Some(key), Some(value), false) = (kv.first(), kv.get(1), values.is_empty()) else {
                return t.clone();
            };
            let value = value
                .as_ref()
                .clone()
                .with_data_type(pruned(value.data_type(), values));
            let kv = DataType::Struct(Fields::from(vec![key.as_ref().clone(), value]));
            DataType::Map(
                Arc::new(entries.as_ref().clone().with_data_type(kv)),
                *sorted,
            )
        }
        _ => t.clone(),
    }
}

/// Whether a value of type `t` has the subfield at `path` (a struct member missing from an
/// older file's type does not).
pub fn has_path(t: &DataType, path: &[PathStep]) -> bool {
    let Some((step, rest)) = path.split_first() else {
        return true;
    };
    match (step, t) {
        (PathStep::Field(name), DataType::Struct(fields)) => fields
            .iter()
            .find(|f| f.name() == name)
            .is_some_and(|f| has_path(f.data_type(), rest)),
        (PathStep::Element, DataType::List(f) | DataType::LargeList(f))
        | (PathStep::Element, DataType::FixedSizeList(f, _)) => has_path(f.data_type(), rest),
        (PathStep::MapKey | PathStep::MapValue, DataType::Map(entries, _)) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return false;
            };
            let i = usize::from(*step == PathStep::MapValue);
            kv.get(i).is_some_and(|f| has_path(f.data_type(), rest))
        }
        (PathStep::Size, DataType::List(_) | DataType::LargeList(_) | DataType::Map(..)) => true,
        (_, DataType::Dictionary(_, v)) => has_path(v, path),
        _ => false,
    }
}

/// The parts of table columns `expr` reads, by table column index (`schema` is the table
/// schema `expr` refers to).
pub fn required_by(
    expr: &Arc<dyn PhysicalExpr>,
    schema: &Schema,
    out: &mut HashMap<usize, RequiredSubfields>,
) {
    if let Some(access) = access_of(expr, schema) {
        let entry = out.entry(access.column).or_default();
        for path in access.paths {
            entry.add(path);
        }
        return;
    }
    for child in expr.children() {
        required_by(child, schema, out);
    }
}

/// A chain of extractions rooted at a column.
struct Access {
    column: usize,
    /// Paths the chain reads (the last one is where the chain's value is).
    paths: Vec<SubfieldPath>,
    /// Type of the chain's value.
    data_type: DataType,
    /// Whether the chain's value can be extracted further (false after `map_keys`, …).
    open: bool,
}

impl Access {
    fn current(&mut self) -> &mut SubfieldPath {
        // `paths` always holds the chain's own path last (pushed in `access_of`).
        if self.paths.is_empty() {
            self.paths.push(vec![]);
        }
        let last = self.paths.len() - 1;
        &mut self.paths[last]
    }

    /// Ends the chain at a terminal extraction (its value is not a subfield any more).
    fn close(mut self, step: PathStep, data_type: DataType) -> Self {
        self.current().push(step);
        self.data_type = data_type;
        self.open = false;
        self
    }
}

fn access_of(expr: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Option<Access> {
    if let Some(c) = expr.downcast_ref::<Column>() {
        let field = schema.fields().get(c.index())?;
        return Some(Access {
            column: c.index(),
            paths: vec![vec![]],
            data_type: field.data_type().clone(),
            open: true,
        });
    }
    let f = expr.downcast_ref::<ScalarFunctionExpr>()?;
    let (base, args) = f.args().split_first()?;
    let inner = access_of(base, schema)?;
    if !inner.open {
        return None;
    }
    match f.name() {
        "get_field" => get_field(inner, args),
        "array_element" => {
            let element = list_element_type(&inner.data_type)?;
            // A literal index only: an index computed from columns reads those columns too,
            // which the generic walk finds.
            args.first()?.downcast_ref::<Literal>()?;
            let mut a = inner;
            a.current().push(PathStep::Element);
            a.data_type = element;
            Some(a)
        }
        "map_keys" | "map_values" if args.is_empty() => {
            let DataType::Map(entries, _) = &inner.data_type else {
                return None;
            };
            let entries = entries.data_type().clone();
            let step = if f.name() == "map_keys" {
                PathStep::MapKey
            } else {
                PathStep::MapValue
            };
            Some(inner.close(step, entries))
        }
        "cardinality" | "array_length" if args.is_empty() => {
            let sized = matches!(
                inner.data_type,
                DataType::Map(..) | DataType::List(_) | DataType::LargeList(_)
            );
            sized.then(|| inner.close(PathStep::Size, DataType::UInt64))
        }
        _ => None,
    }
}

/// `get_field(base, 'a', 'b', …)`: struct members, or a map lookup by a literal key (which
/// reads the keys and the values).
fn get_field(mut a: Access, names: &[Arc<dyn PhysicalExpr>]) -> Option<Access> {
    if names.is_empty() {
        return None;
    }
    for name in names {
        let literal = name.downcast_ref::<Literal>()?.value();
        match a.data_type.clone() {
            DataType::Struct(fields) => {
                let member = literal_text(literal)?;
                let field = fields.iter().find(|f| f.name() == &member)?;
                a.current().push(PathStep::Field(member));
                a.data_type = field.data_type().clone();
            }
            DataType::Map(entries, _) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return None;
                };
                let value = kv.get(1)?.data_type().clone();
                let mut keys = a.current().clone();
                keys.push(PathStep::MapKey);
                a.current().push(PathStep::MapValue);
                let own = a.paths.pop()?;
                a.paths.push(keys);
                a.paths.push(own);
                a.data_type = value;
            }
            _ => return None,
        }
    }
    Some(a)
}

fn literal_text(value: &ScalarValue) -> Option<String> {
    match value {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)) => Some(s.clone()),
        _ => None,
    }
}

fn list_element_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            Some(f.data_type().clone())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
