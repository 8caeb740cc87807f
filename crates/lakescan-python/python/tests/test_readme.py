"""The README's Python examples, run as they are written there (from the repository's root,
in a fresh interpreter), and what they print checked."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(os.environ.get("LAKESCAN_REPO", Path(__file__).resolve().parents[4]))


def python_blocks() -> list[str]:
    """The ```python blocks of README's "From Python" section, in order."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_readme_python_examples_run_as_written(tmp_path: Path) -> None:
    blocks = python_blocks()
    assert len(blocks) == 2, "README's From Python section has its two examples"
    # The examples write their Hive table under /tmp; here it goes under pytest's directory.
    script = "\n".join(blocks).replace("/tmp/lakescan-sales", str(tmp_path / "sales"))
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # The Hive table's groups: eu 2 rows (15.5), us 2 rows (290.0).
    assert re.search(r"eu\s*\|\s*2\s*\|\s*15\.5", out), out
    assert re.search(r"us\s*\|\s*2\s*\|\s*290\.0", out), out
    # The Iceberg table after its equality deletes: ids 4 and 5 only.
    assert re.search(r"\|\s*4\s*\|\s*d\s*\|", out) and re.search(r"\|\s*5\s*\|\s*e\s*\|", out), out
    assert not re.search(r"\|\s*[123]\s*\|\s*[abc]\s*\|", out), out
    # polars: ids 2 and 3.
    assert re.search(r"│\s*2\s*┆\s*250\.0", out) and re.search(r"│\s*3\s*┆\s*40\.0", out), out
