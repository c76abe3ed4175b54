"""Point-in-time recovery (docs/RELIABILITY.md, "Point-in-time recovery"): bring the
event store back to a moment with pgBackRest, then rebuild the read models from it.

    make restore-pitr TIME='2026-12-07 01:30:00+00' PGDATA=/srv/pg-restored [PORT=5433]

1. ``pgbackrest restore --type=time --target=TIME --target-action=promote`` into
   ``PGDATA``, a new data folder (the damaged cluster is left as it is, to look at):
   the last full backup before TIME, then the archived WAL up to TIME.  Transactions
   that committed after TIME are not there.
2. PostgreSQL is started on that folder (loopback, ``PORT``), without a synchronous
   standby to wait for and without archiving into the repository the damaged cluster
   archives to; the script waits until recovery has ended and the server takes writes.
3. ``python -m service rebuild`` against it (``REDIS_URL``): the read models are
   dropped and rebuilt from the restored streams, so nothing recorded after TIME is
   served any more.

pgBackRest finds its repository as configured (``/etc/pgbackrest/pgbackrest.conf``, or
``PGBACKREST_CONFIG``); the stanza is ``--stanza`` (``PGBACKREST_STANZA``; default
``quarterdeck``).  As root, pgBackRest and PostgreSQL run as the ``postgres`` OS user.
The server is left running: point ``DATABASE_URL`` at it (the script prints it), or
stop it with ``pg_ctl -D PGDATA stop``.
"""

from __future__ import annotations

import argparse
import glob
import os
import pwd
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict

ROOT = Path(__file__).resolve().parents[1]


def _as_postgres(argv: list[str]) -> list[str]:
    """``argv`` as the ``postgres`` OS user when we are root (PostgreSQL refuses root)."""
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def _pg_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    path = found[-1] if found else shutil.which(name)
    if not path:
        raise SystemExit(f"error: PostgreSQL's {name} not found (/usr/lib/postgresql/*/bin or PATH)")
    return path


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: {what} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def restore(target: str, data: Path, port: int, stanza: str, dbname: str, archive: bool) -> str:
    """Restore to ``target`` into ``data``, start it on ``port``; the database's URL."""
    if not shutil.which("pgbackrest"):
        raise SystemExit("error: pgbackrest not found (apt-get install pgbackrest)")
    if data.exists() and any(data.iterdir()):
        raise SystemExit(f"error: {data} is not empty: restore into a new folder (the damaged one stays as it is)")
    data.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        os.chown(data, pw.pw_uid, pw.pw_gid)
    os.chmod(data, 0o700)
    argv = ["pgbackrest", f"--stanza={stanza}", f"--pg1-path={data}", "--type=time", f"--target={target}"]
    argv += ["--target-action=promote"]
    if not archive:
        argv.append("--archive-mode=off")
    started = time.monotonic()
    _run(_as_postgres([*argv, "restore"]), "pgbackrest restore")
    print(f"restored the backup and its WAL up to {target} into {data} ({time.monotonic() - started:.1f} s)")
    # The restored configuration is the damaged cluster's: no synchronous standby is
    # waited for (none follows this server yet), and it listens on loopback only.
    opts = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c synchronous_standby_names=''"
    log = data / "restore-pitr.log"
    _run(_as_postgres([_pg_bin("pg_ctl"), "-D", str(data), "-l", str(log), "-o", opts, "-w", "-t", "600", "start"]),
         f"starting PostgreSQL on {data} (log: {log})")  # fmt: skip
    url = f"postgresql://postgres@127.0.0.1:{port}/{dbname}"
    deadline = time.monotonic() + 600
    while True:
        try:
            with psycopg.connect(url, connect_timeout=5, autocommit=True) as conn:
                if not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                    break
        except psycopg.OperationalError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"error: {url} still in recovery after 600 s (log: {log})")
        time.sleep(0.3)
    print(f"recovered to {target}: {url} takes writes ({time.monotonic() - started:.1f} s)")
    return url


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="make restore-pitr", description=__doc__.split("\n\n")[0])
    p.add_argument("--time", required=True, help="the moment to restore to, e.g. '2026-12-07 01:30:00+00'")
    p.add_argument("--data", required=True, type=Path, help="a new data folder for the restored cluster")
    p.add_argument("--port", type=int, default=5433, help="its loopback port (default 5433)")
    p.add_argument("--stanza", default=os.environ.get("PGBACKREST_STANZA") or "quarterdeck")
    p.add_argument("--no-archive", action="store_true", help="the restored server does not archive its WAL")
    p.add_argument("--no-rebuild", action="store_true", help="leave the read models as they are")
    ns = p.parse_args(argv)
    dbname = conninfo_to_dict(os.environ.get("DATABASE_URL") or "dbname=quarterdeck").get("dbname") or "quarterdeck"
    url = restore(ns.time, ns.data.resolve(), ns.port, ns.stanza, dbname, archive=not ns.no_archive)
    if not ns.no_rebuild:
        env = {**os.environ, "DATABASE_URL": url}
        rebuilt = subprocess.run([sys.executable, "-m", "service", "rebuild"], cwd=ROOT, env=env)
        if rebuilt.returncode != 0:
            print("error: the rebuild of the read models failed (run it again: make rebuild)", file=sys.stderr)
            return rebuilt.returncode
    print(f"next: point DATABASE_URL at {url} (or make it the cluster's new primary: docs/RELIABILITY.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
