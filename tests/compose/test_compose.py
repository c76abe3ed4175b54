"""The production shape, run: `make up` on a real Docker engine (README "Operators";
docs/RELIABILITY.md "The production shape, run").

`make up` builds the Dockerfile and starts the real compose.yaml (with compose.test.yaml: local
base images, host networking, free loopback ports) until every healthcheck is green; the
README's rated game is played through it; /readyz, /metrics and pages answer; `make backup`
reads its PostgreSQL; a killed worker is brought back by `restart: unless-stopped` and a
restarted one loses nothing; `make down` keeps the data and `down --volumes` removes the rest.

The tests run in file order on one stack (module fixture).  When no Docker engine answers, they
start a dockerd of their own and stop it after (as root, with `make docker-engine`'s packages);
without one they are skipped with the reason, except under CI (or QD_COMPOSE_TEST=require), where
that fails.
"""

from __future__ import annotations

import gzip
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from support.compose_stack import HERE, Api, Stack, assert_loopback_only, image_ids, log, run

pytestmark = pytest.mark.timeout(1800)

PREFIX = os.environ.get("QD_LOCAL_PREFIX", "qd-local")
#: The rated game is played to its end, or resigned after this many intents (bounds CI time).
MAX_INTENTS = 150


@pytest.fixture(scope="module")
def stack(engine: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    started = time.monotonic()
    log(run([str(HERE / "base_images.sh"), PREFIX]).strip().splitlines()[-1])
    s = Stack(PREFIX)
    s.prepare(tmp_path_factory.mktemp("compose"))
    s.images_before = image_ids()
    log(f"project {s.project}: API 127.0.0.1:{s.api_port}, PostgreSQL :{s.pg_port}, Redis :{s.redis_port}")
    try:
        up = time.monotonic()
        s.make("up")
        s.time_to_green = time.monotonic() - up
        s.image_size = int(run(["docker", "image", "inspect", "--format", "{{.Size}}", s.image]).strip())
        log(
            f"make up: every service healthy {s.time_to_green:.0f}s after `make up` (build included; "
            f"{time.monotonic() - started:.0f}s with the base images); image {s.image_size / 1e6:.0f} MB"
        )
        yield s
    finally:
        s.remove()
        left = s.leftovers()
        log(f"removed: {left}")
        assert not any(left.values()), f"left behind: {left}"


@pytest.fixture(scope="module")
def shared() -> dict:
    """What one test leaves for the next (the tests run in file order)."""
    return {}


def wait_for(what: str, check, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"{what}: not within {timeout}s"
        time.sleep(0.25)


def test_every_service_is_healthy_from_the_dockerfile(stack: Stack) -> None:
    """compose.yaml's four services run their own healthchecks green, on loopback only, with no
    network created (host networking); the API and worker run the image built by `make up`."""
    assert {"postgres", "redis", "api", "worker"} <= set(stack.services)
    for service in stack.services:
        state = stack.state(service)
        assert state["Status"] == "running", (service, state)
        assert (state.get("Health") or {"Status": "healthy"})["Status"] == "healthy", (service, state)
    for service in ("api", "worker"):
        image = run(["docker", "inspect", "--format", "{{.Config.Image}}", stack.container(service)]).strip()
        assert image == stack.image
    assert stack.leftovers()["networks"] == []
    assert_loopback_only(stack.api_port, stack.pg_port, stack.redis_port)
    log(f"healthy: {', '.join(stack.services)}; listening on 127.0.0.1 only; no network created")


def test_the_readmes_rated_game(stack: Stack, shared: dict) -> None:
    """README "A rated game with curl": two accounts, a rated table opened and joined from the
    lobby, the game played with each seat's key to its end (or resigned), the leaderboard."""
    api = Api(stack.url)
    ann = api.call("POST", "/v1/accounts", json={"handle": "ann"}, expect=201)["key"]
    bob = api.call("POST", "/v1/accounts", json={"handle": "bob"}, expect=201)["key"]
    assert api.call("GET", "/v1/account", ann) == {"handle": "ann", "kind": "player"}
    table = api.call("POST", "/v1/tables", ann, json={"game": "nauticus", "seats": 2, "rated": True}, expect=201)["id"]
    lobby = api.call("GET", "/v1/tables?game=nauticus")["tables"]
    assert [(t["id"], t["players"], t["status"], t["rated"]) for t in lobby] == [(table, ["ann"], "open", True)]
    game_id = api.call("POST", f"/v1/tables/{table}/join", bob)["game_id"]
    keys = {"ann": ann, "bob": bob}

    started, version, intents = time.monotonic(), 1, 0
    g = api.game(game_id, version)
    assert sorted(g["players"]) == ["ann", "bob"] and g["rated"] is True
    while g["status"] == "active":
        key = keys[g["players"][g["to_act"][0]]]
        legal = api.call("GET", f"/v1/games/{game_id}/legal?min_version={version}", key)
        choices = [i for i in legal["intents"] if i["type"] != "resign"]
        intent = choices[0] if intents < MAX_INTENTS else {"type": "resign"}
        version = api.call(
            "POST", f"/v1/games/{game_id}/intents", key,
            headers={"Idempotency-Key": f"{game_id}-{version}"},
            json={"intent": intent, "expected_version": legal["version"]}, expect=201,
        )["version"]  # fmt: skip
        intents += 1
        g = api.game(game_id, version)
    assert g["status"] == "finished" and g["rated"] is True
    how = "resigned" if intents > MAX_INTENTS else "played to its end"
    log(f"rated game {game_id}: {intents} intents ({how}) in {time.monotonic() - started:.1f}s, version {version}")

    def board() -> list | None:
        # One rated game each: provisional ratings, on the players' pages, not yet on the
        # leaderboard (docs/LEADERBOARDS.md, "Trust").
        entries = ratings_of(api)
        return (
            entries
            if [(e["player"], e["games"], e["provisional"]) for e in entries]
            == [
                ("ann", 1, True),
                ("bob", 1, True),
            ]
            else None
        )

    entries = wait_for("the leaderboards fold the rated game", board)
    assert api.call("GET", "/v1/leaderboards/nauticus")["entries"] == []
    winner = g["players"][g["result"]["ranking"][0]]
    rating = {e["player"]: e["rating"] for e in entries}
    # Two fresh accounts: neither was established when the game began, so neither rating moves.
    assert set(rating.values()) == {0.0}
    log(f"ratings: {[(e['player'], round(e['rating'], 3), e['games']) for e in entries]} ({api.retried} 429s)")
    shared.update(game_id=game_id, version=version, keys=keys, entries=entries, winner=winner)


def test_readyz_metrics_and_pages(stack: Stack, shared: dict) -> None:
    """docs/API.md "Service" and "Pages, for people", as the compose API serves them."""
    api = Api(stack.url)
    assert api.call("GET", "/readyz") == {"status": "ok", "checks": {"postgres": "ok", "redis": "ok"}}
    r = requests.get(stack.url + "/metrics", timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain")
    assert "# TYPE qd_intents_total counter" in r.text
    r = requests.get(stack.url + "/", timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/html")
    r = requests.get(f"{stack.url}/games/{shared['game_id']}", timeout=10)
    assert r.status_code == 200 and "<svg" in r.text and "ann" in r.text and "bob" in r.text


def test_make_backup_reads_the_compose_postgresql(stack: Stack, shared: dict, tmp_path: Path) -> None:
    """README "Operators": `make backup` against the running stack (docs/RELIABILITY.md "Backups")."""
    out = tmp_path / "compose.qdb.gz"
    env = {**stack.env(), "DATABASE_URL": stack.database_url, "REDIS_URL": stack.redis_url}
    said = run(["make", "backup", f"OUT={out}"], env=env)
    m = re.search(r"wrote \S+: \d+ bytes, (\d+) events, (\d+) games", said)
    assert m and int(m.group(1)) >= shared["version"] and int(m.group(2)) == 1, said
    assert shared["game_id"].encode() in gzip.decompress(out.read_bytes())
    run(["make", "restore", f"FILE={out}", "CHECK=1"], env=env)
    log(f"make backup: {m.group(0)}; make restore CHECK=1: ok")


def test_a_killed_worker_comes_back_and_nothing_is_lost(stack: Stack, shared: dict) -> None:
    """compose.yaml `restart: unless-stopped`: the worker's process killed (SIGKILL, as a crash),
    the engine starts it again; a game created meanwhile is projected once it is back."""
    api = Api(stack.url)
    before = stack.state("worker")
    init = before["Pid"]  # compose.yaml's init: true: the engine's init, whose child is the worker
    children = Path(f"/proc/{init}/task/{init}/children").read_text().split()
    os.kill(int(children[0]) if children else init, signal.SIGKILL)
    made = api.call("POST", "/v1/games", json={"game": "nautilus-industries", "players": ["cat", "dan"]}, expect=201)
    back = stack.wait_healthy("worker", RestartCount=before["RestartCount"] + 1)
    assert back["Pid"] != before["Pid"]
    g = api.game(made["id"], made["version"])
    assert g["status"] == "active"
    shared.update(casual=made, casual_version=made["version"])
    play_one_intent(api, shared)
    assert api.game(shared["game_id"], shared["version"])["status"] == "finished"
    assert ratings_of(api) == shared["entries"]
    killed = children[0] if children else init
    log(f"worker killed (pid {killed}): restarted by the engine (restart {back['RestartCount']}), nothing lost")


def ratings_of(api: Api) -> list[dict]:
    """Ann's and Bob's Nauticus ratings, as their pages show them."""
    return [
        {"player": p} | r
        for p in ("ann", "bob")
        for r in api.call("GET", f"/v1/players/{p}")["ratings"]
        if r["game"] == "nauticus"
    ]


def test_restarting_the_worker_service_loses_nothing(stack: Stack, shared: dict) -> None:
    """`docker compose restart worker`, twice in a row (the second while the worker starts): the
    same container runs again, healthy, and projects.  Each restart stops the worker by its
    SIGTERM, not by a kill when compose.yaml's stop_grace_period (30 s) runs out."""
    api = Api(stack.url)
    before = stack.state("worker")
    took = []
    for _ in range(2):
        started = time.monotonic()
        stack.compose("restart", "worker")
        took.append(time.monotonic() - started)
    after = stack.wait_healthy("worker")
    assert after["StartedAt"] != before["StartedAt"]
    assert max(took) < 20, f"compose restart worker took {took[0]:.0f}s then {took[1]:.0f}s: SIGTERM ignored"
    play_one_intent(api, shared)
    assert ratings_of(api) == shared["entries"]
    log(f"compose restart worker, twice: {took[0]:.1f}s and {took[1]:.1f}s; healthy and projecting")


def play_one_intent(api: Api, shared: dict) -> None:
    """One intent in the casual game by its seat token, then read back through the worker."""
    made, version = shared["casual"], shared["casual_version"]
    version = api.play_first_legal(made, version, f"casual-{version}")
    assert api.game(made["id"], version)["version"] == version
    shared["casual_version"] = version


def test_make_down_then_down_with_volumes_removes_everything(stack: Stack) -> None:
    """`make down` stops and removes the containers and keeps PostgreSQL's volume (the data);
    `down --volumes` removes it; the fixture then removes the image `make up` built."""
    started = time.monotonic()
    stack.make("down")
    took = time.monotonic() - started
    left = stack.leftovers()
    assert left["containers"] == [] and len(left["volumes"]) == 1, left
    stack.compose("down", "--volumes")
    left = stack.leftovers()
    assert left["containers"] == left["volumes"] == left["networks"] == [], left
    log(f"make down: {took:.1f}s, containers gone, pgdata kept; down --volumes: pgdata gone")
