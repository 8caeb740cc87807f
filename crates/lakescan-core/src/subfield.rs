//! [`Subfield`]: a path into a column — the column itself or a field of a (nested) struct.

use std::fmt;

use arrow::array::{ArrayRef, AsArray};
use arrow::datatypes::DataType;
use datafusion::common::{Result, exec_err};
use serde::{Deserialize, Serialize};

/// `column` or `column.a.b` for struct fields. Ordered so filters list deterministically.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Subfield {
    column: String,
    path: Vec<String>,
}

impl Subfield {
    /// The whole column.
    pub fn column(name: impl Into<String>) -> Self {
        Self {
            column: name.into(),
            path: vec![],
        }
    }

    /// A field inside struct column `name`, one struct field name per level.
    pub fn nested(name: impl Into<String>, path: Vec<String>) -> Self {
        Self {
            column: name.into(),
            path,
        }
    }

    /// The top-level column name.
    pub fn root(&self) -> &str {
        &self.column
    }

    /// Struct field names below the column; empty for the column itself.
    pub fn path(&self) -> &[String] {
        &self.path
    }

    /// The type of this subfield inside a column of type `root_type`.
    pub fn resolve_type(&self, root_type: &DataType) -> Option<DataType> {
        let mut t = root_type.clone();
        for name in &self.path {
            let DataType::Struct(fields) = &t else {
                return None;
            };
            t = fields
                .iter()
                .find(|f| f.name() == name)?
                .data_type()
                .clone();
        }
        Some(t)
    }

    /// The subfield's values inside `root` (an array of the column). Like DataFusion's
    /// `get_field`, a struct child is returned as stored.
    pub fn extract(&self, root: &ArrayRef) -> Result<ArrayRef> {
        let mut current = root.clone();
        for name in &self.path {
            let Some(child) = current.as_struct_opt().and_then(|s| s.column_by_name(name)) else {
                return exec_err!("subfield {self}: no struct field '{name}'");
            };
            current = child.clone();
        }
        Ok(current)
    }
}

impl fmt::Display for Subfield {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.column)?;
        for p in &self.path {
            write!(f, ".{p}")?;
        }
        Ok(())
    }
}
