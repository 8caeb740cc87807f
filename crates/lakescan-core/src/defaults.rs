//! [`MemberDefaults`]: the values of struct members a file does not store (Iceberg
//! `initial-default`s of members added to a struct after the file was written).
//! A member the file stores keeps its values, NULLs included; only an absent one reads its
//! default, and a member without a default reads NULL.

use std::collections::BTreeMap;

use datafusion::common::ScalarValue;
use serde::{Deserialize, Serialize};

/// Defaults of the members of one struct, by member name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberDefaults(BTreeMap<String, MemberDefault>);

/// The default of one member, and of the members of its own struct type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberDefault {
    /// The member's value where a file does not store it.
    #[serde(with = "crate::wire::opt_scalar")]
    pub value: Option<ScalarValue>,
    /// Defaults below it, when it is a struct.
    pub members: MemberDefaults,
}

impl MemberDefaults {
    /// Defaults from `(member name, default)` pairs.
    pub fn new(members: impl IntoIterator<Item = (String, MemberDefault)>) -> Self {
        Self(members.into_iter().collect())
    }

    /// The default of member `name`.
    pub fn get(&self, name: &str) -> Option<&MemberDefault> {
        self.0.get(name)
    }

    /// Whether no member has a default.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The default of the member at `path` (member names from the struct down).
    pub fn at(&self, path: &[String]) -> Option<&ScalarValue> {
        let (first, rest) = path.split_first()?;
        let member = self.get(first)?;
        match rest.is_empty() {
            true => member.value.as_ref(),
            false => member.members.at(rest),
        }
    }
}
