"""Parquet files Spark writes in its LEGACY rebase mode: dates and timestamps before 1582
in Java's hybrid calendar, marked `org.apache.spark.legacyDateTime` / `legacyINT96` with
the session zone in `org.apache.spark.timeZone`.

The same values as the files of Spark's own `ParquetRebaseDatetimeSuite` ("generate test
files"): a dictionary-encoded column of `1001-01-01` eight times and a plain one of
`1001-01-01` … `1001-01-08` (timestamps at 01:02:03.123 or 01:02:03.123456), written by
pyspark 3.5.3 (`pip install pyspark==3.5.3`, Java 17) with the JVM and session zone
America/Los_Angeles. Run from anywhere: `python make_files.py`; the outputs are committed,
the tests never run it.
"""
import os, shutil, glob, sys
from pyspark.sql import SparkSession
out = os.path.dirname(os.path.abspath(__file__))
os.makedirs(out, exist_ok=True)
spark = (SparkSession.builder.master("local[1]")
    .config("spark.driver.extraJavaOptions", "-Duser.timezone=America/Los_Angeles")
    .config("spark.sql.session.timeZone", "America/Los_Angeles")
    .config("spark.ui.enabled", "false")
    .getOrCreate())
N = 8
def save(rows, t, dst, opts={}, conf={}):
    for k, v in conf.items(): spark.conf.set(k, v)
    tmp = os.path.join(out, "_tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    df = spark.createDataFrame(rows, ["dict", "plain"])
    df.selectExpr(f"cast(dict as {t}) dict", f"cast(plain as {t}) plain").repartition(1) \
      .write.mode("overwrite").options(**opts).parquet(tmp)
    f = [p for p in glob.glob(tmp + "/*.parquet")][0]
    d = os.path.join(out, dst.replace(".snappy.parquet", ""))
    os.makedirs(d, exist_ok=True)
    shutil.copy(f, os.path.join(d, dst))
for mode in ["LEGACY"]:
    base = {"spark.sql.parquet.datetimeRebaseModeInWrite": mode,
            "spark.sql.parquet.int96RebaseModeInWrite": mode}
    v = "v3_5_3_" + mode.lower()
    save([("1001-01-01", f"1001-01-0{i}") for i in range(1, N+1)], "date",
         f"before_1582_date_{v}.snappy.parquet", conf=base)
    save([("1001-01-01 01:02:03.123", f"1001-01-0{i} 01:02:03.123") for i in range(1, N+1)], "timestamp",
         f"before_1582_timestamp_millis_{v}.snappy.parquet", conf={**base, "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MILLIS"})
    us = [("1001-01-01 01:02:03.123456", f"1001-01-0{i} 01:02:03.123456") for i in range(1, N+1)]
    save(us, "timestamp", f"before_1582_timestamp_micros_{v}.snappy.parquet",
         conf={**base, "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"})
    save(us, "timestamp", f"before_1582_timestamp_int96_plain_{v}.snappy.parquet", opts={"parquet.enable.dictionary": "false"},
         conf={**base, "spark.sql.parquet.outputTimestampType": "INT96"})
    save(us, "timestamp", f"before_1582_timestamp_int96_dict_{v}.snappy.parquet", opts={"parquet.enable.dictionary": "true"},
         conf={**base, "spark.sql.parquet.outputTimestampType": "INT96"})
shutil.rmtree(os.path.join(out, "_tmp"), ignore_errors=True)
spark.stop()
