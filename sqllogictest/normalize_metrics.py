#!/usr/bin/env python3
"""Re-applies `<slt:ignore>` to run-dependent metrics in `.slt` files after `--complete`.

`--complete` writes the actual metric values; timings, byte sizes and batch counts vary
between runs and machines. This keeps every LakeScanExec counter exact except:
  * `elapsed_compute`, `output_bytes` (unless it is `0.0 B`: zero-column scans pin it),
    `output_batches`, `bytes_read`, `time_opening`, `time_reading`, `time_loading_deletes`
    → `<slt:ignore>`;
  * counters that the same plan line in the committed file (`git show HEAD:<file>`) already
    ignored stay ignored (a test that chose not to pin them);
  * a LakeScanExec line that is a pattern as a whole (`LakeScanExec: <slt:ignore>`) is kept;
  * the `metrics=[…]` of every other operator that shows a time → `metrics=[<slt:ignore>]`
    (lines that already hold a pattern are kept).

Usage (from the repository root): sqllogictest/normalize_metrics.py FILE…
"""
import re
import subprocess
import sys

VARIABLE = ("elapsed_compute", "output_bytes", "output_batches", "bytes_read",
            "time_opening", "time_reading", "time_loading_deletes")


def committed_ignores(path):
    """Plan text before `metrics=[` → counters the committed file ignores on that line."""
    try:
        text = subprocess.run(["git", "show", f"HEAD:{path}"], capture_output=True,
                              text=True, check=True).stdout
    except subprocess.CalledProcessError:
        return {}
    out = {}
    for line in text.splitlines():
        if "LakeScanExec" in line and "metrics=[" in line:
            plan, metrics = line.split("metrics=[", 1)
            out[plan] = set(re.findall(r"(\w+)=<slt:ignore>", metrics))
    return out


def normalize(line, ignores):
    if "metrics=[" not in line or "LakeScanExec: <slt:ignore>" in line:
        return line
    if "LakeScanExec:" in line:
        plan = line.split("metrics=[", 1)[0]
        keys = set(VARIABLE) | ignores.get(plan, set())
        for key in keys:
            keep_zero = r"(?!0\.0 B)" if key == "output_bytes" else ""
            line = re.sub(rf"\b{key}={keep_zero}[^,\]]*", f"{key}=<slt:ignore>", line)
        return line
    if "<slt:ignore>" in line or not re.search(r"\d(ns|µs|ms|s)[,\]]", line):
        return line
    return re.sub(r"metrics=\[.*\]$", "metrics=[<slt:ignore>]", line.rstrip("\n")) + "\n"


for path in sys.argv[1:]:
    ignores = committed_ignores(path)
    with open(path) as f:
        lines = f.readlines()
    with open(path, "w") as f:
        f.writelines(normalize(l, ignores) for l in lines)
