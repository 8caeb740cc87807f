//! lakescan's datafusion-proto codecs: plans with lakescan tables and scans that cross
//! processes (a distributed engine such as Ballista; `docs/architecture.md`, "Distributed
//! execution").
//!
//! ```text
//!  client ── logical plan ──▶ scheduler: LakeLogicalCodec decodes the Hive / Iceberg /
//!                             changelog provider (synchronously: no I/O), then plans
//!         scheduler ── stage ──▶ each task: LakePhysicalCodec decodes its LakeScanExec
//!                                (every partition's static split list; it runs its own)
//! ```
//!
//! Both codecs read and write lakescan's plan frames ([`crate::core::api::wire`]) and hand every
//! other node to an *inner* codec, the engine's own (Ballista's, which a session codec
//! replaces rather than extends), datafusion-proto's default otherwise. A frame of another
//! lakescan wire version, an unknown adapter kind or a table whose schema is not the one the
//! plan was made with is a clear error, never a different plan.

use std::sync::Arc;

use arrow::datatypes::{DataType, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::{Result, TableReference, not_impl_err, plan_err};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{
    AggregateUDF, Extension, HigherOrderUDF, LogicalPlan, ScalarUDF, WindowUDF,
};
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};
use datafusion_proto::logical_plan::{DefaultLogicalExtensionCodec, LogicalExtensionCodec};
use datafusion_proto::physical_plan::{DefaultPhysicalExtensionCodec, PhysicalExtensionCodec};

use crate::core::api::wire::{self, NodeKind};
use crate::core::api::{AdapterDecoders, LakeScanExec};
use crate::hive::HiveTable;
use crate::hive::conversion::HiveAdapter;
use crate::iceberg::IcebergTable;
use crate::iceberg::changelog::TableChanges;
use crate::iceberg::metadata_tables::IcebergMetadataTable;
use crate::iceberg::reader::IcebergAdapter;

/// The adapters of every lakescan table format, by kind.
pub fn adapter_decoders() -> AdapterDecoders {
    AdapterDecoders::core()
        .with(HiveAdapter::KIND, HiveAdapter::decode)
        .with(IcebergAdapter::KIND, IcebergAdapter::decode)
}

/// Encodes lakescan's table providers (Hive, Iceberg, Iceberg changelog); everything else
/// goes to the inner codec.
#[derive(Debug)]
pub struct LakeLogicalCodec {
    inner: Arc<dyn LogicalExtensionCodec>,
}

impl Default for LakeLogicalCodec {
    fn default() -> Self {
        Self::new(Arc::new(DefaultLogicalExtensionCodec {}))
    }
}

impl LakeLogicalCodec {
    /// lakescan's providers, and `inner` for the rest (the engine's codec).
    pub fn new(inner: Arc<dyn LogicalExtensionCodec>) -> Self {
        Self { inner }
    }
}

impl LogicalExtensionCodec for LakeLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        if !wire::is_frame(buf) {
            return self
                .inner
                .try_decode_table_provider(buf, table_ref, schema, ctx);
        }
        let (kind, body) = wire::open_frame(buf)?;
        let provider: Arc<dyn TableProvider> = match kind {
            NodeKind::HiveTable => HiveTable::decode(body)?,
            NodeKind::IcebergTable => Arc::new(IcebergTable::decode(body)?),
            NodeKind::IcebergChanges => Arc::new(TableChanges::decode(body)?),
            NodeKind::Scan => {
                return plan_err!("table {table_ref} was sent as a scan, not as a table");
            }
        };
        same_schema(table_ref, &provider.schema(), &schema)?;
        Ok(provider)
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        if let Some(table) = node.downcast_ref::<HiveTable>() {
            return table.encode(buf);
        }
        if let Some(table) = node.downcast_ref::<IcebergTable>() {
            return table.encode(buf);
        }
        if let Some(changes) = node.downcast_ref::<TableChanges>() {
            return changes.encode(buf);
        }
        if node.downcast_ref::<IcebergMetadataTable>().is_some() {
            return not_impl_err!(
                "Iceberg metadata table {table_ref} cannot be sent to another process yet: \
                 query it in one process"
            );
        }
        self.inner.try_encode_table_provider(table_ref, node, buf)
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.inner.try_decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udf(node, buf)
    }

    fn try_decode_higher_order_function(
        &self,
        name: &str,
        buf: &[u8],
    ) -> Result<Arc<HigherOrderUDF>> {
        self.inner.try_decode_higher_order_function(name, buf)
    }

    fn try_encode_higher_order_function(
        &self,
        node: &HigherOrderUDF,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        self.inner.try_encode_higher_order_function(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}

/// A decoded table must have the schema the plan was made with (its columns are referred to
/// by position downstream).
fn same_schema(table_ref: &TableReference, decoded: &SchemaRef, sent: &SchemaRef) -> Result<()> {
    let columns = |s: &SchemaRef| -> Vec<(String, DataType)> {
        let fields = s.fields().iter();
        fields
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect()
    };
    if columns(decoded) != columns(sent) {
        let names = |s: &SchemaRef| -> Vec<String> {
            let fields = s.fields().iter();
            fields
                .map(|f| format!("{} {}", f.name(), f.data_type()))
                .collect()
        };
        return plan_err!(
            "table {table_ref} decodes with columns [{}], but the plan was made with [{}]",
            names(decoded).join(", "),
            names(sent).join(", ")
        );
    }
    Ok(())
}

/// Encodes [`LakeScanExec`] (with its adapter by kind); everything else goes to the
/// inner codec.
#[derive(Debug)]
pub struct LakePhysicalCodec {
    adapters: AdapterDecoders,
    inner: Arc<dyn PhysicalExtensionCodec>,
}

impl Default for LakePhysicalCodec {
    fn default() -> Self {
        Self::new(Arc::new(DefaultPhysicalExtensionCodec {}))
    }
}

impl LakePhysicalCodec {
    /// lakescan's scans, and `inner` for the rest (the engine's codec).
    pub fn new(inner: Arc<dyn PhysicalExtensionCodec>) -> Self {
        Self {
            adapters: adapter_decoders(),
            inner,
        }
    }
}

impl PhysicalExtensionCodec for LakePhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !wire::is_frame(buf) {
            return self.inner.try_decode(buf, inputs, ctx);
        }
        match wire::open_frame(buf)? {
            (NodeKind::Scan, body) => Ok(Arc::new(LakeScanExec::decode(
                body,
                ctx,
                self,
                &self.adapters,
            )?)),
            (kind, _) => plan_err!("a lakescan {kind:?} frame where a plan node was expected"),
        }
    }

    fn try_encode(&self, node: Arc<dyn ExecutionPlan>, buf: &mut Vec<u8>) -> Result<()> {
        match node.downcast_ref::<LakeScanExec>() {
            Some(scan) => scan.encode(self, buf),
            None => self.inner.try_encode(node, buf),
        }
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.inner.try_decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udf(node, buf)
    }

    fn try_decode_expr(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn PhysicalExpr>],
    ) -> Result<Arc<dyn PhysicalExpr>> {
        self.inner.try_decode_expr(buf, inputs)
    }

    fn try_encode_expr(&self, node: &Arc<dyn PhysicalExpr>, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_expr(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}
