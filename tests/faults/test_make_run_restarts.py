"""``make run`` (``devtools/run.py``) survives its worker: killed with
SIGKILL, the worker is started again after its back-off, with a log line,
while the API keeps answering; only ``make run``'s own shutdown stops
everything (exit 0).  Before, it stopped the API, the servers and itself
("stopping everything", exit 1)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from support.live import free_port

ROOT = Path(__file__).resolve().parents[2]


class Output(threading.Thread):
    """Every line a process writes, kept as it comes."""

    def __init__(self, stream) -> None:
        super().__init__(daemon=True)
        self.stream, self.lines = stream, []

    def run(self) -> None:
        for line in iter(self.stream.readline, ""):
            self.lines.append(line)

    def wait_for(self, pattern: str, timeout: float, after: int = 0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines[after:]:
                if found := re.search(pattern, line):
                    return found
            time.sleep(0.1)
        raise AssertionError(f"no line matched {pattern!r}:\n" + "".join(self.lines[-30:]))


def _healthy(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as resp:
        return resp.status == 200


def test_a_killed_worker_is_started_again_and_the_api_keeps_answering(settings, tmp_path, private_redis_server):
    port = free_port()
    # A Redis of its own: the killed worker leaves its drain flagged as lingering (until
    # its time to live), which would hold back other tests' projections in a shared one.
    env = dict(
        os.environ,
        DATABASE_URL=settings.database_url,
        REDIS_URL=private_redis_server.url(),
        PORT=str(port),
        WEB_CONCURRENCY="1",
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
    )
    env.pop("ADMIN_TOKEN", None)
    run = subprocess.Popen(
        [sys.executable, "-m", "devtools.run"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    out = Output(run.stdout)
    out.start()
    try:
        out.wait_for(r"Quarterdeck API on", 90)
        # README "The two commands": the operator's token is called what it is.
        token_line = out.wait_for(r".*token.*", 5).group(0)
        assert token_line.startswith("Operator token (ADMIN_TOKEN)") and "Organiser" not in token_line
        worker = int(out.wait_for(r"started worker \(pid (\d+)\)", 5).group(1))
        seen = len(out.lines)
        os.kill(worker, signal.SIGKILL)
        out.wait_for(rf"worker \(pid {worker}\) exited with status -9; restarting it in 1 s", 10, seen)
        again = int(out.wait_for(r"started worker \(pid (\d+)\)", 10, seen).group(1))
        assert again != worker and run.poll() is None
        assert _healthy(f"http://127.0.0.1:{port}/healthz")
        time.sleep(1.0)
        assert run.poll() is None, "".join(out.lines[-20:])
        os.kill(again, 0)  # the new worker runs
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGTERM)
        status = run.wait(timeout=60)
        out.join(5)
    assert status == 0, "".join(out.lines[-20:])
    assert any("SIGTERM: stopping the API and the worker" in line for line in out.lines)
