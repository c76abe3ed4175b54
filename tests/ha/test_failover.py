"""The event store survives its machine (docs/RELIABILITY.md, "Failover"): PostgreSQL
under Patroni, three nodes over three etcd members, synchronous replication with
one synchronous standby required; two APIs (gunicorn, as shipped) and a worker on
the multi-host ``DATABASE_URL``; a private Redis.

Sixteen clients play games of every kind (casual games and rated tables, which end
by resignation so that the leaderboards move all along) with an Idempotency-Key on
every intent, and a two-round tournament is played meanwhile (its games end by
resignation too).  The primary is
killed with SIGKILL (Patroni and its PostgreSQL, as a machine that dies) mid-load;
its synchronous standby is promoted; the dead node comes back as a standby; later
the new primary is killed too.

Checked: every intent answered 201 is in its stream afterwards (none lost), no 500,
every 503 carries Retry-After, ``/readyz`` says 503 while no primary answers, the
transaction ids of the promoted primary continue above every one it replayed (the
global feed's order), every game and the tournament audit ok, and the read models
equal a rebuild's.  Printed: the pause of each failover (first failed write to the
first accepted one after it), the 503s, the retried intents that had committed."""

from __future__ import annotations

import contextlib
import json
import os
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
import redis
import requests
from support.cluster_servers import Processes, wait_until
from support.ha_servers import Node, PatroniCluster
from support.servers import RedisServer

ROOT = Path(__file__).resolve().parents[2]
GAMES = ("nauticus", "nautilus-industries", "waters-of-nereus")
CLIENTS = 16
ADMIN = "ha-admin-" + uuid.uuid4().hex[:8]
DB = "quarterdeck"
#: Seconds of load before the first kill, between the cluster's recovery and the second
#: kill, and after the second failover.
BEFORE, BETWEEN, AFTER = 5, 5, 5

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def ha():
    base = Path(tempfile.mkdtemp(prefix="qd-ha-"))
    os.chmod(base, 0o755)  # the postgres OS user must reach its nodes' folders
    try:
        cluster = PatroniCluster(base / "pg")
    except RuntimeError as exc:
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(str(exc), pytrace=False)
    redis_server = RedisServer(base / "redis")
    procs = Processes(base / "processes", {})
    try:
        cluster.start()
        redis_server.start()
        procs.env.update(
            {
                "DATABASE_URL": cluster.url(DB),
                "REDIS_URL": redis_server.url(),
                "ADMIN_TOKEN": ADMIN,
                "QD_RATE_LIMITS": "off",
                "QD_SWEEP_SECONDS": "1",
                "QD_LOG_LEVEL": "WARNING",
                # A request waits this long for a connection to the primary, then 503.
                "QD_POOL_TIMEOUT": "2",
            }
        )
        procs.migrate()
        urls = [procs.start_api(), procs.start_api()]
        procs.start_worker()
        yield {"cluster": cluster, "procs": procs, "urls": urls, "env": procs.env, "redis": redis_server}
    except BaseException:
        print(procs.logs()[-20000:])
        print(cluster.logs()[-8000:])
        raise
    finally:
        with contextlib.suppress(Exception):
            procs.stop()
        with contextlib.suppress(Exception):
            redis_server.kill()
        cluster.stop()
        shutil.rmtree(base, ignore_errors=True)


class Clients:
    """HTTP calls to both APIs, every answer recorded.  A 503 is retried after its
    Retry-After (an intent with the same Idempotency-Key and body)."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.local = threading.local()
        self.lock = threading.Lock()
        self.statuses: Counter[int] = Counter()
        #: (time, method, path, code, Retry-After) of every 503.
        self.unavailable: list[tuple[float, str, str, str, str | None]] = []
        self.errors: list[str] = []
        #: (sent, answered, game, answer) of every 201 to an intent: when its request left and
        #: when its answer came (an answer computed before a kill may be read just after it).
        self.accepted: list[tuple[float, float, str, dict[str, Any]]] = []
        #: Intents answered 503 and then, with the same key, 201: replayed (it had
        #: committed) or decided anew.
        self.retried: Counter[str] = Counter()

    def session(self) -> requests.Session:
        if not hasattr(self.local, "s"):
            self.local.s = requests.Session()
        return self.local.s

    def call(self, node: int, method: str, path: str, token: str | None = None, **kw: Any) -> requests.Response:
        headers = dict(kw.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {token}"
        failed = False
        for _ in range(300):
            self.local.sent = time.monotonic()
            try:
                resp = self.session().request(method, self.urls[node] + path, headers=headers, timeout=30, **kw)
            except requests.ConnectionError:
                self.local.s = requests.Session()  # a kept-alive connection closed by the server
                time.sleep(0.1)
                continue
            with self.lock:
                self.statuses[resp.status_code] += 1
            if resp.status_code == 503:
                code = resp.json().get("error", {}).get("code", "")
                with self.lock:
                    self.unavailable.append((time.monotonic(), method, path, code, resp.headers.get("Retry-After")))
                failed = True
                time.sleep(0.2)
                continue
            if resp.status_code >= 500:
                with self.lock:
                    self.errors.append(f"{method} {path} on node {node}: {resp.status_code} {resp.text[:300]}")
            if failed and method == "POST" and path.endswith("/intents") and resp.status_code == 201:
                with self.lock:
                    self.retried["replayed" if resp.json().get("replayed") else "decided anew"] += 1
            return resp
        raise AssertionError(f"{method} {path}: 503 for a minute")


def _json(resp: requests.Response, what: str) -> dict[str, Any]:
    assert resp.status_code == 200, f"{what}: {resp.status_code} {resp.text[:300]}"
    return resp.json()


class Game:
    """A game a client plays: its seats' keys, and after how many decisions a rated one resigns."""

    def __init__(self, gid: str, keys: dict[str, str], resign_after: int | None) -> None:
        self.gid, self.keys, self.resign_after = gid, keys, resign_after
        self.version, self.posted, self.finished = 0, 0, False


def _step(clients: Clients, game: Game, chooser: random.Random) -> None:
    """One intent of ``game``, posted on one node, read back with ``?min_version`` on the other."""
    node = chooser.randrange(2)
    gid = game.gid
    state = _json(clients.call(node, "GET", f"/v1/games/{gid}?min_version={game.version}"), f"game {gid}")
    assert state["version"] >= game.version, (gid, state["version"], game.version)
    if state["status"] == "finished":
        game.finished = True
        return
    seat = chooser.choice(state["to_act"])
    player = state["players"][seat]
    token = game.keys[player] if player in game.keys else game.keys[str(seat)]
    legal = _json(clients.call(node, "GET", f"/v1/games/{gid}/legal?min_version={game.version}", token), "legal")
    if game.resign_after is not None and game.posted >= game.resign_after:
        intent = {"type": "resign"}
    else:
        intent = chooser.choice([i for i in legal["intents"] if i["type"] != "resign"] or legal["intents"])
    body = {"intent": intent, "expected_version": legal["version"]}
    headers = {"Idempotency-Key": f"{gid}-{legal['version']}-{seat}"}
    resp = clients.call(node, "POST", f"/v1/games/{gid}/intents", token, json=body, headers=headers)
    if resp.status_code == 409:  # another seat of a simultaneous choice moved first
        return
    assert resp.status_code == 201, (gid, resp.status_code, resp.text[:300])
    answer = resp.json()
    with clients.lock:
        clients.accepted.append((clients.local.sent, time.monotonic(), gid, answer))
    game.posted += 1
    game.version = answer["version"]
    other = _json(clients.call(1 - node, "GET", f"/v1/games/{gid}?min_version={game.version}", token), "read back")
    assert other["version"] >= game.version, (gid, other["version"], game.version)


def _account(clients: Clients, node: int, handle: str) -> str:
    resp = clients.call(node, "POST", "/v1/accounts", ADMIN, json={"handle": handle})
    assert resp.status_code == 201, resp.text
    return resp.json()["key"]


def _snapshot(client: redis.Redis) -> dict[str, Any]:
    """Every read-model key with its value (not rate limits, leases or live cursors)."""
    out: dict[str, Any] = {}
    for raw in client.scan_iter(count=1000):
        key = raw.decode()
        if not key.startswith(("g:{", "games:", "{games:", "lb:{", "t:{")):
            continue
        kind = client.type(key).decode()
        if kind == "hash":
            out[key] = client.hgetall(key)
        elif kind == "zset":
            out[key] = client.zrange(key, 0, -1, withscores=True)
        elif kind == "list":
            out[key] = client.lrange(key, 0, -1)
        else:
            out[key] = client.get(key)
    return out


def _xids(node: Node) -> tuple[int, int]:
    """On ``node`` (the primary): the highest transaction id of a stored event, and the next one."""
    url = f"postgresql://postgres@127.0.0.1:{node.pg_port}/{DB}"
    with psycopg.connect(url, connect_timeout=5, autocommit=True) as conn:
        top = conn.execute("SELECT coalesce(max(tx_id)::text, '0') FROM events").fetchone()[0]
        with conn.transaction():
            nxt = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
    return int(top), int(nxt)


def test_the_service_rides_two_failovers_of_its_primary(ha):
    try:
        _run(ha)
    except BaseException:
        print(ha["procs"].logs()[-30000:])
        print(ha["cluster"].logs()[-6000:])
        raise


def _run(ha: dict[str, Any]) -> None:
    cluster: PatroniCluster = ha["cluster"]
    clients = Clients(ha["urls"])
    begun = time.monotonic()
    chooser = random.Random(48)
    tag = uuid.uuid4().hex[:6]

    # Accounts; each client gets casual games and rated tables of every kind.
    handles = [f"p{tag}{i:02d}" for i in range(12)]
    keys = {h: _account(clients, i % 2, h) for i, h in enumerate(handles)}
    mine: list[list[Game]] = [[] for _ in range(CLIENTS)]
    for c in range(CLIENTS):
        for k, kind in enumerate(GAMES):
            node = (c + k) % 2
            if (c + k) % 2 == 0:
                made = clients.call(node, "POST", "/v1/games", json={"game": kind, "players": ["ann", "bob"]})
                assert made.status_code == 201, made.text
                body = made.json()
                mine[c].append(Game(body["id"], {str(s["seat"]): s["token"] for s in body["seats"]}, None))
            host, guest = chooser.sample(handles, 2)
            table = clients.call(node, "POST", "/v1/tables", keys[host], json={"game": kind, "seats": 2, "rated": True})
            assert table.status_code == 201, table.text
            joined = clients.call(1 - node, "POST", f"/v1/tables/{table.json()['id']}/join", keys[guest])
            assert joined.status_code in (200, 201), joined.text
            mine[c].append(Game(joined.json()["game_id"], keys, chooser.randrange(6, 30)))
    org = clients.call(0, "POST", "/v1/organisers", ADMIN, json={"handle": "org" + tag}).json()["key"]
    terms = {"name": "HA Cup", "game": "nauticus", "table_size": 2, "format": "swiss", "rated": True}
    made = clients.call(1, "POST", "/v1/tournaments", org, json=terms | {"rounds": 2, "clock": None})
    assert made.status_code == 201, made.text
    tid = made.json()["id"]
    for h in handles[:4]:
        assert clients.call(0, "POST", f"/v1/tournaments/{tid}/players", keys[h], json={}).status_code in (200, 201)
    assert clients.call(1, "POST", f"/v1/tournaments/{tid}/start", org).status_code in (200, 201)
    all_games = [g for games in mine for g in games]

    stop = threading.Event()
    failures: list[BaseException] = []

    def player(c: int) -> None:
        rng = random.Random(c)
        games = mine[c]
        try:
            while not stop.is_set() and not all(g.finished for g in games):
                _step(clients, rng.choice([g for g in games if not g.finished]), rng)
        except BaseException as exc:
            failures.append(exc)

    def tournament_player() -> None:
        """Plays the cup's games, round after round, until it finishes."""
        rng = random.Random(99)
        seen: set[str] = set()
        try:
            while True:
                cup = clients.call(0, "GET", f"/v1/tournaments/{tid}").json()
                if cup.get("status") == "finished":
                    return
                rounds = clients.call(0, "GET", f"/v1/tournaments/{tid}/rounds/{cup.get('round') or 1}").json()
                # Each seat decides, then one resigns: the round ends soon, the next is paired.
                tables = [t for t in rounds.get("tables", []) if t.get("game_id")]
                todo = [Game(t["game_id"], keys, rng.randrange(4, 10)) for t in tables]
                todo = [g for g in todo if g.gid not in seen]
                if not todo:
                    time.sleep(0.3)
                    continue
                for g in todo:
                    seen.add(g.gid)
                    all_games.append(g)
                    while not g.finished:
                        _step(clients, g, rng)
        except BaseException as exc:
            failures.append(exc)

    readyz: list[tuple[float, int, str]] = []

    def probe() -> None:
        while not stop.is_set():
            with contextlib.suppress(requests.RequestException, ValueError):
                resp = requests.get(ha["urls"][0] + "/readyz", timeout=10)
                readyz.append((time.monotonic(), resp.status_code, resp.json()["checks"]["postgres"]))
            time.sleep(0.25)

    threads = [threading.Thread(target=player, args=(c,)) for c in range(CLIENTS)]
    threads += [threading.Thread(target=tournament_player), threading.Thread(target=probe)]
    started = time.monotonic()
    for t in threads:
        t.start()

    kills: list[dict[str, Any]] = []
    try:
        for n in range(2):
            time.sleep(BEFORE if n == 0 else BETWEEN)
            assert not failures, failures[0]
            old = cluster.leader()
            assert old is not None
            sync = cluster.sync_standby()
            top_before, _ = _xids(old)
            doomed = old.pids()
            killed_at = time.monotonic()
            old.kill(doomed)
            new = _wait_writable(cluster, old)
            promoted_at = time.monotonic()
            top_after, next_xid = _xids(new)
            kills.append(
                {
                    "at": killed_at,
                    "promoted_in": promoted_at - killed_at,
                    "old": old.name,
                    "new": new.name,
                    "sync": sync.name if sync else None,
                    "xids": (top_before, top_after, next_xid),
                }
            )
            if n == 0:
                old.start()  # the dead node comes back: it rejoins as a standby
                cluster.wait_healthy(120)
        time.sleep(AFTER)
    finally:
        stop.set()
        for t in threads:
            t.join(300)
    sprayed = time.monotonic() - started
    assert not failures, failures[0]

    # Only the synchronous standby was promoted, and its transaction ids continue
    # above every one it replayed: the global feed's (tx_id, position) order holds.
    for k in kills:
        assert k["new"] == k["sync"], k
        top_before, top_after, next_xid = k["xids"]
        assert next_xid > max(top_before, top_after), k

    assert not clients.errors, clients.errors[:5]
    assert clients.unavailable, "no request was answered 503: the primary's death was not seen"
    assert all(code == "postgres_unavailable" for _, _, _, code, _ in clients.unavailable), clients.unavailable[:5]
    assert all(retry == "1" for *_, retry in clients.unavailable), "a 503 without Retry-After"
    log = ha["procs"].logs(tail=False)
    assert "unhandled error" not in log, log[log.index("unhandled error") - 200 :][:3000]

    # The pause of each failover: its first failed write to the first write accepted after it.
    # And the gap writes saw: from the last write answered before the kill to the first one
    # sent after it (clients waiting on reads meanwhile may meet their first failed write late).
    pauses, gaps = [], []
    for k in kills:
        failed = [at for at, method, *_ in clients.unavailable if method == "POST" and at >= k["at"]]
        assert failed, f"no write failed after the kill of {k['old']}"
        first_failed = min(failed)
        later = [done for sent, done, _, _ in clients.accepted if sent > first_failed]
        assert later, "no write accepted after the failover"
        pauses.append(min(later) - first_failed)
        before = [done for _, done, _, _ in clients.accepted if done < k["at"]]
        after = [done for sent, done, _, _ in clients.accepted if sent > k["at"]]
        gaps.append(min(after) - max(before))
        # /readyz said so while no primary answered.
        down = [s for at, s, _ in readyz if k["at"] <= at <= k["at"] + k["promoted_in"] + 3 and s == 503]
        assert down, f"/readyz never answered 503 during the failover from {k['old']}"

    # No acknowledged intent lost: each 201's events are in the game's stream.
    streams: dict[str, dict[int, str]] = {}
    for gid in {gid for _, _, gid, _ in clients.accepted}:
        if gid not in streams:
            lines = clients.call(0, "GET", f"/v1/games/{gid}/events?limit=5000", ADMIN).text.splitlines()
            streams[gid] = {e["seq"]: e["type"] for e in map(json.loads, lines)}
    lost = [
        (gid, e["seq"]) for _, _, gid, answer in clients.accepted for e in answer["events"]
        if streams[gid].get(e["seq"]) != e["type"]
    ]  # fmt: skip

    # Every game audits ok; the tournament finished and audits ok.
    for i, g in enumerate(all_games):
        report = _json(clients.call(i % 2, "GET", f"/v1/games/{g.gid}/audit", ADMIN), f"audit of {g.gid}")
        assert report["ok"], (g.gid, report)
    cup = clients.call(1, "GET", f"/v1/tournaments/{tid}").json()
    assert cup["status"] == "finished", cup
    assert _json(clients.call(1, "GET", f"/v1/tournaments/{tid}/audit", ADMIN), "the cup's audit")["ok"]

    # Quiet: the worker has drained; a rebuild gives the same read models.
    wait_until(lambda: _caught_up(clients, all_games), 60, "the read models to catch up")
    time.sleep(3)  # a last sweep and the global projections
    for proc in list(ha["procs"].workers):
        ha["procs"].kill_worker(proc)
    client = redis.Redis.from_url(ha["redis"].url())
    live = _snapshot(client)
    rebuild = subprocess.run(
        [sys.executable, "-m", "service", "rebuild"], cwd=ROOT, env=ha["env"], capture_output=True, timeout=300
    )
    assert rebuild.returncode == 0, rebuild.stderr.decode()[-2000:]
    rebuilt = _snapshot(client)
    finished = sum(g.finished for g in all_games)
    print(
        f"\nHA failover: {len(clients.accepted)} intents accepted in {sprayed:.1f} s by {CLIENTS} clients over "
        f"{len(all_games)} games ({finished} finished) and a 2-round cup; "
        + "; ".join(
            f"kill {i + 1}: {k['old']} -> {k['new']} writable in {k['promoted_in']:.1f} s, "
            f"pause {p:.1f} s (first failed write to the next accepted), writes stopped {g:.1f} s, "
            f"xids {k['xids'][0]} before, {k['xids'][2]} next on the new primary"
            for i, (k, p, g) in enumerate(zip(kills, pauses, gaps, strict=True))
        )
        + f"; 503s {len(clients.unavailable)} (writes {sum(1 for u in clients.unavailable if u[1] == 'POST')}, "
        f"before the first kill {sum(1 for u in clients.unavailable if u[0] < kills[0]['at'])}), "
        f"retried intents {dict(clients.retried)}, lost {len(lost)}, statuses {dict(clients.statuses)}, "
        f"readyz 503s {sum(1 for _, s, _ in readyz if s == 503)}, {len(live)} read-model keys "
        f"({sum(k.startswith('lb:') for k in live)} of leaderboards); "
        f"games made {started - begun:.0f} s, load {sprayed:.0f} s, checks {time.monotonic() - started - sprayed:.0f} s"
    )
    assert not lost, f"{len(lost)} acknowledged intents lost: {lost[:5]}"
    assert sorted(live) == sorted(rebuilt)
    different = [k for k in live if live[k] != rebuilt[k]]
    assert not different, different[:10]
    assert any(k.startswith("lb:") for k in live), "no leaderboard moved"


def _wait_writable(cluster: PatroniCluster, old: Node) -> Node:
    """Until a node other than ``old`` leads and takes writes."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        leader = cluster.leader()
        if leader is not None and leader is not old and cluster.writable(leader):
            return leader
        time.sleep(0.2)
    raise TimeoutError(f"no new primary after the kill of {old.name}:\n{cluster.logs()[-4000:]}")


def _caught_up(clients: Clients, games: list[Game]) -> bool:
    for g in games:
        head = clients.call(0, "GET", f"/v1/games/{g.gid}/events?limit=5000", ADMIN).text.count("\n")
        if clients.call(1, "GET", f"/v1/games/{g.gid}").json()["version"] < head:
            return False
    return True
