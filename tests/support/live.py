"""The service as ``make run`` starts it — gunicorn with the shipped
configuration (``devtools.run._gunicorn_argv``) and one RQ worker, each its
own process — on the test session's databases."""

from __future__ import annotations

import contextlib
import os
import random
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


#: Where the tests' servers listen: below the kernel's range of ephemeral ports (32768-60999
#: here, ``/proc/sys/net/ipv4/ip_local_port_range``).  A port the kernel handed out as free (bind
#: to 0) comes from that range, and so does every outgoing connection's own port: between the test
#: closing its probe and the server binding it, any client of the machine could take it, and the
#: server would never start.
_SERVER_PORTS = range(20000, 32000)

#: Ports this process has handed out: a test may pick several before any server binds one.
_handed_out: set[int] = set()


def _own_ports() -> range:
    """This pytest-xdist worker's share of :data:`_SERVER_PORTS`.  A picked port stays free
    until its server binds it, seconds later (after ``initdb``, a ``docker compose up``), and
    the suite's workers run side by side: shares that do not overlap mean two workers never
    pick the same port."""
    index = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return _SERVER_PORTS[index::count]


def free_port() -> int:
    """A loopback port nobody listens on now and no other test of the suite will be handed,
    for a server a test starts."""
    own = _own_ports()
    start = random.SystemRandom().randrange(len(own))
    for i in range(len(own)):
        port = own[(start + i) % len(own)]
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free loopback port left in this worker's share of {_SERVER_PORTS}")


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
def live_service(settings: Any, bots: bool = False, **extra: str) -> Iterator[str]:
    """Start gunicorn and a worker, wait for ``/healthz``, yield the base URL;
    stop both on the way out (a process that will not stop is killed).
    ``bots``: provision the house bots and start a bot worker too, as ``make run`` does."""
    port = free_port()
    env = service_env(settings, **extra)
    api = subprocess.Popen(_gunicorn_argv(port), cwd=ROOT, env=env, start_new_session=True)
    worker = subprocess.Popen([sys.executable, "-m", "workers"], cwd=ROOT, env=env, start_new_session=True)
    procs = [api, worker]
    if bots:
        subprocess.run([sys.executable, "-m", "service", "bots"], cwd=ROOT, env=env, check=True)
        procs.append(
            subprocess.Popen([sys.executable, "-m", "workers.bots"], cwd=ROOT, env=env, start_new_session=True)
        )
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
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
