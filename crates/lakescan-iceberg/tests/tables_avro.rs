//! The Iceberg table tests of `tables/` again, with every data file the fixtures write an
//! Avro file (`field-id` and the other ids in its schema, as Java's Avro writer): deletes of every kind,
//! lineage and metadata columns, schema evolution, changelog scans and the scan scenarios
//! read Avro exactly as Parquet. Left out: the modules about Parquet files themselves
//! (corrupt footers, row-group statistics) and catalogs/stores (no data-file reading of
//! their own).

// Test code: a failed step is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The format of the data files the fixtures write.
pub const DATA_FORMAT: iceberg::spec::DataFileFormat = iceberg::spec::DataFileFormat::Avro;

#[path = "tables/changelog.rs"]
mod changelog;
#[path = "tables/differential.rs"]
mod differential;
#[path = "tables/equality_deletes.rs"]
mod equality_deletes;
#[path = "tables/evolution.rs"]
mod evolution;
#[path = "tables/fixture.rs"]
mod fixture;
#[path = "tables/maps.rs"]
mod maps;
#[path = "tables/metadata_columns.rs"]
mod metadata_columns;
#[path = "tables/missing_column_reappears.rs"]
mod missing_column_reappears;
#[path = "tables/partition_transforms.rs"]
mod partition_transforms;
#[path = "tables/position_deletes.rs"]
mod position_deletes;
#[path = "tables/promotion.rs"]
mod promotion;
#[path = "tables/residual_pruning.rs"]
mod residual_pruning;
