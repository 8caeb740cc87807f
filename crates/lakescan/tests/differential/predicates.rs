//! Predicates: the [`Pred`] AST (SQL leaves, boolean connectives — what shrinking works on)
//! and [`Gen`], the generator of one case (from a random seed). `Gen` picks the tree shape
//! and the column of each leaf here ([`COLUMNS`]); literals come from [`crate::literals`],
//! the leaves themselves from [`crate::leaves`], the query around the predicate from
//! [`crate::queries`].

use std::collections::HashMap;

use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;

use crate::literals::Pools;

/// A predicate: leaves are SQL text (IN lists keep their items apart), nodes are the
/// boolean connectives (what shrinking works on).
#[derive(Clone, Debug, PartialEq)]
pub enum Pred {
    Leaf(String),
    /// `head (item, item, …)` where head is `col [NOT] IN`.
    In {
        head: String,
        items: Vec<String>,
    },
    Not(Box<Pred>),
    And(Box<Pred>, Box<Pred>),
    Or(Box<Pred>, Box<Pred>),
}

impl Pred {
    pub fn sql(&self) -> String {
        match self {
            Pred::Leaf(s) => s.clone(),
            Pred::In { head, items } => format!("{head} ({})", items.join(", ")),
            Pred::Not(a) => format!("NOT ({})", a.sql()),
            Pred::And(a, b) => format!("({}) AND ({})", a.sql(), b.sql()),
            Pred::Or(a, b) => format!("({}) OR ({})", a.sql(), b.sql()),
        }
    }

    pub fn size(&self) -> usize {
        match self {
            Pred::Leaf(_) | Pred::In { .. } => 1,
            Pred::Not(a) => 1 + a.size(),
            Pred::And(a, b) | Pred::Or(a, b) => 1 + a.size() + b.size(),
        }
    }

    /// Calls `f` with the head and items of every IN list.
    fn for_each_list(&mut self, f: &mut dyn FnMut(&str, &mut Vec<String>)) {
        match self {
            Pred::Leaf(_) => {}
            Pred::In { head, items } => f(head, items),
            Pred::Not(a) => a.for_each_list(f),
            Pred::And(a, b) | Pred::Or(a, b) => {
                a.for_each_list(f);
                b.for_each_list(f);
            }
        }
    }

    /// Removes the NULLs from the IN lists of a column that has several of them.
    ///
    /// DataFusion 54.1's simplifier merges two IN lists on one column (`a IN (…) AND a NOT
    /// IN (…)` into a set difference, `a NOT IN (…) OR a NOT IN (…)` into an intersection)
    /// as if NULL were a value, though a NULL makes `NOT IN` unknown: `i NOT IN (5, NULL) AND
    /// i IN (2, 0)` returns the rows with i = 2 or 0 when nothing should match. Whether the
    /// lists end up side by side depends on how the plan was reshaped (a MemTable keeps the
    /// filter, a lakescan scan takes its conjuncts apart), so the engines would differ on
    /// DataFusion's bug, not on lakescan's.
    pub fn drop_nulls_of_merged_lists(&mut self) {
        let column = |head: &str| head.split(' ').next().unwrap_or_default().to_string();
        let mut lists: HashMap<String, usize> = HashMap::new();
        self.for_each_list(&mut |head, _| *lists.entry(column(head)).or_default() += 1);
        self.for_each_list(&mut |head, items| {
            if lists[&column(head)] > 1 {
                items.retain(|v| v != "NULL");
            }
        });
    }

    /// Predicates one step smaller: a node replaced by one of its children (dropping an
    /// AND/OR branch, removing a NOT) or an IN list item dropped, at any depth. Largest
    /// cuts first.
    pub fn shrinks(&self) -> Vec<Pred> {
        match self {
            Pred::Leaf(_) => vec![],
            Pred::In { head, items } if items.len() > 1 => (0..items.len())
                .map(|k| {
                    let mut items = items.clone();
                    items.remove(k);
                    Pred::In {
                        head: head.clone(),
                        items,
                    }
                })
                .collect(),
            Pred::In { .. } => vec![],
            Pred::Not(a) => {
                let mut out = vec![(**a).clone()];
                out.extend(a.shrinks().into_iter().map(|x| Pred::Not(Box::new(x))));
                out
            }
            Pred::And(a, b) | Pred::Or(a, b) => {
                let rebuild = |x: Pred, y: Pred| match self {
                    Pred::And(..) => Pred::And(Box::new(x), Box::new(y)),
                    _ => Pred::Or(Box::new(x), Box::new(y)),
                };
                let mut out = vec![(**a).clone(), (**b).clone()];
                out.extend(a.shrinks().into_iter().map(|x| rebuild(x, (**b).clone())));
                out.extend(b.shrinks().into_iter().map(|y| rebuild((**a).clone(), y)));
                out
            }
        }
    }
}

/// The type family of a column: what its literals look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Real,
    Str,
    Date,
    Ts,
    TsTz,
    Bool,
    /// DECIMAL(precision, scale).
    Dec(u8, i8),
    Bin,
    /// The struct `st` itself (its fields are columns of their own kinds).
    Struct,
}

/// Columns (and struct fields) and how often a leaf picks each.
pub const COLUMNS: [(&str, Kind, u32); 19] = [
    ("id", Kind::Int, 1),
    ("i", Kind::Int, 4),
    ("l", Kind::Int, 2),
    ("f", Kind::Float, 4),
    ("s", Kind::Str, 3),
    ("d", Kind::Date, 1),
    ("ts", Kind::Ts, 1),
    ("b", Kind::Bool, 2),
    ("p", Kind::Int, 3),
    ("dc", Kind::Dec(10, 2), 3),
    ("dw", Kind::Dec(20, 4), 2),
    ("r", Kind::Real, 3),
    ("t8", Kind::Int, 2),
    ("t16", Kind::Int, 2),
    ("bn", Kind::Bin, 3),
    ("tz", Kind::TsTz, 2),
    ("st", Kind::Struct, 1),
    ("st['x']", Kind::Int, 2),
    ("st['y']", Kind::Str, 2),
];

const OPS: [&str; 6] = ["=", "<>", "<", "<=", ">", ">="];

/// The index of column `name` in [`COLUMNS`].
pub fn column_index(name: &str) -> usize {
    COLUMNS.iter().position(|c| c.0 == name).unwrap()
}

/// Generates predicates and queries for one case.
pub struct Gen<'a> {
    pub rng: StdRng,
    pub pools: &'a Pools,
    /// Columns the predicate's leaves filter on (indices into [`COLUMNS`]).
    pub used: Vec<usize>,
}

impl<'a> Gen<'a> {
    pub fn new(rng: StdRng, pools: &'a Pools) -> Self {
        Self {
            rng,
            pools,
            used: vec![],
        }
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    pub fn pick<T: Clone>(&mut self, options: &[T]) -> T {
        options.choose(&mut self.rng).unwrap().clone()
    }

    pub fn op(&mut self) -> &'static str {
        self.pick(&OPS)
    }

    fn column(&mut self) -> usize {
        let total: u32 = COLUMNS.iter().map(|c| c.2).sum();
        let mut x = self.rng.random_range(0..total);
        for (k, c) in COLUMNS.iter().enumerate() {
            if x < c.2 {
                return k;
            }
            x -= c.2;
        }
        0
    }

    /// A predicate tree of depth at most `max_depth - depth`; `focus` restricts leaves to
    /// one column (so same-column AND/OR/NOT trees, which become one filter, are common).
    pub fn pred(&mut self, depth: usize, max_depth: usize, focus: Option<usize>) -> Pred {
        let leaf_chance = [0.15, 0.35, 0.5, 0.7, 1.0][depth.min(4)];
        if depth >= max_depth || self.chance(leaf_chance) {
            return self.leaf(focus);
        }
        let focus = match focus {
            Some(c) => Some(c),
            None if self.chance(0.35) => Some(self.column()),
            None => None,
        };
        match self.rng.random_range(0..100) {
            0..40 => Pred::And(
                Box::new(self.pred(depth + 1, max_depth, focus)),
                Box::new(self.pred(depth + 1, max_depth, focus)),
            ),
            40..80 => Pred::Or(
                Box::new(self.pred(depth + 1, max_depth, focus)),
                Box::new(self.pred(depth + 1, max_depth, focus)),
            ),
            _ => Pred::Not(Box::new(self.pred(depth + 1, max_depth, focus))),
        }
    }

    fn leaf(&mut self, focus: Option<usize>) -> Pred {
        match focus {
            Some(c) => self.column_leaf(c),
            None if self.chance(0.25) => Pred::Leaf(self.mixed_leaf()),
            None => {
                let c = self.column();
                self.column_leaf(c)
            }
        }
    }

    /// A leaf on one column: what lakescan can turn into a per-column filter, and a few
    /// things around it (NULL literals, casts).
    fn column_leaf(&mut self, c: usize) -> Pred {
        let (name, kind, _) = COLUMNS[c];
        if !matches!(kind, Kind::Bool | Kind::Struct) && self.chance(0.18) {
            self.used.push(c);
            let items = self.lit_items(c);
            let not = if self.chance(0.3) { "NOT " } else { "" };
            return Pred::In {
                head: format!("{name} {not}IN"),
                items,
            };
        }
        Pred::Leaf(self.column_leaf_text(c))
    }

    fn column_leaf_text(&mut self, c: usize) -> String {
        self.used.push(c);
        let (name, kind, _) = COLUMNS[c];
        if kind == Kind::Bool && self.chance(0.6) {
            return self.pick(&BOOL_LEAVES).to_string();
        }
        if kind == Kind::Struct {
            return self.pick(&STRUCT_LEAVES).to_string();
        }
        let not = |g: &mut Self| if g.chance(0.3) { "NOT " } else { "" };
        match self.rng.random_range(0..100) {
            0..45 => {
                let op = self.op();
                let v = self.lit(c);
                if self.chance(0.2) {
                    format!("{v} {op} {name}")
                } else {
                    format!("{name} {op} {v}")
                }
            }
            45..58 => {
                let (a, b) = (self.lit(c), self.lit(c));
                let not = not(self);
                format!("{name} {not}BETWEEN {a} AND {b}")
            }
            58..70 => {
                let not = not(self);
                format!("{name} IS {not}NULL")
            }
            70..82 => {
                let v = if self.chance(0.15) {
                    "NULL".to_string()
                } else {
                    self.lit(c)
                };
                let not = not(self);
                format!("{name} IS {not}DISTINCT FROM {v}")
            }
            82..94 => self.cast_leaf(c),
            _ => {
                let op = self.op();
                self.pick(&[format!("{name} {op} NULL"), format!("NULL {op} {name}")])
            }
        }
    }
}

const BOOL_LEAVES: [&str; 16] = [
    "b",
    "NOT b",
    "b = true",
    "b = false",
    "b <> true",
    "b IS TRUE",
    "b IS NOT TRUE",
    "b IS FALSE",
    "b IS NOT FALSE",
    "b IS UNKNOWN",
    "b IS NOT UNKNOWN",
    "b IN (true)",
    "b IS DISTINCT FROM false",
    "true = b",
    "b AND b",
    "b OR NOT b",
];

/// Leaves on the struct as a whole (its fields have leaves of their own).
const STRUCT_LEAVES: [&str; 6] = [
    "st IS NULL",
    "st IS NOT NULL",
    "NOT (st IS NULL)",
    "st IS NOT NULL AND st['x'] IS NULL",
    "st IS NULL OR st['y'] IS NULL",
    "st['x'] IS NOT NULL OR st['y'] IS NOT NULL",
];
