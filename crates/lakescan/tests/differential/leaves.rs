//! Leaves beyond plain comparisons: comparisons through casts ([`Gen::cast_leaf`]; safe
//! widening casts become filters in the wider type, the others stay residual) and leaves
//! lakescan must keep as residual expressions ([`Gen::mixed_leaf`]: column-vs-column,
//! arithmetic, functions, CASE, constants, a volatile function).
//!
//! Nothing here may fail at run time on some rows only (an overflowing cast or `abs`, an
//! invalid UTF-8 cast): lakescan may prune those rows where the `MemTable` evaluates them,
//! and the engines would differ on an error, not on a result.

use rand::Rng;

use crate::literals::{date_text, dec_text};
use crate::predicates::{COLUMNS, Gen, Kind, column_index};
use crate::table::DAY0;

impl Gen<'_> {
    fn int_lit_text(&mut self, column: &str) -> String {
        let from_data = self.chance(0.8);
        self.int_value(column, from_data).to_string()
    }

    fn half(&mut self, column: &str) -> String {
        let from_data = self.chance(0.8);
        let v = self.int_value(column, from_data);
        if self.chance(0.5) {
            format!("{v}.5")
        } else {
            format!("{v}.0")
        }
    }

    /// A comparison through a cast of column `c`.
    pub fn cast_leaf(&mut self, c: usize) -> String {
        self.used.push(c);
        let (name, kind, _) = COLUMNS[c];
        let op = self.op();
        match (name, kind) {
            ("i", _) => self.cast_leaf_i(op),
            ("p", _) => match self.rng.random_range(0..4) {
                0 => format!("CAST(p AS INT) {op} {}", self.int_lit_text("p")),
                1 => format!("CAST(p AS VARCHAR) {op} '{}'", self.int_lit_text("p")),
                2 => format!("CAST(p AS DOUBLE) {op} {}", self.half("p")),
                _ => format!(
                    "CAST(p AS VARCHAR) LIKE '{}%'",
                    self.rng.random_range(-1..=9)
                ),
            },
            ("t8" | "t16", _) => self.cast_leaf_small_int(c, name, op),
            (_, Kind::Int) => match self.rng.random_range(0..3) {
                0 => format!("CAST({name} AS DOUBLE) {op} {}", self.half(name)),
                1 => format!("CAST({name} AS INT) {op} {}", self.int_lit_text(name)),
                _ => format!(
                    "CAST({name} AS DECIMAL(20, 0)) {op} {}",
                    self.int_lit_text(name)
                ),
            },
            (_, Kind::Float) => {
                let v = self.lit(c);
                match self.rng.random_range(0..4) {
                    0 => format!("CAST(f AS REAL) {op} {v}"),
                    1 => format!(
                        "TRY_CAST(f AS BIGINT) {op} {}",
                        self.rng.random_range(-3..=3)
                    ),
                    2 => format!(
                        "CAST(f AS VARCHAR) {op} '{}'",
                        self.pick(&["NaN", "0", "-0", "1", "inf"])
                    ),
                    _ => format!("CAST(f AS DOUBLE) {op} {v}"),
                }
            }
            (_, Kind::Real) => self.cast_leaf_real(c, op),
            (_, Kind::Str) => {
                let v = self.lit(c);
                match self.rng.random_range(0..3) {
                    0 => format!("CAST({name} AS VARCHAR) {op} {v}"),
                    1 => format!("arrow_cast({name}, 'Utf8View') {op} {v}"),
                    _ => format!("arrow_cast({name}, 'LargeUtf8') {op} {v}"),
                }
            }
            (_, Kind::Date) => match self.rng.random_range(0..2) {
                0 => format!("CAST(d AS TIMESTAMP) {op} {}", self.lit(column_index("ts"))),
                _ => format!(
                    "CAST(d AS VARCHAR) {op} '{}'",
                    date_text(DAY0 + self.rng.random_range(0..60))
                ),
            },
            (_, Kind::Ts) => match self.rng.random_range(0..2) {
                0 => format!("CAST(ts AS DATE) {op} {}", self.lit(column_index("d"))),
                _ => format!(
                    "arrow_cast(ts, 'Timestamp(Nanosecond, None)') {op} {}",
                    self.lit(c)
                ),
            },
            (_, Kind::TsTz) => self.cast_leaf_tz(c, op),
            (_, Kind::Dec(p, s)) => self.cast_leaf_decimal(c, name, p, s, op),
            (_, Kind::Bin) => {
                let v = self.lit(c);
                match self.rng.random_range(0..4) {
                    0 => format!("arrow_cast(bn, 'LargeBinary') {op} {v}"),
                    1 => format!("arrow_cast(bn, 'BinaryView') {op} {v}"),
                    2 => format!(
                        "TRY_CAST(bn AS VARCHAR) {op} '{}'",
                        self.pick(&["a", "ab", "é", "", "b"])
                    ),
                    _ => format!("CAST(bn AS BYTEA) {op} {v}"),
                }
            }
            (_, Kind::Struct) => format!("CAST(st['x'] AS DOUBLE) {op} {}", self.half("st['x']")),
            (_, Kind::Bool) => format!("CAST(b AS INT) {op} {}", self.rng.random_range(0..=1)),
        }
    }

    fn cast_leaf_i(&mut self, op: &str) -> String {
        let c = column_index("i");
        match self.rng.random_range(0..7) {
            0 => format!("CAST(i AS BIGINT) {op} {}", self.int_lit_text("i")),
            1 => format!("CAST(i AS DOUBLE) {op} {}", self.half("i")),
            2 => format!("CAST(i AS SMALLINT) {op} {}", self.int_lit_text("i")),
            3 => format!("CAST(i AS VARCHAR) {op} '{}'", self.int_lit_text("i")),
            4 => format!("TRY_CAST(i AS TINYINT) {op} {}", self.int_lit_text("i")),
            5 => {
                let list = self.lit_list(c);
                format!("CAST(i AS BIGINT) IN ({list})")
            }
            _ => format!(
                "CAST(i AS DOUBLE) IN ({}, {})",
                self.half("i"),
                self.half("i")
            ),
        }
    }

    /// TINYINT and SMALLINT through wider types (filters) and narrower ones (TRY_CAST).
    fn cast_leaf_small_int(&mut self, c: usize, name: &str, op: &str) -> String {
        match self.rng.random_range(0..6) {
            0 => format!("CAST({name} AS INT) {op} {}", self.int_lit_text(name)),
            1 => {
                let list = self.lit_list(c);
                format!("CAST({name} AS BIGINT) IN ({list})")
            }
            2 => format!("CAST({name} AS DOUBLE) {op} {}", self.half(name)),
            3 => format!("CAST({name} AS REAL) {op} {}", self.half(name)),
            4 if name == "t16" => {
                format!("TRY_CAST(t16 AS TINYINT) {op} {}", self.int_lit_text(name))
            }
            4 => format!("CAST(t8 AS SMALLINT) {op} {}", self.int_lit_text(name)),
            _ => format!("CAST({name} AS VARCHAR) {op} '{}'", self.int_lit_text(name)),
        }
    }

    fn cast_leaf_real(&mut self, c: usize, op: &str) -> String {
        match self.rng.random_range(0..4) {
            0 => format!("CAST(r AS DOUBLE) {op} {}", self.lit(c)),
            1 => format!(
                "TRY_CAST(r AS BIGINT) {op} {}",
                self.rng.random_range(-3..=3)
            ),
            2 => format!(
                "CAST(r AS VARCHAR) {op} '{}'",
                self.pick(&["NaN", "0", "-0", "1", "inf", "0.1"])
            ),
            _ => format!(
                "arrow_cast(r, 'Float64') {op} {}",
                self.lit(column_index("f"))
            ),
        }
    }

    fn cast_leaf_tz(&mut self, c: usize, op: &str) -> String {
        match self.rng.random_range(0..4) {
            0 => format!(
                "CAST(tz AS TIMESTAMP) {op} {}",
                self.lit(column_index("ts"))
            ),
            1 => format!("CAST(tz AS DATE) {op} {}", self.lit(column_index("d"))),
            2 => format!(
                "arrow_cast(tz, 'Timestamp(Millisecond, Some(\"+00:00\"))') {op} {}",
                self.lit(c)
            ),
            _ => format!(
                "arrow_cast(tz, 'Timestamp(Nanosecond, Some(\"+00:00\"))') {op} {}",
                self.lit(c)
            ),
        }
    }

    /// A wider decimal of the same scale (a filter), DOUBLE, another scale, an integer or
    /// text (residual).
    fn cast_leaf_decimal(&mut self, c: usize, name: &str, p: u8, s: i8, op: &str) -> String {
        let v = self.lit(c);
        match self.rng.random_range(0..5) {
            0 => format!("CAST({name} AS DECIMAL({}, {s})) {op} {v}", p + 5),
            1 => format!("CAST({name} AS DOUBLE) {op} {v}"),
            2 => format!("TRY_CAST({name} AS DECIMAL({p}, {})) {op} {v}", s - 1),
            3 => format!(
                "TRY_CAST({name} AS BIGINT) {op} {}",
                self.rng.random_range(-3..=12)
            ),
            _ => format!(
                "CAST({name} AS VARCHAR) {op} '{}'",
                dec_text(self.rng.random_range(-5..=5) * 25, s)
            ),
        }
    }

    /// Leaves lakescan must keep as residual expressions.
    pub fn mixed_leaf(&mut self) -> String {
        let op = self.op();
        let small = self.rng.random_range(-6..=6);
        let lit = |g: &mut Self, column: &str| g.lit(column_index(column));
        match self.rng.random_range(0..55) {
            0 => format!("i {op} l"),
            1 => format!("i {op} p"),
            2 => format!("l {op} id"),
            3 => format!("CAST(i AS DOUBLE) {op} f"),
            4 => format!("f {op} l"),
            5 => format!("d {op} CAST(ts AS DATE)"),
            6 => format!("CAST(d AS TIMESTAMP) {op} ts"),
            7 => format!("p {op} l % 7"),
            8 => format!("i + 1 {op} {small}"),
            9 => format!("i * 2 {op} {small}"),
            10 => format!("l - i {op} {}", self.rng.random_range(-10..=150)),
            11 => format!("-i {op} {small}"),
            12 => format!("abs(i) {op} {}", self.rng.random_range(0..=5)),
            13 => format!("i % 3 {op} {}", self.rng.random_range(-2..=2)),
            14 => format!("f * 2 {op} {}", lit(self, "f")),
            15 => format!("f + 1.0 {op} {}", lit(self, "f")),
            16 => format!("p + i {op} {}", self.rng.random_range(-6..=15)),
            17 => format!("id % 7 {op} {}", self.rng.random_range(0..7)),
            18 => format!("length(s) {op} {}", self.rng.random_range(0..=3)),
            19 => format!(
                "upper(s) {op} '{}'",
                self.pick(&["AB", "B", "", "É", "A B"])
            ),
            20 => format!(
                "s {}LIKE '{}'",
                self.pick(&["", "NOT "]),
                self.pick(&["a%", "%b", "_", "", "%", "a_"])
            ),
            21 => format!("starts_with(s, '{}')", self.pick(&["a", "b", "", "é"])),
            22 => format!("s || 'x' {op} '{}'", self.pick(&["ax", "x", "bx", "abcx"])),
            23 => format!("coalesce(i, 0) {op} {small}"),
            24 => format!("nullif(i, 0) IS {}NULL", self.pick(&["", "NOT "])),
            25 => format!("{}isnan(f)", self.pick(&["", "NOT "])),
            26 => format!("CASE WHEN b THEN i ELSE l END {op} {small}"),
            27 => format!(
                "CASE WHEN i > 0 THEN 'pos' ELSE s END {op} '{}'",
                self.pick(&["pos", "a", "b"])
            ),
            28 => format!("extract(day FROM d) {op} {}", self.rng.random_range(1..=20)),
            29 => format!("date_trunc('hour', ts) {op} {}", lit(self, "ts")),
            30 => format!("d + INTERVAL '1 day' {op} {}", lit(self, "d")),
            31 => self
                .pick(&["TRUE", "FALSE", "NULL", "NOT NULL", "1 = 1", "NULL IS NULL"])
                .to_string(),
            32 => "random() >= 0.0".to_string(),
            33 => format!("l % nullif(i, 0) {op} 0"),
            34 => format!("(i IS NULL) {op} b"),
            35 => format!("greatest(i, p) {op} {small}"),
            _ => self.mixed_leaf_new_types(op, small),
        }
    }

    /// Residual leaves over the decimal, REAL, small integer, binary, zoned timestamp and
    /// struct columns.
    fn mixed_leaf_new_types(&mut self, op: &str, small: i32) -> String {
        let lit = |g: &mut Self, column: &str| g.lit(column_index(column));
        match self.rng.random_range(0..19) {
            0 => format!("dc {op} dw"),
            1 => format!("dc * 2 {op} {}", lit(self, "dc")),
            2 => format!("dc + dw {op} {}", lit(self, "dw")),
            3 => format!("CAST(dc AS DOUBLE) {op} f"),
            4 => format!("r {op} f"),
            5 => format!("r * 2 {op} {}", lit(self, "r")),
            6 => format!("CAST(t8 AS INT) + t16 {op} {small}"),
            7 => format!("t16 {op} i"),
            8 => format!("t8 % 5 {op} {}", self.rng.random_range(-4..=4)),
            9 => format!(
                "coalesce(bn, X'FF') {op} X'{}'",
                self.pick(&["", "00", "61", "80", "FF"])
            ),
            10 => format!(
                "encode(bn, 'hex') {op} '{}'",
                self.pick(&["", "00", "61", "6162", "ff", "c3a9"])
            ),
            11 => format!("st['x'] {op} l"),
            12 => format!(
                "coalesce(st['x'], -1) {op} {}",
                self.rng.random_range(-2..=40)
            ),
            13 => format!("st['y'] {op} s"),
            14 => format!("tz {op} ts"),
            15 => format!("date_trunc('hour', tz) {op} {}", lit(self, "tz")),
            16 => format!(
                "extract(hour FROM tz) {op} {}",
                self.rng.random_range(0..=23)
            ),
            17 => format!("CASE WHEN st IS NULL THEN t8 ELSE t16 END {op} {small}"),
            _ => format!(
                "abs(CAST(t8 AS INT)) {op} {}",
                self.rng.random_range(100..=128)
            ),
        }
    }
}
