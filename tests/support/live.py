"""The service as ``make run`` starts it — gunicorn with the shipped
configuration (``devtools.run._gunicorn_argv``) and one RQ worker, each its
own process — on the test session's databases."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests

from devtools.run import _gunicorn_argv

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def service_env(settings: Any, **extra: str) -> dict[str, str]:
    """The environment of a served API and its worker: the tests' databases
    and queue, quiet logs, a fast sweep; ``extra`` adds or overrides."""
    return (
        os.environ
        | {
            "DATABASE_URL": settings.database_url,
            "REDIS_URL": settings.redis_url,
            "ADMIN_TOKEN": settings.admin_token or "",
            "QD_QUEUE": settings.queue_name,
            "QD_LOG_LEVEL": "WARNING",
            "QD_SWEEP_SECONDS": "1",
            "QD_PROJECTION_SHARDS": str(settings.projection_shards),
        }
        | extra
    )


@contextlib.contextmanager
def live_service(settings: Any, **extra: str) -> Iterator[str]:
    """Start gunicorn and a worker, wait for ``/healthz``, yield the base URL;
    stop both on the way out (a process that will not stop is killed)."""
    port = free_port()
    env = service_env(settings, **extra)
    api = subprocess.Popen(_gunicorn_argv(port), cwd=ROOT, env=env, start_new_session=True)
    worker = subprocess.Popen([sys.executable, "-m", "workers"], cwd=ROOT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(requests.RequestException):
                if requests.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            assert api.poll() is None, "gunicorn exited"
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.2)
        yield url
    finally:
        for proc in (api, worker):
            proc.terminate()
        for proc in (api, worker):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
