"""Writes the Hive tables of Parquet files in this folder as other writers leave them.

    pip install pyarrow==26.0.1 polars==2.1.0 && python make_files.py

Table `int96/` — one file as Spark, Hive and Impala write timestamps by default: `INT96`,
no embedded Arrow schema (pyarrow with `use_deprecated_int96_timestamps=True`,
`store_schema=False`). Columns `id int`, `ts` (INT96), `ev struct<at>` (`at` INT96, the
same time as `ts`, as Spark writes a struct's timestamps), `evs` (a list of that one time)
and `by_key` (a map of key `at` to it):

    id  ts
    1   0001-01-01 00:00:00
    2   1019-05-04 12:00:00.123456
    3   2024-01-01 00:00:00.000001
    4   9999-12-31 23:59:59.999999
    5   NULL

Rows 1, 2 and 4 lie outside the years 1677–2262 that nanoseconds since 1970 can hold.

Table `int128/` — one file polars writes for a frame with an `Int128` column (`id` Int64,
`big` Int128, `name` String): its embedded Arrow schema names a type `arrow-ipc` does not
know (it panicked decoding it), its Parquet schema a 16-byte `FIXED_LEN_BYTE_ARRAY`.

    id  big                       name
    1   170141183460469231731687  a
    2   -5                        b

Table `interval/` — one file DuckDB 1.5.5 writes for an `INTERVAL` column (Parquet's
12-byte `INTERVAL`: months, days, milliseconds): `id` 1, `iv` `1 month 2 days 3 seconds`;
`id` 2, `iv` `14 months`.

The script checks that pyarrow, polars and DuckDB read the files back as written; the
tests state the values they expect.
"""

import datetime as dt
import os
import shutil

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))


def fresh(folder):
    path = os.path.join(HERE, folder)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return os.path.join(path, "part-0.parquet")


def int96():
    times = [
        dt.datetime(1, 1, 1),
        dt.datetime(1019, 5, 4, 12, 0, 0, 123456),
        dt.datetime(2024, 1, 1, 0, 0, 0, 1),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        None,
    ]
    ts = pa.array(times, pa.timestamp("us"))
    ev = pa.StructArray.from_arrays([ts], names=["at"])
    evs = pa.array([[t] for t in times], pa.list_(pa.timestamp("us")))
    by_key = pa.array([[("at", t)] for t in times], pa.map_(pa.string(), pa.timestamp("us")))
    table = pa.table(
        {"id": pa.array([1, 2, 3, 4, 5], pa.int32()), "ts": ts, "ev": ev, "evs": evs, "by_key": by_key}
    )
    file = fresh("int96")
    pq.write_table(table, file, use_deprecated_int96_timestamps=True, store_schema=False)
    schema = pq.ParquetFile(file).schema
    assert schema.column(1).physical_type == "INT96", schema
    assert pq.ParquetFile(file).schema_arrow.metadata is None
    back = pq.read_table(file, coerce_int96_timestamp_unit="us")
    assert back.column("ts").to_pylist() == times
    assert [e["at"] for e in back.column("ev").to_pylist()] == times
    assert [e[0] for e in back.column("evs").to_pylist()] == times
    assert [dict(m)["at"] for m in back.column("by_key").to_pylist()] == times
    physical = {schema.column(k).path: schema.column(k).physical_type for k in range(len(schema))}
    assert physical["evs.list.element"] == "INT96", physical
    assert physical["by_key.key_value.value"] == "INT96", physical


def int128():
    frame = pl.DataFrame(
        {
            "id": [1, 2],
            "big": pl.Series([170141183460469231731687, -5], dtype=pl.Int128),
            "name": ["a", "b"],
        }
    )
    file = fresh("int128")
    frame.write_parquet(file)
    assert pl.read_parquet(file).equals(frame)


def interval():
    file = fresh("interval")
    duckdb.sql(
        "COPY (SELECT 1 AS id, INTERVAL '1 month 2 days 3 seconds' AS iv "
        "UNION ALL SELECT 2, INTERVAL '14 months') "
        f"TO '{file}' (FORMAT parquet)"
    )
    back = duckdb.sql(f"SELECT id, iv FROM '{file}' ORDER BY id").fetchall()
    assert [str(v) for _, v in back] == ["32 days, 0:00:03", "420 days, 0:00:00"], back


if __name__ == "__main__":
    int96()
    int128()
    interval()
