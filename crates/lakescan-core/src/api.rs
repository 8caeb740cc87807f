//! The adapter API: everything other crates may use of the core, in one place.
//!
//! Every other module of the core is private to it. A table format (Hive, Iceberg) builds
//! a [`TableHandle`] and [`FileSplit`]s, extracts the filters it can push down
//! ([`Extraction`]), hands them to [`LakeScanExec`] as a [`PlannedScan`], and plugs what
//! is per table into the split reader through its [`TableAdapter`]. Embedders (the facade,
//! the codec, a cluster) add the session settings ([`LakeScanConfig`]), the plan frames
//! ([`wire`]) and the object stores ([`StoreOptions`], [`EnvironmentStores`]).
//!
//! The groups below follow that order: what a table is, how it is split, how filters are
//! planned, what an adapter plugs into a split's reader, what deletes read, statistics,
//! execution, and the session's settings, stores and requests.

// What a table is: its columns, their roles and ids.
pub use crate::defaults::{MemberDefault, MemberDefaults};
pub use crate::field_ids::{FieldIdMatching, FieldIdNode, FieldIds, MappedName, NestedIds};
pub use crate::handle::{
    Assignments, ColumnHandle, ColumnRole, MissingStageColumn, StageColumns, TableHandle,
};
pub use crate::opt_in::{OptIn, OptInColumn, parse_opt_in};
pub use crate::subfield::Subfield;

// How a table is split: one byte range of one file, its format and constant values.
pub use crate::split::{
    AdapterKey, AdapterTable, FileFormat, FileSplit, FileSplitBuilder, SplitValue, SplitValues,
    ValueKind, written_path,
};

// How filters are planned: DataFusion predicates to typed per-column filters.
pub use crate::extract::{Extraction, exact_pushdown, physical_conjuncts};
pub use crate::filter::eval::{ColumnStats, keep_mask};
pub use crate::filter::{Filter, NullResult};
pub use crate::scan_spec::ScanSpec;

// What a table adapter plugs into a split's reader.
pub use crate::binding::can_adapt;
pub use crate::reader::{
    BatchStage, BatchTransform, DeleteSource, Deletes, SplitContext, TableAdapter,
};

// What delete files read: whole columns by field id, in any format.
pub use crate::avro::header::AvroHeader;
pub use crate::deleted_rows::DeletedRows;
pub use crate::format::{ColumnsById, FileAccess, PageIndex, WholeColumns, WholeFile};
pub use crate::io::CountingReader;
pub use crate::io::local_file::is_default_local_store;
pub use crate::metrics::ReadCounters;

// Statistics for the optimizer.
pub use crate::scan_statistics::{
    FileSetStatistics, RowCount, ScanStatistics, data_schema, file_statistics, merge_files,
};

// Execution: the leaf operator, its planning figures, scheduling and lifecycle events.
pub use crate::aggregate_bounds::GuardAggregateFilters;
pub use crate::exec::{
    AdapterDecoder, AdapterDecoders, LakeScanExec, PlannedScan, PlanningStats, SplitScheduling,
    assign_splits,
};
pub use crate::source::{LifecycleHook, SplitEvent};

// The session's settings, object stores and request counts.
pub use crate::config::{LakeScanConfig, LakeScanOptions, parse_split_size};
pub use crate::requests::{Attempts, CountingConnector, Tally, single_read};
pub use crate::store::{EnvironmentStores, StoreOptions};

// Day numbers of the proleptic Gregorian and Java's hybrid calendars (Hive's hash of dates).
pub use crate::calendar::{
    GREGORIAN_CUTOVER_DAY, civil_from_days, days_from_civil, julian_days, proleptic_to_hybrid,
};

/// Plan frames: plan data to bytes and back, and the serde helpers a table's frame uses.
pub mod wire {
    pub use crate::wire::{
        EncodedAdapter, LAKESCAN_VERSION, MAGIC, NodeKind, WIRE_VERSION, decode_body, encode_body,
        encode_frame, is_frame, named_types, open_frame, path, schema, serde_bytes_vec, store_url,
    };
}
