#!/usr/bin/env python3
"""DuckDB peer of `lakescan-bench`: runs queries in this process and reports timings.

`lakescan-bench` starts one runner per benchmark run and talks to it over stdin/stdout, one
JSON object per line, so DuckDB's runs interleave with the other engines' runs (A B A B).

First line (configuration):
    {"threads": 2, "setup": ["CREATE VIEW lineitem AS SELECT * FROM read_parquet(...)", ...]}
    Optional "extensions": ["/path/avro.duckdb_extension", "/path/iceberg.duckdb_extension"]:
    extension files LOADed in this order right after connecting (before "setup"). Only then is
    the connection opened with allow_unsigned_extensions (and with autoinstall of known
    extensions off, so nothing is downloaded at query time). The Iceberg peer passes the files
    of the `duckdb-extension-avro` and `duckdb-extension-iceberg` packages (or the older
    `duckdb-ext-*` ones), avro first (iceberg needs it); `--iceberg-extensions` below finds
    them.
Then one command per line, each answered by one line:
    {"op": "check", "sql": "...", "out": "/path/result.parquet"}
        runs `COPY (sql) TO out (FORMAT parquet)`; the harness reads the file back and
        compares it with lakescan's result
        -> {"ok": true}
    {"op": "exec", "sql": "CREATE VIEW ..."}
        runs a statement without a result (setup the harness times: the S3 peer's views,
        whose binding lists and reads a footer), timed in this process
        -> {"ok": true, "seconds": 0.012}
    {"op": "run", "sql": "..."}
        runs the query once, timed in this process with time.perf_counter from
        `con.sql(sql)` until the last batch of `to_arrow_reader()` was consumed: like the
        Rust engines' result streams, the result arrives as Arrow record batches that are
        counted and dropped (no conversion to Python objects). Note: `execute()` alone
        does not run a query to completion in DuckDB 2.x.
        -> {"ok": true, "seconds": 0.123, "peak_rss_bytes": 123456789, "rows": 42}
    {"op": "quit"}
Errors answer {"ok": false, "error": "..."}.

Peak RSS is this process's VmHWM after resetting it before each run (`/proc/self/clear_refs`,
Linux); without that, the lifetime maximum from `resource.getrusage`.

Stand-alone use (prints a JSON list of results):
    python3 benchmarks/duckdb_runner.py --spec spec.json
with spec.json = {"threads": 2, "runs": 5, "setup": [...], "queries": {"name": "sql", ...}}
(one warm-up run per query, then `runs` timed runs).

Extension files of the installed `duckdb-extension-avro` / `-iceberg` packages (or the older
`duckdb-ext-*` ones; prints
{"avro": "/abs/avro.duckdb_extension", "iceberg": "/abs/iceberg.duckdb_extension"}, load avro
first; exits 1 with a message when a package or its file for this DuckDB is missing):
    python3 benchmarks/duckdb_runner.py --iceberg-extensions
and of `duckdb-extension-httpfs` (the S3 peer of `lakescan-bench --s3`), {"httpfs": path}:
    python3 benchmarks/duckdb_runner.py --httpfs-extension
"""

import json
import resource
import sys
import time

import duckdb
import pyarrow  # noqa: F401 - needed by to_arrow_reader(); fail early when missing


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_bytes(reset_ok):
    if reset_ok:
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def iceberg_extensions():
    """The `.duckdb_extension` files of the avro and iceberg extension packages for this
    DuckDB version: {"avro": path, "iceberg": path} (load avro first)."""
    return extension_files(("avro", "iceberg"))


# The PyPI packages that ship DuckDB extension files, in the order they are looked for:
# `duckdb-extension-<name>` (one per DuckDB release, 1.5.5 included; the file is at
# duckdb_extension_<name>/extensions/v<duckdb version>/) and the older `duckdb-ext-<name>`
# (1.4.4.20260205; duckdb_ext/extensions/v<duckdb version>/<platform>/).
EXTENSION_PACKAGES = ("duckdb-extension-{}", "duckdb-ext-{}")


def extension_files(names):
    """The `.duckdb_extension` file of each of `names` for this DuckDB version, from the first
    installed package of EXTENSION_PACKAGES that has one: {name: path}."""
    import importlib.metadata

    found = {}
    for name in names:
        seen = []
        for pattern in EXTENSION_PACKAGES:
            package = pattern.format(name)
            try:
                dist = importlib.metadata.distribution(package)
            except importlib.metadata.PackageNotFoundError:
                continue
            files = [
                dist.locate_file(f)
                for f in (dist.files or [])
                if f.name == f"{name}.duckdb_extension"
            ]
            matching = [f for f in files if f"v{duckdb.__version__}" in f.parts]
            if matching:
                found[name] = str(matching[0].resolve())
                break
            seen.append(f"{package} {dist.version} ({[str(f) for f in files]})")
        if name not in found:
            packages = " or ".join(p.format(name) for p in EXTENSION_PACKAGES)
            raise RuntimeError(
                f"no {name}.duckdb_extension for DuckDB {duckdb.__version__} in the Python "
                f"packages of {sys.executable} (looked for {packages}; installed: "
                f"{seen or 'none'}): run benchmarks/setup.sh"
            )
    return found


def connect(config):
    extensions = config.get("extensions") or []
    if extensions:
        con = duckdb.connect(
            database=":memory:",
            config={
                "allow_unsigned_extensions": "true",
                "autoinstall_known_extensions": "false",
            },
        )
        for path in extensions:
            escaped = str(path).replace("'", "''")
            con.execute(f"LOAD '{escaped}'")
    else:
        con = duckdb.connect(database=":memory:")
    con.execute(f"SET threads = {int(config.get('threads', 2))}")
    con.execute("SET enable_progress_bar = false")
    for stmt in config.get("setup", []):
        con.execute(stmt)
    return con


def run_once(con, sql):
    reset_ok = _reset_peak()
    start = time.perf_counter()
    rows = 0
    rel = con.sql(sql)
    # DuckDB 1.4 (the Iceberg peer's fallback, whose duckdb-ext-* packages require it) has no
    # to_arrow_reader(); its fetch_record_batch() is the same Arrow batch reader.
    reader = rel.to_arrow_reader() if hasattr(rel, "to_arrow_reader") else rel.fetch_record_batch()
    for batch in reader:
        rows += batch.num_rows
    seconds = time.perf_counter() - start
    peak = _peak_rss_bytes(reset_ok)
    return seconds, peak, rows


def check(con, sql, out):
    escaped = out.replace("'", "''")
    con.execute(f"COPY ({sql}) TO '{escaped}' (FORMAT parquet)")


def serve():
    config = json.loads(sys.stdin.readline())
    con = connect(config)
    print(json.dumps({"ok": True, "duckdb_version": duckdb.__version__}), flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            cmd = json.loads(line)
            op = cmd.get("op")
            if op == "quit":
                print(json.dumps({"ok": True}), flush=True)
                return
            if op == "check":
                check(con, cmd["sql"], cmd["out"])
                reply = {"ok": True}
            elif op == "exec":
                start = time.perf_counter()
                con.execute(cmd["sql"])
                reply = {"ok": True, "seconds": time.perf_counter() - start}
            elif op == "run":
                seconds, peak, rows = run_once(con, cmd["sql"])
                reply = {"ok": True, "seconds": seconds, "peak_rss_bytes": peak, "rows": rows}
            else:
                reply = {"ok": False, "error": f"unknown op {op!r}"}
        except Exception as e:  # noqa: BLE001 - every error goes back to the harness
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), flush=True)


def standalone(path):
    with open(path) as f:
        spec = json.load(f)
    con = connect(spec)
    runs = int(spec.get("runs", 5))
    results = []
    for name, sql in spec["queries"].items():
        run_once(con, sql)  # warm-up
        times, peaks = [], []
        for _ in range(runs):
            seconds, peak, _rows = run_once(con, sql)
            times.append(seconds)
            peaks.append(peak)
        times.sort()
        mid = len(times) // 2
        median = times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2
        results.append(
            {
                "case": name,
                "engine": "duckdb",
                "median_s": median,
                "min_s": times[0],
                "max_s": times[-1],
                "peak_rss_bytes": max(peaks),
            }
        )
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--spec":
        standalone(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] in ("--iceberg-extensions", "--httpfs-extension"):
        try:
            if sys.argv[1] == "--iceberg-extensions":
                print(json.dumps(iceberg_extensions()))
            else:
                print(json.dumps(extension_files(("httpfs",))))
        except RuntimeError as e:
            print(f"duckdb_runner.py: {e}", file=sys.stderr)
            sys.exit(1)
    else:
        serve()
