//! [`FactoryDecoders`]: the reader factories a process can rebuild from a plan, by the kind
//! their [`EncodedFactory`] names (the core's Parquet factory, and what the table formats
//! add: `lakescan::codec::factory_decoders`).

use std::sync::Arc;

use datafusion::common::{Result, plan_err};

use crate::reader::SplitReaderFactory;
use crate::wire::EncodedFactory;

/// Reads a factory's state back.
pub type FactoryDecoder = fn(&[u8]) -> Result<Arc<dyn SplitReaderFactory>>;

/// The reader factories a process can rebuild, by kind.
#[derive(Debug, Clone, Default)]
pub struct FactoryDecoders(Vec<(&'static str, FactoryDecoder)>);

impl FactoryDecoders {
    /// The decoders of the core's own factories (plain Parquet).
    pub fn core() -> Self {
        Self(vec![(
            crate::parquet::ParquetSplitReaderFactory::KIND,
            crate::parquet::ParquetSplitReaderFactory::decode,
        )])
    }

    /// Adds the decoder of factories of `kind`.
    pub fn with(mut self, kind: &'static str, decoder: FactoryDecoder) -> Self {
        self.0.push((kind, decoder));
        self
    }

    /// The factory `encoded` describes; an error naming the kind when none decodes it.
    pub fn decode(&self, encoded: &EncodedFactory) -> Result<Arc<dyn SplitReaderFactory>> {
        match self.0.iter().find(|(k, _)| *k == encoded.kind) {
            Some((_, decode)) => decode(&encoded.state),
            None => {
                let known: Vec<&str> = self.0.iter().map(|(k, _)| *k).collect();
                plan_err!(
                    "unknown lakescan reader kind '{}' in a plan (this process knows: {})",
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
    fn an_unknown_reader_kind_names_the_known_ones() {
        let encoded = EncodedFactory {
            kind: "orc-acid".into(),
            state: vec![],
        };
        let err = FactoryDecoders::core()
            .decode(&encoded)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown lakescan reader kind 'orc-acid'"),
            "{err}"
        );
        assert!(err.contains("parquet"), "{err}");
    }
}
