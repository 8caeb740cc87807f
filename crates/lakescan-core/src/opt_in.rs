//! Columns a table shows only when asked: Hive's hidden columns (`$path`, `$row_index`, …)
//! and Iceberg's metadata columns (`_file`, `_pos`, …). One parser for the option that
//! names them: `all`, or a comma list of names (case-insensitive, in any order, repeats
//! ignored), kept in schema order.

use datafusion::common::{Result, plan_err};

/// A column a table shows only when asked, of one table format.
pub trait OptInColumn: Copy + Ord + 'static {
    /// What the format calls them, in messages (`hidden column`, `metadata column`).
    const KIND: &'static str;
    /// Every such column, in schema order.
    fn all() -> &'static [Self];
    /// Its name in SQL.
    fn name(self) -> &'static str;
}

/// What an option names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptIn<C> {
    /// `all`: every one that applies to the table.
    All,
    /// These, in schema order (none when empty).
    Only(Vec<C>),
}

/// Parses `text`, the value of option `option` (named in errors): `all`, or a comma list
/// of names of `C`; an unknown name is an error listing the known ones.
pub fn parse_opt_in<C: OptInColumn>(option: &str, text: &str) -> Result<OptIn<C>> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("all") {
        return Ok(OptIn::All);
    }
    let mut out: Vec<C> = vec![];
    for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let Some(c) = C::all()
            .iter()
            .copied()
            .find(|c| c.name().eq_ignore_ascii_case(name))
        else {
            let names: Vec<_> = C::all().iter().map(|c| c.name()).collect();
            return plan_err!(
                "{option}: unknown {} '{name}' (known: all, {})",
                C::KIND,
                names.join(", ")
            );
        };
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out.sort();
    Ok(OptIn::Only(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Hidden {
        Path,
        Size,
    }

    impl OptInColumn for Hidden {
        const KIND: &'static str = "hidden column";

        fn all() -> &'static [Self] {
            &[Hidden::Path, Hidden::Size]
        }

        fn name(self) -> &'static str {
            match self {
                Hidden::Path => "$path",
                Hidden::Size => "$size",
            }
        }
    }

    #[test]
    fn all_a_list_in_schema_order_or_an_error_naming_the_known_ones() {
        let parse = |text| parse_opt_in::<Hidden>("hidden_columns", text);
        assert_eq!(parse(" ALL ").unwrap(), OptIn::All);
        assert_eq!(
            parse("$size, $PATH,$size,").unwrap(),
            OptIn::Only(vec![Hidden::Path, Hidden::Size])
        );
        assert_eq!(parse("").unwrap(), OptIn::Only(vec![]));
        let err = parse("$path,$nope").unwrap_err().to_string();
        assert!(
            err.contains(
                "hidden_columns: unknown hidden column '$nope' (known: all, $path, $size)"
            ),
            "{err}"
        );
    }
}
