#!/usr/bin/env python3
"""Writes the ORC files under testdata/orc_calendars/ (run from this folder: `python
make_files.py`; the outputs are committed, the tests never run this).

Every file holds the same rows: `id int`, `d date`, `ts timestamp`, with the dates
0001-01-01, 1000-06-15, 1582-10-04, 1582-10-15, 1970-01-01, 2024-02-29 (each timestamp is
its date at 01:02:03.123456) and a row of NULLs. The writers count days differently:

* java_hybrid/: Apache ORC's Java writer 1.9.8 (`WriteDays.java`, against the jars pyspark
  3.5.9 ships), its default calendar: days in Java's hybrid calendar, footer `calendar =
  JULIAN_GREGORIAN`.
* java_proleptic/: the same writer with `setProlepticGregorian(true)`: proleptic days,
  footer `calendar = PROLEPTIC_GREGORIAN`.
* spark_hybrid/: Spark 3.5.9 (`df.write.orc`, session time zone UTC), which rebases dates
  and timestamps to the hybrid calendar and writes with ORC 1.9.8: `JULIAN_GREGORIAN`.
* cpp_proleptic/: pyorc 0.12.0 (Apache ORC's C++ writer): proleptic days, no `calendar`.

Needs Java 17 on PATH (JAVA_HOME for Spark) and pip install pyspark==3.5.9 pyorc==0.12.0.
"""
import datetime
import os
import pathlib
import shutil
import subprocess
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
LABELS = ["0001-01-01", "1000-06-15", "1582-10-04", "1582-10-15", "1970-01-01", "2024-02-29", None]


def rows():
    for i, label in enumerate(LABELS):
        if label is None:
            yield i, None, None
            continue
        d = datetime.date.fromisoformat(label)
        yield i, d, datetime.datetime(d.year, d.month, d.day, 1, 2, 3, 123456)


def fresh(name):
    out = HERE / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    return out


def java(jars, build):
    subprocess.run(["javac", "-d", build, "-cp", f"{jars}/*", str(HERE / "WriteDays.java")], check=True)
    dates = ",".join(label or "null" for label in LABELS)
    for calendar in ("hybrid", "proleptic"):
        out = fresh(f"java_{calendar}") / "days.orc"
        subprocess.run(
            ["java", "-Duser.timezone=UTC", "-cp", f"{jars}/*:{build}", "WriteDays", str(out), calendar, dates],
            check=True,
        )
        (out.parent / ".days.orc.crc").unlink(missing_ok=True)


def spark(build):
    from pyspark.sql import SparkSession
    from pyspark.sql.types import DateType, IntegerType, StructField, StructType, TimestampType

    session = (
        SparkSession.builder.master("local[1]")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    schema = StructType(
        [StructField("id", IntegerType()), StructField("d", DateType()), StructField("ts", TimestampType())]
    )
    written = pathlib.Path(build) / "spark"
    session.createDataFrame(list(rows()), schema).coalesce(1).write.mode("overwrite").orc(str(written))
    session.stop()
    out = fresh("spark_hybrid")
    (part,) = written.glob("part-*.orc")
    shutil.copy(part, out / "days.orc")


def cpp():
    import pyorc

    out = fresh("cpp_proleptic") / "days.orc"
    with open(out, "wb") as f, pyorc.Writer(f, "struct<id:int,d:date,ts:timestamp>") as w:
        for i, d, ts in rows():
            # pyorc converts naive datetimes through the local zone; these are UTC.
            w.write((i, d, ts and ts.replace(tzinfo=datetime.timezone.utc)))


def main():
    import pyspark

    jars = pathlib.Path(pyspark.__file__).parent / "jars"
    os.environ.setdefault("TZ", "UTC")
    with tempfile.TemporaryDirectory() as build:
        java(jars, build)
        spark(build)
    cpp()


if __name__ == "__main__":
    main()
