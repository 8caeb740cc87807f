//! Per-file schemas ([`Layout`]): which table columns a file leaves out (lakescan reads them
//! as NULL) and which it stores in a narrower type than the table declares (lakescan widens
//! them on read). Only the evolutions lakescan claims to support are drawn: a missing column
//! (`binding.rs`) and the types `can_adapt` / `is_safe_widening` accept — a signed or
//! unsigned integer into a wider signed one, FLOAT into DOUBLE, small integers into a float,
//! a decimal of smaller precision and the same scale, other string and binary encodings
//! (large, view, dictionary), and timestamps in another unit or zone.
//!
//! [`fit`] moves a row's values into the stored type's domain (so the narrowing is lossless)
//! and [`file_batch`] checks that it is: every stored column cast back to the table type must
//! give the table's values.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;

use crate::table::{DECLARED, Row, column_array, table_type};

/// How one file stores a table column.
#[derive(Clone, Debug, PartialEq)]
pub enum Stored {
    /// Not in the file at all.
    Missing,
    /// In this (narrower or differently encoded) type.
    As(DataType),
}

/// A file's schema as changes against the natural one (see [`natural_type`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    changes: Vec<(&'static str, Stored)>,
}

/// Columns a file may leave out: all but `id`, which identifies rows in reports.
const MAY_MISS: [&str; 15] = [
    "i", "l", "f", "s", "d", "ts", "b", "dc", "dw", "r", "t8", "t16", "bn", "tz", "st",
];

/// The narrower or re-encoded types lakescan reads as the table type.
fn narrowings() -> Vec<(&'static str, DataType)> {
    use DataType::*;
    let ts = |unit, zone: Option<&str>| Timestamp(unit, zone.map(Into::into));
    vec![
        ("i", Int8),
        ("i", Int16),
        ("i", UInt16),
        ("l", Int32),
        ("l", Int16),
        ("f", Float32),
        ("f", Int32),
        ("r", Int16),
        ("t16", Int8),
        ("t16", UInt8),
        ("dc", Decimal128(8, 2)),
        ("dc", Decimal128(5, 2)),
        ("dw", Decimal128(18, 4)),
        ("dw", Decimal128(12, 4)),
        ("s", LargeUtf8),
        ("s", Utf8View),
        ("s", Dictionary(Box::new(Int32), Box::new(Utf8))),
        ("bn", LargeBinary),
        ("bn", BinaryView),
        ("ts", ts(TimeUnit::Millisecond, None)),
        ("ts", ts(TimeUnit::Nanosecond, None)),
        ("tz", ts(TimeUnit::Millisecond, Some("+00:00"))),
        ("tz", ts(TimeUnit::Nanosecond, Some("UTC"))),
        ("tz", ts(TimeUnit::Microsecond, None)),
    ]
}

/// The type a file stores a column in when its layout does not change it: the table type,
/// except plain `Utf8` strings (what most writers produce; the table's VARCHAR is a view).
pub fn natural_type(column: &str) -> DataType {
    match column {
        "s" => DataType::Utf8,
        c => table_type(c),
    }
}

impl Layout {
    fn set(&mut self, column: &'static str, stored: Stored) {
        if !self.changes.iter().any(|(c, _)| *c == column) {
            self.changes.push((column, stored));
        }
    }

    /// Leaves `columns` out (for hand-written files).
    pub fn without(mut self, columns: &[&'static str]) -> Self {
        for c in columns {
            self.set(c, Stored::Missing);
        }
        self
    }

    /// Stores `column` as `data_type` (for hand-written files).
    pub fn with(mut self, column: &'static str, data_type: DataType) -> Self {
        self.set(column, Stored::As(data_type));
        self
    }

    /// Clears the columns the file leaves out (the table reads them as NULL).
    pub fn clear_missing(&self, row: &mut Row) {
        for (column, stored) in &self.changes {
            if *stored == Stored::Missing {
                clear(row, column);
            }
        }
    }

    /// How the file stores `column`; `None` when it leaves it out.
    pub fn file_type(&self, column: &str) -> Option<DataType> {
        match self.changes.iter().find(|(c, _)| *c == column) {
            Some((_, Stored::Missing)) => None,
            Some((_, Stored::As(t))) => Some(t.clone()),
            None => Some(natural_type(column)),
        }
    }

    /// How many columns the file leaves out and how many it stores in another type.
    pub fn counts(&self) -> (usize, usize) {
        let missing = self.changes.iter().filter(|(_, s)| *s == Stored::Missing);
        let missing = missing.count();
        (missing, self.changes.len() - missing)
    }

    /// The changes in words, for reports: `missing l, st; dc as Decimal128(8, 2)`.
    pub fn describe(&self) -> String {
        let missing: Vec<&str> = self
            .changes
            .iter()
            .filter(|(_, s)| *s == Stored::Missing)
            .map(|(c, _)| *c)
            .collect();
        let mut parts = vec![];
        if !missing.is_empty() {
            parts.push(format!("missing {}", missing.join(", ")));
        }
        for (c, s) in &self.changes {
            if let Stored::As(t) = s {
                parts.push(format!("{c} as {t}"));
            }
        }
        parts.join("; ")
    }
}

/// Layouts for `n` files: each file leaves out or narrows a few random columns, and every
/// narrowing and at least two missing columns appear in one of the files `with_rows` (an
/// evolution in an empty file tests nothing).
pub fn draw_layouts(rng: &mut StdRng, with_rows: &[bool]) -> Vec<Layout> {
    let mut layouts = vec![Layout::default(); with_rows.len()];
    let candidates: Vec<usize> = (0..with_rows.len()).filter(|&k| with_rows[k]).collect();
    let mut forced: Vec<(&'static str, Stored)> = narrowings()
        .into_iter()
        .map(|(c, t)| (c, Stored::As(t)))
        .collect();
    for _ in 0..2 {
        forced.push((*MAY_MISS.choose(rng).unwrap(), Stored::Missing));
    }
    for (column, stored) in forced {
        if let Some(&k) = candidates.choose(rng) {
            layouts[k].set(column, stored);
        }
    }
    for layout in &mut layouts {
        for column in MAY_MISS {
            if rng.random_bool(0.05) {
                layout.set(column, Stored::Missing);
            }
        }
        for (column, t) in narrowings() {
            if rng.random_bool(0.04) {
                layout.set(column, Stored::As(t));
            }
        }
    }
    layouts
}

/// Moves `row`'s values into the domains of the file's stored types, and clears the
/// columns the file leaves out (the table reads them as NULL).
pub fn fit(row: &mut Row, layout: &Layout, rng: &mut StdRng) {
    layout.clear_missing(row);
    for (column, stored) in &layout.changes {
        if let Stored::As(t) = stored {
            fit_value(row, column, t, rng);
        }
    }
}

fn clear(row: &mut Row, column: &str) {
    match column {
        "i" => row.i = None,
        "l" => row.l = None,
        "f" => row.f = None,
        "s" => row.s = None,
        "d" => row.d = None,
        "ts" => row.ts = None,
        "b" => row.b = None,
        "dc" => row.dc = None,
        "dw" => row.dw = None,
        "r" => row.r = None,
        "t8" => row.t8 = None,
        "t16" => row.t16 = None,
        "bn" => row.bn = None,
        "tz" => row.tz = None,
        "st" => row.st = None,
        _ => panic!("column {column} cannot be left out"),
    }
}

/// An integral float: specials and fractions become a small integer.
fn integral(v: f64, rng: &mut StdRng) -> f64 {
    if v.is_finite() && v.abs() < 1000.0 {
        v.trunc() + 0.0
    } else {
        f64::from(rng.random_range(-3..=3))
    }
}

fn fit_value(row: &mut Row, column: &str, t: &DataType, rng: &mut StdRng) {
    use DataType::*;
    let decimal_max = |p: u8| 10i128.pow(u32::from(p)) - 1;
    match (column, t) {
        ("i", UInt16) => row.i = row.i.map(i32::abs),
        ("f", Int32) => row.f = row.f.map(|v| integral(v, rng)),
        ("r", Int16) => row.r = row.r.map(|v| integral(f64::from(v), rng) as f32),
        ("t16", Int8) => row.t16 = row.t16.map(|v| (v % 128).clamp(-128, 127)),
        ("t16", UInt8) => row.t16 = row.t16.map(|v| v.rem_euclid(256)),
        ("dc" | "dw", Decimal128(p, _)) => {
            let field = if column == "dc" {
                &mut row.dc
            } else {
                &mut row.dw
            };
            let max = decimal_max(*p);
            *field = field.map(|v| if v.abs() > max { v % (max + 1) } else { v });
        }
        ("ts" | "tz", Timestamp(TimeUnit::Millisecond, _)) => {
            let field = if column == "ts" {
                &mut row.ts
            } else {
                &mut row.tz
            };
            *field = field.map(|v| v - v.rem_euclid(1000));
        }
        // Wide enough for every generated value.
        _ => {}
    }
}

/// The rows as a batch of the file's schema; panics when a stored column does not cast back
/// to the table's values (the generator broke the narrowing).
pub fn file_batch(rows: &[Row], layout: &Layout) -> RecordBatch {
    let mut fields = vec![];
    let mut columns = vec![];
    for (column, _) in DECLARED {
        let Some(stored) = layout.file_type(column) else {
            continue;
        };
        let table = column_array(rows, column);
        let natural = cast(&table, &natural_type(column)).unwrap();
        let array = cast(&natural, &stored).unwrap();
        let back = cast(&array, &table_type(column)).unwrap();
        assert!(
            back.as_ref() == table.as_ref(),
            "column {column} stored as {stored} loses values: {table:?} became {back:?}"
        );
        fields.push(Field::new(column, stored, true));
        columns.push(array);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}
