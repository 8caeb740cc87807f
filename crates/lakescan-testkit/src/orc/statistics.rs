//! Column statistics of the ORC test writer: gathered value by value per file, stripe and
//! row group, and written as `orc-rust`'s protobuf `ColumnStatistics`.

use orc_rust::proto;

/// What a column's statistics are of.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) enum Kind {
    #[default]
    Unknown,
    Int,
    Double,
    String,
    Boolean,
    Decimal(i8),
    Date,
    Timestamp,
    Binary,
}

/// Column statistics being gathered.
#[derive(Debug, Clone, Default)]
pub(super) struct Stats {
    pub(super) values: u64,
    pub(super) has_null: bool,
    pub(super) kind: Kind,
    pub(super) int: Option<(i64, i64, i64)>,
    pub(super) double: Option<(f64, f64, f64)>,
    pub(super) string: Option<(String, String, i64)>,
    pub(super) decimal: Option<(i128, i128, i128)>,
    pub(super) true_count: u64,
    pub(super) binary_sum: i64,
}

impl Stats {
    pub(super) fn int(&mut self, v: i64) {
        self.kind = Kind::Int;
        self.int = Some(match self.int {
            None => (v, v, v),
            Some((a, b, s)) => (a.min(v), b.max(v), s.wrapping_add(v)),
        });
    }

    pub(super) fn date(&mut self, v: i32) {
        self.int(i64::from(v));
        self.kind = Kind::Date;
    }

    pub(super) fn timestamp(&mut self, millis: i64) {
        self.int(millis);
        self.kind = Kind::Timestamp;
    }

    pub(super) fn double(&mut self, v: f64) {
        self.kind = Kind::Double;
        self.double = Some(match self.double {
            None => (v, v, v),
            Some((a, b, s)) => (a.min(v), b.max(v), s + v),
        });
    }

    pub(super) fn string(&mut self, v: &str) {
        self.kind = Kind::String;
        let n = v.len() as i64;
        self.string = Some(match self.string.take() {
            None => (v.to_string(), v.to_string(), n),
            Some((a, b, s)) => (
                if v < a.as_str() { v.to_string() } else { a },
                if v > b.as_str() { v.to_string() } else { b },
                s + n,
            ),
        });
    }

    pub(super) fn decimal(&mut self, v: i128, scale: i8) {
        self.kind = Kind::Decimal(scale);
        self.decimal = Some(match self.decimal {
            None => (v, v, v),
            Some((a, b, s)) => (a.min(v), b.max(v), s.wrapping_add(v)),
        });
    }

    pub(super) fn merge(&mut self, other: &Stats) {
        self.values += other.values;
        self.has_null |= other.has_null;
        if other.kind != Kind::Unknown {
            self.kind = other.kind;
        }
        self.true_count += other.true_count;
        self.binary_sum += other.binary_sum;
        if let Some((a, b, s)) = other.int {
            self.int = Some(match self.int {
                None => (a, b, s),
                Some((x, y, t)) => (x.min(a), y.max(b), t.wrapping_add(s)),
            });
        }
        if let Some((a, b, s)) = other.double {
            self.double = Some(match self.double {
                None => (a, b, s),
                Some((x, y, t)) => (x.min(a), y.max(b), t + s),
            });
        }
        if let Some((a, b, s)) = other.string.clone() {
            self.string = Some(match self.string.take() {
                None => (a, b, s),
                Some((x, y, t)) => (x.min(a), y.max(b), t + s),
            });
        }
        if let Some((a, b, s)) = other.decimal {
            self.decimal = Some(match self.decimal {
                None => (a, b, s),
                Some((x, y, t)) => (x.min(a), y.max(b), t.wrapping_add(s)),
            });
        }
    }

    pub(super) fn to_proto(&self) -> proto::ColumnStatistics {
        let mut out = proto::ColumnStatistics {
            number_of_values: Some(self.values),
            has_null: Some(self.has_null),
            ..Default::default()
        };
        match self.kind {
            Kind::Int => {
                out.int_statistics = self.int.map(|(a, b, s)| proto::IntegerStatistics {
                    minimum: Some(a),
                    maximum: Some(b),
                    sum: Some(s),
                })
            }
            Kind::Date => {
                out.date_statistics = self.int.map(|(a, b, _)| proto::DateStatistics {
                    minimum: Some(a as i32),
                    maximum: Some(b as i32),
                })
            }
            Kind::Timestamp => {
                out.timestamp_statistics = self.int.map(|(a, b, _)| proto::TimestampStatistics {
                    minimum: Some(a),
                    maximum: Some(b),
                    minimum_utc: Some(a),
                    maximum_utc: Some(b),
                    ..Default::default()
                })
            }
            Kind::Double => {
                out.double_statistics = self.double.map(|(a, b, s)| proto::DoubleStatistics {
                    minimum: Some(a),
                    maximum: Some(b),
                    sum: Some(s),
                })
            }
            Kind::String => {
                out.string_statistics =
                    self.string
                        .clone()
                        .map(|(a, b, s)| proto::StringStatistics {
                            minimum: Some(a),
                            maximum: Some(b),
                            sum: Some(s),
                            ..Default::default()
                        })
            }
            Kind::Boolean => {
                out.bucket_statistics = Some(proto::BucketStatistics {
                    count: vec![self.true_count],
                })
            }
            Kind::Decimal(scale) => {
                let text = |v: i128| decimal_text(v, scale);
                out.decimal_statistics = self.decimal.map(|(a, b, s)| proto::DecimalStatistics {
                    minimum: Some(text(a)),
                    maximum: Some(text(b)),
                    sum: Some(text(s)),
                })
            }
            Kind::Binary => {
                out.binary_statistics = Some(proto::BinaryStatistics {
                    sum: Some(self.binary_sum),
                })
            }
            Kind::Unknown => {}
        }
        out
    }
}

/// An unscaled decimal as text (`-12.345`).
pub(super) fn decimal_text(v: i128, scale: i8) -> String {
    if scale <= 0 {
        return v.to_string();
    }
    let scale = scale as usize;
    let digits = v.unsigned_abs().to_string();
    let digits = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = digits.split_at(digits.len() - scale);
    format!("{}{int}.{frac}", if v < 0 { "-" } else { "" })
}
