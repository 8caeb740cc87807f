//! [`validator`]: compares a query's rows with the expected lines of a record.
//!
//! Rows are compared one by one with the expected lines, after the runner's normalizer
//! (sqllogictest's `default_normalizer`: trim and collapse whitespace) has been applied to
//! every cell and every expected line; a row's cells are joined with one space. The row
//! counts must be equal.
//!
//! An expected line containing [`IGNORE_MARKER`] is a pattern: it is split at the markers and
//! the pieces must occur in the actual line in order, the first piece as a prefix and the last
//! as a suffix (without overlapping). `elapsed_compute=<slt:ignore>, output_rows=3` matches
//! `elapsed_compute=1.2ms, output_rows=3`; a line that is just `<slt:ignore>` matches any one
//! line. This is how `EXPLAIN ANALYZE` timings are matched.

use sqllogictest::Normalizer;

/// The wildcard of an expected line: matches any text (including none) within one line.
pub const IGNORE_MARKER: &str = "<slt:ignore>";

/// Validator for [`sqllogictest::Runner::with_validator`] and `update_test_file`: true when
/// every actual row matches its expected line (see the module docs).
pub fn validator(normalizer: Normalizer, actual: &[Vec<String>], expected: &[String]) -> bool {
    actual.len() == expected.len()
        && actual
            .iter()
            .zip(expected)
            .all(|(row, line)| row_matches(normalizer, row, line))
}

/// Whether one actual row matches one expected line, both normalized.
fn row_matches(normalizer: Normalizer, row: &[String], expected_line: &String) -> bool {
    let actual = row.iter().map(normalizer).collect::<Vec<_>>().join(" ");
    let expected = normalizer(expected_line);
    if expected.contains(IGNORE_MARKER) {
        matches_pattern(&actual, &expected)
    } else {
        actual == expected
    }
}

/// Whether `actual` matches `pattern`, a line with [`IGNORE_MARKER`] wildcards.
pub fn matches_pattern(actual: &str, pattern: &str) -> bool {
    let mut pieces = pattern.split(IGNORE_MARKER);
    let first = pieces.next().unwrap_or_default();
    let mut middle = pieces.collect::<Vec<_>>();
    let last = middle.pop().unwrap_or_default();
    let Some(rest) = actual.strip_prefix(first) else {
        return false;
    };
    let Some(mut rest) = rest.strip_suffix(last) else {
        return false;
    };
    for piece in middle {
        let Some(at) = rest.find(piece) else {
            return false;
        };
        rest = &rest[at + piece.len()..];
    }
    true
}

#[cfg(test)]
mod tests {
    use sqllogictest::default_normalizer;

    use super::*;

    fn check(actual: &[&[&str]], expected: &[&str]) -> bool {
        let actual: Vec<Vec<String>> = actual
            .iter()
            .map(|row| row.iter().map(|c| c.to_string()).collect())
            .collect();
        let expected: Vec<String> = expected.iter().map(|line| line.to_string()).collect();
        validator(default_normalizer, &actual, &expected)
    }

    #[test]
    fn plain_rows_compare_after_normalization() {
        assert!(check(&[&["1", "a  b"], &["2", "c"]], &["1 a b", " 2   c "]));
        assert!(!check(&[&["1"], &["2"]], &["1"]));
        assert!(!check(&[&["1"]], &["2"]));
    }

    #[test]
    fn ignore_marker_matches_prefix_middle_and_suffix() {
        assert!(matches_pattern("a xyz b", "a <slt:ignore> b"));
        assert!(matches_pattern(
            "time=1ms, rows=3, x",
            "time=<slt:ignore>, rows=3<slt:ignore>"
        ));
        assert!(matches_pattern(
            "p 1 q 2 r",
            "p <slt:ignore> q <slt:ignore> r"
        ));
        assert!(matches_pattern("anything", "<slt:ignore>"));
        assert!(!matches_pattern("a b", "a <slt:ignore> b"));
        assert!(!matches_pattern("x a y b", "a <slt:ignore> b"));
        assert!(!matches_pattern("p 1 r", "p <slt:ignore> q <slt:ignore> r"));
    }

    #[test]
    fn ignore_marker_works_row_by_row() {
        assert!(check(
            &[&["Plan", "elapsed=3ms rows=2"], &["x"]],
            &["Plan elapsed=<slt:ignore> rows=2", "x"]
        ));
        assert!(!check(
            &[&["Plan", "elapsed=3ms rows=1"]],
            &["Plan elapsed=<slt:ignore> rows=2"]
        ));
    }
}
