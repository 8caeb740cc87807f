//! lakescan-hive: Hive-style partitioned Parquet tables.
//!
//! | module            | owns                                                           |
//! |-------------------|----------------------------------------------------------------|
//! | [`factory`]       | `HiveTableFactory` (SQL) and `HiveTableBuilder` (Rust)         |
//! | [`table`]         | `HiveTable`: the `TableProvider`; planning splits              |
//! | [`listing`]       | partition directories listed level by level, pruned on the way |
//! | [`listing_cache`] | listings kept for a time to live (opt-in)                      |
//! | [`local_listing`] | the default local store listed with `std::fs`                  |
//! | [`kept_children`] | subdirectories of unchanged local directories, kept            |
//! | [`partition`]     | `k=v` segments, URL-unescaping, `__HIVE_DEFAULT_PARTITION__`   |
//! | [`options`]       | `HiveOptions`: the table's `OPTIONS`, unknown keys rejected    |
//! | [`hidden`]        | hidden columns: `$path`, `$bucket`, `$row_index`, `$row_id`, … |
//! | [`bucket`]        | bucketing: bucket of a file, partition bucket counts, pruning  |
//! | [`hash`]          | the Hive hash (bucketing versions 1 and 2)                     |
//! | [`conversion`]    | bucket conversion stage; `HiveAdapter`              |
//! | [`udf`]           | SQL functions `hive_hash`, `hive_bucket`                       |
//! | [`wire`]          | a `HiveTable` as a plan frame (distributed execution)          |
//!
//! The reading itself is `lakescan-core`'s: columns are matched by name; the hidden columns
//! are the core's info and generated columns.

pub mod bucket;
pub mod conversion;
pub mod factory;
pub mod hash;
pub mod hidden;
pub mod kept_children;
pub mod listing;
pub mod listing_cache;
pub mod local_listing;
pub mod options;
pub mod partition;
pub mod table;
pub mod udf;
pub mod wire;

pub use factory::{HiveTableBuilder, HiveTableFactory};
pub use table::HiveTable;
