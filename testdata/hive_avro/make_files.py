"""Writes the Hive tables of Avro files in this folder with fastavro, the way Hive's
AvroSerDe, Spark's `spark-avro` and a hand-written reader schema lay them out.

    pip install fastavro==1.13.1 cramjam && python make_files.py

Table `events/` (partitioned by `ds`), the same columns written by two writers:

* `ds=2024-01-01/000000_0` — as Hive's AvroSerDe writes: record `baseRecord`, every column a
  `["null", T]` union with `"default": null`, `decimal(10,2)` as `bytes`, `varchar(10)` as a
  `string` marked `varchar`, `timestamp` as `timestamp-millis`, a struct as a record named
  `record_0`, deflate; `big` is still the `int` it was before the table widened it to
  `bigint`, and `note` does not exist yet.
* `ds=2024-01-02/part-00000-….avro` — as Spark writes: record `topLevelRecord`, unions with
  the null second (`[T, "null"]`), `decimal(10,2)` as a 5-byte `fixed`, `timestamp` as
  `timestamp-micros`, snappy; it has the newer `note` column.
* `ds=2024-01-03/000000_0` — 1 000 rows in blocks of about 20 rows (sync interval 400
  bytes), uncompressed: `id` 1000..1999, `big` = id * 3, `name` = `n<id>`, everything else
  NULL.

Table `enums/` — one file of a record with an Avro `enum`, a `fixed(4)` and a `string`
marked `uuid` (one value in upper case: Java, Hive and Trino read the text as written), as
a schema written by hand (Hive reads an enum as its symbol's string).

Table `hive_zone/` — one file as Hive 3.1.2 and later write it in a JVM whose zone is
America/Los_Angeles: each `timestamp` wall clock stored as the `timestamp-millis` instant of
that wall clock there, and the zone named in the file's metadata (`writer.time.zone`).
`2024-01-15 10:00:00` (PST, UTC-8) is stored as 18:00 UTC, `2024-07-15 10:00:00.250`
(PDT, UTC-7) as 17:00:00.250 UTC.

The rows are listed in this script; the tests state the values they expect.
"""

import datetime
import decimal
import os
import shutil

import fastavro

HERE = os.path.dirname(os.path.abspath(__file__))
UTC = datetime.timezone.utc


def nullable_first(t):
    return ["null", t]


def nullable_second(t):
    return [t, "null"]


def hive_schema():
    n = nullable_first
    return {
        "type": "record",
        "name": "baseRecord",
        "namespace": "org.apache.hadoop.hive.ql.io.avro",
        "fields": [
            {"name": "id", "type": n("int"), "default": None},
            {"name": "big", "type": n("int"), "default": None},
            {"name": "name", "type": n("string"), "default": None},
            {"name": "code", "type": n({"type": "string", "logicalType": "varchar", "maxLength": 10}), "default": None},
            {"name": "flag", "type": n("boolean"), "default": None},
            {"name": "ratio", "type": n("double"), "default": None},
            {"name": "score", "type": n("float"), "default": None},
            {"name": "amount", "type": n({"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}), "default": None},
            {"name": "day", "type": n({"type": "int", "logicalType": "date"}), "default": None},
            {"name": "ts", "type": n({"type": "long", "logicalType": "timestamp-millis"}), "default": None},
            {"name": "payload", "type": n("bytes"), "default": None},
            {"name": "tags", "type": n({"type": "array", "items": n("string")}), "default": None},
            {"name": "attrs", "type": n({"type": "map", "values": n("int")}), "default": None},
            {
                "name": "point",
                "type": n({
                    "type": "record",
                    "name": "record_0",
                    "namespace": "org.apache.hadoop.hive.ql.io.avro",
                    "fields": [
                        {"name": "x", "type": n("int"), "default": None},
                        {"name": "y", "type": n("string"), "default": None},
                    ],
                }),
                "default": None,
            },
        ],
    }


def spark_schema():
    s = nullable_second
    return {
        "type": "record",
        "name": "topLevelRecord",
        "fields": [
            {"name": "id", "type": s("int")},
            {"name": "big", "type": s("long")},
            {"name": "name", "type": s("string")},
            {"name": "code", "type": s("string")},
            {"name": "flag", "type": s("boolean")},
            {"name": "ratio", "type": s("double")},
            {"name": "score", "type": s("float")},
            {"name": "amount", "type": s({"type": "fixed", "name": "fixed", "namespace": "topLevelRecord.amount", "size": 5, "logicalType": "decimal", "precision": 10, "scale": 2})},
            {"name": "day", "type": s({"type": "int", "logicalType": "date"})},
            {"name": "ts", "type": s({"type": "long", "logicalType": "timestamp-micros"})},
            {"name": "payload", "type": s("bytes")},
            {"name": "tags", "type": s({"type": "array", "items": s("string")})},
            {"name": "attrs", "type": s({"type": "map", "values": s("int")})},
            {
                "name": "point",
                "type": s({
                    "type": "record",
                    "name": "point",
                    "namespace": "topLevelRecord",
                    "fields": [
                        {"name": "x", "type": s("int")},
                        {"name": "y", "type": s("string")},
                    ],
                }),
            },
            {"name": "note", "type": s("string")},
        ],
    }


def ts(text):
    return datetime.datetime.fromisoformat(text).replace(tzinfo=UTC)


HIVE_ROWS = [
    dict(id=1, big=10, name="alpha", code="A1", flag=True, ratio=1.5, score=0.25,
         amount=decimal.Decimal("12.34"), day=datetime.date(2024, 1, 1),
         ts=ts("2024-01-01 10:00:00.123"), payload=b"\x00\x01", tags=["a", None, "b"],
         attrs={"k": 1, "z": None}, point={"x": 1, "y": "p"}),
    dict(id=2, big=-20, name="beta", code="B2", flag=False, ratio=-2.25, score=1.5,
         amount=decimal.Decimal("-0.05"), day=datetime.date(1969, 12, 31),
         ts=ts("1969-12-31 23:59:59.999"), payload=b"", tags=[], attrs={},
         point={"x": None, "y": None}),
    dict(id=3, big=None, name=None, code=None, flag=None, ratio=None, score=None,
         amount=None, day=None, ts=None, payload=None, tags=None, attrs=None, point=None),
]

SPARK_ROWS = [
    dict(id=4, big=4_000_000_000, name="gamma", code="C3", flag=True, ratio=3.0, score=2.5,
         amount=decimal.Decimal("99999999.99"), day=datetime.date(2024, 1, 2),
         ts=ts("2024-01-02 03:04:05.678901"), payload=b"\xff", tags=["c"],
         attrs={"k": 4}, point={"x": 4, "y": "q"}, note="new"),
    dict(id=5, big=50, name="delta", code=None, flag=False, ratio=5.5, score=None,
         amount=decimal.Decimal("-99999999.99"), day=datetime.date(1900, 1, 1),
         ts=ts("1900-01-01 00:00:00"), payload=None, tags=None, attrs=None,
         point={"x": None, "y": "r"}, note=None),
]

ENUM_SCHEMA = {
    "type": "record",
    "name": "Reading",
    "namespace": "com.example",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "suit", "type": {"type": "enum", "name": "Suit", "symbols": ["SPADES", "HEARTS", "DIAMONDS", "CLUBS"]}},
        {"name": "maybe_suit", "type": ["null", "Suit"], "default": None},
        {"name": "mac", "type": {"type": "fixed", "name": "Mac", "size": 4}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
    ],
}

ENUM_ROWS = [
    dict(id=1, suit="HEARTS", maybe_suit=None, mac=b"\x01\x02\x03\x04", ref="6f1b4c1e-8a6e-4b0c-9a51-3d2f3b8a9c10"),
    dict(id=2, suit="CLUBS", maybe_suit="SPADES", mac=b"\xff\x00\xff\x00", ref="6F1B4C1E-8A6E-4B0C-9A51-3D2F3B8A9C11"),
    dict(id=3, suit="HEARTS", maybe_suit="DIAMONDS", mac=b"abcd", ref="00000000-0000-0000-0000-000000000000"),
]


ZONE_SCHEMA = {
    "type": "record",
    "name": "baseRecord",
    "namespace": "org.apache.hadoop.hive.ql.io.avro",
    "fields": [
        {"name": "id", "type": ["null", "int"], "default": None},
        {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": None},
    ],
}

ZONE_ROWS = [
    dict(id=1, ts=ts("2024-01-15 18:00:00")),
    dict(id=2, ts=ts("2024-07-15 17:00:00.250")),
    dict(id=3, ts=None),
]


def write(path, schema, rows, codec, **kwargs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(schema), rows, codec=codec, **kwargs)


def main():
    for table in ("events", "enums", "hive_zone"):
        shutil.rmtree(os.path.join(HERE, table), ignore_errors=True)
    events = os.path.join(HERE, "events")
    write(os.path.join(events, "ds=2024-01-01", "000000_0"), hive_schema(), HIVE_ROWS, "deflate")
    write(os.path.join(events, "ds=2024-01-02", "part-00000-3b4c-c000.avro"), spark_schema(), SPARK_ROWS, "snappy")
    many = [dict(id=i, big=i * 3, name=f"n{i}") for i in range(1000, 2000)]
    write(os.path.join(events, "ds=2024-01-03", "000000_0"), hive_schema(), many, "null", sync_interval=400)
    write(os.path.join(HERE, "enums", "000000_0"), ENUM_SCHEMA, ENUM_ROWS, "null")
    write(
        os.path.join(HERE, "hive_zone", "000000_0"),
        ZONE_SCHEMA,
        ZONE_ROWS,
        "deflate",
        metadata={"writer.time.zone": "America/Los_Angeles"},
    )


if __name__ == "__main__":
    main()
