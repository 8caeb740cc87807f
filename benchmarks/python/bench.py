"""lakescan from Python against the Python readers of the same files, on the data of
`lakescan-bench` (TPC-H `lineitem`, made by `lakescan-bench --scale N` under
~/.cache/lakescan/bench/sf<N>).

Hive cases (the table `lineitem`: the flat Parquet files, `STORED AS HIVE`):
  full_scan  every column, no filter
  selective  4 columns, l_shipdate in a 25-day range (~1 % of rows)
  tpch_q6    TPC-H Q6
each through datafusion-python + lakescan (`lakescan.datafusion.session_context()`) two
ways: into a pyarrow table (`to_arrow_table()`), and streamed (`execute_stream()`, each
batch dropped as it comes). The stream is measured against lakescan in Rust consuming the
same query the same way (`lakescan-bench --engines lakescan --consume-on caller`: the
partitions merged, one stream drained by the calling thread, as datafusion-python runs a
query), in batches of the same size (`session_context()`'s, `lakescan.BATCH_SIZE`): their
ratio is what crossing into Python costs. The table is measured against
pyarrow.dataset and polars over the same files, which build a table too (and against the
Rust benchmark's own figure, its partitions drained where they are made). Run with
--rust-bench naming the `lakescan-bench` binary for the Rust figures; it allocates with
mimalloc, as the package does, and runs with the package's purge delay
(`lakescan.ALLOCATOR`, passed as `MIMALLOC_PURGE_DELAY`), so that both sides allocate alike.

Iceberg cases (the tables of `lakescan-bench`'s Iceberg copies of lineitem): the scan of
`iceberg_scan` (5 columns, l_shipdate <= 1998-09-02) of the table without deletes, with
position deletes and with deletion vectors, to Arrow: lakescan's `IcebergTable.scan()`
against pyiceberg's `scan().to_arrow()` and, when this Python has DuckDB's extension packages
(`duckdb-extension-avro`, `duckdb-extension-iceberg`, as `benchmarks/setup.sh` installs
them), DuckDB's `iceberg_scan`.

Every time is the median of --runs runs after one warm-up; the ratios are lakescan's time
over the other's, measured in this run, and for two engines of this process their CPU times'
ratio too (every thread of the process: a figure the machine's neighbours move less than
the time). Usage:

  python benchmarks/python/bench.py [--data DIR] [--runs 5] [--rust-bench target/release/lakescan-bench]
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import glob
import os
import re
import statistics
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

import lakescan
import lakescan.datafusion

SELECTIVE = "l_shipdate >= DATE '1995-03-01' AND l_shipdate < DATE '1995-03-26'"
Q6 = (
    "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem "
    "WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1994-01-01' + INTERVAL '1' YEAR "
    "AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24"
)
HIVE_SQL = {
    "full_scan": "SELECT * FROM lineitem",
    "selective": f"SELECT l_orderkey, l_partkey, l_extendedprice, l_shipdate FROM lineitem WHERE {SELECTIVE}",
    "tpch_q6": Q6,
}
ICEBERG_COLUMNS = ["l_quantity", "l_extendedprice", "l_discount", "l_orderkey", "l_shipdate"]
ICEBERG_TABLES = {"iceberg_scan": "lineitem", "iceberg_pos": "lineitem_pos", "iceberg_dv": "lineitem_dv"}


def median_seconds(run, runs: int) -> tuple[float, int, float]:
    """The median time of ``runs`` calls of ``run`` after one warm-up, the rows it gave, and
    the median CPU time of a call: the process's, every thread of it (each Python engine
    runs in this process), a figure this machine's neighbours move less than the time."""
    rows = run()
    times, cpus = [], []
    for _ in range(runs):
        cpu = time.process_time()
        start = time.perf_counter()
        rows = run()
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(times), rows, statistics.median(cpus)


def date(text: str) -> datetime.date:
    return datetime.date.fromisoformat(text)


def pyarrow_case(files: list[str], case: str):
    dataset = ds.dataset(files, format="parquet")
    shipdate = ds.field("l_shipdate")
    if case == "full_scan":
        return lambda: dataset.to_table().num_rows
    if case == "selective":
        flt = (shipdate >= date("1995-03-01")) & (shipdate < date("1995-03-26"))
        columns = ["l_orderkey", "l_partkey", "l_extendedprice", "l_shipdate"]
        return lambda: dataset.to_table(columns=columns, filter=flt).num_rows

    def typed(column: str, value: str) -> pa.Scalar:
        # The columns are decimals: compare with decimals of their own type.
        return pa.scalar(decimal.Decimal(value), type=dataset.schema.field(column).type)

    def q6() -> int:
        flt = (
            (shipdate >= date("1994-01-01"))
            & (shipdate < date("1995-01-01"))
            & (ds.field("l_discount") >= typed("l_discount", "0.05"))
            & (ds.field("l_discount") <= typed("l_discount", "0.07"))
            & (ds.field("l_quantity") < typed("l_quantity", "24"))
        )
        table = dataset.to_table(columns=["l_extendedprice", "l_discount"], filter=flt)
        pc.sum(pc.multiply(table["l_extendedprice"], table["l_discount"]))
        return 1

    return q6


def polars_case(files: list[str], case: str):
    import polars as pl

    frame = pl.scan_parquet(files)
    shipdate = pl.col("l_shipdate")
    if case == "full_scan":
        return lambda: frame.collect().height
    if case == "selective":
        query = frame.filter((shipdate >= date("1995-03-01")) & (shipdate < date("1995-03-26"))).select(
            ["l_orderkey", "l_partkey", "l_extendedprice", "l_shipdate"]
        )
        return lambda: query.collect().height
    query = frame.filter(
        (shipdate >= date("1994-01-01"))
        & (shipdate < date("1995-01-01"))
        & pl.col("l_discount").is_between(0.05, 0.07)
        & (pl.col("l_quantity") < 24)
    ).select((pl.col("l_extendedprice") * pl.col("l_discount")).sum())
    return lambda: query.collect().height


def rust_medians(
    binary: str, data: Path, runs: int, consume_on: str, batch_size: int, cases: list[str]
) -> dict[str, float]:
    """lakescan in Rust: `lakescan-bench`'s medians of Hive `cases`, on the same data, its
    results consumed as `--consume-on` says, in batches of `batch_size` rows."""
    size = ["--smoke"] if data.name.startswith("smoke-") else ["--scale", re.sub(r"^sf", "", data.name)]
    cache = ["--cache-dir", str(data.parent)]
    which = ["--cases", ",".join(cases), "--engines", "lakescan", "--consume-on", consume_on]
    which += ["--batch-size", str(batch_size)]
    out = subprocess.run(
        [binary, *size, *cache, "--runs", str(runs), *which],
        env=same_allocator_settings(),
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    medians = {}
    # The progress lines (with the medians) go to standard error.
    for line in (out.stdout + out.stderr).splitlines():
        match = re.match(r"\s*(\w+)\s+lakescan\s+median ([0-9.]+) s", line)
        if match:
            medians[match.group(1)] = float(match.group(2))
    return medians


def same_allocator_settings() -> dict[str, str]:
    """The environment for `lakescan-bench`, with mimalloc's purge delay set to the package's
    (`lakescan.ALLOCATOR` ends with it), so that both sides keep freed memory alike."""
    env = dict(os.environ)
    match = re.search(r"purge delay (-?\d+) ms", lakescan.ALLOCATOR)
    if match:
        env["MIMALLOC_PURGE_DELAY"] = match.group(1)
    return env


def duckdb_iceberg(threads: int):
    """A DuckDB connection with the iceberg extension (the files of the
    `duckdb-extension-avro`/`-iceberg` packages, found as `benchmarks/duckdb_runner.py`
    finds them), or None when this Python has none."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        import duckdb_runner

        files = duckdb_runner.iceberg_extensions()
        return duckdb_runner.connect({"extensions": [files["avro"], files["iceberg"]], "threads": threads})
    except Exception as e:
        print(f"DuckDB iceberg_scan not measured: {str(e).splitlines()[0][:160]}")
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path.home() / ".cache/lakescan/bench/sf1")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rust-bench", help="the lakescan-bench binary (release), for lakescan in Rust")
    args = parser.parse_args()
    if not (args.data / "READY").exists():
        raise SystemExit(f"{args.data} holds no benchmark data: run lakescan-bench --scale 1 first")
    flat = args.data / "flat" / "lineitem"
    files = sorted(glob.glob(str(flat / "*.parquet")))
    threads = os.cpu_count() or 1
    print(f"data {args.data}, {threads} threads, {args.runs} runs (median); allocator: {lakescan.ALLOCATOR}")

    results: dict[tuple[str, str], float] = {}
    cpu: dict[tuple[str, str], float] = {}
    ctx = lakescan.datafusion.session_context()
    ctx.sql(f"CREATE EXTERNAL TABLE lineitem STORED AS HIVE LOCATION '{flat}/'")
    # session_context() without a config reads batches of this many rows.
    batch_size = lakescan.BATCH_SIZE
    print(f"batches of {batch_size} rows (lakescan.BATCH_SIZE)")
    for case, sql in HIVE_SQL.items():
        engines = {
            "lakescan (datafusion-python)": lambda sql=sql: ctx.sql(sql).to_arrow_table().num_rows,
            "lakescan (streamed)": lambda sql=sql: sum(b.to_pyarrow().num_rows for b in ctx.sql(sql).execute_stream()),
            "pyarrow.dataset": pyarrow_case(files, case),
            "polars": polars_case(files, case),
        }
        for engine, run in engines.items():
            results[case, engine], _, cpu[case, engine] = median_seconds(run, args.runs)
            print(f"  {case:<12} {engine:<30} {results[case, engine]:.4f} s  (cpu {cpu[case, engine]:.3f} s)")
        # Right after the same case from Python: this machine's speed drifts over minutes.
        if args.rust_bench:
            for consume_on, engine in (("partitions", "lakescan (Rust)"), ("caller", "lakescan (Rust, streamed)")):
                medians = rust_medians(args.rust_bench, args.data, args.runs, consume_on, batch_size, [case])
                for name, seconds in medians.items():
                    results[name, engine] = seconds
                    print(f"  {name:<12} {engine:<30} {seconds:.4f} s")

    from pyiceberg.table import StaticTable

    duck = duckdb_iceberg(threads)
    for case, directory in ICEBERG_TABLES.items():
        root = args.data / "iceberg" / directory
        metadata = sorted(glob.glob(str(root / "metadata" / "v*.metadata.json")))[-1]
        table = lakescan.IcebergTable(str(root))
        engines = {
            "lakescan (scan)": lambda table=table: pa.table(
                table.scan(columns=ICEBERG_COLUMNS, filter="l_shipdate <= DATE '1998-09-02'")
            ).num_rows,
            "pyiceberg": lambda metadata=metadata: StaticTable.from_metadata(metadata)
            .scan(row_filter="l_shipdate <= '1998-09-02'", selected_fields=tuple(ICEBERG_COLUMNS))
            .to_arrow()
            .num_rows,
        }
        if duck is not None:
            columns = ", ".join(ICEBERG_COLUMNS)
            engines["duckdb iceberg_scan"] = lambda metadata=metadata: duck.execute(
                f"SELECT {columns} FROM iceberg_scan('{metadata}') WHERE l_shipdate <= DATE '1998-09-02'"
            ).to_arrow_table().num_rows
        counts = {}
        for engine, run in engines.items():
            try:
                results[case, engine], counts[engine], cpu[case, engine] = median_seconds(run, args.runs)
            except Exception as e:  # a peer that cannot read the table is not measured
                print(f"  {case:<12} {engine:<30} not measured: {str(e).splitlines()[0][:120]}")
                continue
            print(
                f"  {case:<12} {engine:<30} {results[case, engine]:.4f} s  (cpu {cpu[case, engine]:.3f} s,"
                f" {counts[engine]} rows)"
            )
        if len(set(counts.values())) != 1:
            raise SystemExit(f"{case}: the engines disagree on the row count: {counts}")

    def ratios(case: str, ours: str, other: str) -> str:
        """Time over time, and CPU over CPU when both ran in this process."""
        text = f"{results[case, ours] / results[case, other]:.2f}"
        if (case, ours) in cpu and (case, other) in cpu:
            text += f"  cpu {cpu[case, ours] / cpu[case, other]:.2f}"
        return text

    print("\nratios (lakescan / other, same run; below 1 is faster):")
    for case in HIVE_SQL:
        streamed = results[case, "lakescan (streamed)"]
        if (case, "lakescan (Rust, streamed)") in results:
            ratio = streamed / results[case, "lakescan (Rust, streamed)"]
            print(f"  {case:<12} streamed vs Rust streamed   {ratio:.2f}  (the FFI's cost; target <= 1.10)")
        for other, target in (("lakescan (Rust)", "none"), ("pyarrow.dataset", "< 1"), ("polars", "< 1")):
            if (case, other) in results:
                ratio = ratios(case, "lakescan (datafusion-python)", other)
                print(f"  {case:<12} table vs {other:<22} {ratio}  (target {target})")
    for case in ICEBERG_TABLES:
        for other in ("pyiceberg", "duckdb iceberg_scan"):
            if (case, other) in results:
                print(f"  {case:<12} vs {other:<22} {ratios(case, 'lakescan (scan)', other)}  (target < 1)")


if __name__ == "__main__":
    main()
