//! sqllogictest driver for lakescan.
//!
//! This crate connects the [`sqllogictest`] runner (0.29) to a DataFusion
//! [`SessionContext`](datafusion::prelude::SessionContext) with lakescan registered. The `.slt`
//! files live in `sqllogictest/test_files/` and are run by the `sqllogictests` test target
//! (`tests/sqllogictests.rs`); see `sqllogictest/README.md` for how to run and write them.
//!
//! What lives where:
//!
//! * [`db`] — [`LakescanDb`], the [`AsyncDB`](sqllogictest::AsyncDB) over a session, its
//!   error type [`DbError`], and [`new_session_context`], the session every file starts from.
//! * [`convert`] — record batches → sqllogictest column types and value strings (`NULL`,
//!   `(empty)`, arrow display formatting, multi-line cells expanded into numbered rows).
//! * [`orc_twin`] — the Hive files' ORC twin: the Parquet files a `COPY` writes, rewritten
//!   as ORC.
//! * [`iceberg_twin`] — the Iceberg files' ORC and Avro twins: a copy of the Iceberg fixtures
//!   with their Parquet files and manifest entries rewritten.
//! * [`s3`] — [`s3::S3Mirror`]: the same file with its lakescan tables read from S3 (a moto
//!   server of the run), local paths shown in the results.
//! * [`validate`] — [`validator`], the row-by-row result comparison with `<slt:ignore>`
//!   wildcards.

pub mod convert;
pub mod db;
pub mod iceberg_twin;
pub mod orc_twin;
pub mod s3;
pub mod validate;

pub use db::{DbError, LakescanDb, new_session_context};
pub use validate::{IGNORE_MARKER, validator};
