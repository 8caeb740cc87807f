"""Writes the Hive tables of ORC files in this folder with ORC's C++ writer, as pyarrow
drives it (`pyarrow.orc.write_table`).

    pip install pyarrow==26.0.1 && python make_files.py

pyarrow hands the C++ writer each timestamp as seconds and nanoseconds truncated toward
zero, so a time before 1970 with a fraction of a second is stored with negative
nanoseconds (`1969-12-31 23:59:58.723` as -1 s and -277 000 000 ns), which ORC's C++ reader
reads back right and ORC's Java writer never writes.

Table `times/` — one file, one stripe, columns `id int` and `ts timestamp` (nanoseconds):

    id  ts
    0   1969-12-31 23:59:58.723
    1   1900-01-01 00:00:00.0005
    2   1969-12-31 23:59:59.999999999
    3   1969-12-31 23:59:59
    4   1970-01-01 00:00:00
    5   2000-01-01 00:00:00.000001
    6   NULL
    7   1700-06-15 12:30:45.5
    8   1969-07-20 20:17:40.123456789

Table `nested/` — one file, columns `id int` and `s struct<ts timestamp>`, the rows 0 to 2
of `times/` inside the struct (rows 0 and 1 have negative nanoseconds).

The script checks that pyarrow reads every file back as written; the tests state the
values they expect.
"""

import datetime as dt
import os
import shutil

import pyarrow as pa
import pyarrow.orc as orc

HERE = os.path.dirname(os.path.abspath(__file__))

TIMES = [
    dt.datetime(1969, 12, 31, 23, 59, 58, 723000),
    dt.datetime(1900, 1, 1, 0, 0, 0, 500),
    None,  # 1969-12-31 23:59:59.999999999, set below in nanoseconds
    dt.datetime(1969, 12, 31, 23, 59, 59),
    dt.datetime(1970, 1, 1),
    dt.datetime(2000, 1, 1, 0, 0, 0, 1),
    None,
    dt.datetime(1700, 6, 15, 12, 30, 45, 500000),
    None,  # 1969-07-20 20:17:40.123456789, set below in nanoseconds
]


def nanos():
    epoch = dt.datetime(1970, 1, 1)
    out = []
    for i, t in enumerate(TIMES):
        if i == 2:
            out.append(-1)
        elif i == 8:
            out.append(
                (dt.datetime(1969, 7, 20, 20, 17, 40) - epoch) // dt.timedelta(seconds=1)
                * 1_000_000_000
                + 123_456_789
            )
        elif t is None:
            out.append(None)
        else:
            out.append((t - epoch) // dt.timedelta(microseconds=1) * 1000)
    return out


def write(table, folder):
    path = os.path.join(HERE, folder)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    file = os.path.join(path, "part-0.orc")
    orc.write_table(table, file, compression="zlib")
    assert orc.read_table(file).equals(table), folder


def main():
    ts = pa.array(nanos(), pa.timestamp("ns"))
    ids = pa.array(range(len(TIMES)), pa.int32())
    write(pa.table({"id": ids, "ts": ts}), "times")
    nested = pa.StructArray.from_arrays([ts.slice(0, 3)], names=["ts"])
    write(pa.table({"id": ids.slice(0, 3), "s": nested}), "nested")


if __name__ == "__main__":
    main()
