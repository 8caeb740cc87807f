"""lakescan from Python, checked against readers that are not lakescan: pyarrow's dataset
reader for Hive tables, and the expected rows of the DuckDB-iceberg tables in the
repository's ``testdata/duckdb-iceberg`` (restated from DuckDB's own tests in its
``EXPECTED.md``)."""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from datafusion import SessionContext

import lakescan
import lakescan.datafusion
from conftest import rows, s3_settings

REPO = Path(os.environ.get("LAKESCAN_REPO", Path(__file__).resolve().parents[4]))
DUCKDB_ICEBERG = REPO / "testdata" / "duckdb-iceberg"


@pytest.fixture(scope="module")
def sales(tmp_path_factory) -> Path:
    """A Hive table of two partition levels written by pyarrow."""
    root = tmp_path_factory.mktemp("sales")
    table = pa.table(
        {
            "id": list(range(1, 101)),
            "amount": [float(i % 17) for i in range(1, 101)],
            "region": ["eu" if i % 3 else "us" for i in range(1, 101)],
            "year": [2023 + i % 2 for i in range(1, 101)],
        }
    )
    ds.write_dataset(
        table,
        root,
        format="parquet",
        partitioning=["region", "year"],
        partitioning_flavor="hive",
    )
    return root


def pyarrow_rows(root: Path, columns, flt=None, *order: str) -> list[dict]:
    dataset = ds.dataset(root, format="parquet", partitioning="hive")
    table = dataset.to_table(columns=columns, filter=flt)
    # pyarrow infers the partition values' types (int32 for years): compare as Python values.
    return rows(table, *order)


def test_hive_scan_matches_pyarrow_dataset(sales: Path) -> None:
    table = lakescan.HiveTable(f"{sales}/", partitioned_by=["region", "year"])
    got = pa.table(table.scan(columns=["id", "amount", "region", "year"], filter="region = 'us' AND amount > 5"))
    want = pyarrow_rows(
        sales,
        ["id", "amount", "region", "year"],
        (ds.field("region") == "us") & (ds.field("amount") > 5),
        "id",
    )
    assert rows(got, "id") == want
    assert len(want) > 0
    # No filter, a limit: any `limit` rows of the table.
    limited = pa.table(table.scan(columns=["id"], limit=7))
    assert limited.num_rows == 7
    assert set(limited.column("id").to_pylist()) <= set(range(1, 101))


def test_hive_table_in_datafusion(sales: Path) -> None:
    ctx = SessionContext()
    ctx.register_table("sales", lakescan.HiveTable(f"{sales}/", partitioned_by=["region", "year"]))
    got = ctx.sql(
        "SELECT region, year, count(*) AS n, sum(amount) AS total FROM sales "
        "WHERE year = 2024 GROUP BY region, year ORDER BY region"
    ).to_arrow_table()
    everything = ds.dataset(sales, format="parquet", partitioning="hive").to_table().to_pylist()
    want = {}
    for row in everything:
        if row["year"] == 2024:
            n, total = want.get(row["region"], (0, 0.0))
            want[row["region"]] = (n + 1, total + row["amount"])
    assert [(r["region"], r["n"], r["total"]) for r in got.to_pylist()] == [
        (region, n, total) for region, (n, total) in sorted(want.items())
    ]


def test_create_external_table_in_datafusion(sales: Path) -> None:
    ctx = lakescan.datafusion.register(SessionContext())
    ctx.sql(
        f"CREATE EXTERNAL TABLE sales STORED AS HIVE PARTITIONED BY (region, year) LOCATION '{sales}/'"
    ).collect()
    got = ctx.sql("SELECT id FROM sales WHERE region = 'eu' AND id < 10 ORDER BY id").to_pydict()
    assert got == {"id": [i for i in range(1, 10) if i % 3]}
    with pytest.raises(Exception, match="not-there"):
        ctx.sql(
            f"CREATE EXTERNAL TABLE bad STORED AS HIVE LOCATION '{sales}/' OPTIONS ('not-there' 'x')"
        ).collect()


def iceberg(relative: str, **kwargs) -> lakescan.IcebergTable:
    options = {"relative_path_base": str(DUCKDB_ICEBERG)}
    return lakescan.IcebergTable(str(DUCKDB_ICEBERG / relative), options=options, **kwargs)


def test_iceberg_equality_deletes_and_time_travel() -> None:
    path = "data/persistent/equality_deletes/warehouse/mydb/mytable"
    got = pa.table(iceberg(path).scan(columns=["id", "name"]))
    assert rows(got, "id") == [{"id": 4, "name": "d"}, {"id": 5, "name": "e"}]
    # Projecting no equality column: the deletes still apply.
    assert pa.table(iceberg(path).scan(columns=["bir"])).num_rows == 2
    old = iceberg(path, snapshot_id=842401149381792626)
    assert pa.table(old.scan(columns=["id"])).column("id").to_pylist() == [4]
    before_last = iceberg(path, snapshot_id=3340507003387467420)
    assert sorted(pa.table(before_last.scan(columns=["id"])).column("id").to_pylist()) == [4, 5, 6]


def test_iceberg_partitioned_equality_deletes_in_datafusion() -> None:
    ctx = SessionContext()
    table = iceberg("data/persistent/equality_deletes/warehouse/mydb/mytable_partitioned")
    ctx.register_table("t", table)
    got = ctx.sql("SELECT id, name FROM t ORDER BY id").to_pydict()
    assert got == {"id": [1, 4, 5], "name": ["a", "d", "e"]}
    cross = iceberg("data/persistent/equality_delete_cross_partition/warehouse/ns/t/metadata/vfinal.metadata.json")
    ctx.register_table("cross", cross)
    got = ctx.sql("SELECT part, key, val FROM cross ORDER BY part, key").to_pydict()
    assert got == {"part": [0, 1, 1], "key": [999, 100, 888], "val": ["p0-k999", "p1-k100", "p1-k888"]}


def test_iceberg_metadata_columns() -> None:
    table = iceberg("data/persistent/partition_bigint", metadata_columns=["_spec_id"])
    got = pa.table(table.scan(columns=["user_id", "_spec_id"]))
    assert rows(got, "user_id") == [
        {"user_id": 12345, "_spec_id": 0},
        {"user_id": 67890, "_spec_id": 0},
    ]


def test_polars_pyarrow_and_duckdb_read_the_stream(sales: Path) -> None:
    pl = pytest.importorskip("polars")
    table = lakescan.HiveTable(f"{sales}/", partitioned_by=["region", "year"])
    frame = pl.DataFrame(table.scan(columns=["id"], filter="id <= 3"))
    assert sorted(frame["id"].to_list()) == [1, 2, 3]
    # Read twice (DuckDB asks for the stream more than once): the same rows each time.
    stream = table.scan(columns=["id", "region"], filter="id > 95")
    assert sorted(pa.table(stream).column("id").to_pylist()) == [96, 97, 98, 99, 100]
    assert sorted(pa.table(stream).column("id").to_pylist()) == [96, 97, 98, 99, 100]
    duckdb = pytest.importorskip("duckdb")
    got = duckdb.sql("SELECT region, count(*) AS n FROM stream GROUP BY region ORDER BY region")
    assert got.fetchall() == [("eu", 3), ("us", 2)]


def test_bad_input_is_an_error_not_a_crash(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="Iceberg|metadata"):
        lakescan.IcebergTable(str(tmp_path))
    with pytest.raises(ValueError, match="twice"):
        lakescan.IcebergTable(str(tmp_path), snapshot_id=1, options={"snapshot_id": "2"})
    with pytest.raises(ValueError, match="HIVE and ICEBERG"):
        lakescan.TableFactory("DELTA")


def test_another_datafusion_python_is_an_import_error(sales: Path, monkeypatch) -> None:
    real = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata,
        "version",
        lambda name: "55.0.0" if name == "datafusion" else real(name),
    )
    table = lakescan.HiveTable(f"{sales}/", partitioned_by=["region", "year"])
    with pytest.raises(ImportError, match=r"datafusion>=54.1,<55.*55\.0\.0"):
        SessionContext().register_table("sales", table)
    with pytest.raises(ImportError, match="55.0.0"):
        lakescan.datafusion.register(SessionContext())


MYTABLE_SNAPSHOTS = {
    853766660775201079,
    7342794868382145167,
    1584331123492059582,
    842401149381792626,
    3340507003387467420,
    1916084761853986166,
}


def test_iceberg_metadata_table() -> None:
    table = iceberg("data/persistent/equality_deletes/warehouse/mydb/mytable")
    snapshots = pa.table(table.metadata_table("snapshots").scan(columns=["snapshot_id"]))
    assert set(snapshots.column("snapshot_id").to_pylist()) == MYTABLE_SNAPSHOTS
    ctx = SessionContext()
    ctx.register_table("files", table.metadata_table("files"))
    got = ctx.sql("SELECT content, count(*) AS n FROM files GROUP BY content ORDER BY content").to_pydict()
    # The current snapshot: two data files and four equality-delete files (EXPECTED.md).
    assert got == {"content": [0, 2], "n": [2, 4]}


def test_iceberg_changes() -> None:
    table = iceberg("data/persistent/equality_deletes/warehouse/mydb/mytable")
    # Snapshot 5 appends ids 5 and 6.
    changes = table.changes(842401149381792626, 3340507003387467420)
    got = pa.table(changes.scan(columns=["id", "name", "_change_type", "_change_version_id"]))
    assert rows(got, "id") == [
        {"id": 5, "name": "e", "_change_type": "insert", "_change_version_id": 3340507003387467420},
        {"id": 6, "name": "f", "_change_type": "insert", "_change_version_id": 3340507003387467420},
    ]
    # A merge-on-read delete snapshot in the range: not implemented, never wrong rows.
    with pytest.raises(Exception, match="(?i)not implemented|NotImplemented"):
        pa.table(table.changes(3340507003387467420, 1916084761853986166).scan())


@pytest.fixture(scope="module")
def s3_sales(sales: Path):
    """The sales table uploaded to the test bucket with pyarrow's own S3 client."""
    from pyarrow import fs

    options, bucket = s3_settings()
    endpoint = options["aws.endpoint"]
    s3 = fs.S3FileSystem(
        access_key=options["aws.access_key_id"],
        secret_key=options["aws.secret_access_key"],
        region=options["aws.region"],
        endpoint_override=endpoint.split("://", 1)[1],
        scheme=endpoint.split("://", 1)[0],
    )
    fs.copy_files(str(sales), f"{bucket}/sales", destination_filesystem=s3)
    return f"s3://{bucket}/sales/", options


def test_s3_table_with_options(s3_sales) -> None:
    location, options = s3_sales
    table = lakescan.HiveTable(location, partitioned_by=["region", "year"], options=options)
    got = pa.table(table.scan(columns=["id"], filter="region = 'us'"))
    assert sorted(got.column("id").to_pylist()) == [i for i in range(1, 101) if i % 3 == 0]
    # Through datafusion-python's FFI: the scan runs with the table's own store.
    ctx = SessionContext()
    ctx.register_table("sales", table)
    assert ctx.sql("SELECT count(*) AS n FROM sales WHERE year = 2024").to_pydict() == {"n": [50]}
    # CREATE EXTERNAL TABLE in datafusion-python, the options in SQL.
    ctx = lakescan.datafusion.register(SessionContext())
    pairs = ", ".join(f"'{k}' '{v}'" for k, v in options.items())
    ctx.sql(
        f"CREATE EXTERNAL TABLE s STORED AS HIVE PARTITIONED BY (region, year) "
        f"LOCATION '{location}' OPTIONS ({pairs})"
    ).collect()
    assert ctx.sql("SELECT sum(id) AS total FROM s").to_pydict() == {"total": [5050]}


def test_s3_table_with_the_aws_environment(s3_sales, monkeypatch) -> None:
    location, options = s3_sales
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", options["aws.access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", options["aws.secret_access_key"])
    monkeypatch.setenv("AWS_REGION", options["aws.region"])
    monkeypatch.setenv("AWS_ENDPOINT", options["aws.endpoint"])
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    table = lakescan.HiveTable(location, partitioned_by=["region", "year"])
    got = pa.table(table.scan(columns=["id"], filter="year = 2023 AND region = 'eu'"))
    want = [i for i in range(1, 101) if i % 3 and 2023 + i % 2 == 2023]
    assert sorted(got.column("id").to_pylist()) == want


OTHER_DATAFUSION_CHECK = """
import importlib.metadata, sys
import datafusion
from datafusion import SessionConfig, SessionContext
import lakescan, lakescan.datafusion
assert importlib.metadata.version("datafusion").startswith("55."), datafusion.__file__
table = lakescan.HiveTable(sys.argv[1], partitioned_by=["region", "year"])
refused = []
for name, attempt in [
    ("table", lambda: SessionContext().register_table("sales", table)),
    ("factory", lambda: lakescan.datafusion.register(SessionContext())),
    ("settings", lambda: SessionConfig().with_extension(lakescan.Settings())),
    ("catalog", lambda: SessionContext().register_catalog_provider(
        "lake", lakescan.IcebergCatalog("memory://?warehouse=" + sys.argv[2]))),
]:
    try:
        attempt()
    except ImportError as e:
        assert "datafusion>=54.1,<55" in str(e) and "55.0.0" in str(e), str(e)
        refused.append(name)
print(",".join(refused))
"""


def test_a_real_datafusion_python_55_is_refused(sales: Path, tmp_path: Path) -> None:
    """datafusion-python 55.0.0 itself (installed on a path of its own by the harness):
    every entry point raises the ImportError, and the process lives."""
    import subprocess
    import sys

    other = os.environ.get("LAKESCAN_OTHER_DATAFUSION")
    if other is None:
        pytest.skip("no datafusion-python 55 beside the environment (run through cargo test)")
    env = dict(os.environ, PYTHONPATH=other)
    done = subprocess.run(
        [sys.executable, "-c", OTHER_DATAFUSION_CHECK, f"{sales}/", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "table,factory,settings,catalog"


def test_hive_schema_as_a_pyarrow_schema(tmp_path: Path) -> None:
    """Declared columns given as a pyarrow schema: every type it maps to SQL reads back as
    pyarrow wrote it (pyarrow's own reader is the reference)."""
    import datetime
    import decimal

    data = pa.table(
        {
            "flag": pa.array([True, False], pa.bool_()),
            "tiny": pa.array([1, -2], pa.int8()),
            "small": pa.array([300, -4], pa.int16()),
            "num": pa.array([70000, 5], pa.int32()),
            "big": pa.array([2**40, -1], pa.int64()),
            "ratio": pa.array([0.5, 1.25], pa.float32()),
            "price": pa.array([1.5, -2.0], pa.float64()),
            "name": pa.array(["a", "b"], pa.string()),
            "blob": pa.array([b"x", b"yz"], pa.binary()),
            "day": pa.array([datetime.date(2024, 1, 31), None], pa.date32()),
            "at": pa.array([datetime.datetime(2024, 1, 31, 12, 0, 0, 123000), None], pa.timestamp("ms")),
            "amount": pa.array([decimal.Decimal("12.34"), None], pa.decimal128(10, 2)),
            "tags": pa.array([["a", "b"], []], pa.list_(pa.string())),
            "point": pa.array([{"x": 1, "y": 2.0}, None], pa.struct([("x", pa.int64()), ("y", pa.float64())])),
        }
    )
    (tmp_path / "region=eu").mkdir()
    import pyarrow.parquet as pq

    pq.write_table(data, tmp_path / "region=eu" / "part-0.parquet")
    schema = data.schema.append(pa.field("region", pa.string()))
    table = lakescan.HiveTable(f"{tmp_path}/", partitioned_by=["region"], schema=schema)
    got = pa.table(table.scan()).to_pylist()
    want = [dict(row, region="eu") for row in data.to_pylist()]
    assert sorted(got, key=lambda r: r["big"]) == sorted(want, key=lambda r: r["big"])
    with pytest.raises(ValueError, match="Arrow type .*dictionary.* has no SQL type"):
        lakescan.HiveTable(f"{tmp_path}/", schema=pa.schema([("d", pa.dictionary(pa.int32(), pa.string()))]))
