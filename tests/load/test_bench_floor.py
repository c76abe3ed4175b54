"""``scripts.bench.floor``, the floor of live delivery that ``make bench``
turns into ``followers_ratio_bound`` (docs/PERFORMANCE.md, "What each figure means"):
every line written is read, and each side's CPU per line is counted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_line_written_to_the_followers_is_read_and_its_cpu_counted():
    argv = ["--rate", "200", "--size", "500", "--streams", "40", "--games", "4", "--seconds", "1"]
    out = subprocess.run(
        [sys.executable, "-m", "scripts.bench.floor", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    floor = json.loads(out.stdout)
    # 200 changes a second for a second, each to the 10 followers of its game.
    assert 1800 <= floor["lines_sent"] <= 2010
    assert floor["lines_read"] == floor["lines_sent"]
    assert floor["line_bytes"] == 500
    assert 0 < floor["writer_us_per_line"] < 10_000 and 0 < floor["reader_us_per_line"] < 10_000
