#!/usr/bin/env bash
# Installs what `lakescan-bench` needs besides the workspace itself. Idempotent: a tool that
# is already present is left alone.
#
#   * tpchgen-cli 4.0.0 (the Apache DataFusion TPC-H generator, writes Parquet directly): the
#     project's PyPI wheel, or `cargo install` when pip cannot put it on PATH
#   * the `duckdb` and `pyarrow` Python packages (the DuckDB peer, driven by
#     benchmarks/duckdb_runner.py, which streams DuckDB's results as Arrow batches)
#   * the Iceberg DuckDB peer: a virtual environment (default ~/.venvs/lakescan-bench-iceberg,
#     ICEBERG_VENV=... to move it) with duckdb==1.4.4, duckdb-ext-iceberg, duckdb-ext-avro and
#     duckdb-ext-httpfs ==1.4.4.20260205 (DuckDB extensions as PyPI wheels; the runner LOADs
#     their files with allow_unsigned_extensions, nothing is downloaded at query time) and
#     pyarrow. Its python is <venv>/bin/python; `<venv>/bin/python
#     benchmarks/duckdb_runner.py --iceberg-extensions` prints the iceberg/avro extension
#     files, `--httpfs-extension` the httpfs one (DuckDB's S3 peer of `lakescan-bench --s3`).
#   * the iceberg-datafusion peer: benchmarks/iceberg-datafusion-peer (iceberg-rust's
#     iceberg-datafusion 0.10.1 on DataFusion 53, its own Cargo workspace outside lakescan's),
#     built in release into ICEBERG_PEER_TARGET (default
#     ~/.cache/lakescan/iceberg-datafusion-peer-target); the binary is
#     <target>/release/iceberg-datafusion-peer. The first build takes a while (20+ minutes on
#     2 cores); later runs are no-ops. SKIP_ICEBERG_PEER=1 skips it.
#
# Usage: benchmarks/setup.sh            (PYTHON=/path/to/python to choose the interpreter)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

TPCHGEN_VERSION=4.0.0

PYTHON="${PYTHON:-python3}"

if command -v tpchgen-cli >/dev/null 2>&1; then
  echo "tpchgen-cli: $(command -v tpchgen-cli) ($(tpchgen-cli --version 2>/dev/null || echo unknown version))"
else
  # The project publishes the same binary on PyPI: seconds instead of a 10-minute build.
  echo "installing tpchgen-cli ${TPCHGEN_VERSION} (pip wheel; cargo install if that fails) ..."
  if "$PYTHON" -m pip install --quiet "tpchgen-cli==${TPCHGEN_VERSION}" \
      && command -v tpchgen-cli >/dev/null 2>&1; then
    echo "tpchgen-cli: $(command -v tpchgen-cli) (from PyPI)"
  else
    echo "the pip-installed tpchgen-cli is not on PATH or pip failed; building it with cargo ..."
    cargo install tpchgen-cli --version "${TPCHGEN_VERSION}" --locked
  fi
fi

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

# The Iceberg DuckDB peer: duckdb 1.4.4 is what the duckdb-ext-* 1.4.4.20260205 wheels are built
# for (they require duckdb==1.4.4), so it lives in its own venv, apart from the plain DuckDB peer.
ICEBERG_VENV="${ICEBERG_VENV:-$HOME/.venvs/lakescan-bench-iceberg}"
ICEBERG_DUCKDB_VERSION=1.4.4
DUCKDB_EXT_VERSION=1.4.4.20260205
if [ ! -x "$ICEBERG_VENV/bin/python" ]; then
  echo "creating the virtual environment $ICEBERG_VENV ..."
  python3 -m venv "$ICEBERG_VENV"
fi
if "$ICEBERG_VENV/bin/python" - "$ICEBERG_DUCKDB_VERSION" "$DUCKDB_EXT_VERSION" >/dev/null 2>&1 <<'PY'
import sys
from importlib.metadata import version
import pyarrow  # noqa: F401
ok = version("duckdb") == sys.argv[1] and all(
    version(f"duckdb-ext-{name}") == sys.argv[2] for name in ("iceberg", "avro", "httpfs")
)
sys.exit(0 if ok else 1)
PY
then
  :
else
  echo "installing duckdb ${ICEBERG_DUCKDB_VERSION}, duckdb-ext-iceberg/avro/httpfs ${DUCKDB_EXT_VERSION} and pyarrow into $ICEBERG_VENV ..."
  "$ICEBERG_VENV/bin/python" -m pip install --quiet \
    "duckdb==${ICEBERG_DUCKDB_VERSION}" \
    "duckdb-ext-iceberg==${DUCKDB_EXT_VERSION}" \
    "duckdb-ext-avro==${DUCKDB_EXT_VERSION}" \
    "duckdb-ext-httpfs==${DUCKDB_EXT_VERSION}" \
    pyarrow
fi
echo "iceberg DuckDB peer python: $ICEBERG_VENV/bin/python"
echo "iceberg DuckDB peer extensions: $("$ICEBERG_VENV/bin/python" "$HERE/duckdb_runner.py" --iceberg-extensions)"

# The iceberg-datafusion peer (not a lakescan workspace member: it is on DataFusion 53).
ICEBERG_PEER_TARGET="${ICEBERG_PEER_TARGET:-$HOME/.cache/lakescan/iceberg-datafusion-peer-target}"
if [ "${SKIP_ICEBERG_PEER:-0}" = 1 ]; then
  echo "iceberg-datafusion peer: skipped (SKIP_ICEBERG_PEER=1)"
else
  echo "building the iceberg-datafusion peer (cargo build --release; the first build takes a while) ..."
  cargo build --release --locked \
    --manifest-path "$HERE/iceberg-datafusion-peer/Cargo.toml" \
    --target-dir "$ICEBERG_PEER_TARGET"
  echo "iceberg-datafusion peer: $ICEBERG_PEER_TARGET/release/iceberg-datafusion-peer"
fi
