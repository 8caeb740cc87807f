"""lakescan's native code allocates with its own allocator (mimalloc), not the C library's
``malloc``: a table read through lakescan holds memory glibc's heaps never gave out; freed
memory stays with it for reuse for a second unless the environment chose otherwise."""

from __future__ import annotations

import ctypes
import os
import platform
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakescan


class MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (glibc 2.33 and later)."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")
    ]


def glibc_bytes_in_use() -> int:
    """The bytes glibc's ``malloc`` has given out and not had back: from its heaps
    (``uordblks``) and mapped on their own (``hblkhd``)."""
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallinfo2"):
        pytest.skip("this glibc has no mallinfo2")
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd


def allocator(**environment: str) -> str:
    """``lakescan.ALLOCATOR`` in a fresh interpreter with ``environment`` (mimalloc reads its
    options once per process)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_")}
    env.update(environment)
    result = subprocess.run(
        [sys.executable, "-c", "import lakescan; print(lakescan.ALLOCATOR)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def test_the_allocator_keeps_freed_memory_for_a_second() -> None:
    described = allocator()
    assert described.startswith("mimalloc 2."), described
    assert described.endswith(", purge delay 1000 ms"), described


def test_the_environments_purge_delay_stands() -> None:
    # Read back from mimalloc itself: the option lakescan sets is the one the variable sets.
    assert allocator(MIMALLOC_PURGE_DELAY="50").endswith(", purge delay 50 ms")


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc statistics")
def test_a_scans_batches_come_from_lakescans_allocator(tmp_path) -> None:
    rows = 2_000_000
    pq.write_table(pa.table({"id": pa.array(range(rows), pa.int64())}), tmp_path / "part-0.parquet")
    table = lakescan.HiveTable(f"{tmp_path}/")
    before = glibc_bytes_in_use()
    result = pa.table(table.scan())
    held = glibc_bytes_in_use() - before
    assert result.num_rows == rows
    assert result.nbytes >= rows * 8
    # The 16 MB of ids are lakescan's buffers, kept alive by the table: none of it is glibc's
    # (pyarrow's and Python's own bookkeeping of the table is a few kilobytes).
    assert held < result.nbytes // 8, f"glibc holds {held} bytes of a {result.nbytes}-byte table"
