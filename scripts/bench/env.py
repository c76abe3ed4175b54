"""The benchmark's private environment: its own database, Redis DB and processes.

The benchmark uses the service's PostgreSQL and Redis *servers* (``DATABASE_URL`` /
``REDIS_URL``) but never the service's data: a separate database
(``quarterdeck_bench`` by default), an empty Redis DB number and a private RQ queue.
gunicorn and the RQ worker are started exactly as ``make run`` starts them
(``devtools.run._gunicorn_argv``), so the settings measured are the settings shipped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import redis
from psycopg import sql
from psycopg.conninfo import make_conninfo

from devtools.run import _gunicorn_argv
from service.adapters.migrate import migrate

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / ".bench"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _redis_db_url(redis_url: str, db: int) -> str:
    kw = redis.Redis.from_url(redis_url).connection_pool.connection_kwargs
    return f"redis://{kw.get('host', '127.0.0.1')}:{kw.get('port', 6379)}/{db}"


def _empty_redis_db(redis_url: str, preferred: int | None) -> int:
    """An empty Redis DB number, from 15 down (test sessions pick theirs at random
    and ``make run`` uses 0): we must never delete anyone else's keys."""
    candidates = [preferred] if preferred is not None else list(range(15, 0, -1))
    for n in candidates:
        r = redis.Redis.from_url(_redis_db_url(redis_url, n))
        try:
            if r.dbsize() == 0:
                return n
        finally:
            r.close()
    raise SystemExit(f"bench: no empty Redis DB among {candidates}; set BENCH_REDIS_DB to an unused one")


@dataclass
class BenchEnv:
    """Bench database + Redis DB; processes started with :meth:`start_api` etc."""

    base_db_url: str
    base_redis_url: str
    db_name: str = "quarterdeck_bench"
    redis_db: int | None = None
    keep: bool = False
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.database_url = make_conninfo(self.base_db_url, dbname=self.db_name)
        self.redis_db = _empty_redis_db(self.base_redis_url, self.redis_db)
        self.redis_url = _redis_db_url(self.base_redis_url, self.redis_db)
        self.queue = f"qd-bench-{os.getpid()}"
        OUT.mkdir(exist_ok=True)

    # -- data -------------------------------------------------------------
    def _admin(self) -> psycopg.Connection:
        # The maintenance database: the bench needs none of DATABASE_URL's own
        # database, which a fresh server may not have yet.
        return psycopg.connect(make_conninfo(self.base_db_url, dbname="postgres"), autocommit=True)

    def _drop_db(self) -> None:
        with self._admin() as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (self.db_name,),
            )
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(self.db_name)))

    def backends(self) -> set[int]:
        """PostgreSQL backends connected to the bench database now."""
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()").fetchall()
        return {int(row[0]) for row in rows}

    def reset(self) -> None:
        """A fresh, migrated bench database and an empty bench Redis DB."""
        self._drop_db()
        migrate(self.database_url)
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            conn.execute("CREATE TABLE bench_insert (id bigserial PRIMARY KEY, data jsonb NOT NULL)")
        self.redis().flushdb()

    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.redis_url)

    def env(self) -> dict[str, str]:
        return dict(
            os.environ,
            DATABASE_URL=self.database_url,
            REDIS_URL=self.redis_url,
            QD_QUEUE=self.queue,
            QD_LOG_LEVEL="warning",
            PYTHONUNBUFFERED="1",
            # The benchmark measures the service, not its abuse limits.
            QD_RATE_LIMITS=os.environ.get("QD_RATE_LIMITS", "off"),
            # Every follower of the followers phase comes from one address.
            QD_STREAMS_PER_ADDRESS=os.environ.get("QD_STREAMS_PER_ADDRESS", "5000"),
        )

    # -- processes --------------------------------------------------------
    def _spawn(self, name: str, argv: list[str], extra_env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        log = open(OUT / f"{name}.log", "wb")  # noqa: SIM115 - the child owns it
        env = self.env() | (extra_env or {})
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
        log.close()
        self.procs[name] = proc
        return proc

    def start_gunicorn(
        self, name: str, app: str = "service.http.wsgi:app", extra_env: dict[str, str] | None = None
    ) -> str:
        """gunicorn with ``make run``'s argv, serving ``app`` (with ``extra_env`` over the
        bench's environment); returns its base URL."""
        port = free_port()
        argv = _gunicorn_argv(port)
        argv[argv.index("service.http.wsgi:app")] = app
        self._spawn(name, argv, extra_env)
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url + "/healthz", self.procs[name], name)
        return url

    def start_worker(self) -> None:
        self._spawn("worker", [sys.executable, "-m", "workers"])

    def start_process(self, name: str, argv: list[str], extra_env: dict[str, str] | None = None) -> None:
        """Any other process of a phase (stopped by :meth:`stop`, logged to ``.bench/<name>.log``)."""
        self._spawn(name, argv, extra_env)

    def stop(self, name: str) -> None:
        proc = self.procs.pop(name, None)
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def pids(self, name: str) -> list[int]:
        """The process and its children (gunicorn's workers), for CPU accounting."""
        root = self.procs[name].pid
        out = [root]
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{root}/task/{root}/children").read_text().split():
                out.append(int(line))
        return out

    def wait_queue_empty(self, timeout: float = 120.0) -> float:
        """Wait until the worker has taken every projection job; returns seconds waited."""
        r = self.redis()
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if r.llen(f"rq:queue:{self.queue}") == 0:
                break
            time.sleep(0.05)
        time.sleep(0.2)  # the job it is running
        return time.monotonic() - started

    def close(self) -> None:
        for name in list(self.procs):
            self.stop(name)
        if self.keep:
            return
        with contextlib.suppress(Exception):
            self.redis().flushdb()
        with contextlib.suppress(Exception):
            self._drop_db()


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], name: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"bench: {name} exited with {proc.returncode}; see {OUT / (name + '.log')}")
        try:
            with urllib.request.urlopen(url, timeout=1.0) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"bench: {url} did not answer within {timeout:.0f}s")


def backend_cpu_seconds(pids: list[int]) -> float:
    """CPU seconds of single-threaded processes (PostgreSQL's backends), to the
    nanosecond: ``/proc/<pid>/schedstat``, where ``/proc/<pid>/stat`` counts in 10 ms
    ticks (a few dozen cheap statements can round to nothing).  A process's schedstat
    is its main thread's, which for a backend is all of it."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    return total / 1e9


def cpu_seconds(pids: list[int]) -> float:
    """User+system CPU seconds of running processes (from /proc), for the
    'is the client the bottleneck' check."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
    return total
