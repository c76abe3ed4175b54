"""``python -m scripts.bench`` run by the load tests against real servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from psycopg.conninfo import make_conninfo

ROOT = Path(__file__).resolve().parents[2]


def bench(settings, redis_server, tmp_path, *argv: str) -> tuple[dict, str]:
    """``python -m scripts.bench argv`` against the machine's PostgreSQL and ``redis_server``;
    its JSON figures, and the PostgreSQL URL it was given."""
    out = tmp_path / "bench.json"
    env = dict(
        os.environ,
        DATABASE_URL=make_conninfo(settings.database_url, dbname="postgres"),
        REDIS_URL=redis_server.url(),
    )
    subprocess.run(
        [sys.executable, "-m", "scripts.bench", *argv, "--seconds", "1", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=True,
    )
    return json.loads(out.read_text()), env["DATABASE_URL"]
