"""An Iceberg table of every primitive type pyiceberg 0.12 writes, partitioned by every
transform (bucket, truncate of strings and decimals, year/month/day/hour, identity of a
boolean), with values on both sides of the epoch and NULLs in every column, then evolved:
int -> long, float -> double and decimal(9, 2) -> decimal(12, 2) promoted, a column renamed
and one added, the spec changed (a bucket count and a month field replaced), and rows
deleted twice (pyiceberg rewrites the files).

At each snapshot, every filter below runs through lakescan (SQL over a registered
``IcebergTable``, so partition and file pruning run) and through DataFusion over
pyiceberg's own ``scan().to_arrow()`` of that snapshot in memory: the same SQL semantics
(NaN sorts above every number, as in DataFusion), rows read by another reader."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random
import re
import uuid

import pyarrow as pa
import pytest
from datafusion import SessionContext
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

import lakescan
import lakescan.datafusion

#: Rows per append. Nearly every row is a partition of its own (eight partition fields),
#: so this is also about the number of files a scan opens.
ROWS = 60

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "i", IntegerType(), required=False),
    NestedField(3, "f", FloatType(), required=False),
    NestedField(4, "d", DoubleType(), required=False),
    NestedField(5, "dec", DecimalType(9, 2), required=False),
    NestedField(6, "bigdec", DecimalType(30, 5), required=False),
    NestedField(7, "s", StringType(), required=False),
    NestedField(8, "b", BooleanType(), required=False),
    NestedField(9, "dt", DateType(), required=False),
    NestedField(10, "ts", TimestampType(), required=False),
    NestedField(11, "tstz", TimestamptzType(), required=False),
    NestedField(12, "bin", BinaryType(), required=False),
    NestedField(13, "u", UUIDType(), required=False),
    NestedField(14, "fx", FixedType(4), required=False),
    NestedField(15, "t", TimeType(), required=False),
)

SPEC = PartitionSpec(
    PartitionField(1, 1000, BucketTransform(8), "id_bucket"),
    PartitionField(7, 1001, TruncateTransform(2), "s_trunc"),
    PartitionField(9, 1002, MonthTransform(), "dt_month"),
    PartitionField(10, 1003, DayTransform(), "ts_day"),
    PartitionField(11, 1004, HourTransform(), "tstz_hour"),
    PartitionField(5, 1005, TruncateTransform(100), "dec_trunc"),
    PartitionField(2, 1006, BucketTransform(3), "i_bucket"),
    PartitionField(8, 1007, IdentityTransform(), "b"),
)

#: Filters on every column; the ones naming `s2` or `extra` run once those exist.
FILTERS = [
    "TRUE",
    "id = 1030",
    "id < 1020 OR id > 5040",
    "id IS NULL",
    "i >= 10",
    "i IN (1, 2, 3, -50)",
    "f > 1.0",
    "f = 0.0",
    "isnan(f)",
    "d BETWEEN -10 AND 10",
    "dec < 0",
    "dec = 100.00",
    "dec >= 450.5 AND dec < 600",
    "bigdec > 1000000.5",
    "s = 'apple'",
    "s LIKE 'ap%'",
    "s >= 'b'",
    "s < 'apr'",
    "s = ''",
    "s IS NULL",
    "b",
    "NOT b",
    "b IS NULL",
    "dt < DATE '1970-01-01'",
    "dt >= DATE '1970-02-01' AND dt <= DATE '1970-02-28'",
    "dt = DATE '1969-12-31'",
    "ts < TIMESTAMP '1970-01-01 00:00:00'",
    "ts >= TIMESTAMP '1970-01-01 03:30:00'",
    "ts > TIMESTAMP '1969-12-31 23:59:59.999999'",
    "tstz < TIMESTAMP '1970-01-01T00:00:00Z'",
    "tstz >= TIMESTAMP '1969-12-31T22:00:00+00:00'",
    "t < arrow_cast('06:00:00', 'Time64(Microsecond)')",
    "bin = X''",
    "bin < X'80'",
    "fx > X'80000000'",
    "extra IS NOT NULL",
    "extra = 'x' OR i < -40",
]


def batch(rng: random.Random, count: int, first_id: int) -> list[dict]:
    """`count` rows of random values, about one in ten of each column NULL."""

    def maybe(value):
        return None if rng.random() < 0.1 else value

    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return [
        {
            "id": maybe(first_id + k),
            "i": maybe(rng.randint(-50, 50)),
            "f": maybe(rng.choice([1.5, -2.25, 0.0, float("nan"), 3.75])),
            "d": maybe(rng.uniform(-100, 100)),
            "dec": maybe(decimal.Decimal(rng.randint(-99999, 99999)) / 100),
            "bigdec": maybe(decimal.Decimal(rng.randint(-(10**12), 10**12)) / 10**5),
            "s": maybe(rng.choice(["apple", "apricot", "banana", "", "é-accent", "zz", "b"])),
            "b": maybe(rng.random() < 0.5),
            "dt": maybe(dt.date(1969, 12, 1) + dt.timedelta(days=rng.randint(0, 120))),
            "ts": maybe(
                dt.datetime(1969, 12, 31, 20)
                + dt.timedelta(minutes=rng.randint(0, 600), microseconds=rng.randint(0, 999_999))
            ),
            "tstz": maybe(epoch - dt.timedelta(minutes=rng.randint(-300, 300))),
            "bin": maybe(bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 3)))),
            "u": maybe(uuid.UUID(int=rng.getrandbits(128)).bytes),
            "fx": maybe(bytes(rng.randint(0, 255) for _ in range(4))),
            "t": maybe(
                dt.time(rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59), rng.randint(0, 999_999))
            ),
        }
        for k in range(count)
    ]


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    """(pyiceberg table, the snapshots to read): after the first append, after the third,
    after the evolved append, after the deletes."""
    root = tmp_path_factory.mktemp("typed")
    catalog = SqlCatalog("typed", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    catalog.create_namespace("db")
    table = catalog.create_table(
        "db.typed", schema=SCHEMA, partition_spec=SPEC, properties={"format-version": "2"}
    )
    rng = random.Random(7)
    snapshots = []
    for step in range(3):
        table.append(pa.Table.from_pylist(batch(rng, ROWS, step * 1000), schema=table.schema().as_arrow()))
        if step in (0, 2):
            snapshots.append(table.current_snapshot().snapshot_id)
    with table.update_schema() as update:
        update.update_column("i", LongType())
        update.update_column("f", DoubleType())
        update.update_column("dec", DecimalType(12, 2))
        update.rename_column("s", "s2")
        update.add_column("extra", StringType())
    with table.update_spec() as update:
        update.remove_field("id_bucket")
        update.add_field("id", BucketTransform(5), "id_b5")
        update.remove_field("dt_month")
        update.add_field("dt", YearTransform(), "dt_year")
    evolved = []
    for row in batch(rng, ROWS, 5000):
        row["s2"] = row.pop("s")
        row["extra"] = "x" if row["id"] is not None and row["id"] % 2 else None
        evolved.append(row)
    table.append(pa.Table.from_pylist(evolved, schema=table.schema().as_arrow()))
    snapshots.append(table.current_snapshot().snapshot_id)
    table.delete("id < 30")
    table.delete("s2 = 'banana'")
    snapshots.append(table.current_snapshot().snapshot_id)
    return table, snapshots


def canonical(rows: list[dict]) -> list[tuple]:
    """Rows comparable across readers: NaN equal to NaN, instants in UTC, UUIDs as bytes."""

    def value(v):
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        if isinstance(v, uuid.UUID):
            return v.bytes
        if isinstance(v, dt.datetime) and v.tzinfo is not None:
            return v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return v

    return sorted(tuple(sorted((k, repr(value(v))) for k, v in row.items())) for row in rows)


@pytest.mark.parametrize("which", range(4))
def test_every_type_and_transform_filters_as_pyiceberg_reads_them(typed, which: int) -> None:
    table, snapshots = typed
    snapshot = snapshots[which]
    truth = table.scan(snapshot_id=snapshot).to_arrow()
    # At the last snapshots `s` is `s2`: the same filters, renamed.
    renamed = "s2" in truth.column_names
    reference = SessionContext()
    reference.register_record_batches("t", [truth.to_batches()])
    ctx = lakescan.datafusion.session_context()
    ctx.register_table("t", lakescan.IcebergTable(table.metadata_location, snapshot_id=snapshot))
    checked = 0
    for where in FILTERS:
        if renamed:
            where = re.sub(r"\bs\b", "s2", where)
        if "extra" in where and "extra" not in truth.column_names:
            continue
        sql = f"SELECT * FROM t WHERE {where}"
        want = canonical(reference.sql(sql).to_arrow_table().to_pylist())
        got = canonical(ctx.sql(sql).to_arrow_table().to_pylist())
        assert got == want, f"snapshot {snapshot}: {where}: {len(got)} rows, pyiceberg's {len(want)}"
        checked += 1
    assert checked == len(FILTERS) - (0 if "extra" in truth.column_names else 2)
    if which < 3:
        assert truth.num_rows == [ROWS, 3 * ROWS, 4 * ROWS][which]
    else:
        assert 0 < truth.num_rows < 4 * ROWS


def test_scan_filters_and_sql_tables_of_the_evolved_table(typed) -> None:
    """The current snapshot through `scan()` with a filter string and through `CREATE
    EXTERNAL TABLE`: the deletes took effect and the promoted columns read as promoted."""
    table, _ = typed
    truth = table.scan().to_arrow()
    kept = truth.num_rows
    assert 0 < kept < 4 * ROWS
    scanned = pa.table(lakescan.IcebergTable(table.metadata_location).scan(filter="dec >= 450.5 OR id > 5040"))
    reference = SessionContext()
    reference.register_record_batches("t", [truth.to_batches()])
    want = reference.sql("SELECT * FROM t WHERE dec >= 450.5 OR id > 5040").to_arrow_table()
    assert canonical(scanned.to_pylist()) == canonical(want.to_pylist())
    assert scanned.schema.field("i").type == pa.int64()
    assert scanned.schema.field("f").type == pa.float64()
    assert scanned.schema.field("dec").type == pa.decimal128(12, 2)
    ctx = lakescan.datafusion.session_context()
    ctx.sql(f"CREATE EXTERNAL TABLE typed STORED AS ICEBERG LOCATION '{table.metadata_location}'").collect()
    got = ctx.sql("SELECT count(*) AS n, count(s2) AS s, sum(i) AS i FROM typed").to_pylist()
    want = reference.sql("SELECT count(*) AS n, count(s2) AS s, sum(i) AS i FROM t").to_pylist()
    assert got == want and got[0]["n"] == kept
    assert ctx.sql("SELECT count(*) AS n FROM typed WHERE id < 30 OR s2 = 'banana'").to_pylist() == [{"n": 0}]
