"""What the Python tests share: rows in a fixed order, and the S3 test server the Rust
harness starts."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest


def rows(table: pa.Table, *order: str) -> list[dict]:
    """``table``'s rows as dicts, sorted by the columns ``order`` (in Python: pyarrow sorts
    no string views, which DataFusion returns)."""
    return sorted(table.to_pylist(), key=lambda row: tuple(row[c] for c in order))


def s3_settings() -> tuple[dict[str, str], str]:
    """The test S3 server's ``aws.*`` options and bucket (set by the Rust harness)."""
    raw = os.environ.get("LAKESCAN_TEST_S3")
    if raw is None:
        pytest.skip("no S3 test server (run through cargo test)")
    return json.loads(raw), os.environ["LAKESCAN_TEST_BUCKET"]
