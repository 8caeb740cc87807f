#!/usr/bin/env python3
"""Writes the Iceberg tables under testdata/writers/pyiceberg/warehouse/ with PyIceberg, a
Python Iceberg writer (run from this folder: `python make_tables.py`; the outputs are
committed, the tests never run this).

Made with pyiceberg 0.12.0, pyiceberg-core 0.11.0, pyarrow 26.0.1 (pip install
'pyiceberg[sql-sqlite,pyarrow]==0.12.0' pyiceberg-core). Paths in the metadata are relative
to this folder (PyIceberg writes a relative warehouse as written).

Tables (each under warehouse/db/<name>/):

* partition_names: v2, partitioned by bucket[4](ID) named `ID_bucket`, identity(`with
  space`), identity(`a/b`), written by two appends. PyIceberg writes the manifests' partition record fields as Java
  does, with names that are not valid Avro names escaped: `with_x20space`, `a_x2Fb`. An
  equality delete on `n = 1` is scoped to the partition (3, 'x', 1) only.
* partition_names_hive: the same writes, then every manifest's partition record named as
  Hive-based writers name it: lowercased (`id_bucket`, `with space` -> `with_x20space`),
  without the `iceberg-field-name` property. Only the manifests' Avro headers change.
* partition_names_no_ids: as partition_names_hive, and the partition record's fields carry
  no `field-id` (a reader falls back to their position in the spec).
* void_name: v1, identity(cat) named `cat`, then the field removed: PyIceberg keeps it as a
  `void` transform under its old name `cat`, the name of a column.
* promoted_v1, promoted_v2: identity partitions on i int, f float, d decimal(5,3); then i ->
  long, f -> double, d -> decimal(8,3) and another append. The first manifest keeps the old
  partition types (int, float, a fixed[3] decimal).
* promoted_current_schema: promoted_v2 with the first manifest's `schema` key naming the
  table's current schema (decimal(8,3)) while its partition record keeps the fixed[3]
  decimal, as a writer that records the current schema in every manifest leaves it.
* nested: a struct column st<a, b> that later gains members c and d, and a map column m
  (NULL structs and maps, an empty map).
"""
import json
import pathlib
import shutil
import sys
import time
import uuid
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestWriterV2,
    write_manifest_list,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.snapshots import Operation, Snapshot, Summary
from pyiceberg.table.update import AddSnapshotUpdate, AssertRefSnapshotId, SetSnapshotRefUpdate
from pyiceberg.transforms import BucketTransform, IdentityTransform
from pyiceberg.typedef import Record
from pyiceberg.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)

HERE = pathlib.Path(__file__).resolve().parent
WAREHOUSE = "warehouse"

# The Avro header reader and writer of the other derived tables.
sys.path.insert(0, str(HERE.parent))
from derive import read_header, write_header  # noqa: E402


def catalog():
    shutil.rmtree(HERE / WAREHOUSE, ignore_errors=True)
    cat = SqlCatalog("default", uri="sqlite:///:memory:", warehouse=WAREHOUSE)
    cat.create_namespace("db")
    return cat


# ---- Avro headers (only the header changes; the entry blocks stay byte for byte) ----


def rewrite_manifests(table_dir, change):
    """Applies `change(meta)` to the header of every manifest (not manifest list)."""
    for path in sorted((table_dir / "metadata").glob("*.avro")):
        if path.name.startswith("snap-"):
            continue
        b = path.read_bytes()
        meta, end = read_header(b)
        change(meta)
        path.write_bytes(write_header(meta, b[end:]))


def partition_record(avro_schema):
    data_file = next(f for f in avro_schema["fields"] if f["name"] == "data_file")
    return next(f for f in data_file["type"]["fields"] if f["name"] == "partition")["type"]


def hive_names(drop_ids):
    def change(meta):
        schema = json.loads(meta["avro.schema"])
        for field in partition_record(schema)["fields"]:
            field["name"] = field["name"].lower()
            field.pop("iceberg-field-name", None)
            if drop_ids:
                field.pop("field-id", None)
        meta["avro.schema"] = json.dumps(schema).encode()

    return change


# ---- tables ----


def names_table(cat, name):
    schema = Schema(
        NestedField(1, "ID", StringType(), required=False),
        NestedField(2, "with space", StringType(), required=False),
        NestedField(3, "a/b", IntegerType(), required=False),
        NestedField(4, "n", IntegerType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(1, 1000, BucketTransform(4), "ID_bucket"),
        PartitionField(2, 1001, IdentityTransform(), "with space"),
        PartitionField(3, 1002, IdentityTransform(), "a/b"),
    )
    t = cat.create_table(f"db.{name}", schema=schema, partition_spec=spec)
    rows = [
        {"ID": "1", "with space": "x", "a/b": 1, "n": 1},
        {"ID": "1", "with space": "x", "a/b": 1, "n": 2},
        {"ID": "2", "with space": "y", "a/b": 2, "n": 1},
        {"ID": "3", "with space": "x", "a/b": 1, "n": 1},
        {"ID": "4", "with space": None, "a/b": None, "n": 1},
    ]
    t.append(pa.Table.from_pylist(rows, schema=t.schema().as_arrow()))
    more = [
        {"ID": "5", "with space": "y", "a/b": 2, "n": 3},
        {"ID": "6", "with space": "x", "a/b": 1, "n": 6},
    ]
    t.append(pa.Table.from_pylist(more, schema=t.schema().as_arrow()))
    # bucket[4]('1') = 3: the delete applies to ("1", "x", 1) rows only.
    equality_delete(t, Record(3, "x", 1), "n", 4, 1)
    return t


class DeleteManifestWriter(ManifestWriterV2):
    def content(self):
        return ManifestContent.DELETES

    @property
    def _meta(self):
        return {**super()._meta, "content": "deletes"}


def equality_delete(t, partition, column, field_id, value):
    """Commits an equality delete of `column = value` in `partition` (as Java writes one)."""
    location = t.metadata.location
    io = t.io
    snapshot_id = int(uuid.uuid4().int % (2**62))
    parent = t.metadata.current_snapshot()
    sequence_number = t.metadata.last_sequence_number + 1
    delete_path = f"{location}/data/delete-{uuid.uuid4()}.parquet"
    arrow_schema = pa.schema(
        [pa.field(column, pa.int32(), metadata={b"PARQUET:field_id": str(field_id).encode()})]
    )
    pq.write_table(pa.table({column: pa.array([value], pa.int32())}, schema=arrow_schema), delete_path)
    size = pathlib.Path(delete_path).stat().st_size
    delete_file = DataFile.from_args(
        content=DataFileContent.EQUALITY_DELETES,
        file_path=delete_path,
        file_format=FileFormat.PARQUET,
        partition=partition,
        record_count=1,
        file_size_in_bytes=size,
        equality_ids=[field_id],
    )
    delete_file.spec_id = t.metadata.default_spec_id
    manifest_path = f"{location}/metadata/{uuid.uuid4()}-m0.avro"
    writer = DeleteManifestWriter(
        t.spec(), t.schema(), io.new_output(manifest_path), snapshot_id, "deflate"
    )
    with writer:
        writer.add(
            ManifestEntry.from_args(
                status=ManifestEntryStatus.ADDED,
                snapshot_id=snapshot_id,
                sequence_number=None,
                file_sequence_number=None,
                data_file=delete_file,
            )
        )
    list_path = f"{location}/metadata/snap-{snapshot_id}-0-{uuid.uuid4()}.avro"
    with write_manifest_list(
        2, io.new_output(list_path), snapshot_id, parent.snapshot_id, sequence_number, "deflate"
    ) as lw:
        lw.add_manifests(parent.manifests(io) + [writer.to_manifest_file()])
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent.snapshot_id,
        sequence_number=sequence_number,
        timestamp_ms=int(time.time() * 1000),
        manifest_list=list_path,
        summary=Summary(operation=Operation.DELETE),
        schema_id=t.metadata.current_schema_id,
    )
    with t.transaction() as tx:
        tx._apply(
            (
                AddSnapshotUpdate(snapshot=snapshot),
                SetSnapshotRefUpdate(
                    ref_name="main", type="branch", snapshot_id=snapshot_id
                ),
            ),
            (AssertRefSnapshotId(snapshot_id=parent.snapshot_id, ref="main"),),
        )


def void_name(cat):
    schema = Schema(
        NestedField(1, "cat", StringType(), required=False),
        NestedField(2, "n", IntegerType(), required=False),
    )
    spec = PartitionSpec(PartitionField(1, 1000, IdentityTransform(), "cat"))
    t = cat.create_table("db.void_name", schema=schema, partition_spec=spec, properties={"format-version": "1"})
    t.append(pa.Table.from_pylist([{"cat": "a", "n": 1}, {"cat": "b", "n": 2}], schema=t.schema().as_arrow()))
    with t.update_spec() as u:
        u.remove_field("cat")
    t.append(pa.Table.from_pylist([{"cat": "c", "n": 3}, {"cat": "a", "n": 4}], schema=t.schema().as_arrow()))


def promoted(cat, name, version):
    schema = Schema(
        NestedField(1, "i", IntegerType(), required=False),
        NestedField(2, "f", FloatType(), required=False),
        NestedField(3, "d", DecimalType(5, 3), required=False),
        NestedField(4, "n", IntegerType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(1, 1000, IdentityTransform(), "i"),
        PartitionField(2, 1001, IdentityTransform(), "f"),
        PartitionField(3, 1002, IdentityTransform(), "d"),
    )
    t = cat.create_table(f"db.{name}", schema=schema, partition_spec=spec, properties={"format-version": version})
    before = [
        {"i": 1, "f": 1.5, "d": Decimal("12.345"), "n": 1},
        {"i": -7, "f": -0.25, "d": Decimal("-99.999"), "n": 2},
    ]
    t.append(pa.Table.from_pylist(before, schema=t.schema().as_arrow()))
    with t.update_schema() as u:
        u.update_column("i", LongType())
        u.update_column("f", DoubleType())
        u.update_column("d", DecimalType(8, 3))
    after = [
        {"i": 3_000_000_000, "f": 2.5, "d": Decimal("12345.678"), "n": 3},
        {"i": 1, "f": 1.5, "d": Decimal("12.345"), "n": 4},
    ]
    t.append(pa.Table.from_pylist(after, schema=t.schema().as_arrow()))
    return t


def current_schema_in_old_manifest(t):
    """The manifests written before the promotion name the table's current schema."""
    current = t.schema().model_dump_json(by_alias=True, exclude_none=True).encode()

    def change(meta):
        if json.loads(meta["schema"])["schema-id"] != t.schema().schema_id:
            meta["schema"] = current
            meta["schema-id"] = str(t.schema().schema_id).encode()

    rewrite_manifests(table_dir(t), change)


def nested(cat):
    schema = Schema(
        NestedField(1, "id", IntegerType(), required=False),
        NestedField(
            2,
            "st",
            StructType(
                NestedField(3, "a", IntegerType(), required=False),
                NestedField(4, "b", StringType(), required=False),
            ),
            required=False,
        ),
        NestedField(5, "m", MapType(6, StringType(), 7, IntegerType(), value_required=False), required=False),
    )
    t = cat.create_table("db.nested", schema=schema)
    t.append(
        pa.Table.from_pylist(
            [
                {"id": 1, "st": {"a": 1, "b": "x"}, "m": {"k1": 1}},
                {"id": 2, "st": None, "m": None},
                {"id": 3, "st": {"a": None, "b": None}, "m": {"k2": None}},
            ],
            schema=t.schema().as_arrow(),
        )
    )
    with t.update_schema() as u:
        u.add_column(("st", "c"), IntegerType())
        u.add_column(("st", "d"), StringType())
    t.append(
        pa.Table.from_pylist(
            [
                {"id": 4, "st": {"a": 4, "b": "z", "c": 40, "d": "w"}, "m": {"k4": 4, "k5": 5}},
                {"id": 5, "st": None, "m": {}},
            ],
            schema=t.schema().as_arrow(),
        )
    )


def table_dir(t):
    return HERE / t.metadata.location


def main():
    import os

    os.chdir(HERE)
    cat = catalog()
    names_table(cat, "partition_names")
    hive = names_table(cat, "partition_names_hive")
    rewrite_manifests(table_dir(hive), hive_names(drop_ids=False))
    no_ids = names_table(cat, "partition_names_no_ids")
    rewrite_manifests(table_dir(no_ids), hive_names(drop_ids=True))
    void_name(cat)
    promoted(cat, "promoted_v1", "1")
    promoted(cat, "promoted_v2", "2")
    current_schema_in_old_manifest(promoted(cat, "promoted_current_schema", "2"))
    nested(cat)


if __name__ == "__main__":
    main()
