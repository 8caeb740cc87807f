"""Hive tables of Avro files from two writers other than lakescan's tests' own: fastavro,
with the schemas laid out as Hive's AvroSerDe writes them (``["null", T]`` unions, decimals
as ``bytes``, ``timestamp-millis``) and as Spark writes them (``[T, "null"]`` unions,
decimals as ``fixed``, ``timestamp-micros``, dotted full names), and polars' own Avro
writer. Every file is read back by fastavro, an independent reader: lakescan must return
its rows, and every filter the rows DataFusion keeps from them."""

from __future__ import annotations

import datetime as dt
import decimal
import random
from pathlib import Path

import fastavro
import polars as pl
import pyarrow as pa
import pytest
from datafusion import SessionContext

import lakescan
import lakescan.datafusion

UTC = dt.timezone.utc
ROWS_PER_FILE = 150


def columns(null_first: bool, spark: bool) -> list[dict]:
    """The table's columns as one writer lays them out."""

    def n(t):
        return ["null", t] if null_first else [t, "null"]

    amount = (
        {"type": "fixed", "name": "topLevelRecord.amount.fixed", "size": 6, "logicalType": "decimal", "precision": 12, "scale": 3}
        if spark
        else {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 3}
    )
    ts = "timestamp-micros" if spark else "timestamp-millis"
    point = "topLevelRecord.point" if spark else "record_0"
    return [
        {"name": "id", "type": "long"},
        {"name": "i", "type": n("int")},
        {"name": "s", "type": n("string")},
        {"name": "b", "type": n("boolean")},
        {"name": "f", "type": n("float")},
        {"name": "d", "type": n("double")},
        {"name": "raw", "type": n("bytes")},
        {"name": "amount", "type": n(amount)},
        {"name": "day", "type": n({"type": "int", "logicalType": "date"})},
        {"name": "ts", "type": n({"type": "long", "logicalType": ts})},
        {"name": "local", "type": n({"type": "long", "logicalType": "local-timestamp-micros"})},
        {"name": "tags", "type": n({"type": "array", "items": n("long")})},
        {"name": "attrs", "type": n({"type": "map", "values": n("string")})},
        {
            "name": "point",
            "type": n(
                {
                    "type": "record",
                    "name": point,
                    "fields": [{"name": "x", "type": n("int")}, {"name": "y", "type": n("string")}],
                }
            ),
        },
        {"name": "suit", "type": n({"type": "enum", "name": "Suit", "namespace": "com.example", "symbols": ["SPADES", "HEARTS", "CLUBS"]})},
    ]


def schema(null_first: bool, spark: bool) -> dict:
    name = "topLevelRecord" if spark else "baseRecord"
    return {"type": "record", "name": name, "fields": columns(null_first, spark)}


def random_row(rng: random.Random, id_: int) -> dict:
    def maybe(value):
        return None if rng.random() < 0.15 else value

    ms = rng.randrange(-2_000_000_000_000, 2_000_000_000_000)
    return {
        "id": id_,
        "i": maybe(rng.randrange(-(2**31), 2**31)),
        "s": maybe(rng.choice(["", "a", "ab", "é", "zz", "x y"]) + str(rng.randrange(10))),
        "b": maybe(rng.random() < 0.5),
        "f": maybe(float(rng.randrange(-1000, 1000)) / 8),
        "d": maybe(rng.uniform(-1e6, 1e6)),
        "raw": maybe(bytes(rng.randrange(256) for _ in range(rng.randrange(5)))),
        "amount": maybe(decimal.Decimal(rng.randrange(-(10**12) + 1, 10**12)).scaleb(-3)),
        "day": maybe(dt.date(1970, 1, 1) + dt.timedelta(days=rng.randrange(-40000, 40000))),
        "ts": maybe(dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=ms)),
        "local": maybe(dt.datetime(2000, 1, 1) + dt.timedelta(microseconds=rng.randrange(-10**15, 10**15))),
        "tags": maybe([maybe(rng.randrange(-5, 5)) for _ in range(rng.randrange(4))]),
        "attrs": maybe({f"k{j}": maybe(str(j)) for j in range(rng.randrange(3))}),
        "point": maybe({"x": maybe(rng.randrange(10)), "y": maybe(rng.choice("pqr"))}),
        "suit": maybe(rng.choice(["SPADES", "HEARTS", "CLUBS"])),
    }


# (partition, file, null first, Spark's layout, codec, sync interval)
FILES = [
    ("p=0", "000000_0", True, False, "deflate", 16000),
    ("p=0", "000001_0", False, True, "snappy", 16000),
    ("p=1", "part-00000-a.avro", False, True, "null", 500),
    ("p=2", "000000_0", True, False, "null", 700),
    ("p=2", "000001_0", True, False, "snappy", 16000),
    ("p=3", "part-00000-b.avro", False, True, "bzip2", 3000),
    ("p=3", "part-00001-b.avro", False, True, "xz", 3000),
]

FILTERS = [
    "TRUE",
    "i > 0",
    "i IS NULL",
    "s = 'a1'",
    "s LIKE 'é%'",
    "b AND d > 0",
    "f < 0 OR raw IS NULL",
    "amount > 1000",
    "amount BETWEEN -100000000 AND 100000000.5",
    "day < DATE '1970-01-01'",
    "ts >= TIMESTAMP '2000-01-01 00:00:00+00:00'",
    "local < TIMESTAMP '2000-01-01 00:00:00'",
    "point['x'] = 3",
    "point IS NULL",
    "point['y'] IS NULL AND point IS NOT NULL",
    "suit = 'HEARTS'",
    "suit IS NULL AND p = 2",
    "array_length(tags) > 2",
    "p = 1",
]


@pytest.fixture(scope="module")
def table_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hive_avro") / "t"
    rng = random.Random(7)
    next_id = 0
    for partition, name, null_first, spark, codec, sync in FILES:
        rows = [random_row(rng, next_id + k) for k in range(ROWS_PER_FILE)]
        next_id += ROWS_PER_FILE
        path = root / partition / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as out:
            parsed = fastavro.parse_schema(schema(null_first, spark))
            fastavro.writer(out, parsed, rows, codec=codec, sync_interval=sync)
    return root


def fastavro_rows(root: Path) -> list[dict]:
    """Every row of the table as fastavro reads the files, with the partition value."""
    rows = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        partition = int(path.parent.name.split("=")[1])
        with open(path, "rb") as f:
            rows.extend({**row, "p": partition} for row in fastavro.reader(f))
    return rows


def comparable(value):
    """Values of both readers in one shape: maps as sorted (key, value) pairs."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [comparable(v) for v in value]
        if items and all(isinstance(v, tuple) for v in items):
            return sorted(items)
        return items
    return value


def as_read(row: dict) -> dict:
    """A row of either reader: a map is a dict (fastavro) or (key, value) pairs (pyarrow)."""
    return {k: comparable(list(v.items()) if isinstance(v, dict) and k == "attrs" else v) for k, v in row.items()}


def canonical(rows: list[dict]) -> list[tuple]:
    return sorted(tuple(sorted((k, repr(comparable(v))) for k, v in row.items())) for row in rows)


def test_every_row_reads_as_fastavro_reads_it(table_dir: Path) -> None:
    table = lakescan.HiveTable(f"{table_dir}/", partitioned_by=["p"])
    got = pa.table(table.scan()).to_pylist()
    want = fastavro_rows(table_dir)
    assert len(got) == len(want) == ROWS_PER_FILE * len(FILES)
    by_id = {row["id"]: row for row in got}
    for row in want:
        assert as_read(by_id[row["id"]]) == as_read(row), row["id"]


def test_every_filter_keeps_what_datafusion_keeps(table_dir: Path) -> None:
    ctx = lakescan.datafusion.session_context()
    ctx.sql(f"CREATE EXTERNAL TABLE t STORED AS HIVE PARTITIONED BY (p) LOCATION '{table_dir}/'").collect()
    schema = ctx.sql("SELECT * FROM t LIMIT 0").to_arrow_table().schema
    rows = fastavro_rows(table_dir)
    for row in rows:
        if row["attrs"] is not None:
            row["attrs"] = list(row["attrs"].items())
    reference = SessionContext()
    reference.register_record_batches("t", [pa.Table.from_pylist(rows, schema=schema).to_batches()])
    for where in FILTERS:
        sql = f"SELECT * FROM t WHERE {where}"
        want = canonical(reference.sql(sql).to_pylist())
        got = canonical(ctx.sql(sql).to_pylist())
        assert got == want, f"{where}: {len(got)} rows, {len(want)} expected"
        assert want, f"{where} keeps no row: a weak filter"


def test_polars_avro_files(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "id": list(range(40)),
            "name": [None if i % 5 == 0 else f"n{i}" for i in range(40)],
            "v": [i * 0.25 for i in range(40)],
            "ok": [i % 3 == 0 for i in range(40)],
            "day": [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(40)],
            "ts": [dt.datetime(2024, 1, 1, 12) + dt.timedelta(hours=i) for i in range(40)],
            "nums": [[i, None, -i] if i % 4 else None for i in range(40)],
        }
    )
    for k, codec in enumerate(["uncompressed", "snappy", "deflate"]):
        part = tmp_path / "t" / f"k={k}"
        part.mkdir(parents=True)
        frame.filter(pl.col("id") % 3 == k).write_avro(part / "data.avro", compression=codec)
    ctx = lakescan.datafusion.session_context()
    ctx.sql(f"CREATE EXTERNAL TABLE t STORED AS HIVE PARTITIONED BY (k) LOCATION '{tmp_path / 't'}/'").collect()
    got = ctx.sql("SELECT id, name, v, ok, day, ts, nums FROM t ORDER BY id").to_arrow_table()
    assert got.column("id").to_pylist() == frame["id"].to_list()
    want = frame.to_dicts()
    for row, expected in zip(got.to_pylist(), want):
        ts = row.pop("ts")
        assert ts.replace(tzinfo=None) == expected.pop("ts"), row["id"]
        assert row == expected
    # fastavro reads polars' files as lakescan does.
    with open(tmp_path / "t" / "k=1" / "data.avro", "rb") as f:
        assert [r["name"] for r in fastavro.reader(f)] == frame.filter(pl.col("id") % 3 == 1)["name"].to_list()
    assert ctx.sql("SELECT count(*) AS c FROM t WHERE name IS NULL AND k = 0").to_pylist() == [{"c": 3}]
