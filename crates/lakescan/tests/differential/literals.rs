//! Literals: [`Pools`] of the values present in the data, per column, and the SQL text of
//! a literal of each [`Kind`] — mostly a value from the data (so equality and IN hit),
//! sometimes a boundary or a value outside the data, written in the several forms
//! DataFusion accepts for the type (typed literals, casts, strings it coerces).

use std::collections::{BTreeMap, HashMap};

use arrow::temporal_conversions::{date32_to_datetime, timestamp_us_to_datetime};
use rand::Rng;
use rand::seq::IndexedRandom;

use crate::predicates::{COLUMNS, Gen, Kind};
use crate::table::{DAY0, Row, TS0, Value};

/// Distinct values present in the data, per column of [`COLUMNS`] (literals are drawn
/// mostly from these).
#[derive(Default)]
pub struct Pools {
    values: HashMap<&'static str, Vec<Value>>,
    /// The integer columns' values, sorted (their ends give out-of-range literals).
    ints: HashMap<&'static str, Vec<i64>>,
}

impl Pools {
    pub fn new<'a>(rows: impl Iterator<Item = &'a Row>) -> Self {
        // Keyed by the debug text: distinct, deterministic order, -0.0 apart from 0.0.
        let mut sets: HashMap<&'static str, BTreeMap<String, Value>> = HashMap::new();
        for r in rows {
            for (name, _, _) in COLUMNS {
                if let Some(v) = r.value(name) {
                    sets.entry(name).or_default().insert(format!("{v:?}"), v);
                }
            }
        }
        let mut pools = Self::default();
        for (name, set) in sets {
            let values: Vec<Value> = set.into_values().collect();
            let mut ints: Vec<i64> = values
                .iter()
                .filter_map(|v| match v {
                    Value::Int(n) => Some(*n),
                    _ => None,
                })
                .collect();
            ints.sort_unstable();
            pools.ints.insert(name, ints);
            pools.values.insert(name, values);
        }
        pools
    }

    pub fn ints(&self, column: &str) -> &[i64] {
        self.ints.get(column).map_or(&[], Vec::as_slice)
    }

    pub fn values(&self, column: &str) -> &[Value] {
        self.values.get(column).map_or(&[], Vec::as_slice)
    }
}

pub fn date_text(days: i32) -> String {
    date32_to_datetime(days).unwrap().date().to_string()
}

pub fn ts_text(micros: i64) -> String {
    timestamp_us_to_datetime(micros).unwrap().to_string()
}

/// The instant `micros` as wall-clock text at UTC offset `minutes`, with the offset.
fn tz_text(micros: i64, minutes: i64, separator: &str) -> String {
    let local = timestamp_us_to_datetime(micros + minutes * 60_000_000).unwrap();
    let sign = if minutes < 0 { '-' } else { '+' };
    let (h, m) = (minutes.abs() / 60, minutes.abs() % 60);
    let pattern = format!("%Y-%m-%d{separator}%H:%M:%S%.f");
    let text = local.format(&pattern);
    format!("{text}{sign}{h:02}:{m:02}")
}

/// An unscaled decimal as text: `-12.34`.
pub fn dec_text(unscaled: i128, scale: i8) -> String {
    let unit = 10i128.pow(scale as u32);
    let sign = if unscaled < 0 { "-" } else { "" };
    let (int, frac) = (unscaled.abs() / unit, unscaled.abs() % unit);
    format!("{sign}{int}.{frac:0width$}", width = scale as usize)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

fn float_sql(g: &mut Gen, v: f64) -> String {
    let special = if v.is_nan() {
        g.pick(&["'NaN'::double", "CAST('NaN' AS DOUBLE)"])
    } else if v == f64::INFINITY {
        g.pick(&[
            "'inf'::double",
            "'Infinity'::double",
            "CAST('inf' AS DOUBLE)",
        ])
    } else if v == f64::NEG_INFINITY {
        g.pick(&["'-inf'::double", "'-Infinity'::double"])
    } else if v == 0.0 && v.is_sign_negative() {
        g.pick(&["-0.0", "'-0.0'::double", "CAST(-0.0 AS DOUBLE)"])
    } else {
        return format!("{v:?}");
    };
    special.to_string()
}

fn real_sql(g: &mut Gen, v: f32) -> String {
    let special = if v.is_nan() {
        g.pick(&["'NaN'::real", "CAST('NaN' AS REAL)", "'NaN'::double"])
    } else if v == f32::INFINITY {
        g.pick(&["'inf'::real", "CAST('Infinity' AS REAL)", "'inf'::double"])
    } else if v == f32::NEG_INFINITY {
        g.pick(&["'-inf'::real", "'-Infinity'::double"])
    } else if v == 0.0 && v.is_sign_negative() {
        g.pick(&["'-0.0'::real", "CAST(-0.0 AS REAL)", "-0.0"])
    } else {
        // The exact value as REAL or DOUBLE, or the shortest f32 text read as a DOUBLE
        // (not the same number: 0.1 is not 0.1f32).
        return match g.rng.random_range(0..4) {
            0 if v.abs() < 1e15 => format!("{v}"),
            1 => format!("{:?}", f64::from(v)),
            2 if v.fract() == 0.0 && v.abs() < 1e6 => format!("{}", v as i64),
            _ => format!("CAST({v:e} AS REAL)"),
        };
    };
    special.to_string()
}

impl Gen<'_> {
    fn pooled_value(&mut self, column: &str) -> Option<Value> {
        self.pools.values(column).choose(&mut self.rng).cloned()
    }

    /// A literal of column `c`'s type: mostly a value present in the data.
    pub fn lit(&mut self, c: usize) -> String {
        let (name, kind, _) = COLUMNS[c];
        let from_data = self.chance(0.8);
        let pooled = if from_data {
            self.pooled_value(name)
        } else {
            None
        };
        match kind {
            Kind::Int => self.int_lit(name, from_data),
            Kind::Float => self.float_lit(pooled),
            Kind::Real => self.real_lit(pooled),
            Kind::Str => self.str_lit(pooled),
            Kind::Date => self.date_lit(pooled),
            Kind::Ts => self.ts_lit(pooled),
            Kind::TsTz => self.tz_lit(pooled),
            Kind::Bool => self.pick(&["true", "false"]).to_string(),
            Kind::Dec(p, s) => self.dec_lit(name, pooled, p, s),
            Kind::Bin => self.bin_lit(pooled),
            Kind::Struct => "NULL".to_string(),
        }
    }

    fn int_lit(&mut self, name: &str, from_data: bool) -> String {
        if self.chance(0.08) {
            // A fractional literal: the column is cast to DOUBLE.
            let v = self.int_value(name, from_data);
            return format!("{v}.5");
        }
        let v = self.int_value(name, from_data);
        let fits = |lo: i64, hi: i64| (lo..=hi).contains(&v);
        match self.rng.random_range(0..20) {
            0 if v < 0 && fits(i32::MIN.into(), 0) => format!("CAST({v} AS INT)"),
            1 if fits(i8::MIN.into(), i8::MAX.into()) => format!("CAST({v} AS TINYINT)"),
            2 if fits(i16::MIN.into(), i16::MAX.into()) => format!("CAST({v} AS SMALLINT)"),
            _ => v.to_string(),
        }
    }

    /// A value of integer column `column`: from the data, or just outside it, or a type's
    /// boundary, or a data value moved by 2^8, 2^16 or 2^32 (equal to it after a wrapping
    /// conversion into a narrower stored type).
    pub fn int_value(&mut self, column: &str, from_data: bool) -> i64 {
        let pool = self.pools.ints(column);
        if from_data && !pool.is_empty() {
            return *pool.choose(&mut self.rng).unwrap();
        }
        let (lo, hi) = (
            pool.first().copied().unwrap_or(0),
            pool.last().copied().unwrap_or(0),
        );
        let near = pool.choose(&mut self.rng).copied().unwrap_or(0);
        let wrap = self.pick(&[256, 65_536, 1 << 32]) * self.pick(&[1, -1]);
        let mut options = vec![
            lo - 1,
            hi + 1,
            0,
            -1000,
            1000,
            3_000_000_000,
            -3_000_000_000,
            7,
            near + wrap,
            near + wrap,
        ];
        options.extend(match column {
            "t8" => [-128, 127, 128, -129],
            "t16" => [-32_768, 32_767, 32_768, -32_769],
            _ => [i64::from(i32::MIN), i64::from(i32::MAX), 255, 256],
        });
        self.pick(&options)
    }

    fn float_lit(&mut self, pooled: Option<Value>) -> String {
        let v = match pooled {
            Some(Value::Float(v)) => v,
            _ => self.pick(&[
                0.25,
                1e300,
                -1e300,
                100.0,
                -0.0,
                0.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                2.0,
                16_777_217.0,
            ]),
        };
        if v.fract() == 0.0
            && v.is_finite()
            && v.abs() < 1e6
            && !(v == 0.0 && v.is_sign_negative())
            && self.chance(0.15)
        {
            return format!("{}", v as i64);
        }
        float_sql(self, v)
    }

    fn real_lit(&mut self, pooled: Option<Value>) -> String {
        let v = match pooled {
            Some(Value::Float(v)) => v as f32,
            _ => self.pick(&[
                0.25,
                0.1,
                f32::MAX,
                f32::MIN,
                1e-45,
                -0.0,
                0.0,
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                3.0e10,
                16_777_217.0,
            ]),
        };
        real_sql(self, v)
    }

    fn str_lit(&mut self, pooled: Option<Value>) -> String {
        let v = match pooled {
            Some(Value::Str(v)) => v,
            _ => self
                .pick(&["zzz", "A", "aa", "abd", " ", "ab%", "bb"])
                .to_string(),
        };
        let quoted = format!("'{}'", v.replace('\'', "''"));
        match self.rng.random_range(0..20) {
            0 => format!("arrow_cast({quoted}, 'Utf8View')"),
            1 => format!("arrow_cast({quoted}, 'LargeUtf8')"),
            2 => format!("CAST({quoted} AS VARCHAR)"),
            _ => quoted,
        }
    }

    fn date_lit(&mut self, pooled: Option<Value>) -> String {
        let v = match pooled {
            Some(Value::Day(v)) => v,
            _ => self.pick(&[DAY0 - 1, DAY0 + 500, 0, -1, DAY0 + 30]),
        };
        let text = date_text(v);
        match self.rng.random_range(0..3) {
            0 => format!("DATE '{text}'"),
            1 => format!("'{text}'"),
            _ => format!("CAST('{text}' AS DATE)"),
        }
    }

    fn ts_value(&mut self, pooled: Option<Value>) -> i64 {
        match pooled {
            Some(Value::Micros(v)) => v,
            _ => self.pick(&[
                TS0 - 1,
                TS0 + 1,
                TS0 + 10 * 86_400_000_000,
                0,
                TS0 + 3_600_000_000,
            ]),
        }
    }

    fn ts_lit(&mut self, pooled: Option<Value>) -> String {
        let text = ts_text(self.ts_value(pooled));
        match self.rng.random_range(0..3) {
            0 => format!("TIMESTAMP '{text}'"),
            1 => format!("'{text}'"),
            _ => format!("CAST('{text}' AS TIMESTAMP)"),
        }
    }

    /// An instant, written at UTC or at another offset, typed or as a string the column's
    /// type coerces.
    fn tz_lit(&mut self, pooled: Option<Value>) -> String {
        let v = self.ts_value(pooled);
        let utc = tz_text(v, 0, " ");
        match self.rng.random_range(0..7) {
            0 => format!("TIMESTAMP '{utc}'"),
            1 => format!("'{}'", tz_text(v, 0, "T").replace("+00:00", "Z")),
            2 => {
                let minutes = self.pick(&[120, -330, 840]);
                format!("TIMESTAMP '{}'", tz_text(v, minutes, " "))
            }
            3 => format!("CAST('{utc}' AS TIMESTAMP WITH TIME ZONE)"),
            4 => format!("arrow_cast('{utc}', 'Timestamp(Millisecond, Some(\"UTC\"))')"),
            5 => format!("TIMESTAMP '{}'", ts_text(v)),
            _ => format!("'{utc}'"),
        }
    }

    /// A decimal: as a DOUBLE literal, a decimal of the column's or another precision and
    /// scale, an integer, or (rarely) a string.
    fn dec_lit(&mut self, name: &str, pooled: Option<Value>, p: u8, s: i8) -> String {
        let max = 10i128.pow(u32::from(p)) - 1;
        let unit = 10i128.pow(s as u32);
        let v = match pooled {
            Some(Value::Dec(v)) => v,
            // Beyond the data: boundaries, and a data value moved past the precision of a
            // narrower stored decimal (equal to it after a wrapping conversion).
            _ => {
                let near = match self.pooled_value(name) {
                    Some(Value::Dec(v)) => v,
                    _ => 0,
                };
                let wrap =
                    10i128.pow(u32::from(self.pick(&[5u8, 8, 12, 18]))) * self.pick(&[1, -1]);
                self.pick(&[
                    0,
                    1,
                    -1,
                    unit,
                    max,
                    -max,
                    max + 1,
                    unit * 7 + unit / 2,
                    near + wrap,
                ])
            }
        };
        let text = dec_text(v, s);
        let fits = v.abs() <= max;
        match self.rng.random_range(0..12) {
            0..3 if fits => format!("CAST('{text}' AS DECIMAL({p}, {s}))"),
            3 if fits => format!("{text}::DECIMAL({}, {s})", p + 2),
            4 => format!("CAST('{text}' AS DECIMAL(38, {}))", s + 2),
            5 | 6 if v % unit == 0 => format!("{}", v / unit),
            7 if fits && self.chance(0.3) => format!("'{text}'"),
            _ => text,
        }
    }

    fn bin_lit(&mut self, pooled: Option<Value>) -> String {
        let v = match pooled {
            Some(Value::Bin(v)) => v,
            _ => self
                .pick(&[
                    &b""[..],
                    b"\x00",
                    b"zz",
                    b"\xff\xff\xff",
                    b"a\x00",
                    b"\x80\x00",
                ])
                .to_vec(),
        };
        let x = format!("X'{}'", hex(&v));
        let text = std::str::from_utf8(&v)
            .ok()
            .filter(|t| t.chars().all(|c| !c.is_control() && c != '\''));
        match self.rng.random_range(0..10) {
            0 => format!("arrow_cast({x}, 'LargeBinary')"),
            1 => format!("arrow_cast({x}, 'BinaryView')"),
            2 if text.is_some() => format!("CAST('{}' AS BYTEA)", text.unwrap_or_default()),
            _ => x,
        }
    }

    /// 1–7 literals of column `c` (more than 4 become a hashed IN in lakescan), sometimes
    /// with a NULL among them.
    pub fn lit_items(&mut self, c: usize) -> Vec<String> {
        let n = self.rng.random_range(1..=7);
        let mut items: Vec<String> = (0..n).map(|_| self.lit(c)).collect();
        if self.chance(0.15) {
            let at = self.rng.random_range(0..=items.len());
            items.insert(at, "NULL".to_string());
        }
        items
    }

    /// A list without NULL (see [`crate::predicates::Pred::drop_nulls_of_merged_lists`]).
    pub fn lit_list(&mut self, c: usize) -> String {
        let mut items = self.lit_items(c);
        items.retain(|v| v != "NULL");
        items.join(", ")
    }
}
