//! lakescan-hive: Hive-style partitioned Parquet tables.
//!
//! | module          | owns                                                             |
//! |-----------------|------------------------------------------------------------------|
//! | [`factory`]     | `HiveTableFactory` (SQL) and `HiveTableBuilder` (Rust)            |
//! | [`table`]       | `HiveTable`: the `TableProvider`; planning splits                 |
//! | [`listing`]     | partition directories listed level by level, pruned on the way   |
//! | [`partition`]   | `k=v` segments, URL-unescaping, `__HIVE_DEFAULT_PARTITION__`      |
//!
//! The reading itself is `lakescan-core`'s: columns are matched by name.

pub mod factory;
pub mod listing;
pub mod partition;
pub mod table;

pub use factory::{HiveTableBuilder, HiveTableFactory};
pub use table::HiveTable;
