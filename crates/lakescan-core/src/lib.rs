//! lakescan-core: the engine-agnostic scan path.
//!
//! | module        | owns                                                                  |
//! |---------------|-----------------------------------------------------------------------|
//! | [`handle`]    | `TableHandle`, `ColumnHandle` + roles, `Assignments`                  |
//! | [`split`]     | `FileSplit`: one byte range of one file and its values (immutable)   |
//! | [`deleted_rows`] | `DeletedRows`: positions of a file its deletes remove            |
//! | [`defaults`]  | `MemberDefaults`: `initial-default`s of struct members              |
//! | [`subfield`]  | `Subfield`: a column or a field of a nested struct (filter keys)    |
//! | `required`    | `RequiredSubfields`: which parts of a column a scan needs            |
//! | [`filter`]    | typed per-column `Filter`: arrays, constants, statistics, exact merge |
//! | [`extract`]   | DataFusion predicate → filters + residual                             |
//! | [`scan_spec`] | `ScanSpec`: channels, outputs, filters, residual                      |
//! | `adaptive`    | `AdaptiveState`: observed filter costs, shared by splits              |
//! | [`field_ids`] | `FieldIdMatching`: the table's fields by id and name mapping (Iceberg) |
//! | [`binding`]   | `SplitBinding`: per-split file columns, constants, generated columns |
//! | [`mod@format`]| the format seam: `FormatSeam`, the split lifecycle, what formats share |
//! | `formats`     | `FileFormat::seam`: the one dispatch over the formats               |
//! | [`parquet`]   | the selective Parquet split reader                                    |
//! | `orc`         | the ORC split reader                                                  |
//! | [`avro`]      | the Avro split reader                                                 |
//! | [`io`]        | `CountingReader`: counted byte reads of data files, for every format |
//! | `split_filters`   | `SplitFilters`, `DynamicFilters`: the filters in force for a split |
//! | [`aggregate_bounds`] | an aggregate's `min`/`max` filter left unapplied while a bound is missing |
//! | [`reader`]    | the reader seam: `SplitReader`, `TableAdapter`, `DeleteSource`, `SplitContext` |
//! | [`source`]    | `FileDataSource`: the driver, one split after another              |
//! | [`metrics`]   | `LakeScanMetrics`                                                    |
//! | [`opt_in`]    | `parse_opt_in`: `all` or a list of the columns a table shows on request |
//! | [`calendar`]  | day numbers of the proleptic and Java's hybrid (Julian) calendars     |
//! | [`config`]    | `LakeScanOptions`: `SET lakescan.…` session settings                 |
//! | [`requests`]  | `CountingConnector`: HTTP requests and retries of a read, for the scan's metrics |
//! | [`store`]     | `StoreOptions`: a table's object store from `aws.*` options, the session or the environment |
//! | [`scan_statistics`] | `ScanStatistics`: rows, bytes, min/max for the optimizer        |
//! | [`wire`]      | plan frames: plan data to bytes and back (distributed execution)   |
//! | [`exec`]      | `LakeScanExec`, the DataFusion leaf operator; scheduling, partitions and preload |
//!
//! The core knows nothing of Hive or Iceberg; `lakescan-hive` and `lakescan-iceberg` build
//! handles and splits and plug their deletes and stages into the split reader through
//! [`reader::TableAdapter`].

pub(crate) mod adaptive;
pub mod aggregate_bounds;
pub mod avro;
pub mod binding;
pub mod calendar;
pub mod config;
pub mod defaults;
pub mod deleted_rows;
pub mod exec;
pub mod extract;
pub mod field_ids;
pub mod filter;
pub mod format;
pub(crate) mod formats;
pub mod handle;
pub mod io;
pub mod metrics;
pub mod opt_in;
pub(crate) mod orc;
pub mod parquet;
pub mod reader;
pub mod requests;
pub(crate) mod required;
pub mod scan_spec;
pub mod scan_statistics;
pub mod source;
pub mod split;
pub(crate) mod split_filters;
pub mod store;
pub mod subfield;
pub mod wire;
