#!/usr/bin/env python3
"""Derives the tables under testdata/writers/ from testdata/duckdb-iceberg/ (run from the
repository root; the outputs are committed, the tests never run this).

* manifests_without_metadata/: two duckdb-iceberg tables (Spark-written) whose manifests lose
  the Avro metadata keys `schema`, `schema-id`, `partition-spec`, `partition-spec-id`,
  `format-version`, `content` and `iceberg.schema`, as some writers leave them out. Only the
  Avro header changes; the entry blocks and every other file are byte-for-byte copies.
* v3_unparsed_types/: duckdb-iceberg's hive_partitioned_table upgraded to format v3 by a new
  metadata file (v5.metadata.json) whose current schema adds columns of types the `iceberg`
  crate cannot parse (variant, geometry, unknown, a struct with a variant member); its
  version-hint.text is empty. One manifest's `schema` key names the new schema.
"""
import json
import pathlib
import shutil

SRC = pathlib.Path("testdata/duckdb-iceberg")
OUT = pathlib.Path("testdata/writers")
MAGIC = b"Obj\x01"


def read_long(b, i):
    value, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return (value >> 1) ^ -(value & 1), i


def write_long(v):
    z = (v << 1) ^ (v >> 63)
    out = bytearray()
    while True:
        byte = z & 0x7F
        z >>= 7
        if z == 0:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def read_header(b):
    assert b[:4] == MAGIC
    i, meta = 4, {}
    while True:
        n, i = read_long(b, i)
        if n == 0:
            return meta, i
        if n < 0:
            _, i = read_long(b, i)
            n = -n
        for _ in range(n):
            k, i = read_long(b, i)
            key = b[i : i + k].decode()
            i += k
            v, i = read_long(b, i)
            meta[key] = b[i : i + v]
            i += v


def write_header(meta, rest):
    out = bytearray(MAGIC)
    out += write_long(len(meta))
    for k, v in meta.items():
        out += write_long(len(k.encode())) + k.encode() + write_long(len(v)) + v
    return bytes(out + write_long(0) + rest)


def rewrite_manifest(path, change):
    b = path.read_bytes()
    meta, end = read_header(b)
    change(meta)
    path.write_bytes(write_header(meta, b[end:]))


def copy_table(table, dest_root):
    dest = dest_root / table
    shutil.copytree(SRC / table, dest, ignore=shutil.ignore_patterns("*.crc"))
    return dest


def is_manifest(path):
    meta, _ = read_header(path.read_bytes())
    return "partition-spec" in meta


def without_metadata():
    root = OUT / "manifests_without_metadata"
    shutil.rmtree(root, ignore_errors=True)
    gone = ["schema", "schema-id", "partition-spec", "partition-spec-id", "format-version",
            "content", "iceberg.schema"]
    for table in ["data/persistent/hive_partitioned_table",
                  "data/persistent/equality_deletes/warehouse/mydb/mytable_partitioned"]:
        dest = copy_table(table, root)
        for avro in sorted((dest / "metadata").glob("*.avro")):
            if is_manifest(avro):
                rewrite_manifest(avro, lambda m: [m.pop(k, None) for k in gone])


def unparsed_types():
    root = OUT / "v3_unparsed_types"
    shutil.rmtree(root, ignore_errors=True)
    table = "data/persistent/hive_partitioned_table"
    dest = copy_table(table, root)
    metadata = dest / "metadata"
    for old in metadata.glob("v[123].metadata.json"):
        old.unlink()
    v4 = json.loads((metadata / "v4.metadata.json").read_text())
    schema = json.loads(json.dumps(v4["schemas"][0]))
    schema["schema-id"] = 1
    schema["fields"] += [
        {"id": 4, "name": "v", "required": False, "type": "variant"},
        {"id": 5, "name": "g", "required": False, "type": "geometry(srid:4326)"},
        {"id": 6, "name": "u", "required": False, "type": "unknown"},
        {"id": 7, "name": "s", "required": False, "type": {"type": "struct", "fields": [
            {"id": 8, "name": "a", "required": False, "type": "int"},
            {"id": 9, "name": "w", "required": False, "type": "variant"}]}},
    ]
    v5 = dict(v4)
    v5["format-version"] = 3
    v5["schemas"] = v4["schemas"] + [schema]
    v5["current-schema-id"] = 1
    v5["last-column-id"] = 9
    v5["next-row-id"] = 0
    v5["last-updated-ms"] = v4["last-updated-ms"] + 1000
    v5["metadata-log"] = []
    (metadata / "v5.metadata.json").write_text(json.dumps(v5, indent=2) + "\n")
    (metadata / "v4.metadata.json").unlink()
    (metadata / "version-hint.text").write_text("")
    newest = metadata / "fee93099-6425-4d83-bd7c-0aa646533090-m0.avro"
    rewrite_manifest(newest, lambda m: m.update(
        {"schema": json.dumps(schema).encode(), "schema-id": b"1"}))


if __name__ == "__main__":
    without_metadata()
    unparsed_types()
