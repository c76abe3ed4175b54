"""``make run``: the whole service on one machine, for development.

Inside ``dev_services()`` (PostgreSQL and Redis from the environment, else embedded): apply the
migrations, provision the house bots (``python -m service bots``), start gunicorn, one RQ worker,
one bot worker (``workers/bots.py``) and one analysis worker (``workers/analysis.py``) as child
processes (the worker also runs the sweep and the clocks' scheduler, ``workers/timeouts.py``:
nothing else is needed), write ``.devdata/env`` (the URLs in use, for other make targets to
source), and print the API's URL once ``/healthz`` answers.
Ctrl-C or SIGTERM stops the children, then the services: nothing else does.  A child that dies
(the worker killed, gunicorn's master gone) is started again after a back-off (1 s, doubling up
to 30 s while it keeps dying within a minute of its start), with a log line each time, as
``compose.yaml``'s ``restart: unless-stopped`` does in production.

Settings: PORT (8000), WEB_CONCURRENCY (gunicorn workers, 2), GUNICORN_WORKER_CONNECTIONS (4000
per worker), GUNICORN_ACCESS_LOG (1 to log requests), ADMIN_TOKEN (generated for this run if
unset), QD_LOG_LEVEL.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import FrameType

from devtools.devservices import dev_services

DEVDATA = Path(".devdata")
ENV_FILE = DEVDATA / "env"
HEALTH_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0
#: Restart back-off of a child that died: first wait, longest wait, and how long a child must
#: run for its next death to start again from the first wait.
FIRST_BACKOFF, MAX_BACKOFF, STABLE_SECONDS = 1.0, 30.0, 60.0


def _say(msg: str) -> None:
    print(f"run: {msg}", file=sys.stderr, flush=True)


class _Stop:
    """SIGINT/SIGTERM/SIGHUP only set a flag; the main loop shuts down in order."""

    def __init__(self) -> None:
        self.signum: int | None = None
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.signum = signum

    def __bool__(self) -> bool:
        return self.signum is not None


def _die_with_parent() -> None:
    """In the child: receive SIGTERM if ``make run`` dies without cleaning up (e.g. SIGKILL)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _spawn(name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    # Own process group: Ctrl-C reaches only us, and we stop the group (gunicorn's workers, RQ's horse).
    proc = subprocess.Popen(argv, env=env, process_group=0, preexec_fn=_die_with_parent)
    _say(f"started {name} (pid {proc.pid}): {shlex.join(argv)}")
    return proc


def _stop_all(children: dict[str, subprocess.Popen[bytes]]) -> None:
    for proc in children.values():
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    for name, proc in children.items():
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _say(f"{name} did not stop in {STOP_TIMEOUT:.0f}s; killing it")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # stragglers of the group, if any
        proc.wait()


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as resp:
            return resp.status == 200
    except OSError:
        return False


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _write_env_file(values: dict[str, str]) -> None:
    DEVDATA.mkdir(exist_ok=True)
    fd = os.open(ENV_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write("# written by `make run` (devtools/run.py) while it runs; removed when it stops\n")
        fh.writelines(f"export {k}={shlex.quote(v)}\n" for k, v in values.items())


def _remove_env_file() -> None:
    with contextlib.suppress(OSError):
        if f"QD_RUN_PID={os.getpid()}\n" in ENV_FILE.read_text():
            ENV_FILE.unlink()


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"run: {name} must be an integer, got {raw!r}") from None


def _gunicorn_major() -> int:
    from importlib.metadata import version

    try:
        return int(version("gunicorn").split(".")[0])
    except (ValueError, ImportError):
        return 0


def _gunicorn_argv(port: int) -> list[str]:
    # The server's settings (gevent workers, header and body time limits) are
    # in service/http/gunicorn_conf.py, shared with compose.yaml and the Dockerfile.
    argv = [sys.executable, "-m", "gunicorn", "service.http.wsgi:app", "--bind", f"127.0.0.1:{port}"]
    argv += ["--config", "python:service.http.gunicorn_conf"]
    argv += ["--workers", str(_int_env("WEB_CONCURRENCY", 2)), "--graceful-timeout", "10"]
    argv += ["--log-level", os.environ.get("QD_LOG_LEVEL", "info").lower()]
    if _gunicorn_major() >= 27:  # its control socket lives in ~/.gunicorn and clashes between runs
        argv += ["--no-control-socket"]
    if os.environ.get("GUNICORN_ACCESS_LOG", "") not in ("", "0"):
        argv += ["--access-logfile", "-"]
    return argv


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def metrics_dir_for_run(root: Path = DEVDATA / "metrics", pid: int | None = None) -> Path:
    """This run's own Prometheus multiprocess directory, empty: one per
    ``make run`` (``run-<pid>``), so two runs on one machine never add up each
    other's samples.  Directories of runs that are gone are removed; those of
    runs still alive are left alone."""
    pid = os.getpid() if pid is None else pid
    root = root.resolve()
    root.mkdir(parents=True, exist_ok=True)
    for old in root.iterdir():
        # The flat layout of older runs (files right in root) goes too.
        owner = old.name.removeprefix("run-")
        if old.is_dir() and owner.isdigit() and int(owner) != pid and _pid_alive(int(owner)):
            continue  # another run, still going
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)
    mine = root / f"run-{pid}"
    mine.mkdir()
    return mine


class _Restarts:
    """When a dead child is started again: :data:`FIRST_BACKOFF` after its death, doubling
    up to :data:`MAX_BACKOFF` while it dies within :data:`STABLE_SECONDS` of its start."""

    def __init__(self) -> None:
        self.backoff = FIRST_BACKOFF
        self.since = time.monotonic()
        #: When to start it again (``None``: it runs, or its death was not seen yet).
        self.due: float | None = None

    def died(self) -> float:
        now = time.monotonic()
        if now - self.since >= STABLE_SECONDS:
            self.backoff = FIRST_BACKOFF
        wait = self.backoff
        self.backoff = min(self.backoff * 2, MAX_BACKOFF)
        self.due = now + wait
        return wait

    def started(self) -> None:
        self.since, self.due = time.monotonic(), None


def _serve(env: dict[str, str], port: int, env_file: dict[str, str], token_generated: bool, stop: _Stop) -> int:
    """Migrate, start the children, watch them; returns the exit status."""
    # One Prometheus registry across gunicorn's workers and the RQ worker:
    # each process writes its samples here and /metrics adds them up.
    metrics_dir = metrics_dir_for_run()
    env = env | {"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}
    _say("applying migrations: python -m service migrate")
    migrate = subprocess.run([sys.executable, "-m", "service", "migrate"], env=env)
    if migrate.returncode != 0 or stop:
        _say(f"migration failed (exit {migrate.returncode}); stopping" if not stop else "stopped")
        return 0 if stop else 1
    # The house bots' accounts, keyed from this run's secret (docs/BOTS.md "House bots").
    bots = subprocess.run([sys.executable, "-m", "service", "bots"], env=env)
    if bots.returncode != 0 or stop:
        _say(f"provisioning the house bots failed (exit {bots.returncode}); stopping" if not stop else "stopped")
        return 0 if stop else 1
    children: dict[str, subprocess.Popen[bytes]] = {}
    api = f"http://127.0.0.1:{port}"
    status, ready, started = 0, False, time.monotonic()
    argvs = {
        "gunicorn": _gunicorn_argv(port),
        "worker": [sys.executable, "-m", "workers"],
        "bot worker": [sys.executable, "-m", "workers.bots"],
        "analysis worker": [sys.executable, "-m", "workers.analysis"],
    }
    restarts = {name: _Restarts() for name in argvs}
    try:
        for name, argv in argvs.items():
            children[name] = _spawn(name, argv, env)
        while not stop:
            for name, proc in list(children.items()):
                if proc.poll() is None:
                    continue
                restart = restarts[name]
                if restart.due is None:
                    wait = restart.died()
                    _say(f"{name} (pid {proc.pid}) exited with status {proc.returncode}; restarting it in {wait:.0f} s")
                elif time.monotonic() >= restart.due:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)  # what is left of its group (RQ's horse)
                    children[name] = _spawn(name, argvs[name], env)
                    restart.started()
            if not ready:
                if _healthy(f"{api}/healthz"):
                    ready = True
                    _write_env_file(env_file)
                    if token_generated:
                        print(
                            f"Operator token (ADMIN_TOKEN) for this run (the operator's endpoints need it as "
                            f"'Authorization: Bearer <token>'; also in {ENV_FILE}): {env['ADMIN_TOKEN']}",
                            flush=True,
                        )
                    print(f"Quarterdeck API on {api} (worker running; Ctrl-C to stop)", flush=True)
                elif time.monotonic() - started > HEALTH_TIMEOUT:
                    _say(f"{api}/healthz did not answer within {HEALTH_TIMEOUT:.0f}s; stopping")
                    status = 1
                    break
            time.sleep(0.2)
        if stop:
            _say(f"{signal.Signals(stop.signum or 0).name}: stopping the API and the worker")
    finally:
        _remove_env_file()
        _stop_all(children)
        shutil.rmtree(metrics_dir, ignore_errors=True)
    return status


def main() -> int:
    port = _int_env("PORT", 8000)
    if not _port_free(port):
        _say(f"port {port} on 127.0.0.1 is taken (another make run?); set PORT=... to use another")
        return 1
    token_generated = not os.environ.get("ADMIN_TOKEN")
    with dev_services(DEVDATA) as services:
        stop = _Stop()
        env = dict(os.environ, DATABASE_URL=services.database_url, REDIS_URL=services.redis_url)
        env["QD_API_URL"] = f"http://127.0.0.1:{port}"
        env.setdefault("PYTHONUNBUFFERED", "1")
        if token_generated:
            env["ADMIN_TOKEN"] = secrets.token_urlsafe(32)
        keys = ["DATABASE_URL", "REDIS_URL", "QD_API_URL"] + (["ADMIN_TOKEN"] if token_generated else [])
        env_file = {k: env[k] for k in keys} | {"QD_RUN_PID": str(os.getpid())}
        return _serve(env, port, env_file, token_generated, stop)


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:  # Ctrl-C while the services were still starting
        raise SystemExit(130) from None
