"""Filters with functions, pushed from datafusion-python into lakescan tables.

Through the FFI a function of the caller is a call back into datafusion-python that gets
every argument as an array, so functions that need a constant argument cannot run inside
the scan: field and key access (`get_field`: `st['a']`, `m['k1']`, `lst[1]['u']`) runs with
lakescan's own `get_field`, and a filter with any other function (`date_trunc('month', …)`,
a Python UDF) is evaluated by datafusion-python above the scan. Every filter returns what
DataFusion returns over pyarrow's reading of the same file."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from datafusion import SessionContext, udf

import lakescan
import lakescan.datafusion

FILTERS = [
    "st['a'] > 90",
    "st['c']['x'] < 0.1",
    "m['k1'] = 3",
    "m['k1'] IS NOT NULL AND id < 500",
    "lst[1]['u'] = 2",
    "l[1] = 2",
    "date_trunc('month', ts) = TIMESTAMP '2024-02-01 00:00:00'",
    "extract(year FROM ts) = 2024 AND upper(s) = 'AB'",
    "coalesce(st['a'], -1) = -1",
    "plus_one(id) = 11",
]


@pytest.fixture(scope="module")
def nested(tmp_path_factory) -> tuple[Path, pa.Table]:
    rng = random.Random(11)
    count = 2000

    def maybe(value):
        return None if rng.random() < 0.1 else value

    table = pa.table(
        {
            "id": pa.array(range(count), pa.int64()),
            "st": pa.array(
                [
                    maybe({"a": maybe(rng.randint(0, 100)), "c": maybe({"x": maybe(rng.random())})})
                    for _ in range(count)
                ],
                pa.struct([("a", pa.int32()), ("c", pa.struct([("x", pa.float64())]))]),
            ),
            "m": pa.array(
                [maybe([(f"k{j}", maybe(rng.randint(0, 9))) for j in range(rng.randint(0, 3))]) for _ in range(count)],
                pa.map_(pa.string(), pa.int64()),
            ),
            "lst": pa.array(
                [maybe([maybe({"u": maybe(rng.randint(0, 3))}) for _ in range(rng.randint(0, 2))]) for _ in range(count)],
                pa.list_(pa.struct([("u", pa.int64())])),
            ),
            "l": pa.array([maybe([rng.randint(0, 5) for _ in range(rng.randint(0, 3))]) for _ in range(count)], pa.list_(pa.int32())),
            "ts": pa.array(
                [maybe(dt.datetime(2023, 12, 1) + dt.timedelta(hours=rng.randint(0, 24 * 120))) for _ in range(count)],
                pa.timestamp("us"),
            ),
            "s": pa.array([maybe(rng.choice(["ab", "Ab", "cd"])) for _ in range(count)]),
        }
    )
    root = tmp_path_factory.mktemp("nested")
    pq.write_table(table, root / "part-0.parquet", row_group_size=500)
    # The reference reads the file back: in the table built above a NULL struct's members
    # hold values, which DataFusion's `get_field` would read (it ignores the struct's nulls).
    return root, pq.read_table(root / "part-0.parquet")


def plus_one():
    return udf(lambda a: pc.add(a, 1), [pa.int64()], pa.int64(), "immutable", name="plus_one")


def canonical(table: pa.Table) -> list[str]:
    return sorted(repr(row) for row in table.to_pylist())


def contexts(root: Path):
    """A context of lakescan's (`CREATE EXTERNAL TABLE`) and a plain datafusion-python one
    with a registered `HiveTable`."""
    own = lakescan.datafusion.session_context()
    own.sql(f"CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{root}/'").collect()
    plain = SessionContext()
    plain.register_table("t", lakescan.HiveTable(f"{root}/"))
    for ctx in (own, plain):
        ctx.register_udf(plus_one())
    return {"session_context": own, "register_table": plain}


@pytest.mark.parametrize("where", FILTERS)
def test_filters_with_functions_read_as_datafusion_reads_them(nested, where: str) -> None:
    root, table = nested
    reference = SessionContext()
    reference.register_record_batches("t", [table.to_batches()])
    reference.register_udf(plus_one())
    sql = f"SELECT * FROM t WHERE {where}"
    want = canonical(reference.sql(sql).to_arrow_table())
    assert want, f"{where} keeps no row: a weak test"
    for name, ctx in contexts(root).items():
        got = canonical(ctx.sql(sql).to_arrow_table())
        assert got == want, f"{name}: {where}: {len(got)} rows, DataFusion's {len(want)}"


def test_field_access_is_pushed_and_other_functions_stay_above_the_scan(nested) -> None:
    root, _ = nested
    ctx = contexts(root)["register_table"]

    def plan(where: str) -> str:
        return "\n".join(
            str(row) for row in ctx.sql(f"EXPLAIN SELECT id FROM t WHERE {where}").to_arrow_table().column("plan").to_pylist()
        )

    # A struct field's filter is the scan's (no filter above it).
    assert "FilterExec" not in plan("st['a'] > 90")
    # `date_trunc` is datafusion-python's, evaluated above the scan.
    assert "FilterExec" in plan("date_trunc('month', ts) = TIMESTAMP '2024-02-01 00:00:00'")
