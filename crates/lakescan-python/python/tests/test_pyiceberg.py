"""Iceberg tables written by pyiceberg 0.12 (its SQL catalog on SQLite, its own Parquet
writer), read by lakescan through every entry point and compared with pyiceberg's own
``scan().to_arrow()``: schema evolution (a column renamed, columns added), partition
evolution, a copy-on-write delete, time travel, metadata tables, on local disk and on S3."""

from __future__ import annotations

import io
import urllib.request

import pyarrow as pa
import pytest
from datafusion import SessionContext
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType

import lakescan
import lakescan.datafusion
from conftest import rows, s3_settings

#: The catalog's name in its SQLite file (pyiceberg's ``SqlCatalog(name, …)``).
CATALOG = "pyice"


def write_events(catalog: SqlCatalog) -> tuple[object, int]:
    """``db.events`` through four commits; returns the table and its first snapshot id.

    1. 100 rows ``(id, category, amount)``, partitioned by ``category``;
    2. ``amount`` renamed ``price``, ``note`` and ``region`` added, ``region`` added to the
       partition spec;
    3. 50 rows with every column;
    4. ``id < 10`` deleted (pyiceberg rewrites the files: an overwrite snapshot).
    """
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "category", StringType(), required=False),
        NestedField(3, "amount", DoubleType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category")
    )
    table = catalog.create_table(
        "db.events", schema=schema, partition_spec=spec, properties={"format-version": "2"}
    )
    table.append(
        pa.table(
            {
                "id": pa.array(range(100), pa.int64()),
                "category": [["a", "b", "c"][i % 3] for i in range(100)],
                "amount": [i * 1.5 for i in range(100)],
            }
        )
    )
    first = table.current_snapshot().snapshot_id
    with table.update_schema() as update:
        update.rename_column("amount", "price")
        update.add_column("note", StringType())
        update.add_column("region", StringType())
    with table.update_spec() as update:
        update.add_field("region", IdentityTransform(), "region")
    table = catalog.load_table("db.events")
    table.append(
        pa.table(
            {
                "id": pa.array(range(100, 150), pa.int64()),
                "category": [["a", "d"][i % 2] for i in range(50)],
                "price": [i * 2.0 for i in range(50)],
                "note": [f"n{i}" for i in range(50)],
                "region": [["eu", "us"][i % 2] for i in range(50)],
            }
        )
    )
    table.delete(delete_filter="id < 10")
    return catalog.load_table("db.events"), first


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    """The table on local disk: (pyiceberg table, first snapshot id, lakescan catalog URI)."""
    root = tmp_path_factory.mktemp("pyiceberg")
    warehouse = root / "warehouse"
    warehouse.mkdir()
    catalog = SqlCatalog(
        CATALOG, uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{warehouse}"
    )
    table, first = write_events(catalog)
    return table, first, f"sqlite://{root}/catalog.db"


def by_id(table) -> list[dict]:
    return rows(pa.table(table), "id")


def test_catalog_tables_match_pyiceberg(events) -> None:
    table, _, uri = events
    catalog = lakescan.IcebergCatalog(uri, name=CATALOG)
    assert catalog.namespaces() == ["db"]
    assert catalog.tables("db") == ["events"]
    want = by_id(table.scan().to_arrow())
    assert len(want) == 140
    assert by_id(catalog.table("db.events").scan()) == want
    # The same table opened by its metadata file.
    assert by_id(lakescan.IcebergTable(table.metadata_location).scan()) == want
    # A filter on the renamed column and on the column added with the partition evolution.
    got = by_id(catalog.table("db.events").scan(columns=["id", "price"], filter="region = 'us' AND price > 40"))
    want = by_id(table.scan(row_filter="region = 'us' AND price > 40", selected_fields=("id", "price")).to_arrow())
    assert got == want and len(got) == 15


def test_time_travel_reads_the_snapshot_schema(events) -> None:
    table, first, _ = events
    old = lakescan.IcebergTable(table.metadata_location, snapshot_id=first)
    got = by_id(old.scan())
    assert got == by_id(table.scan(snapshot_id=first).to_arrow())
    # The first snapshot's schema: `amount`, before the rename; nothing added yet.
    assert list(got[0]) == ["id", "category", "amount"] and len(got) == 100
    # By time: PyIceberg's `timestamp_ms` (an int), a `datetime`, its text.
    import datetime

    millis = table.snapshot_by_id(first).timestamp_ms
    at = datetime.datetime.fromtimestamp(millis / 1000, datetime.timezone.utc)
    for when in [millis, at, at.isoformat()]:
        assert by_id(lakescan.IcebergTable(table.metadata_location, as_of_timestamp=when).scan()) == got
    with pytest.raises(ValueError, match="as_of_timestamp is a string, milliseconds"):
        lakescan.IcebergTable(table.metadata_location, as_of_timestamp=1.5)


def test_catalog_in_datafusion_python(events) -> None:
    table, _, uri = events
    ctx = SessionContext()
    ctx.register_catalog_provider("lake", lakescan.IcebergCatalog(uri, name=CATALOG))
    got = ctx.sql(
        "SELECT category, count(*) AS n, sum(price) AS total FROM lake.db.events "
        "GROUP BY category ORDER BY category"
    ).to_pydict()
    want: dict[str, tuple[int, float]] = {}
    for row in table.scan().to_arrow().to_pylist():
        n, total = want.get(row["category"], (0, 0.0))
        want[row["category"]] = (n + 1, total + row["price"])
    assert got == {
        "category": sorted(want),
        "n": [want[c][0] for c in sorted(want)],
        "total": [want[c][1] for c in sorted(want)],
    }
    snapshots = ctx.sql('SELECT operation FROM lake.db."events$snapshots" ORDER BY committed_at')
    assert snapshots.to_pydict() == {"operation": ["append", "append", "overwrite"]}


def test_catalog_metadata_tables_and_bad_names(events) -> None:
    table, _, uri = events
    catalog = lakescan.IcebergCatalog(uri, name=CATALOG)
    snapshots = pa.table(catalog.table("db.events$snapshots").scan(columns=["snapshot_id"]))
    assert snapshots.column("snapshot_id").to_pylist() == [s.snapshot_id for s in table.snapshots()]
    with pytest.raises(ValueError, match="no namespace 'nope'"):
        catalog.table("nope.events")
    with pytest.raises(ValueError, match="names no namespace"):
        catalog.table("events")
    with pytest.raises(Exception, match="(?i)not found|does not exist|no table"):
        catalog.table("db.missing")
    # Another catalog name in the same file holds no tables.
    assert lakescan.IcebergCatalog(uri, name="other").namespaces() == []
    # SQLAlchemy's spelling of the same file, as PyIceberg's SqlCatalog is given it.
    sqlalchemy = "sqlite:///" + uri.removeprefix("sqlite://")
    assert sqlalchemy.startswith("sqlite:////")
    assert lakescan.IcebergCatalog(sqlalchemy, name=CATALOG).tables("db") == ["events"]


class PutOnClose(io.BytesIO):
    """A file pyiceberg writes, stored whole when closed with one plain PUT to the test
    server. pyarrow 26's S3 output streams upload in parts, and their
    CompleteMultipartUpload fails against the test server (moto 5.2.1), which takes
    unsigned requests."""

    def __init__(self, endpoint: str, path: str) -> None:
        super().__init__()
        self.url = f"{endpoint}/{path}"

    def close(self) -> None:
        if not self.closed:
            request = urllib.request.Request(
                self.url,
                data=self.getvalue(),
                method="PUT",
                # Not urllib's default form type, which the server would parse as a form.
                headers={"Content-Type": "application/octet-stream"},
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                assert response.status == 200, f"PUT {self.url}: {response.status}"
        super().close()


@pytest.fixture(scope="module")
def s3_events(tmp_path_factory):
    """The table written by pyiceberg to the test bucket (read back with pyarrow's S3 client)."""
    from pyiceberg.io.pyarrow import PyArrowFile

    options, bucket = s3_settings()
    root = tmp_path_factory.mktemp("pyiceberg-s3")
    catalog = SqlCatalog(
        CATALOG,
        uri=f"sqlite:///{root}/catalog.db",
        warehouse=f"s3://{bucket}/pyiceberg",
        **{
            "s3.endpoint": options["aws.endpoint"],
            "s3.access-key-id": options["aws.access_key_id"],
            "s3.secret-access-key": options["aws.secret_access_key"],
            "s3.region": options["aws.region"],
        },
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            PyArrowFile,
            "create",
            lambda file, overwrite=False: PutOnClose(options["aws.endpoint"], file._path),
        )
        table, _ = write_events(catalog)
    return table, root, bucket, options


def test_s3_tables_written_by_pyiceberg(s3_events) -> None:
    table, root, bucket, options = s3_events
    want = by_id(table.scan().to_arrow())
    assert table.metadata_location.startswith(f"s3://{bucket}/")
    # By metadata file, the store from the options.
    assert by_id(lakescan.IcebergTable(table.metadata_location, options=options).scan()) == want
    # Through the catalog, the store from the URI's aws.* parameters.
    query = "&".join(f"{k}={v}" for k, v in options.items())
    uri = f"sqlite://{root}/catalog.db?warehouse=s3://{bucket}/pyiceberg&{query}"
    catalog = lakescan.IcebergCatalog(uri, name=CATALOG)
    assert by_id(catalog.table("db.events").scan()) == want
    ctx = SessionContext()
    ctx.register_catalog_provider("lake", catalog)
    assert ctx.sql("SELECT count(*) AS n FROM lake.db.events").to_pydict() == {"n": [140]}
    # CREATE EXTERNAL TABLE in datafusion-python.
    ctx = lakescan.datafusion.session_context()
    pairs = ", ".join(f"'{k}' '{v}'" for k, v in options.items())
    ctx.sql(
        f"CREATE EXTERNAL TABLE e STORED AS ICEBERG LOCATION '{table.metadata_location}' "
        f"OPTIONS ({pairs})"
    )
    assert ctx.sql("SELECT sum(id) AS s FROM e").to_pydict() == {"s": [sum(r["id"] for r in want)]}


def test_s3_iceberg_with_the_aws_environment(s3_events, monkeypatch) -> None:
    table, _, _, options = s3_events
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", options["aws.access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", options["aws.secret_access_key"])
    monkeypatch.setenv("AWS_REGION", options["aws.region"])
    monkeypatch.setenv("AWS_ENDPOINT", options["aws.endpoint"])
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    got = by_id(lakescan.IcebergTable(table.metadata_location).scan(filter="category = 'd'"))
    assert got == by_id(table.scan(row_filter="category = 'd'").to_arrow())
    assert len(got) == 25


def test_catalog_metadata_columns(events) -> None:
    table, _, uri = events
    catalog = lakescan.IcebergCatalog(uri, name=CATALOG, metadata_columns=["_file", "_pos"])
    got = pa.table(catalog.table("db.events").scan(columns=["id", "_file", "_pos"], filter="id = 120"))
    files = {task.file.file_path: task.file for task in table.scan(row_filter="id = 120").plan_files()}
    assert got.num_rows == 1
    assert got.column("_file")[0].as_py() in files
    with pytest.raises(Exception, match="unknown metadata column '_nope'"):
        lakescan.IcebergCatalog(uri, name=CATALOG, metadata_columns="_nope").table("db.events")
