//! Iceberg tables written by the fixture builder ([`fixture`]), read through SQL: deletes of
//! every kind with their sequence-number rules, and the scan scenarios of `docs/scenarios.md`.

// Test code: a failed step is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The format of the data files the fixtures write (`tables_orc` runs these tests again
/// over ORC data files).
pub const DATA_FORMAT: iceberg::spec::DataFileFormat = iceberg::spec::DataFileFormat::Parquet;

mod bad_input;
mod catalogs;
mod changelog;
mod differential;
mod equality_deletes;
mod evolution;
mod fixture;
mod maps;
mod metadata_columns;
mod missing_column_reappears;
mod partition_transforms;
mod position_deletes;
mod promotion;
mod residual_pruning;
mod statistics;
mod stores;
