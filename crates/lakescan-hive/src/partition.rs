//! Hive partition directories: `k=v` segments, URL-unescaping, the default partition, and
//! typed values for pruning ([`TypedValues`] keeps them per table: each query's listing
//! meets the same directory names again).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue, exec_err};
use percent_encoding::percent_decode_str;

/// The directory name Hive writes for a NULL partition value.
pub const HIVE_DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// One path segment read as a directory of partition key `key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// `key=value`: the URL-unescaped value, `None` for the default partition (NULL).
    Value(Option<String>),
    /// `key=value` whose unescaped value is not UTF-8 (`k=%FF`).
    NotUtf8,
    /// Not `key=…`: another key, an empty key (`=v`), or no `=` at all.
    NotThisKey,
}

/// Parses one path segment `key=value` for `key` (the key compared ignoring ASCII case;
/// `%ZZ`, not an escape, stays as written, as in Hive).
pub fn parse_segment(segment: &str, key: &str) -> Segment {
    let Some((k, v)) = segment.split_once('=') else {
        return Segment::NotThisKey;
    };
    if !k.eq_ignore_ascii_case(key) {
        return Segment::NotThisKey;
    }
    match percent_decode_str(v).decode_utf8() {
        Ok(value) => Segment::Value((value != HIVE_DEFAULT_PARTITION).then(|| value.into_owned())),
        Err(_) => Segment::NotUtf8,
    }
}

/// Whether a directory or file name is hidden (`_SUCCESS`, `.crc`, `_temporary/`): not
/// data, and not a partition directory.
pub fn is_hidden(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('.')
}

/// A path in messages as the user wrote it: `prefix` (`/` for the local file system, the
/// store's URL otherwise) before the object-store path, joined only when shown.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a> {
    /// What users write before the store's paths.
    pub prefix: &'a str,
    /// The path in the store.
    pub path: &'a str,
}

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.prefix, self.path)
    }
}

/// Types a partition value; a value that does not parse names the directory.
pub fn typed_value(
    dir: Shown<'_>,
    key: &str,
    value: Option<&str>,
    t: &DataType,
) -> Result<ScalarValue> {
    let Some(value) = value else {
        return ScalarValue::try_from(t);
    };
    match ScalarValue::try_from_string(value.to_string(), t) {
        Ok(v) => Ok(v),
        Err(e) => exec_err!(
            "partition directory '{dir}': value '{value}' of partition column '{key}' is not a valid {t}: {e}"
        ),
    }
}

/// Values typed per partition column and kept between queries: typing a directory's value
/// casts a one-value string array, a few microseconds each, and a table root of a thousand
/// partitions is listed at every query. Clones share the values.
#[derive(Debug, Clone, Default)]
pub struct TypedValues {
    columns: Arc<Mutex<Vec<ColumnValues>>>,
}

/// The typed values of one column.
#[derive(Debug)]
struct ColumnValues {
    data_type: DataType,
    by_text: HashMap<String, ScalarValue>,
}

/// Values kept per column at most (about 100 bytes each); past it the column starts over.
const KEPT_VALUES: usize = 100_000;

impl TypedValues {
    /// [`typed_value`] of the partition column at `column`, from the kept values when this
    /// text was typed before (as this type).
    pub fn typed(
        &self,
        column: usize,
        dir: Shown<'_>,
        key: &str,
        value: Option<&str>,
        t: &DataType,
    ) -> Result<ScalarValue> {
        let Some(text) = value else {
            return typed_value(dir, key, None, t);
        };
        let mut columns = self.columns.lock().unwrap_or_else(|p| p.into_inner());
        while columns.len() <= column {
            columns.push(ColumnValues {
                data_type: t.clone(),
                by_text: HashMap::new(),
            });
        }
        let values = &mut columns[column];
        if values.data_type != *t || values.by_text.len() >= KEPT_VALUES {
            values.data_type = t.clone();
            values.by_text.clear();
        }
        if let Some(typed) = values.by_text.get(text) {
            return Ok(typed.clone());
        }
        let typed = typed_value(dir, key, value, t)?;
        values.by_text.insert(text.to_string(), typed.clone());
        Ok(typed)
    }
}

/// The type of an undeclared partition column from its values: all integers → BIGINT,
/// all `YYYY-MM-DD` dates → DATE, otherwise VARCHAR. NULLs do not vote.
pub fn infer_type<'a>(values: impl IntoIterator<Item = &'a str>) -> DataType {
    let values: Vec<&str> = values.into_iter().collect();
    if values.is_empty() {
        return DataType::Utf8;
    }
    if values.iter().all(|v| v.parse::<i64>().is_ok()) {
        return DataType::Int64;
    }
    let is_date = |v: &str| v.len() == 10 && chrono_date(v);
    if values.iter().all(|v| is_date(v)) {
        return DataType::Date32;
    }
    DataType::Utf8
}

fn chrono_date(v: &str) -> bool {
    ScalarValue::try_from_string(v.to_string(), &DataType::Date32).is_ok_and(|d| !d.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_unescape_and_default_partition() {
        assert_eq!(
            parse_segment("region=us%2Feast", "region"),
            Segment::Value(Some("us/east".into()))
        );
        assert_eq!(
            parse_segment("day=__HIVE_DEFAULT_PARTITION__", "day"),
            Segment::Value(None)
        );
        assert_eq!(
            parse_segment("DAY=%ZZ", "day"),
            Segment::Value(Some("%ZZ".into()))
        );
        assert_eq!(
            parse_segment("day==1", "day"),
            Segment::Value(Some("=1".into()))
        );
        assert_eq!(parse_segment("day=%FF", "day"), Segment::NotUtf8);
        assert_eq!(parse_segment("other=1", "day"), Segment::NotThisKey);
        assert_eq!(parse_segment("=1", "day"), Segment::NotThisKey);
        assert_eq!(parse_segment("nodelimiter", "day"), Segment::NotThisKey);
    }

    #[test]
    fn inference() {
        assert_eq!(infer_type(["1", "20"]), DataType::Int64);
        assert_eq!(infer_type(["2024-01-02", "2024-01-03"]), DataType::Date32);
        assert_eq!(infer_type(["2024-01-02", "x"]), DataType::Utf8);
    }

    #[test]
    fn kept_values_are_the_typed_values_and_errors_are_not_kept() {
        let kept = TypedValues::default();
        for _ in 0..2 {
            let seven = kept.typed(
                1,
                Shown {
                    prefix: "/",
                    path: "t/p=07",
                },
                "p",
                Some("07"),
                &DataType::Int32,
            );
            assert_eq!(seven.unwrap(), ScalarValue::Int32(Some(7)));
            let day = kept.typed(
                0,
                Shown {
                    prefix: "/",
                    path: "t/d=2024-01-02",
                },
                "d",
                Some("2024-01-02"),
                &DataType::Date32,
            );
            assert_eq!(
                day.unwrap(),
                typed_value(
                    Shown {
                        prefix: "/",
                        path: ""
                    },
                    "d",
                    Some("2024-01-02"),
                    &DataType::Date32
                )
                .unwrap()
            );
            let bad = kept.typed(
                1,
                Shown {
                    prefix: "/",
                    path: "t/p=x",
                },
                "p",
                Some("x"),
                &DataType::Int32,
            );
            assert!(bad.unwrap_err().to_string().contains("'/t/p=x'"));
            assert!(
                kept.typed(
                    1,
                    Shown {
                        prefix: "/",
                        path: "t/p="
                    },
                    "p",
                    None,
                    &DataType::Int32
                )
                .unwrap()
                .is_null()
            );
        }
        // The same text as another type (a table whose column type changed) is typed again.
        let wide = kept.typed(
            1,
            Shown {
                prefix: "/",
                path: "t/p=07",
            },
            "p",
            Some("07"),
            &DataType::Int64,
        );
        assert_eq!(wide.unwrap(), ScalarValue::Int64(Some(7)));
        let text = kept.typed(
            1,
            Shown {
                prefix: "/",
                path: "t/p=07",
            },
            "p",
            Some("07"),
            &DataType::Utf8,
        );
        assert_eq!(text.unwrap(), ScalarValue::Utf8(Some("07".into())));
    }

    #[test]
    fn bad_value_names_directory() {
        let err = typed_value(
            Shown {
                prefix: "/",
                path: "t/day=x",
            },
            "day",
            Some("x"),
            &DataType::Date32,
        )
        .unwrap_err();
        assert!(err.to_string().contains("t/day=x"), "{err}");
        assert!(
            typed_value(
                Shown {
                    prefix: "/",
                    path: "d"
                },
                "k",
                None,
                &DataType::Int64
            )
            .unwrap()
            .is_null()
        );
    }
}
