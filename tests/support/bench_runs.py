"""``python -m scripts.bench`` run by the load tests against real servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from psycopg.conninfo import make_conninfo

ROOT = Path(__file__).resolve().parents[2]


def run_module(module: str, *argv: str, env: dict[str, str], timeout: float = 120) -> str:
    """``python -m module argv`` from the repository's root (a failure raises); what it printed."""
    return subprocess.run(
        [sys.executable, "-m", module, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=True,
    ).stdout


def last_json_line(module: str, *argv: str, env: dict[str, str], timeout: float = 120) -> dict:
    """The JSON object on the last line that :func:`run_module` printed."""
    return json.loads(run_module(module, *argv, env=env, timeout=timeout).strip().splitlines()[-1])


def bench(settings, redis_server, tmp_path, *argv: str, timeout: float = 180) -> tuple[dict, str]:
    """``python -m scripts.bench argv`` against the machine's PostgreSQL and ``redis_server``;
    its JSON figures, and the PostgreSQL URL it was given."""
    out = tmp_path / "bench.json"
    env = dict(
        os.environ,
        DATABASE_URL=make_conninfo(settings.database_url, dbname="postgres"),
        REDIS_URL=redis_server.url(),
    )
    run_module("scripts.bench", *argv, "--seconds", "1", "--out", str(out), env=env, timeout=timeout)
    return json.loads(out.read_text()), env["DATABASE_URL"]
