#!/usr/bin/env bash
# Installs what `lakescan-bench` needs besides the workspace itself. Idempotent: a tool that
# is already present is left alone.
#
#   * tpchgen-cli 4.0.0 (the Apache DataFusion TPC-H generator, writes Parquet directly): the
#     project's PyPI wheel installed into $PYTHON's environment (found on PATH or in that
#     Python's scripts directory, where the benchmark looks too), `cargo install` only when
#     pip cannot install it
#   * the `duckdb` and `pyarrow` Python packages (the DuckDB peer, driven by
#     benchmarks/duckdb_runner.py, which streams DuckDB's results as Arrow batches)
#   * the Iceberg DuckDB peer: a virtual environment (default ~/.venvs/lakescan-bench-iceberg,
#     ICEBERG_VENV=... to move it) with duckdb==1.5.5 and duckdb-extension-iceberg,
#     duckdb-extension-avro and duckdb-extension-httpfs ==1.5.5 (DuckDB extensions as PyPI
#     wheels; the runner LOADs their files with allow_unsigned_extensions, nothing is
#     downloaded at query time) and pyarrow; duckdb==1.4.4 with the duckdb-ext-* 1.4.4.20260205
#     wheels when those cannot be installed. Its python is <venv>/bin/python; `<venv>/bin/python
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

# pip puts a wheel's executables into the interpreter's scripts directory (a venv's bin/, or
# ~/.local/bin for a user install), which need not be on PATH: look there too, as the
# benchmark does.
python_scripts() {
  "$PYTHON" -c 'import os, sysconfig
print(sysconfig.get_path("scripts"))
print(sysconfig.get_path("scripts", os.name + "_user"))' 2>/dev/null || true
}
find_tpchgen() {
  if command -v tpchgen-cli 2>/dev/null; then
    return 0
  fi
  local dir
  while IFS= read -r dir; do
    if [ -n "$dir" ] && [ -x "$dir/tpchgen-cli" ]; then
      echo "$dir/tpchgen-cli"
      return 0
    fi
  done < <(python_scripts)
  return 1
}

if tpchgen="$(find_tpchgen)"; then
  echo "tpchgen-cli: $tpchgen ($("$tpchgen" --version 2>/dev/null || echo unknown version))"
else
  # The project publishes the same binary on PyPI: seconds instead of a 10-minute build.
  echo "installing tpchgen-cli ${TPCHGEN_VERSION} from PyPI into $PYTHON's environment ..."
  if "$PYTHON" -m pip install --quiet "tpchgen-cli==${TPCHGEN_VERSION}" \
      && tpchgen="$(find_tpchgen)"; then
    echo "tpchgen-cli: $tpchgen (from PyPI)"
  else
    echo "pip could not install tpchgen-cli for $PYTHON; building it with cargo (about 10 minutes) ..."
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

# The Iceberg DuckDB peer: DuckDB 1.5.5 with the duckdb-extension-{iceberg,avro,httpfs} 1.5.5
# wheels (each requires duckdb==1.5.5), in a venv of its own apart from the plain DuckDB peer.
# Where those wheels cannot be installed (no wheel for the platform or Python), the older
# duckdb-ext-* 1.4.4.20260205 wheels (built for duckdb==1.4.4) are the fallback.
ICEBERG_VENV="${ICEBERG_VENV:-$HOME/.venvs/lakescan-bench-iceberg}"
ICEBERG_DUCKDB_VERSION=1.5.5
DUCKDB_EXTENSION_VERSION=1.5.5
FALLBACK_DUCKDB_VERSION=1.4.4
FALLBACK_EXT_VERSION=1.4.4.20260205
if [ ! -x "$ICEBERG_VENV/bin/python" ]; then
  echo "creating the virtual environment $ICEBERG_VENV ..."
  python3 -m venv "$ICEBERG_VENV"
fi
# Exit 0 when the venv has duckdb $1 and the three extension packages named
# <prefix>-{iceberg,avro,httpfs} at version $3, and pyarrow.
has_peer() {
  "$ICEBERG_VENV/bin/python" - "$1" "$2" "$3" >/dev/null 2>&1 <<'PY'
import sys
from importlib.metadata import version
import pyarrow  # noqa: F401
duckdb_version, prefix, ext_version = sys.argv[1:4]
ok = version("duckdb") == duckdb_version and all(
    version(f"{prefix}-{name}") == ext_version for name in ("iceberg", "avro", "httpfs")
)
sys.exit(0 if ok else 1)
PY
}
if ! has_peer "$ICEBERG_DUCKDB_VERSION" duckdb-extension "$DUCKDB_EXTENSION_VERSION"; then
  echo "installing duckdb ${ICEBERG_DUCKDB_VERSION}, duckdb-extension-iceberg/avro/httpfs ${DUCKDB_EXTENSION_VERSION} and pyarrow into $ICEBERG_VENV ..."
  if ! "$ICEBERG_VENV/bin/python" -m pip install --quiet \
      "duckdb==${ICEBERG_DUCKDB_VERSION}" \
      "duckdb-extension-iceberg==${DUCKDB_EXTENSION_VERSION}" \
      "duckdb-extension-avro==${DUCKDB_EXTENSION_VERSION}" \
      "duckdb-extension-httpfs==${DUCKDB_EXTENSION_VERSION}" \
      pyarrow \
    && ! has_peer "$FALLBACK_DUCKDB_VERSION" duckdb-ext "$FALLBACK_EXT_VERSION"; then
    echo "falling back to duckdb ${FALLBACK_DUCKDB_VERSION} with duckdb-ext-iceberg/avro/httpfs ${FALLBACK_EXT_VERSION} ..."
    "$ICEBERG_VENV/bin/python" -m pip install --quiet \
      "duckdb==${FALLBACK_DUCKDB_VERSION}" \
      "duckdb-ext-iceberg==${FALLBACK_EXT_VERSION}" \
      "duckdb-ext-avro==${FALLBACK_EXT_VERSION}" \
      "duckdb-ext-httpfs==${FALLBACK_EXT_VERSION}" \
      pyarrow
  fi
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
