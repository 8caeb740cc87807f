"""An Avro file as Hive 3.1.3 and 4 write dates and timestamps by default: days and
wall clocks counted in Java's hybrid calendar (Julian before 1582-10-15), marked
`writer.proleptic = false`, with the writer's zone in `writer.time.zone`.

Rows: 1012-02-21 / 1012-02-21 07:08:09.123 (hybrid day numbers), 2012-02-21 / 2012-02-21
00:00:00, and NULLs. Written with fastavro 1.13.1; run from anywhere: `python
make_avro_hybrid.py`. The output is committed; the tests never run it.
"""
import os

import fastavro


def julian_days(y, m, d):
    """Days since 1970-01-01 of a Julian calendar date."""
    a = (14 - m) // 12
    y, m = y + 4800 - a, m + 12 * a - 3
    return d + (153 * m + 2) // 5 + 365 * y + y // 4 - 32083 - 2440588


schema = {
    "type": "record",
    "name": "hybrid",
    "namespace": "default",
    "fields": [
        {"name": "d", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
        {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}],
         "default": None},
    ],
}
old = julian_days(1012, 2, 21)
modern = 15391  # 2012-02-21
rows = [
    {"d": old, "ts": (old * 86400 + 7 * 3600 + 8 * 60 + 9) * 1000 + 123},
    {"d": modern, "ts": modern * 86400 * 1000},
    {"d": None, "ts": None},
]
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "avro_hive4_hybrid")
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "000000_0.avro"), "wb") as f:
    fastavro.writer(f, schema, rows, metadata={"writer.proleptic": "false", "writer.time.zone": "UTC"})
