"""The HA shape, run: `make up HA=1` on a real Docker engine (README "Operators";
docs/RELIABILITY.md "Failover", "The HA shape, run").

`make up HA=1` builds the Dockerfile and deploy/patroni's image and starts compose.yaml with
compose.ha.yaml (and compose.ha.test.yaml: local base images, loopback ports) until every
healthcheck is green: three etcd members, three PostgreSQL nodes under Patroni, the service on
the multi-host DATABASE_URL.  Patroni reports a leader, a synchronous standby and a replica,
both streaming; WAL reaches the pgBackRest repository; an intent of a real game is accepted
through the API.  The leader's container is killed: the synchronous standby is promoted, an
intent is accepted again (503 meanwhile, the contract during a failover), the dead node rejoins
as a standby once started, and the new primary archives and backs up into the same repository.
`make down HA=1` keeps the volumes; `down --volumes` removes them.

The tests run in file order on one stack (module fixture); the engine is tests/compose/conftest.py's.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from support.compose_stack import Api, HaStack, assert_loopback_only, image_ids, log, run

pytestmark = pytest.mark.timeout(1800)

PREFIX = os.environ.get("QD_LOCAL_PREFIX", "qd-local")
NODES = ("postgres", "pg2", "pg3")
ETCD = ("etcd1", "etcd2", "etcd3")
#: How long a client keeps retrying a 503 across the failover: the leader key's ttl (30 s in
#: compose.ha.yaml) and a loop (10 s), with room for a loaded machine.
FAILOVER_PATIENCE = 150
#: The engine's CPU account of every container it runs, builds included (cgroup v1).
CPUACCT = Path("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage")

T = TypeVar("T")


def engine_cpu_seconds() -> float | None:
    with contextlib.suppress(OSError, ValueError):
        return int(CPUACCT.read_text()) / 1e9
    return None


@pytest.fixture(scope="module")
def shared() -> dict:
    """What one test leaves for the next (the tests run in file order), and the figures."""
    return {}


@pytest.fixture(scope="module")
def stack(engine: None, tmp_path_factory: pytest.TempPathFactory, shared: dict) -> Iterator[HaStack]:
    started = time.monotonic()
    log(run([str(Path(__file__).with_name("base_images.sh")), PREFIX]).strip().splitlines()[-1])
    s = HaStack(PREFIX)
    s.prepare(tmp_path_factory.mktemp("compose-ha"))
    s.images_before = image_ids()
    cpu = engine_cpu_seconds()
    log(f"project {s.project}: API 127.0.0.1:{s.api_port}, PostgreSQL (first node) :{s.pg_port}, Redis :{s.redis_port}")
    try:
        t = time.monotonic()
        s.compose("build", timeout=1200)
        built = time.monotonic() - t
        sizes = {i: int(run(["docker", "image", "inspect", "--format", "{{.Size}}", i])) for i in s.built_images()}
        log(f"built in {built:.0f}s: " + ", ".join(f"{i} {n / 1e6:.0f} MB" for i, n in sizes.items()))
        t = time.monotonic()
        s.make("up")
        s.time_to_green = time.monotonic() - t
        log(f"make up HA=1: every service healthy {s.time_to_green:.0f}s after `make up HA=1` (images built)")
        shared["figures"] = {"build": built, "up": s.time_to_green}
        yield s
    finally:
        s.remove()
        left = s.leftovers()
        used = engine_cpu_seconds()
        spent = f"; the engine's containers and builds used {used - cpu:.0f} CPU-seconds" if cpu and used else ""
        log(f"removed: {left}; the whole file {time.monotonic() - started:.0f}s{spent}")
        assert not any(left.values()), f"left behind: {left}"


def wait_for(what: str, check: Callable[[], T | None], timeout: float) -> T:
    """``check()``'s first true answer (a failed ``docker exec`` counts as none yet)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            got = check()
        except AssertionError as e:  # the node asked does not answer (yet)
            got, last = None, e
        if got:
            return got
        assert time.monotonic() < deadline, f"{what}: not within {timeout}s (last error: {last})"
        time.sleep(1)


def cluster(stack: HaStack, via: tuple[str, ...] = NODES) -> dict:
    """Patroni's /cluster from the first node in ``via`` that answers."""
    errors = []
    for node in via:
        try:
            return stack.node_call(node, "/cluster")
        except AssertionError as e:
            errors.append(str(e)[-300:])
    raise AssertionError(f"no node answers /cluster: {errors}")


def healthy_cluster(stack: HaStack, members: int, via: tuple[str, ...] = NODES) -> dict | None:
    """The cluster when it has ``members`` running members on one timeline, one leader and
    one synchronous standby (the others replicas), and its leader streams to every standby
    with one of them synchronous: else None."""
    c = cluster(stack, via)
    ms = c["members"]
    roles = sorted(m["role"] for m in ms)
    if len(ms) != members or any(m["state"] != "running" for m in ms) or len({m.get("timeline") for m in ms}) != 1:
        return None
    if roles != sorted(["leader", "sync_standby"] + ["replica"] * (members - 2)):
        return None
    leader = next(m for m in ms if m["role"] == "leader")
    rows = stack.psql(leader["host"], "SELECT application_name, state, sync_state FROM pg_stat_replication")
    standbys = {m["name"]: m["role"] for m in ms if m["role"] != "leader"}
    streaming = {name: sync for name, state, sync in rows if state == "streaming"}
    if set(streaming) != set(standbys):
        return None
    # Patroni's sync_standby is the one PostgreSQL waits for; the others stream asynchronously.
    if any((sync == "sync") != (standbys[name] == "sync_standby") for name, sync in streaming.items()):
        return None
    return {"leader": leader["host"], "members": {m["host"]: m for m in ms}, "replication": rows}


def play_one_intent(api: Api, game: dict, version: int) -> int:
    """One intent of the game, by the seat to act, with an Idempotency-Key; its new version."""
    new = api.play_first_legal(game, version, f"{game['id']}-{version}")
    assert new > version
    return new


def test_every_service_is_healthy_on_loopback_ports(stack: HaStack) -> None:
    """compose.yaml + compose.ha.yaml: every service with a healthcheck is healthy, etcd runs;
    the nodes and etcd run deploy/patroni's image, the service the Dockerfile's; what compose.yaml
    publishes listens on 127.0.0.1 only, and nothing else is published."""
    assert set(NODES + ETCD) | {"redis", "api", "worker", "bots", "analysis"} <= set(stack.services)
    for service in stack.services:
        state = stack.state(service)
        assert state["Status"] == "running", (service, state)
        assert (state.get("Health") or {"Status": "healthy"})["Status"] == "healthy", (service, state)
    for service in stack.services:
        image = run(["docker", "inspect", "--format", "{{.Config.Image}}", stack.container(service)]).strip()
        if service in NODES + ETCD:
            assert image == stack.node_image, (service, image)
        elif service != "redis":
            assert image == stack.image, (service, image)
    published = {
        service: run(["docker", "port", stack.container(service)], check=False).split() for service in stack.services
    }
    assert {s for s, p in published.items() if p} == {"api", "postgres", "redis"}, published
    assert_loopback_only(stack.api_port, stack.pg_port, stack.redis_port)
    log(f"healthy: {', '.join(stack.services)}; published on 127.0.0.1 only: api, postgres, redis")


def test_patroni_runs_a_leader_and_two_streaming_standbys_one_synchronous(stack: HaStack, shared: dict) -> None:
    """docs/RELIABILITY.md "Failover": one leader, two standbys streaming from it, one of them
    synchronous (`synchronous_mode: true`, strict, one synchronous standby); the service's processes
    are on the multi-host URL that names the three nodes."""
    c = wait_for("a leader, a sync standby and a replica, streaming", lambda: healthy_cluster(stack, 3), 120)
    config = stack.node_call(c["leader"], "/config")
    assert config["synchronous_mode"] is True and config["synchronous_node_count"] == 1, config
    assert config["synchronous_mode_strict"] is True, config
    for service in ("api", "worker", "bots", "analysis"):
        env = run(["docker", "inspect", "--format", "{{json .Config.Env}}", stack.container(service)])
        url = re.search(r"DATABASE_URL=([^\"]+)", env)
        assert url and "@postgres:5432,pg2:5432,pg3:5432/" in url.group(1), (service, env)
        assert "target_session_attrs=read-write" in url.group(1), (service, url.group(1))
    shared["leader"] = c["leader"]
    log(f"leader {c['leader']}; pg_stat_replication {c['replication']}; synchronous_mode on, 1 sync standby")


def test_wal_reaches_the_pgbackrest_repository(stack: HaStack) -> None:
    """compose.ha.yaml archives every node's WAL into one pgBackRest repository (the stanza is
    made when a node becomes primary): `pgbackrest check` on the leader switches a WAL segment
    and waits until it is archived."""
    members = cluster(stack)["members"]
    node = next(m["host"] for m in members if m["role"] == "leader")
    t = time.monotonic()
    run(["docker", "exec", stack.container(node), "pgbackrest", "--stanza=quarterdeck", "check"], timeout=180)
    archived = stack.psql(node, "SELECT archived_count, failed_count, last_archived_wal FROM pg_stat_archiver")
    assert int(archived[0][0]) >= 1, archived
    log(f"pgbackrest check on {node}: ok in {time.monotonic() - t:.1f}s; pg_stat_archiver {archived[0]}")


def test_an_intent_is_accepted_over_the_multi_host_url(stack: HaStack, shared: dict) -> None:
    """/readyz is ready (PostgreSQL through the multi-host URL, Redis); a Nauticus game is created
    and an intent of it accepted (201), then read back through the worker."""
    api = Api(stack.url)
    assert api.call("GET", "/readyz") == {"status": "ok", "checks": {"postgres": "ok", "redis": "ok"}}
    game = api.call("POST", "/v1/games", json={"game": "nauticus", "players": ["ann", "bob"]}, expect=201)
    version = play_one_intent(api, game, game["version"])
    shared.update(game=game, version=version)
    log(f"game {game['id']}: an intent accepted (201), version {version}")


def test_killing_the_leader_promotes_the_sync_standby_and_intents_are_accepted_again(
    stack: HaStack, shared: dict
) -> None:
    """`docker kill` of the leader's container (a machine lost): the synchronous standby is
    promoted; a new intent, retried on 503 with its Idempotency-Key, is accepted (201); every
    503 met is `postgres_unavailable` with Retry-After; the other standby becomes synchronous."""
    before = cluster(stack)["members"]
    old = next(m for m in before if m["role"] == "leader")
    sync = next(m for m in before if m["role"] == "sync_standby")
    survivors = tuple(n for n in NODES if n != old["host"])
    killed = time.monotonic()
    run(["docker", "kill", stack.container(old["host"])])
    log(f"killed {old['host']} (leader {old['name']}); sync standby {sync['name']}")

    api = Api(stack.url, patience=FAILOVER_PATIENCE)
    version = play_one_intent(api, shared["game"], shared["version"])
    accepted = time.monotonic() - killed
    shared["version"] = version

    def new_leader() -> dict | None:
        ms = cluster(stack, survivors)["members"]
        lead = [m for m in ms if m["role"] == "leader" and m["state"] == "running"]
        return lead[0] if lead else None

    leader = wait_for("a new leader", new_leader, 60)
    assert leader["host"] != old["host"] and leader["name"] == sync["name"], (leader, sync)
    assert leader["timeline"] > old["timeline"], (leader, old)
    c = wait_for("a synchronous standby again", lambda: healthy_cluster(stack, 2, survivors), 90)
    resynced = time.monotonic() - killed
    assert stack.state(old["host"])["Status"] == "exited"  # a killed container stays down
    for r in api.unavailable:
        assert r.json()["error"]["code"] == "postgres_unavailable" and r.headers.get("Retry-After"), r.text
    assert api.call("GET", "/readyz") == {"status": "ok", "checks": {"postgres": "ok", "redis": "ok"}}
    assert api.game(shared["game"]["id"], version)["version"] == version
    shared.update(old=old["host"], leader=leader["host"])
    shared["figures"].update(accepted=accepted, resynced=resynced, unavailable=len(api.unavailable))
    log(
        f"failover: {leader['name']} promoted (timeline {leader['timeline']}); an intent accepted "
        f"{accepted:.1f}s after the kill ({len(api.unavailable)} 503s, all postgres_unavailable); "
        f"a synchronous standby again after {resynced:.1f}s: {c['replication']}"
    )


def test_the_killed_node_rejoins_as_a_standby(stack: HaStack, shared: dict) -> None:
    """docs/RELIABILITY.md "Failover": a node that comes back rejoins as a standby (pg_rewind):
    three members again, the new leader streaming to both."""
    t = time.monotonic()
    run(["docker", "start", stack.container(shared["old"])])
    c = wait_for("the old leader back as a standby", lambda: healthy_cluster(stack, 3), 180)
    assert c["leader"] == shared["leader"] and c["members"][shared["old"]]["role"] != "leader", c
    shared["figures"]["rejoined"] = time.monotonic() - t
    log(f"{shared['old']} rejoined as a standby {time.monotonic() - t:.1f}s after its start: {c['replication']}")


def test_the_new_primary_archives_and_backs_up_into_the_same_repository(stack: HaStack, shared: dict) -> None:
    """docs/RELIABILITY.md "Point-in-time recovery": after the failover, the new primary's WAL
    (its new timeline) reaches the repository, and a full backup taken on it is listed there."""
    node = shared["leader"]

    def backrest(*args: str) -> str:
        return run(["docker", "exec", stack.container(node), "pgbackrest", "--stanza=quarterdeck", *args], timeout=300)

    t = time.monotonic()
    backrest("check")
    checked = time.monotonic() - t
    backrest("--type=full", "backup")
    info = backrest("info")
    assert re.search(r"full backup: \S+F", info) and "status: ok" in info, info
    log(f"pgbackrest on {node}: check {checked:.1f}s, full backup {time.monotonic() - t - checked:.1f}s")


def test_make_down_ha_keeps_the_volumes_and_down_with_volumes_removes_them(stack: HaStack, shared: dict) -> None:
    """`make down HA=1` removes the containers and keeps the volumes (etcd's, the nodes', the
    pgBackRest repository); `down --volumes` removes them."""
    t = time.monotonic()
    stack.make("down")
    took = time.monotonic() - t
    left = stack.leftovers()
    assert left["containers"] == [] and len(left["volumes"]) == len(stack.volumes), (left, stack.volumes)
    stack.compose("down", "--volumes")
    left = stack.leftovers()
    assert left["containers"] == left["volumes"] == left["networks"] == [], left
    f = shared["figures"]
    log(
        f"make down HA=1: {took:.1f}s, {len(stack.volumes)} volumes kept; down --volumes: none left; "
        f"figures: build {f['build']:.0f}s, up {f['up']:.0f}s, intent accepted {f['accepted']:.1f}s after the kill "
        f"({f['unavailable']} 503s), sync standby again {f['resynced']:.1f}s, rejoin {f['rejoined']:.1f}s"
    )
