"""PostgreSQL with automatic failover, for the HA layer (tests/ha): three etcd
members and three Patroni nodes, each with its PostgreSQL, all on loopback
ports in one temporary folder, started from Debian's packages (``etcd-server``,
``patroni``, the PostgreSQL binaries; ``make ha-packages`` installs them).

Patroni runs synchronous replication with one synchronous standby required
(``synchronous_mode``): a commit is acknowledged only once a standby has it,
and only that standby may be promoted.  PostgreSQL refuses to run as root, so
as root Patroni (and so its PostgreSQL) runs as the ``postgres`` OS user.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pwd
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg
import requests

from support.live import free_port

#: Seconds the leader key lives without a renewal: a dead primary is replaced
#: within about this long (plus a loop).  Patroni's rule: loop_wait + 2 * retry_timeout <= ttl.
TTL, LOOP_WAIT, RETRY_TIMEOUT = 8, 1, 3


def binaries() -> dict[str, str]:
    """etcd, patroni and PostgreSQL's bin folder, or a clear error naming what is missing."""
    found = {"etcd": shutil.which("etcd") or "", "patroni": shutil.which("patroni") or ""}
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    found["pg_bin"] = str(Path(bins[-1]).parent) if bins else ""
    missing = [name for name, path in found.items() if not path]
    if missing:
        raise RuntimeError(
            f"the HA tests need {', '.join(missing)}: run 'make ha-packages' as root "
            "(apt-get install etcd-server patroni pgbackrest postgresql)"
        )
    return found


def _descendants(pid: int) -> list[int]:
    """``pid``'s children, grandchildren... (from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            text = Path(stat).read_text()
            ppid = int(text.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(Path(stat).parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class Etcd:
    """Three etcd members: Patroni's consensus store."""

    def __init__(self, base: Path, exe: str) -> None:
        self.base, self.exe = base, exe
        self.members = [(f"etcd{i}", free_port(), free_port()) for i in range(3)]
        self.procs: list[subprocess.Popen] = []

    @property
    def hosts(self) -> str:
        return ",".join(f"127.0.0.1:{client}" for _, client, _ in self.members)

    def start(self) -> None:
        initial = ",".join(f"{name}=http://127.0.0.1:{peer}" for name, _, peer in self.members)
        for name, client, peer in self.members:
            data = self.base / name
            data.mkdir(parents=True)
            argv = [self.exe, "--name", name, "--data-dir", str(data)]
            argv += ["--listen-client-urls", f"http://127.0.0.1:{client}"]
            argv += ["--advertise-client-urls", f"http://127.0.0.1:{client}"]
            argv += ["--listen-peer-urls", f"http://127.0.0.1:{peer}"]
            argv += ["--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}"]
            argv += ["--initial-cluster", initial, "--initial-cluster-state", "new"]
            argv += ["--initial-cluster-token", self.base.name, "--logger", "zap", "--log-outputs", "stderr"]
            log = (self.base / f"{name}.log").open("wb")
            self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if all(self._healthy(client) for _, client, _ in self.members):
                return
            for proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"etcd exited {proc.returncode}:\n{self.logs()[-3000:]}")
            time.sleep(0.2)
        raise TimeoutError(f"etcd did not become healthy:\n{self.logs()[-3000:]}")

    @staticmethod
    def _healthy(port: int) -> bool:
        with contextlib.suppress(requests.RequestException, ValueError):
            return requests.get(f"http://127.0.0.1:{port}/health", timeout=1).json().get("health") == "true"
        return False

    def stop(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-2000:] for p in sorted(self.base.glob("*.log")))


class Node:
    """One Patroni node and its PostgreSQL."""

    def __init__(self, cluster: PatroniCluster, index: int) -> None:
        self.cluster = cluster
        self.name = f"pg{index}"
        self.dir = cluster.base / self.name
        self.pg_port = free_port()
        self.api_port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log = cluster.base / f"{self.name}.log"

    @property
    def data(self) -> Path:
        return self.dir / "data"

    def config(self) -> dict[str, Any]:
        c = self.cluster
        return {
            "scope": c.scope,
            "name": self.name,
            "restapi": {"listen": f"127.0.0.1:{self.api_port}", "connect_address": f"127.0.0.1:{self.api_port}"},
            "etcd3": {"hosts": c.etcd.hosts},
            "bootstrap": {
                "dcs": {
                    "ttl": TTL,
                    "loop_wait": LOOP_WAIT,
                    "retry_timeout": RETRY_TIMEOUT,
                    "maximum_lag_on_failover": 16 * 1024 * 1024,
                    # A commit is acknowledged once one standby has flushed it, and
                    # only that standby may be promoted: no acknowledged commit is lost.
                    # Strict: a primary with no synchronous standby holds its commits.
                    "synchronous_mode": True,
                    "synchronous_mode_strict": True,
                    "synchronous_node_count": 1,
                    "postgresql": {
                        "use_pg_rewind": True,
                        "parameters": {
                            "wal_level": "replica",
                            "wal_log_hints": "on",
                            "hot_standby": "on",
                            "max_wal_senders": 10,
                            "max_replication_slots": 10,
                            "max_connections": 100,
                            **c.archive_parameters,
                        },
                    },
                },
                "initdb": [{"encoding": "UTF8"}, {"auth": "trust"}, {"username": "postgres"}],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{self.pg_port}",
                "connect_address": f"127.0.0.1:{self.pg_port}",
                "data_dir": str(self.data),
                "bin_dir": c.pg_bin,
                "pgpass": str(self.dir / "pgpass"),
                "authentication": {
                    "superuser": {"username": "postgres"},
                    "replication": {"username": "replicator"},
                    "rewind": {"username": "postgres"},
                },
                "parameters": {"unix_socket_directories": str(self.dir)},
                "pg_hba": [
                    "local all all trust",
                    "host all all 127.0.0.1/32 trust",
                    "host replication all 127.0.0.1/32 trust",
                ],
                # A node whose timeline diverged and cannot be rewound starts afresh from the primary.
                "remove_data_directory_on_rewind_failure": True,
                "remove_data_directory_on_diverged_timelines": True,
            },
        }

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        conf = self.dir / "patroni.yml"
        # JSON is YAML: no YAML writer needed.
        conf.write_text(json.dumps(self.config(), indent=1))
        argv = [self.cluster.patroni, str(conf)]
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            for path in (self.dir, conf):
                os.chown(path, pw.pw_uid, pw.pw_gid)
            os.chmod(self.dir, 0o700)
            argv = ["runuser", "-u", "postgres", "--", *argv]
        out = self.log.open("ab")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "PATRONI"))}
        self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env)

    def postmaster_pid(self) -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.data / "postmaster.pid").read_text().split()[0])
        return None

    def pids(self) -> list[int]:
        """Patroni's process and PostgreSQL's (the postmaster runs in a session of its own), with
        their children: what :meth:`kill` kills.  Read from /proc, which takes a while on a busy
        machine: a caller that times the kill collects them first."""
        pids = []
        if self.proc is not None:
            pids += [self.proc.pid, *_descendants(self.proc.pid)]
        pm = self.postmaster_pid()
        if pm is not None:
            pids += [pm, *_descendants(pm)]
        return pids

    def kill(self, pids: list[int] | None = None) -> None:
        """SIGKILL the node whole (``pids``: from :meth:`pids`), as a machine that dies."""
        for pid in self.pids() if pids is None else pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
        self.proc = None

    def stop(self) -> None:
        self.kill()

    def status(self) -> dict[str, Any]:
        """Patroni's view of this node (``GET /patroni``), or {} when it does not answer."""
        with contextlib.suppress(requests.RequestException, ValueError):
            return requests.get(f"http://127.0.0.1:{self.api_port}/patroni", timeout=1).json()
        return {}


class PatroniCluster:
    """Three Patroni nodes over three etcd members."""

    def __init__(self, base: Path, archive_parameters: dict[str, Any] | None = None) -> None:
        found = binaries()
        self.base = base
        self.base.mkdir(parents=True, exist_ok=True)
        os.chmod(self.base, 0o755)  # the postgres OS user must reach its nodes' folders
        self.patroni, self.pg_bin = found["patroni"], found["pg_bin"]
        self.scope = "qd-" + base.name[-8:]
        self.archive_parameters = archive_parameters or {}
        self.etcd = Etcd(base / "etcd", found["etcd"])
        self.nodes = [Node(self, i) for i in range(3)]

    def url(self, dbname: str) -> str:
        """The service's multi-host URL: libpq connects to whichever node is the primary."""
        hosts = ",".join(f"127.0.0.1:{n.pg_port}" for n in self.nodes)
        return f"postgresql://postgres@{hosts}/{dbname}?target_session_attrs=read-write&connect_timeout=2"

    def start(self) -> None:
        self.etcd.start()
        for node in self.nodes:
            node.start()
        self.wait_healthy(120)

    def cluster_state(self) -> dict[str, Any]:
        """``GET /cluster`` of any node that answers."""
        for node in self.nodes:
            with contextlib.suppress(requests.RequestException, ValueError):
                return requests.get(f"http://127.0.0.1:{node.api_port}/cluster", timeout=1).json()
        return {}

    def leader(self) -> Node | None:
        for member in self.cluster_state().get("members", []):
            if member.get("role") == "leader" and member.get("state") == "running":
                return next(n for n in self.nodes if n.name == member["name"])
        return None

    def sync_standby(self) -> Node | None:
        for member in self.cluster_state().get("members", []):
            if member.get("role") == "sync_standby" and member.get("state") in ("running", "streaming"):
                return next(n for n in self.nodes if n.name == member["name"])
        return None

    def writable(self, node: Node) -> bool:
        with contextlib.suppress(psycopg.Error):
            url = f"postgresql://postgres@127.0.0.1:{node.pg_port}/postgres"
            with psycopg.connect(url, connect_timeout=2, autocommit=True) as conn:
                return not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
        return False

    def wait_healthy(self, timeout: float) -> Node:
        """Until a leader takes writes and a synchronous standby streams from it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            leader = self.leader()
            if leader is not None and self.sync_standby() is not None and self.writable(leader):
                return leader
            for node in self.nodes:
                if node.proc is not None and node.proc.poll() is not None:
                    raise RuntimeError(f"{node.name} exited {node.proc.returncode}:\n{self.logs()[-4000:]}")
            time.sleep(0.3)
        raise TimeoutError(f"no leader with a synchronous standby after {timeout}s:\n{self.logs()[-4000:]}")

    def stop(self) -> None:
        for node in self.nodes:
            node.kill()
        self.etcd.stop()

    def logs(self) -> str:
        texts = [p.read_text(errors="replace")[-3000:] for p in sorted(self.base.glob("pg*.log"))]
        return "\n".join(texts) + "\n" + self.etcd.logs()
