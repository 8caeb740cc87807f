//! lakescan-core: the engine-agnostic scan path.
//!
//! | module        | owns                                                                  |
//! |---------------|-----------------------------------------------------------------------|
//! | [`api`]       | the adapter API: what other crates may use, re-exported in one place |
//! | `handle`    | `TableHandle`, `ColumnHandle` + roles, `Assignments`                  |
//! | `split`     | `FileSplit`: one byte range of one file and its values (immutable)   |
//! | `deleted_rows` | `DeletedRows`: positions of a file its deletes remove            |
//! | `defaults`  | `MemberDefaults`: `initial-default`s of struct members              |
//! | `subfield`  | `Subfield`: a column or a field of a nested struct (filter keys)    |
//! | `required`    | `RequiredSubfields`: which parts of a column a scan needs            |
//! | `filter`    | typed per-column `Filter`: arrays, constants, statistics, exact merge |
//! | `extract`   | DataFusion predicate → filters + residual                             |
//! | `scan_spec` | `ScanSpec`: channels, outputs, filters, residual                      |
//! | `adaptive`    | `AdaptiveState`: observed filter costs, shared by splits              |
//! | `field_ids` | `FieldIdMatching`: the table's fields by id and name mapping (Iceberg) |
//! | `column_case` | Hive's matching of file columns to table columns ignoring case      |
//! | `binding`   | `SplitBinding`: per-split file columns, constants, generated columns |
//! | `format`    | the format seam: `FormatSeam`, the split lifecycle, what formats share |
//! | `formats`     | `FileFormat::seam`: the one dispatch over the formats               |
//! | `parquet`   | the selective Parquet split reader                                    |
//! | `orc`         | the ORC split reader                                                  |
//! | `avro`      | the Avro split reader                                                 |
//! | `io`        | `CountingReader`: counted byte reads of data files, for every format |
//! | `split_filters`   | `SplitFilters`, `DynamicFilters`: the filters in force for a split |
//! | `aggregate_bounds` | an aggregate's `min`/`max` filter left unapplied while a bound is missing |
//! | `reader`    | the reader seam: `SplitReader`, `TableAdapter`, `DeleteSource`, `SplitContext` |
//! | `source`    | `FileDataSource`: the driver, one split after another              |
//! | `metrics`   | `LakeScanMetrics`                                                    |
//! | `opt_in`    | `parse_opt_in`: `all` or a list of the columns a table shows on request |
//! | `calendar`  | day numbers of the proleptic and Java's hybrid (Julian) calendars     |
//! | `writer_times` | `TimeFix`: dates and timestamps as Java writers meant them (writer zone, hybrid calendar) |
//! | `config`    | `LakeScanOptions`: `SET lakescan.…` session settings                 |
//! | `requests`  | `CountingConnector`: HTTP requests and retries of a read, for the scan's metrics |
//! | `store`     | `StoreOptions`: a table's object store from `aws.*` options, the session or the environment |
//! | `scan_statistics` | `ScanStatistics`: rows, bytes, min/max for the optimizer        |
//! | `wire`      | plan frames: plan data to bytes and back (distributed execution)   |
//! | `exec`      | `LakeScanExec`, the DataFusion leaf operator; scheduling, partitions and preload |
//!
//! The core knows nothing of Hive or Iceberg; `lakescan-hive` and `lakescan-iceberg` build
//! handles and splits and plug their deletes and stages into the split reader through
//! [`api::TableAdapter`]. Every module in the table is private to the core; other crates use
//! it through [`api`], the adapter API, and nothing else.

pub(crate) mod adaptive;
pub(crate) mod aggregate_bounds;
pub mod api;
pub(crate) mod avro;
pub(crate) mod binding;
pub(crate) mod calendar;
pub(crate) mod column_case;
pub(crate) mod config;
pub(crate) mod defaults;
pub(crate) mod deleted_rows;
pub(crate) mod exec;
pub(crate) mod extract;
pub(crate) mod field_ids;
pub(crate) mod filter;
pub(crate) mod format;
pub(crate) mod formats;
pub(crate) mod handle;
pub(crate) mod io;
pub(crate) mod metrics;
pub(crate) mod opt_in;
pub(crate) mod orc;
pub(crate) mod parquet;
pub(crate) mod reader;
pub(crate) mod requests;
pub(crate) mod required;
pub(crate) mod scan_spec;
pub(crate) mod scan_statistics;
pub(crate) mod source;
pub(crate) mod split;
pub(crate) mod split_filters;
pub(crate) mod store;
pub(crate) mod subfield;
pub(crate) mod wire;
pub(crate) mod writer_times;
