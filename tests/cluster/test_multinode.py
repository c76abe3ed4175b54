"""Past one machine, run for real (docs/SCALING.md, "Run here: many nodes"):
a Redis Cluster of three primaries and three replicas for the read side, a
plain Redis for the queue, the machine's PostgreSQL (a fresh database), two
API processes (gunicorn, gevent, as shipped) on different ports and three
workers with three projection shards.

Clients spray intents at both APIs: 30 games of every kind (casual games,
rated games of accounts opened as tables in the lobby, the games of a small
tournament), each intent posted on one API and read back with ``?min_version``
on the other (read-your-writes across nodes), and a board stream and an account
stream open on the other API.  During the run one Redis primary is killed (its
replica takes over) and one worker is killed and restarted.

Afterwards: every accepted intent is in its game's stream, no 5xx but the
documented 503s during the failover, every game and the tournament audit ok,
and a rebuild (``python -m service rebuild``, what ``make rebuild`` runs) gives
read models identical to the live ones."""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests
from redis.cluster import RedisCluster
from support.cluster_servers import Cluster, Processes, wait_until

ROOT = Path(__file__).resolve().parents[2]
GAMES = ("nauticus", "nautilus-industries", "waters-of-nereus")
#: Games of each type: a third casual, two thirds rated tables; the tournament's come on top.
PER_TYPE = 30
#: Intents posted in each game (the tournament's games and two rated Nauticus games are played out).
INTENTS_PER_GAME = 6
#: What a client may be answered with while a primary fails over (docs/SCALING.md).
DOCUMENTED_503 = {"redis_unavailable", "read_model_unavailable"}
ADMIN = "cluster-admin-" + uuid.uuid4().hex[:8]

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def stack(servers: tuple[str, str]):
    database_url = servers[0]
    base = Path(tempfile.mkdtemp(prefix="qd-cluster-"))
    try:
        cluster = Cluster(base / "redis")
    except RuntimeError as exc:
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(str(exc), pytrace=False)
    db = "qd_cluster_" + uuid.uuid4().hex[:10]
    server_url = database_url.rsplit("/", 1)[0]
    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {db}")
    procs = Processes(base / "processes", {})
    try:
        cluster.start()
        env = {
            "DATABASE_URL": f"{server_url}/{db}",
            "REDIS_URL": cluster.queue_url(),
            "QD_QUEUE_REDIS_URL": cluster.queue_url(),
            "QD_READ_REDIS_URL": cluster.url(),
            "QD_PROJECTION_SHARDS": "3",
            "ADMIN_TOKEN": ADMIN,
            "QD_RATE_LIMITS": "off",
            "QD_SWEEP_SECONDS": "1",
            "QD_LOG_LEVEL": "WARNING",
            # A stream whose client left is noticed at its next ping: within 2 s here.
            "QD_STREAM_PING_SECONDS": "2",
        }
        procs.env.update(env)
        procs.migrate()
        urls = [procs.start_api(), procs.start_api()]
        for _ in range(3):
            procs.start_worker()
        yield {"cluster": cluster, "procs": procs, "urls": urls, "env": procs.env}
    except BaseException:
        print(procs.logs()[-20000:])
        raise
    finally:
        with contextlib.suppress(Exception):
            procs.stop()
        cluster.stop()
        with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        shutil.rmtree(base, ignore_errors=True)


class Clients:
    """HTTP calls to both APIs, each answer's status recorded (with its time and
    code); a documented 503 is retried, with the same Idempotency-Key for intents."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.local = threading.local()
        self.lock = threading.Lock()
        self.statuses: Counter[int] = Counter()
        self.unavailable: list[tuple[float, str]] = []
        self.errors: list[str] = []
        self.accepted: list[tuple[str, dict[str, Any]]] = []
        self.intents = 0
        self.resets = 0

    def session(self) -> requests.Session:
        if not hasattr(self.local, "s"):
            self.local.s = requests.Session()
        return self.local.s

    def call(self, node: int, method: str, path: str, token: str | None = None, **kw: Any) -> requests.Response:
        headers = dict(kw.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {token}"
        for _ in range(200):
            try:
                resp = self.session().request(method, self.urls[node] + path, headers=headers, timeout=30, **kw)
            except requests.ConnectionError:
                # A kept-alive connection the server closed (gunicorn's keepalive, 5 s) as
                # it was reused: sent again (an intent with its Idempotency-Key).  That no
                # API worker died is checked from gunicorn's log.
                with self.lock:
                    self.resets += 1
                self.local.s = requests.Session()
                time.sleep(0.1)
                continue
            with self.lock:
                self.statuses[resp.status_code] += 1
            if resp.status_code == 503:
                code = resp.json().get("error", {}).get("code", "")
                with self.lock:
                    self.unavailable.append((time.monotonic(), code))
                time.sleep(0.2)
                continue
            if resp.status_code >= 500:
                with self.lock:
                    self.errors.append(f"{method} {path} on node {node}: {resp.status_code} {resp.text[:300]}")
            return resp
        raise AssertionError(f"{method} {path}: 503 for 40 s")


def _json(resp: requests.Response, what: str) -> dict[str, Any]:
    assert resp.status_code == 200, f"{what}: {resp.status_code} {resp.text[:300]}"
    return resp.json()


def _play(clients: Clients, gid: str, keys: dict[str, str], chooser: random.Random, intents: int | None) -> None:
    """Post ``intents`` intents (None: to the end), each on one node, then read it
    back with ``?min_version`` on the other node, which must wait for it."""
    posted, version = 0, 0
    while intents is None or posted < intents:
        node = chooser.randrange(2)
        game = _json(clients.call(node, "GET", f"/v1/games/{gid}?min_version={version}"), f"game {gid} on {node}")
        assert game["version"] >= version, (gid, game["version"], version)
        if game["status"] == "finished":
            return
        seat = chooser.choice(game["to_act"])
        token = keys[game["players"][seat]] if game["players"][seat] in keys else keys[str(seat)]
        legal = _json(clients.call(node, "GET", f"/v1/games/{gid}/legal?min_version={version}", token), "legal")
        intents_now = [i for i in legal["intents"] if i["type"] != "resign"] or legal["intents"]
        body = {"intent": chooser.choice(intents_now), "expected_version": legal["version"]}
        headers = {"Idempotency-Key": f"{gid}-{legal['version']}-{seat}"}
        resp = clients.call(node, "POST", f"/v1/games/{gid}/intents", token, json=body, headers=headers)
        if resp.status_code == 409:  # another seat of a simultaneous choice moved first
            continue
        assert resp.status_code == 201, (gid, resp.status_code, resp.text[:300])
        answer = resp.json()
        with clients.lock:
            clients.accepted.append((gid, answer))
            clients.intents += 1
        posted += 1
        version = answer["version"]
        other = _json(clients.call(1 - node, "GET", f"/v1/games/{gid}?min_version={version}", token), "read back")
        assert other["version"] >= version, f"node {1 - node} answered {other['version']} < {version} for {gid}"


def _account(clients: Clients, node: int, handle: str) -> str:
    resp = clients.call(node, "POST", "/v1/accounts", ADMIN, json={"handle": handle})
    assert resp.status_code == 201, resp.text
    return resp.json()["key"]


def _follow(
    clients: Clients, node: int, path: str, token: str | None, seen: list[dict[str, Any]], stop: threading.Event
) -> None:
    """A stream on ``node`` kept open (reconnected after an end) until ``stop``."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    while not stop.is_set():
        try:
            with requests.get(clients.urls[node] + path, headers=headers, stream=True, timeout=(5, 1)) as resp:
                if resp.status_code != 200:
                    time.sleep(0.2)
                    continue
                lines = resp.iter_lines()
                while not stop.is_set():
                    try:
                        line = next(lines)
                    except StopIteration:
                        break
                    if line:
                        seen.append(json.loads(line))
        except requests.exceptions.ConnectionError as exc:
            # A read timeout (1 s with nothing new) lets the loop look at ``stop``;
            # the stream is opened again, starting with the whole board.
            if "timed out" not in str(exc).lower():
                time.sleep(0.2)
        except requests.RequestException:
            time.sleep(0.2)


def _snapshot(url: str) -> dict[str, Any]:
    """Every read-model key of the cluster (all primaries) with its value."""
    r = RedisCluster.from_url(url.replace("/0?", "?"))
    out: dict[str, Any] = {}
    try:
        for raw in r.scan_iter(count=1000):
            key = raw.decode()
            if not key.startswith(("g:{", "games:", "{games:", "lb:{", "t:{")):
                continue  # rate limits, stream leases, cursors of the live consumers
            kind = r.type(key).decode()
            if kind == "hash":
                out[key] = r.hgetall(key)
            elif kind == "zset":
                out[key] = r.zrange(key, 0, -1, withscores=True)
            elif kind == "list":
                out[key] = r.lrange(key, 0, -1)
            else:
                out[key] = r.get(key)
    finally:
        r.close()
    return out


def test_two_apis_three_workers_on_a_redis_cluster_survive_a_failover(stack):
    try:
        _run(stack)
    except BaseException:
        print(stack["procs"].logs()[-30000:])
        raise


def _run(stack: dict[str, Any]) -> None:
    cluster: Cluster = stack["cluster"]
    procs: Processes = stack["procs"]
    clients = Clients(stack["urls"])
    chooser = random.Random(36)
    tag = uuid.uuid4().hex[:6]

    # Accounts, the tables of the lobby (rated), casual games and a small tournament.
    handles = [f"p{tag}{i:02d}" for i in range(8)]
    keys = {h: _account(clients, i % 2, h) for i, h in enumerate(handles)}
    games: list[tuple[str, dict[str, str], int | None]] = []
    for kind in GAMES:
        for i in range(PER_TYPE):
            node = i % 2
            if i % 3 == 0:
                made = clients.call(node, "POST", "/v1/games", json={"game": kind, "players": ["ann", "bob"]})
                assert made.status_code == 201, made.text
                body = made.json()
                games.append((body["id"], {str(s["seat"]): s["token"] for s in body["seats"]}, INTENTS_PER_GAME))
                continue
            host, guest = chooser.sample(handles, 2)
            table = clients.call(node, "POST", "/v1/tables", keys[host], json={"game": kind, "seats": 2, "rated": True})
            assert table.status_code == 201, table.text
            joined = clients.call(1 - node, "POST", f"/v1/tables/{table.json()['id']}/join", keys[guest])
            assert joined.status_code in (200, 201), joined.text
            whole = kind == "nauticus" and i in (1, 2)  # played out: the leaderboards move
            games.append((joined.json()["game_id"], keys, None if whole else INTENTS_PER_GAME))
    org = clients.call(0, "POST", "/v1/organisers", ADMIN, json={"handle": "org" + tag}).json()["key"]
    terms = {"name": "Cluster Cup", "game": "nauticus", "table_size": 2, "format": "swiss", "rated": True}
    tournament = clients.call(1, "POST", "/v1/tournaments", org, json=terms | {"rounds": 1, "clock": None})
    assert tournament.status_code == 201, tournament.text
    tid = tournament.json()["id"]
    for h in handles[:4]:
        assert clients.call(0, "POST", f"/v1/tournaments/{tid}/players", keys[h], json={}).status_code in (200, 201)
    assert clients.call(1, "POST", f"/v1/tournaments/{tid}/start", org).status_code in (200, 201)

    def paired() -> bool:
        tables = clients.call(0, "GET", f"/v1/tournaments/{tid}/rounds/1").json().get("tables", [])
        return len(tables) == 2 and all(t.get("game_id") for t in tables)

    wait_until(paired, 60, "the tournament's first round")
    for table in clients.call(0, "GET", f"/v1/tournaments/{tid}/rounds/1").json()["tables"]:
        games.append((table["game_id"], keys, None))

    # Streams on the other node than the one playing: a board stream and an account's news.
    stop = threading.Event()
    boards: list[dict[str, Any]] = []
    news: list[dict[str, Any]] = []
    whole_game = next(gid for gid, _, n in games if n is None)
    followers = [
        threading.Thread(target=_follow, args=(clients, 1, f"/v1/games/{whole_game}/stream", None, boards, stop)),
        threading.Thread(target=_follow, args=(clients, 0, "/v1/account/stream", keys[handles[0]], news, stop)),
    ]
    for t in followers:
        t.start()

    failures: list[BaseException] = []
    todo = list(games)
    chooser.shuffle(todo)
    todo_lock = threading.Lock()

    def player(seed: int) -> None:
        mine = random.Random(seed)
        while True:
            with todo_lock:
                if not todo:
                    return
                gid, game_keys, n = todo.pop()
            try:
                _play(clients, gid, game_keys, mine, n)
            except BaseException as exc:
                failures.append(exc)
                return

    started = time.monotonic()
    players = [threading.Thread(target=player, args=(seed,)) for seed in range(6)]
    for t in players:
        t.start()

    # A primary dies (not the node of the URL, which new processes discover from);
    # its replica takes over.
    time.sleep(4)
    victim = next(n for n in cluster.primaries() if n is not cluster.nodes[0])
    killed_at = time.monotonic()
    victim.kill()
    wait_until(lambda: len(cluster.primaries()) == 3 and cluster.healthy(), 60, "the replica to take over")
    failover = time.monotonic() - killed_at

    # A worker dies mid-drain and another takes its place.
    time.sleep(2)
    procs.kill_worker(procs.workers[1])
    time.sleep(1)
    procs.start_worker()

    for t in players:
        t.join(600)
    sprayed = time.monotonic() - started
    stop.set()
    for t in followers:
        t.join(30)
    assert not failures, failures[0]

    # No waiter and no stream is left: no API process is subscribed to any game's
    # channel (each leaves its channels at its next safety re-read), so an
    # announcement reaches no process (docs/SCALING.md, "Subscriptions per game").
    def subscribed() -> list[Any]:
        found = []
        for node in cluster.nodes:
            if node.alive:
                with node.client() as r:
                    found += r.execute_command("PUBSUB", "SHARDCHANNELS")
                    found += [n for n in [r.execute_command("PUBSUB", "NUMPAT")] if n]
        return found

    with contextlib.suppress(TimeoutError):
        wait_until(lambda: not subscribed(), 40, "the APIs to leave every channel")
    assert not subscribed(), subscribed()[:10]
    assert not clients.errors, clients.errors[:5]
    booted = procs.logs(tail=False).count("Booting worker")
    assert booted == 4, f"{booted} gunicorn workers booted for 2 APIs of 2: one died"
    assert all(code in DOCUMENTED_503 for _, code in clients.unavailable), clients.unavailable
    late = [at - killed_at for at, _ in clients.unavailable if not -1 < at - killed_at < failover + 15]
    assert not late, f"503s outside the failover window: {late[:5]}"

    # No accepted intent lost: each answer's events are in the game's stream.
    streams: dict[str, dict[int, str]] = {}
    for gid, answer in clients.accepted:
        if gid not in streams:
            lines = clients.call(0, "GET", f"/v1/games/{gid}/events?limit=5000", ADMIN).text.splitlines()
            streams[gid] = {e["seq"]: e["type"] for e in map(json.loads, lines)}
        for event in answer["events"]:
            assert streams[gid].get(event["seq"]) == event["type"], (gid, event["seq"])

    # Every game audits ok (read on both nodes), and so does the tournament.
    for i, (gid, _, _) in enumerate(games):
        report = _json(clients.call(i % 2, "GET", f"/v1/games/{gid}/audit", ADMIN), f"audit of {gid}")
        assert report["ok"], (gid, report)
    wait_until(lambda: clients.call(1, "GET", f"/v1/tournaments/{tid}").json()["status"] == "finished", 60, "the cup")
    assert _json(clients.call(1, "GET", f"/v1/tournaments/{tid}/audit", ADMIN), "the cup's audit")["ok"]

    # The streams on the other node heard the game and the account's news.
    versions = [line["version"] for line in boards if line.get("type") == "board"]
    assert versions and versions == sorted(versions) and boards[-1]["type"] in ("board", "end")
    assert any(line.get("type") in ("your_turn", "table_started", "game_finished") for line in news)

    # Quiet: every worker has drained; then a rebuild gives the same read models.
    wait_until(lambda: _caught_up(clients, games), 60, "the read models to catch up")
    time.sleep(3)  # a last sweep and the global projections
    for proc in list(procs.workers):
        procs.kill_worker(proc)  # caught up: nothing is lost, and the rebuild is what is compared
    live = _snapshot(cluster.url())
    rebuild = subprocess.run(
        [sys.executable, "-m", "service", "rebuild"], cwd=ROOT, env=stack["env"], capture_output=True, timeout=300
    )
    assert rebuild.returncode == 0, rebuild.stderr.decode()[-2000:]
    rebuilt = _snapshot(cluster.url())
    assert sorted(live) == sorted(rebuilt)
    different = [k for k in live if live[k] != rebuilt[k]]
    assert not different, different[:10]

    rate = clients.intents / sprayed
    print(
        f"\nmulti-node: {clients.intents} intents in {sprayed:.1f} s ({rate:.0f}/s across 2 APIs), "
        f"{len(games)} games, failover {failover:.1f} s, 503s {len(clients.unavailable)} "
        f"({Counter(code for _, code in clients.unavailable)}), statuses {dict(clients.statuses)}, "
        f"{clients.resets} kept-alive connections reset, "
        f"{len(live)} keys identical after rebuild"
    )


def _caught_up(clients: Clients, games: list[tuple[str, dict[str, str], int | None]]) -> bool:
    for gid, _, _ in games:
        head = clients.call(0, "GET", f"/v1/games/{gid}/events?limit=5000", ADMIN).text.count("\n")
        if clients.call(1, "GET", f"/v1/games/{gid}").json()["version"] < head:
            return False
    return True
