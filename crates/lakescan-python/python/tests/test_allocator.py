"""Importing lakescan sets what glibc's ``malloc`` does with freed memory, unless the
environment already chose: ``lakescan.MALLOC_POLICY`` says which, in a fresh interpreter
for each environment (the parameters are the process's)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")


def policy(**environment: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    env.update(environment)
    result = subprocess.run(
        [sys.executable, "-c", "import lakescan; print(lakescan.MALLOC_POLICY)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def test_lakescan_keeps_freed_memory_for_reuse() -> None:
    assert policy() == "set by lakescan: M_TOP_PAD=16777216, M_MMAP_THRESHOLD=33554432"


def test_a_tunable_for_something_else_changes_nothing() -> None:
    assert policy(GLIBC_TUNABLES="glibc.malloc.arena_max=2", MALLOC_ARENA_MAX="2").startswith("set by lakescan")


@pytest.mark.parametrize(
    "environment",
    [
        {"MALLOC_TOP_PAD_": "0"},
        {"MALLOC_MMAP_THRESHOLD_": "131072"},
        {"GLIBC_TUNABLES": "glibc.malloc.arena_max=2:glibc.malloc.top_pad=0"},
        {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=65536"},
    ],
)
def test_the_environments_choice_stands(environment: dict[str, str]) -> None:
    assert policy(**environment) == "chosen by the environment"
