"""A real Redis Cluster (three primaries, three replicas) and a plain Redis on
loopback ports 7100-7199, started from the machine's ``redis-server`` and
``redis-cli``, for the multi-node test (docs/SCALING.md, "Run here")."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import redis
import requests

from support.live import free_port

ROOT = Path(__file__).resolve().parents[2]

#: Ports of the servers (each cluster node also uses its port + 10000, its bus).
PORTS = range(7100, 7200)
#: Milliseconds without an answer before a node is failed over (redis.conf's default is 15 s).
NODE_TIMEOUT_MS = 2000


def binaries() -> tuple[str, str]:
    """``redis-server`` and ``redis-cli``, or a clear error saying what is missing."""
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    missing = [name for name, path in (("redis-server", server), ("redis-cli", cli)) if path is None]
    if missing:
        raise RuntimeError(
            f"the multi-node test needs {' and '.join(missing)} on PATH (Redis 7 or later: "
            "apt-get install redis-server); it starts its own Redis Cluster from them"
        )
    assert server is not None and cli is not None
    return server, cli


def _free(port: int) -> bool:
    for p in (port, port + 10000):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                return False
    return True


def free_ports(n: int) -> list[int]:
    """``n`` ports in :data:`PORTS` free now, with their cluster bus ports."""
    found = [p for p in PORTS if _free(p)][:n]
    if len(found) < n:
        raise RuntimeError(f"fewer than {n} free loopback ports (and bus ports) in 7100-7199")
    return found


def wait_until(check, seconds: float, what: str, pause: float = 0.05) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(pause)
    raise TimeoutError(f"timed out after {seconds}s waiting for {what}")


class Node:
    """One ``redis-server`` process keeping nothing on disk."""

    def __init__(self, base: Path, port: int, cluster: bool) -> None:
        self.base, self.port, self.cluster = base / str(port), port, cluster
        self.proc: subprocess.Popen | None = None

    def start(self, server: str) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        argv = [server, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        argv += ["--dir", str(self.base), "--logfile", str(self.base / "redis.log")]
        if self.cluster:
            argv += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            argv += ["--cluster-node-timeout", str(NODE_TIMEOUT_MS)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=0.5, socket_timeout=2)

    def ping(self) -> bool:
        with self.client() as r:
            return bool(r.ping())

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(15)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Cluster:
    """Three primaries and three replicas (``redis-cli --cluster create
    --cluster-replicas 1``) and a plain Redis for the queue."""

    def __init__(self, base: Path) -> None:
        self.server, self.cli = binaries()
        ports = free_ports(7)
        self.nodes = [Node(base, p, cluster=True) for p in ports[:6]]
        self.queue = Node(base, ports[6], cluster=False)

    def start(self) -> None:
        for node in [*self.nodes, self.queue]:
            node.start(self.server)
        for node in [*self.nodes, self.queue]:
            wait_until(node.ping, 15, f"redis-server on port {node.port}")
        create = [self.cli, "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in self.nodes)]
        create += ["--cluster-replicas", "1", "--cluster-yes"]
        subprocess.run(create, check=True, capture_output=True, timeout=60)
        wait_until(self.healthy, 30, "the Redis Cluster to be ok on every node")

    def healthy(self) -> bool:
        """Every live node says the cluster is ok, and each primary has a replica in sync."""
        for node in self.nodes:
            if node.alive:
                with node.client() as r:
                    if r.execute_command("CLUSTER", "INFO").decode().find("cluster_state:ok") < 0:
                        return False
        return len(self.primaries()) == 3 and all(self._synced(n) for n in self.nodes if n.alive)

    def _synced(self, node: Node) -> bool:
        with node.client() as r:
            info = r.info("replication")
        if info["role"] == "master":
            return True
        return info.get("master_link_status") == "up"

    def primaries(self) -> list[Node]:
        out = []
        for node in self.nodes:
            if node.alive:
                with node.client() as r:
                    if r.info("replication")["role"] == "master":
                        out.append(node)
        return out

    def url(self, node: Node | None = None) -> str:
        """The read side's URL: one node, and the flag that says it is a cluster."""
        return f"redis://127.0.0.1:{(node or self.nodes[0]).port}/0?cluster=1"

    def queue_url(self) -> str:
        return f"redis://127.0.0.1:{self.queue.port}/0"

    def stop(self) -> None:
        for node in [*self.nodes, self.queue]:
            with contextlib.suppress(Exception):
                node.kill()


class Processes:
    """gunicorn serving the API exactly as ``make run`` and compose start it
    (gevent workers, ``service/http/gunicorn_conf.py``) and ``python -m workers``
    processes, each in a session of its own (a kill reaches its children), logs kept."""

    def __init__(self, base: Path, env: dict[str, str]) -> None:
        self.base = base
        self.env = {**os.environ, **env, "PYTHONUNBUFFERED": "1"}
        self.procs: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []
        base.mkdir(parents=True, exist_ok=True)

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = (self.base / f"{name}-{len(self.procs)}.log").open("wb")
        proc = subprocess.Popen(
            argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.procs.append(proc)
        return proc

    def migrate(self) -> None:
        subprocess.run([sys.executable, "-m", "service", "migrate"], cwd=ROOT, env=self.env, check=True, timeout=120)

    def start_api(self) -> str:
        from devtools.run import _gunicorn_argv

        port = free_port()
        url = f"http://127.0.0.1:{port}"
        self._spawn("api", _gunicorn_argv(port))
        wait_until(lambda: requests.get(url + "/healthz", timeout=2).status_code == 200, 60, f"the API on {url}")
        return url

    def start_worker(self) -> subprocess.Popen:
        proc = self._spawn("worker", [sys.executable, "-m", "workers"])
        self.workers.append(proc)
        return proc

    def kill_worker(self, proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        proc.wait(30)
        self.workers.remove(proc)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)

    def logs(self, tail: bool = True) -> str:
        texts = (p.read_text(errors="replace") for p in sorted(self.base.glob("*.log")))
        return "\n".join(t[-3000:] if tail else t for t in texts)
