//! [`AdapterDecoders`]: the adapters a process can rebuild from a plan, by the kind
//! their [`EncodedAdapter`] names (the core's plain adapter, and what the table formats
//! add: `lakescan::codec::adapter_decoders`).

use std::sync::Arc;

use datafusion::common::{Result, plan_err};

use crate::reader::TableAdapter;
use crate::wire::EncodedAdapter;

/// Reads an adapter's state back.
pub type AdapterDecoder = fn(&[u8]) -> Result<Arc<dyn TableAdapter>>;

/// The adapters a process can rebuild, by kind.
#[derive(Debug, Clone, Default)]
pub struct AdapterDecoders(Vec<(&'static str, AdapterDecoder)>);

impl AdapterDecoders {
    /// The decoders of the core's own adapters (plain files).
    pub fn core() -> Self {
        Self(vec![(
            crate::reader::PlainAdapter::KIND,
            crate::reader::PlainAdapter::decode,
        )])
    }

    /// Adds the decoder of adapters of `kind`.
    pub fn with(mut self, kind: &'static str, decoder: AdapterDecoder) -> Self {
        self.0.push((kind, decoder));
        self
    }

    /// The adapter `encoded` describes; an error naming the kind when none decodes it.
    pub fn decode(&self, encoded: &EncodedAdapter) -> Result<Arc<dyn TableAdapter>> {
        match self.0.iter().find(|(k, _)| *k == encoded.kind) {
            Some((_, decode)) => decode(&encoded.state),
            None => {
                let known: Vec<&str> = self.0.iter().map(|(k, _)| *k).collect();
                plan_err!(
                    "unknown lakescan adapter kind '{}' in a plan (this process knows: {})",
                    encoded.kind,
                    known.join(", ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_adapter_kind_names_the_known_ones() {
        let encoded = EncodedAdapter {
            kind: "orc-acid".into(),
            state: vec![],
        };
        let err = AdapterDecoders::core()
            .decode(&encoded)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown lakescan adapter kind 'orc-acid'"),
            "{err}"
        );
        assert!(err.contains("plain"), "{err}");
    }
}
