//! [`FileTimes`]: which columns of a Parquet file hold dates and timestamps its writer
//! stored otherwise than the Parquet specification reads them, and their
//! [`TimeFix`] ([`crate::writer_times`]), decided from the footer as Hive and Spark decide:
//!
//! | the file says (key-value metadata, `created_by`) | dates, `INT64` instants | `INT96` |
//! |---|---|---|
//! | `writer.time.zone` (Hive 3.1.2 and later) | — | the wall clock in that zone (`java.util`'s offsets with `writer.zone.conversion.legacy = true`) |
//! | `writer.date.proleptic = false` (Hive 3.1.3, 4) | hybrid dates | — |
//! | `org.apache.spark.version` below `3.0.0`, or `org.apache.spark.legacyDateTime` | hybrid, in `org.apache.spark.timeZone` | — |
//! | `org.apache.spark.version` below `3.1.0`, or `org.apache.spark.legacyINT96` | — | hybrid, in `org.apache.spark.timeZone` |
//! | Spark's schema without its version (Spark 2.4.5 and older) | hybrid | hybrid |
//! | `parquet-mr` with none of these marks (Hive 1–2, which may name its version in `writer.model.name`) | hybrid dates | hybrid |
//! | anything else (pyarrow, DuckDB, Impala, Trino, Spark 3 …) | as written | as written |
//!
//! "Hybrid" values are read with the label they were written with, as Spark and Hive read
//! them (Spark's `RebaseDateTime`, Hive's `CalendarUtils.convertDateToProleptic`): the
//! same values before 1582-10-15 (timestamps: before 1900) as the writer's, not their day
//! number read in the proleptic calendar; a zone Spark did not record is UTC. Files of
//! Iceberg tables are never fixed: Iceberg's writers store proleptic values, and Iceberg's
//! readers read them as they are. `INT64` timestamps not adjusted to UTC (Spark's
//! `TIMESTAMP_NTZ`) are never rebased, as Spark does not rebase them.

use std::collections::HashMap;
use std::sync::Arc;

use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::file::metadata::ParquetMetaData;
use parquet::schema::types::Type;

use crate::writer_times::{
    Hybrid, NaiveTimes, TimeFix, WRITER_TIME_ZONE_KEY, WriterZone, ZoneRules, writer_zone,
};

/// Spark's version of the writer.
const SPARK_VERSION: &str = "org.apache.spark.version";
/// Set by Spark when it wrote dates and `INT64` timestamps in the hybrid calendar.
const SPARK_LEGACY_DATETIME: &str = "org.apache.spark.legacyDateTime";
/// Set by Spark when it wrote `INT96` timestamps in the hybrid calendar.
const SPARK_LEGACY_INT96: &str = "org.apache.spark.legacyINT96";
/// The session zone of a Spark writer that rebased.
const SPARK_TIME_ZONE: &str = "org.apache.spark.timeZone";
/// Spark's row schema, written by every Spark version.
const SPARK_ROW_SCHEMA: &str = "org.apache.spark.sql.parquet.row.metadata";
/// Hive 3.1.3 and later: whether dates are proleptic.
const HIVE_DATE_PROLEPTIC: &str = "writer.date.proleptic";
/// Hive 4: whether `INT96` instants were converted with `java.util`'s rules.
const HIVE_LEGACY_CONVERSION: &str = "writer.zone.conversion.legacy";
/// Iceberg's writers' schema.
const ICEBERG_SCHEMA: &str = "iceberg.schema";

/// The fixes of one file's top-level columns (by index in the file schema).
#[derive(Debug, Clone, Default)]
pub struct FileTimes {
    fixes: HashMap<usize, Arc<TimeFix>>,
}

/// What a file's writer did with each kind of value (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
struct Writer {
    hybrid_dates: bool,
    zoned: Option<Hybrid>,
    int96: Option<NaiveTimes>,
}

impl FileTimes {
    /// The fixes of the file whose footer is `metadata`, in a table matched by field id
    /// (`iceberg`) or by name; the error text names what the footer holds that lakescan
    /// cannot read right (an unknown zone, a column mixing `INT96` and local timestamps).
    pub fn of(metadata: &ParquetMetaData, iceberg: bool) -> Result<Self, String> {
        if iceberg {
            return Ok(Self::default());
        }
        let writer = Writer::of(metadata)?;
        if !writer.hybrid_dates && writer.zoned.is_none() && writer.int96.is_none() {
            return Ok(Self::default());
        }
        let root = metadata.file_metadata().schema_descr().root_schema();
        let mut fixes = HashMap::new();
        for (i, column) in root.get_fields().iter().enumerate() {
            let mut kinds = Kinds::default();
            kinds.collect(column);
            if kinds.int96 && kinds.local && writer.int96.is_some() {
                return Err(format!(
                    "column '{}' holds INT96 timestamps, which its writer stored in a legacy \
                     form, beside timestamps without zone: lakescan cannot tell them apart",
                    column.name()
                ));
            }
            let fix = TimeFix {
                hybrid_dates: writer.hybrid_dates && kinds.dates,
                zoned: writer.zoned.filter(|_| kinds.instants),
                naive: writer.int96.filter(|_| kinds.int96),
            };
            if !fix.is_none() {
                fixes.insert(i, Arc::new(fix));
            }
        }
        Ok(Self { fixes })
    }

    /// The fix of top-level column `root`, when it needs one.
    pub fn fix(&self, root: usize) -> Option<&Arc<TimeFix>> {
        self.fixes.get(&root)
    }
}

impl Writer {
    fn of(metadata: &ParquetMetaData) -> Result<Self, String> {
        let file = metadata.file_metadata();
        let pairs = file.key_value_metadata().map(Vec::as_slice).unwrap_or(&[]);
        let value = |key: &str| {
            pairs
                .iter()
                .find(|kv| kv.key == key)
                .map(|kv| kv.value.as_deref().unwrap_or(""))
        };
        let hive_zone = writer_zone(value(WRITER_TIME_ZONE_KEY).map(str::as_bytes))?;
        let spark_zone = match value(SPARK_TIME_ZONE) {
            Some(id) => Some(WriterZone::parse(id).ok_or_else(|| {
                format!("its {SPARK_TIME_ZONE} '{id}' is not a time zone lakescan knows")
            })?),
            None => None,
        };
        let hybrid = Hybrid { zone: spark_zone };
        let spark_version = value(SPARK_VERSION);
        // Spark compares its versions as strings.
        let spark_before = |version: &str| spark_version.is_some_and(|v| v < version);
        let old_spark = spark_version.is_none() && value(SPARK_ROW_SCHEMA).is_some();
        let unmarked_java = file
            .created_by()
            .is_some_and(|c| c.starts_with("parquet-mr version"))
            && !pairs.iter().any(|kv| {
                kv.key.starts_with("org.apache.spark.")
                    || kv.key == WRITER_TIME_ZONE_KEY
                    || kv.key == HIVE_DATE_PROLEPTIC
                    || kv.key == ICEBERG_SCHEMA
            })
            && !has_ids(file.schema_descr().root_schema());
        let spark_dates = spark_before("3.0.0") || value(SPARK_LEGACY_DATETIME).is_some();
        let hybrid_dates = match value(HIVE_DATE_PROLEPTIC) {
            Some(proleptic) => proleptic.trim().eq_ignore_ascii_case("false"),
            None => spark_dates || old_spark || unmarked_java,
        };
        let zoned = (spark_dates || old_spark).then_some(hybrid);
        let rules = match value(HIVE_LEGACY_CONVERSION) {
            Some(legacy) if legacy.trim().eq_ignore_ascii_case("true") => ZoneRules::Legacy,
            _ => ZoneRules::Modern,
        };
        let int96 = match hive_zone {
            Some(zone) => Some(NaiveTimes::WallClock(zone, rules)),
            None if spark_before("3.1.0") || value(SPARK_LEGACY_INT96).is_some() || old_spark => {
                Some(NaiveTimes::Hybrid(hybrid))
            }
            None if unmarked_java => Some(NaiveTimes::Hybrid(Hybrid { zone: None })),
            None => None,
        };
        Ok(Self {
            hybrid_dates,
            zoned,
            int96,
        })
    }
}

/// Whether any node below `t` carries a field id (Iceberg's writers set them).
fn has_ids(t: &Type) -> bool {
    t.get_fields()
        .iter()
        .any(|f| f.get_basic_info().has_id() || (f.is_group() && has_ids(f)))
}

/// The kinds of date and time leaves below a column.
#[derive(Debug, Default)]
struct Kinds {
    dates: bool,
    /// `INT64` timestamps adjusted to UTC.
    instants: bool,
    /// `INT64` timestamps not adjusted to UTC.
    local: bool,
    int96: bool,
}

impl Kinds {
    fn collect(&mut self, t: &Type) {
        if t.is_group() {
            t.get_fields().iter().for_each(|f| self.collect(f));
            return;
        }
        let info = t.get_basic_info();
        match (
            t.get_physical_type(),
            info.logical_type_ref(),
            info.converted_type(),
        ) {
            (PhysicalType::INT96, _, _) => self.int96 = true,
            (_, Some(LogicalType::Date), _) | (_, None, ConvertedType::DATE) => self.dates = true,
            (
                PhysicalType::INT64,
                Some(LogicalType::Timestamp {
                    is_adjusted_to_u_t_c,
                    ..
                }),
                _,
            ) => match is_adjusted_to_u_t_c {
                true => self.instants = true,
                false => self.local = true,
            },
            (
                PhysicalType::INT64,
                None,
                ConvertedType::TIMESTAMP_MILLIS | ConvertedType::TIMESTAMP_MICROS,
            ) => self.instants = true,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use parquet::file::metadata::{FileMetaData, KeyValue, ParquetMetaData};
    use parquet::schema::parser::parse_message_type;
    use parquet::schema::types::SchemaDescriptor;

    use super::*;

    const SCHEMA: &str = "message spark_schema {
        optional int32 d (DATE);
        optional int64 ts (TIMESTAMP(MICROS,true));
        optional int64 ntz (TIMESTAMP(MICROS,false));
        optional int96 legacy;
        optional group s { optional int32 inner (DATE); }
        optional int64 n;
    }";

    fn footer(created_by: &str, pairs: &[(&str, &str)]) -> ParquetMetaData {
        let schema = Arc::new(SchemaDescriptor::new(Arc::new(
            parse_message_type(SCHEMA).unwrap(),
        )));
        let pairs = pairs
            .iter()
            .map(|(k, v)| KeyValue::new(k.to_string(), v.to_string()))
            .collect();
        let file = FileMetaData::new(1, 0, Some(created_by.into()), Some(pairs), schema, None);
        ParquetMetaData::new(file, vec![])
    }

    fn fixes(times: &FileTimes) -> Vec<Option<TimeFix>> {
        (0..6).map(|i| times.fix(i).map(|f| **f)).collect()
    }

    #[test]
    fn spark_legacy_files_rebase_in_their_zone_and_modern_ones_do_not() {
        let legacy = footer(
            "parquet-mr version 1.13.1",
            &[
                (SPARK_VERSION, "3.5.3"),
                (SPARK_LEGACY_DATETIME, ""),
                (SPARK_LEGACY_INT96, ""),
                (SPARK_TIME_ZONE, "America/Los_Angeles"),
            ],
        );
        let times = FileTimes::of(&legacy, false).unwrap();
        let hybrid = Hybrid {
            zone: WriterZone::parse("America/Los_Angeles"),
        };
        let f = fixes(&times);
        assert_eq!(
            f[0],
            Some(TimeFix {
                hybrid_dates: true,
                ..TimeFix::default()
            })
        );
        assert_eq!(f[1].unwrap().zoned, Some(hybrid));
        // Local timestamps are never rebased; numbers need nothing.
        assert_eq!((f[2], f[5]), (None, None));
        assert_eq!(f[3].unwrap().naive, Some(NaiveTimes::Hybrid(hybrid)));
        assert!(f[4].unwrap().hybrid_dates);
        // The same file in an Iceberg table, and a modern Spark file: as written.
        assert!(FileTimes::of(&legacy, true).unwrap().fixes.is_empty());
        let modern = footer("parquet-mr version 1.13.1", &[(SPARK_VERSION, "3.5.3")]);
        assert!(FileTimes::of(&modern, false).unwrap().fixes.is_empty());
        // Spark 3.0 rebased INT96 only.
        let spark30 = footer("parquet-mr version 1.10.1", &[(SPARK_VERSION, "3.0.1")]);
        let f = fixes(&FileTimes::of(&spark30, false).unwrap());
        assert_eq!((f[0], f[1].is_some()), (None, false));
        assert!(f[3].is_some());
    }

    #[test]
    fn hive_files_read_as_hive_reads_them() {
        // Hive 3.1.3: a writer zone; dates proleptic.
        let hive313 = footer(
            "parquet-mr version 1.10.0",
            &[(WRITER_TIME_ZONE_KEY, "US/Pacific")],
        );
        let f = fixes(&FileTimes::of(&hive313, false).unwrap());
        let zone = WriterZone::parse("US/Pacific").unwrap();
        assert_eq!(f[0], None);
        assert_eq!(
            f[3].unwrap().naive,
            Some(NaiveTimes::WallClock(zone, ZoneRules::Modern))
        );
        // Hive 4: hybrid dates, said so.
        let hive4 = footer(
            "parquet-mr version 1.11.1",
            &[
                (HIVE_DATE_PROLEPTIC, "false"),
                (HIVE_LEGACY_CONVERSION, "true"),
                (WRITER_TIME_ZONE_KEY, "US/Pacific"),
            ],
        );
        let f = fixes(&FileTimes::of(&hive4, false).unwrap());
        assert!(f[0].unwrap().hybrid_dates);
        assert_eq!(
            f[3].unwrap().naive,
            Some(NaiveTimes::WallClock(zone, ZoneRules::Legacy))
        );
        // Hive 2 marks nothing but its version: hybrid dates and INT96, as Hive reads them.
        let hive2 = footer(
            "parquet-mr version 1.9.0-cdh6.x-SNAPSHOT",
            &[("writer.model.name", "2.1.1-cdh6.x-SNAPSHOT")],
        );
        let f = fixes(&FileTimes::of(&hive2, false).unwrap());
        assert!(f[0].unwrap().hybrid_dates);
        assert_eq!(f[1], None);
        assert_eq!(
            f[3].unwrap().naive,
            Some(NaiveTimes::Hybrid(Hybrid { zone: None }))
        );
        // Other writers: as written.
        let arrow = footer("parquet-cpp-arrow version 26.0.1", &[]);
        assert!(FileTimes::of(&arrow, false).unwrap().fixes.is_empty());
        let bad = footer(
            "parquet-mr version 1.10.0",
            &[(WRITER_TIME_ZONE_KEY, "Mars/Base")],
        );
        assert!(
            FileTimes::of(&bad, false)
                .unwrap_err()
                .contains("Mars/Base")
        );
    }
}
