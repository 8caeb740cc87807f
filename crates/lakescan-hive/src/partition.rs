//! Hive partition directories: `k=v` segments, URL-unescaping, the default partition, and
//! typed values for pruning.

use arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue, exec_err};
use percent_encoding::percent_decode_str;

/// The directory name Hive writes for a NULL partition value.
pub const HIVE_DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Parses one path segment `key=value` for `key`: `Some(value)` where `None` is NULL.
pub fn parse_segment(segment: &str, key: &str) -> Option<Option<String>> {
    let (k, v) = segment.split_once('=')?;
    if !k.eq_ignore_ascii_case(key) {
        return None;
    }
    let value = percent_decode_str(v).decode_utf8_lossy().into_owned();
    Some((value != HIVE_DEFAULT_PARTITION).then_some(value))
}

/// Types a partition value; a value that does not parse names the directory.
pub fn typed_value(dir: &str, key: &str, value: Option<&str>, t: &DataType) -> Result<ScalarValue> {
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
            Some(Some("us/east".into()))
        );
        assert_eq!(
            parse_segment("day=__HIVE_DEFAULT_PARTITION__", "day"),
            Some(None)
        );
        assert_eq!(parse_segment("other=1", "day"), None);
        assert_eq!(parse_segment("nodelimiter", "day"), None);
    }

    #[test]
    fn inference() {
        assert_eq!(infer_type(["1", "20"]), DataType::Int64);
        assert_eq!(infer_type(["2024-01-02", "2024-01-03"]), DataType::Date32);
        assert_eq!(infer_type(["2024-01-02", "x"]), DataType::Utf8);
    }

    #[test]
    fn bad_value_names_directory() {
        let err = typed_value("t/day=x", "day", Some("x"), &DataType::Date32).unwrap_err();
        assert!(err.to_string().contains("t/day=x"), "{err}");
        assert!(
            typed_value("d", "k", None, &DataType::Int64)
                .unwrap()
                .is_null()
        );
    }
}
