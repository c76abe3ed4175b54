"""Throwaway PostgreSQL and Redis servers, and the real service processes
(gunicorn API + RQ worker), for tests that kill and restart them.

Everything lives in one temporary folder and on free loopback ports; nothing
touches the machine's own servers.  PostgreSQL refuses to run as root, so as
root the cluster is owned by and runs as the ``postgres`` OS user (``runuser``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import redis
import requests

from support.live import free_port

ROOT = Path(__file__).resolve().parents[2]


def wait_until(
    predicate,
    timeout: float,
    what: str,
    pause: float = 0.1,
    process: subprocess.Popen | None = None,
    log: Path | None = None,
) -> None:
    """Wait for ``predicate``; with ``process``, fail at once when it exits (a port taken, a bad
    option) and say why from the end of its ``log``, instead of waiting out the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except Exception:
            pass
        if process is not None and process.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log is not None and log.exists() else ""
            raise RuntimeError(f"{what} exited with status {process.returncode} before it was ready:\n{tail}")
        time.sleep(pause)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


def _pg_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if found:
        return found[-1]
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(f"PostgreSQL binary {name!r} not found under /usr/lib/postgresql/*/bin")
    return path


class PostgresServer:
    """A private cluster: ``start``/``stop``/``kill``/``restart``; ``url(db)``."""

    def __init__(self, base: Path):
        self.base = base
        self.data = base / "pgdata"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        self.log = base / "postgres.log"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        cmd = list(argv)
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=120)

    def init(self) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        self.log.touch()
        if self.as_root:
            pw = pwd.getpwnam("postgres")
            os.chmod(self.base, 0o777)
            os.chown(self.log, pw.pw_uid, pw.pw_gid)
        self._run(_pg_bin("initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-instructions")

    def start(self) -> None:
        # fsync off: these clusters are thrown away, and speed keeps the suite short.
        opts = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100"
        argv = [_pg_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", opts, "-w", "-t", "60", "start"]
        started = self._run(*argv, check=False)
        if started.returncode != 0:
            tail = self.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"private PostgreSQL on port {self.port} did not start:\n{started.stderr}{tail}")
        wait_until(self.ready, 30, "private PostgreSQL")

    def stop(self, mode: str = "fast") -> None:
        self._run(_pg_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop", check=False)

    def kill(self) -> None:
        """SIGKILL the postmaster (and so its backends): a crash, not a shutdown."""
        pid_file = self.data / "postmaster.pid"
        with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)

    def restart(self, down_for: float = 0.0, mode: str = "fast") -> None:
        self.stop(mode)
        time.sleep(down_for)
        self.start()

    def ready(self) -> bool:
        try:
            with psycopg.connect(self.url("postgres"), connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return True
        except psycopg.OperationalError:
            return False

    def url(self, dbname: str = "quarterdeck") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"


class RedisServer:
    """A private redis-server that keeps nothing on disk: a restart is empty."""

    def __init__(self, base: Path):
        self.base = base
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log = base / "redis.log"

    def start(self) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        exe = shutil.which("redis-server") or "redis-server"
        argv = [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        argv += ["--dir", str(self.base), "--logfile", str(self.log)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(self.ready, 15, f"private Redis on port {self.port}", process=self.proc, log=self.log)

    def ready(self) -> bool:
        with redis.Redis(port=self.port, socket_connect_timeout=0.5) as r:
            return bool(r.ping())

    def stop(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def _signal(self, sig: int) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(15)
        self.proc = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"


class Service:
    """The real processes: gunicorn serving ``service.http.wsgi:app`` and one
    ``python -m workers``, with logs kept so tests can read them."""

    def __init__(self, base: Path, env: dict[str, str]):
        self.base = base
        self.env = {**os.environ, **env, "PYTHONUNBUFFERED": "1"}
        self.port = free_port()
        self.api: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self._n = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        self._n += 1
        log = self.base / f"{name}-{self._n}.log"
        self.logs.append(log)
        out = log.open("wb")
        # A session of its own, so that a kill reaches the whole process group.
        return subprocess.Popen(
            argv, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )

    def migrate(self) -> None:
        subprocess.run([sys.executable, "-m", "service", "migrate"], cwd=ROOT, env=self.env, check=True, timeout=120)

    def start_api(self, workers: int = 2, threads: int = 8) -> None:
        argv = [sys.executable, "-m", "gunicorn", "service.http.wsgi:app", "-k", "gthread", "--threads", str(threads)]
        argv += ["-w", str(workers), "-b", f"127.0.0.1:{self.port}", "--graceful-timeout", "5", "--timeout", "60"]
        self.api = self._spawn("gunicorn", argv)
        self._wait_for_api()

    def start_shipped_api(self) -> None:
        """gunicorn exactly as ``make run`` and compose start it (gevent
        workers, ``service/http/gunicorn_conf.py``), on this stack."""
        from devtools.run import _gunicorn_argv

        self.api = self._spawn("gunicorn", _gunicorn_argv(self.port))
        self._wait_for_api()

    def _wait_for_api(self) -> None:
        def healthy() -> bool:
            return requests.get(self.url + "/healthz", timeout=2).status_code == 200

        wait_until(healthy, 60, f"gunicorn on port {self.port}", process=self.api, log=self.logs[-1])

    def start_worker(self) -> subprocess.Popen:
        proc = self._spawn("worker", [sys.executable, "-m", "workers"])
        self.workers.append(proc)
        return proc

    def kill_worker(self, proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        proc.wait(15)
        self.workers.remove(proc)

    def stop(self) -> None:
        for proc in [*self.workers, *([self.api] if self.api else [])]:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in [*self.workers, *([self.api] if self.api else [])]:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        self.workers.clear()
        self.api = None

    def log_text(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in self.logs if p.exists())


class Stack:
    """Private PostgreSQL + Redis + the service processes, all in one folder."""

    def __init__(self, admin_token: str, sweep_seconds: float = 1.0, **env: str):
        self.base = Path(tempfile.mkdtemp(prefix="qd-faults-"))
        os.chmod(self.base, 0o755)  # the postgres OS user must reach its data folder
        self.pg = PostgresServer(self.base / "pg")
        self.redis = RedisServer(self.base / "redis")
        self.admin_token = admin_token
        self.queue = "qd-faults"
        self.service = Service(
            self.base,
            {
                "DATABASE_URL": self.pg.url(),
                "REDIS_URL": self.redis.url(),
                "ADMIN_TOKEN": admin_token,
                "QD_QUEUE": self.queue,
                "QD_SWEEP_SECONDS": str(sweep_seconds),
                "QD_POOL_TIMEOUT": "2",
                **env,
            },
        )

    def start(self, api: bool = True, worker: bool = True) -> Stack:
        self.pg.init()
        self.pg.start()
        self.redis.start()
        self.service.migrate()
        if api:
            self.service.start_api()
        if worker:
            self.service.start_worker()
        return self

    def close(self) -> None:
        self.service.stop()
        self.redis.kill()
        self.pg.stop("immediate")
        shutil.rmtree(self.base, ignore_errors=True)


@contextlib.contextmanager
def stack(admin_token: str, api: bool = True, worker: bool = True, **kwargs: str) -> Iterator[Stack]:
    s = Stack(admin_token, **kwargs)
    try:
        yield s.start(api=api, worker=worker)
    finally:
        s.close()
