//! A [`HiveTable`] as a plan frame ([`lakescan_core::api::wire`]): its definition as `CREATE`
//! made it (location, the columns it inferred or was given, partition columns, options),
//! so the process that decodes it plans scans exactly as this one would. What the table
//! learned since (kept listings, merged file statistics) stays here: the decoding process
//! lists again. No secret crosses: `aws.*` options configure the session's object store,
//! never the table.

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema};
use datafusion::common::Result;
use datafusion::datasource::listing::ListingTableUrl;
use lakescan_core::api::wire::{self, NodeKind};
use serde::{Deserialize, Serialize};

use crate::options::HiveOptions;
use crate::table::HiveTable;

/// The body of a Hive table frame.
#[derive(Serialize, Deserialize)]
struct TableParts {
    name: String,
    location: String,
    #[serde(with = "lakescan_core::api::wire::schema")]
    data_columns: Schema,
    #[serde(with = "lakescan_core::api::wire::named_types")]
    partition_columns: Vec<(String, DataType)>,
    options: HiveOptions,
}

impl HiveTable {
    /// Appends this table as a plan frame to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<()> {
        let parts = TableParts {
            name: self.name().to_string(),
            location: self.location().as_str().to_string(),
            data_columns: Schema::new(self.definition.data_columns.clone()),
            partition_columns: self.partition_columns().to_vec(),
            options: self.definition.options.clone(),
        };
        wire::encode_frame(NodeKind::HiveTable, &parts, buf)
    }

    /// The table a frame body of [`NodeKind::HiveTable`] describes.
    pub fn decode(body: &[u8]) -> Result<Arc<Self>> {
        let parts: TableParts = wire::decode_body(body, "Hive table")?;
        let location = ListingTableUrl::parse(&parts.location)?;
        let columns = parts
            .data_columns
            .fields()
            .iter()
            .map(|f| f.as_ref().clone());
        Ok(Arc::new(HiveTable::try_new(
            parts.name,
            location,
            columns.collect(),
            parts.partition_columns,
            &parts.options,
        )?))
    }
}
