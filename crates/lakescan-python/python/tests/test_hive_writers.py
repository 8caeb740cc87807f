"""Hive tables written by pyarrow (``pyarrow.parquet.write_to_dataset``), polars
(``write_parquet(partition_by=…)``) and DuckDB (``COPY … PARTITION_BY``) from the same rows:
NULL partition values (each writes ``__HIVE_DEFAULT_PARTITION__``) and string partition
values that need escaping (a space, ``/``, ``=``, ``%``, ``:``, ``#`` and ``é``; polars
leaves ``#`` unescaped). Every filter returns through lakescan exactly what DataFusion
returns over the rows the writers were given."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datafusion import SessionContext

import lakescan
import lakescan.datafusion

COUNT = 60

ROWS = pa.table(
    {
        "id": pa.array(range(COUNT), pa.int64()),
        "k": pa.array([None if i % 7 == 0 else i % 4 for i in range(COUNT)], pa.int64()),
        "s": pa.array(
            [
                None if i % 11 == 0 else ["a b", "x/y", "p=q", "50%", "é", "plain", "a:b", "#h"][i % 8]
                for i in range(COUNT)
            ]
        ),
        "d": pa.array([dt.date(2024, 1, 1 + i % 3) for i in range(COUNT)]),
        "v": pa.array([i * 0.5 for i in range(COUNT)]),
    }
)

FILTERS = [
    "TRUE",
    "k = 1",
    "k IS NULL",
    "k > 1",
    "s = 'x/y'",
    "s = 'a b'",
    "s = '50%'",
    "s = 'é'",
    "s = '#h'",
    "s = 'p=q'",
    "s = 'a:b'",
    "s IS NULL",
    "s LIKE 'p%'",
    "id < 10 AND s = 'p=q'",
    "k IS NULL OR s IS NULL",
    "d = DATE '2024-01-02'",
    "d > DATE '2024-01-01' AND k = 3",
]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """The rows written by each writer under `<root>/<writer>`; DuckDB's a second time
    partitioned by the date and `k` (`duckdb_by_date`)."""
    root = tmp_path_factory.mktemp("writers")
    pq.write_to_dataset(ROWS, root / "pyarrow", partition_cols=["k", "s"])
    pl.from_arrow(ROWS).write_parquet(root / "polars", partition_by=["k", "s"])
    con = duckdb.connect()
    con.register("data", ROWS)
    con.execute(f"COPY data TO '{root / 'duckdb'}' (FORMAT parquet, PARTITION_BY (k, s))")
    con.execute(f"COPY data TO '{root / 'duckdb_by_date'}' (FORMAT parquet, PARTITION_BY (d, k))")
    return root


def canonical(rows: list[dict]) -> list[tuple]:
    return sorted(tuple(sorted((k, repr(v)) for k, v in row.items())) for row in rows)


@pytest.mark.parametrize(
    "writer, partitioned_by",
    [("pyarrow", ["k", "s"]), ("polars", ["k", "s"]), ("duckdb", ["k", "s"]), ("duckdb_by_date", ["d", "k"])],
)
def test_partition_values_of_every_writer_read_as_written(written: Path, writer: str, partitioned_by) -> None:
    location = f"{written / writer}/"
    # The writers leave no NULL partition as the string it is written as.
    assert any(p.name.endswith("=__HIVE_DEFAULT_PARTITION__") for p in (written / writer).rglob("k=*"))
    reference = SessionContext()
    reference.register_record_batches("t", [ROWS.to_batches()])
    ctx = lakescan.datafusion.session_context()
    ctx.sql(
        f"CREATE EXTERNAL TABLE t STORED AS HIVE PARTITIONED BY ({', '.join(partitioned_by)}) LOCATION '{location}'"
    ).collect()
    for where in FILTERS:
        sql = f"SELECT id, k, s, d, v FROM t WHERE {where}"
        want = canonical(reference.sql(sql).to_pylist())
        got = canonical(ctx.sql(sql).to_pylist())
        assert got == want, f"{writer}: {where}: {len(got)} rows, {len(want)} written"
    # The partition columns' types are inferred from the directory names: integers, dates.
    schema = ctx.sql("SELECT k, d FROM t LIMIT 0").to_arrow_table().schema
    assert schema.field("k").type == pa.int64() and schema.field("d").type == pa.date32()
    # The table object reads the same rows.
    table = lakescan.HiveTable(location, partitioned_by=partitioned_by)
    got = canonical(pa.table(table.scan(columns=["id", "k", "s"], filter="s = 'x/y' OR k IS NULL")).to_pylist())
    want = canonical(reference.sql("SELECT id, k, s FROM t WHERE s = 'x/y' OR k IS NULL").to_pylist())
    assert got == want and len(want) > 0
