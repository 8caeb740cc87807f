"""lakescan's native code allocates with its own allocator (mimalloc), not the C library's
``malloc``: a table read through lakescan holds memory glibc's heaps never gave out."""

from __future__ import annotations

import ctypes
import platform

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


def test_the_allocator_is_named() -> None:
    assert lakescan.ALLOCATOR.startswith("mimalloc 2."), lakescan.ALLOCATOR


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
