#!/usr/bin/env bash
# Installs what `lakescan-bench` needs besides the workspace itself. Idempotent: a tool that
# is already present is left alone.
#
#   * tpchgen-cli 4.0.0 (the Apache DataFusion TPC-H generator, writes Parquet directly)
#   * the `duckdb` and `pyarrow` Python packages (the DuckDB peer, driven by
#     benchmarks/duckdb_runner.py, which streams DuckDB's results as Arrow batches)
#
# Usage: benchmarks/setup.sh            (PYTHON=/path/to/python to choose the interpreter)
set -euo pipefail

TPCHGEN_VERSION=4.0.0

if command -v tpchgen-cli >/dev/null 2>&1; then
  echo "tpchgen-cli: $(command -v tpchgen-cli) ($(tpchgen-cli --version 2>/dev/null || echo unknown version))"
else
  echo "installing tpchgen-cli ${TPCHGEN_VERSION} (cargo install, a few minutes) ..."
  cargo install tpchgen-cli --version "${TPCHGEN_VERSION}" --locked
fi

PYTHON="${PYTHON:-python3}"
if "$PYTHON" -c 'import duckdb, pyarrow' >/dev/null 2>&1; then
  echo "duckdb (python): $("$PYTHON" -c 'import duckdb; print(duckdb.__version__)')"
else
  echo "installing the duckdb and pyarrow Python packages ..."
  if ! "$PYTHON" -m pip install --quiet duckdb pyarrow; then
    echo "pip could not install into $PYTHON's environment. Use a virtual environment:" >&2
    echo "  python3 -m venv ~/.venvs/lakescan-bench" >&2
    echo "  PYTHON=~/.venvs/lakescan-bench/bin/python benchmarks/setup.sh" >&2
    echo "and run lakescan-bench with --python ~/.venvs/lakescan-bench/bin/python" >&2
    exit 1
  fi
  "$PYTHON" -c 'import duckdb, pyarrow; print("duckdb (python):", duckdb.__version__, "pyarrow:", pyarrow.__version__)'
fi
