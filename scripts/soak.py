"""Bounded load test ("soak") of Quarterdeck over loopback HTTP.

``SOAK_CLIENTS`` threads (default 32) play ``SOAK_GAMES`` games (default 200) of
the registered engines to the end, two players each, each client following
``GET /legal`` only, like any third-party client.  Afterwards it checks:

* every intent a client saw accepted is in its stream exactly once (its events'
  seqs carry one intent id, found nowhere else, with the intent as posted);
* no stream has a gap and every ``prev_hash`` links to the event before;
* zero 5xx answers;
* every finished game passes its audit (``GET /v1/games/{id}/audit`` when the
  service has it; otherwise ``service.audit.audit_game`` in-process against
  the same PostgreSQL/Redis, and the output says so).

It reports intents/s and p50/p99 latency, and exits non-zero on any failure.

Target: the running service at ``QD_URL`` (with ``ADMIN_TOKEN`` for the events
feed and audit) when given; otherwise it starts its own gunicorn + worker
against ``DATABASE_URL``/``REDIS_URL`` (or ``.devdata/env``) on a free port.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from service.domain import canonical

ROOT = Path(__file__).resolve().parents[1]
#: Attempts for an intent answered 5xx or not answered (same Idempotency-Key each time).
RETRIES = 20


@dataclass
class Config:
    url: str
    admin_token: str | None
    games: int = 200
    clients: int = 32
    seed: int = 1
    database_url: str | None = None
    redis_url: str | None = None
    #: Tolerate 503 answers (retried with the same Idempotency-Key): for fault tests.
    tolerate_503: bool = False
    quiet: bool = False


@dataclass
class Accepted:
    seqs: list[int]
    intent: dict[str, Any]
    replayed: bool


@dataclass
class GameRun:
    game_id: str
    game: str
    final_version: int = 0
    finished: bool = False
    accepted: list[Accepted] = field(default_factory=list)
    error: str | None = None


@dataclass
class Report:
    games: list[GameRun] = field(default_factory=list)
    seconds: float = 0.0
    statuses: Counter = field(default_factory=Counter)
    #: (status, error code) of every answer that is not a success.
    error_codes: Counter = field(default_factory=Counter)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    server_errors: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    audited: int = 0

    @property
    def intents(self) -> int:
        return sum(len(g.accepted) for g in self.games)

    @property
    def intents_per_second(self) -> float:
        return self.intents / self.seconds if self.seconds else 0.0

    def percentile(self, kind: str, p: float) -> float:
        values = sorted(self.latencies.get(kind, []))
        if not values:
            return 0.0
        return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]

    @property
    def ok(self) -> bool:
        return not self.failures and not self.server_errors

    def summary(self) -> str:
        n5xx = sum(v for k, v in self.statuses.items() if k >= 500)
        lines = [
            f"games: {len(self.games)} ({sum(g.finished for g in self.games)} finished), "
            f"intents accepted: {self.intents}, wall time: {self.seconds:.1f}s",
            f"intents/s: {self.intents_per_second:.1f}",
            f"latency POST intent: p50 {self.percentile('intent', 50) * 1000:.1f} ms, "
            f"p99 {self.percentile('intent', 99) * 1000:.1f} ms",
            f"latency all requests: p50 {self.percentile('all', 50) * 1000:.1f} ms, "
            f"p99 {self.percentile('all', 99) * 1000:.1f} ms ({len(self.latencies['all'])} requests)",
            f"status codes: {dict(sorted(self.statuses.items()))}",
            f"error codes: {dict(sorted(self.error_codes.items()))}",
            f"5xx answers: {n5xx}",
            f"finished games audited: {self.audited}",
        ]
        lines += [f"note: {n}" for n in self.notes]
        lines += [f"FAIL: {f}" for f in self.failures[:50]]
        lines += [f"5xx: {e}" for e in self.server_errors[:20]]
        lines.append("SOAK OK" if self.ok else "SOAK FAILED")
        return "\n".join(lines)


def _code(resp: requests.Response) -> str:
    try:
        return str(resp.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return "(no JSON error)"


class Client:
    """A tiny HTTP client that times and counts every request."""

    def __init__(self, cfg: Config, report: Report, lock: threading.Lock):
        self.cfg = cfg
        self.report = report
        self.lock = lock
        self.http = requests.Session()

    def call(self, kind: str, method: str, path: str, token: str | None = None, **kw: Any) -> requests.Response:
        headers = kw.pop("headers", {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        started = time.perf_counter()
        resp = self.http.request(method, self.cfg.url + path, headers=headers, timeout=60, **kw)
        elapsed = time.perf_counter() - started
        with self.lock:
            self.report.statuses[resp.status_code] += 1
            self.report.latencies[kind].append(elapsed)
            self.report.latencies["all"].append(elapsed)
            if resp.status_code >= 400:
                self.report.error_codes[(resp.status_code, _code(resp))] += 1
            if resp.status_code >= 500 and not (self.cfg.tolerate_503 and resp.status_code == 503):
                self.report.server_errors.append(f"{method} {path} -> {resp.status_code} {resp.text[:200]}")
        return resp

    def _json(self, kind: str, method: str, path: str, expect: int, token: str | None = None, **kw: Any) -> Any:
        """A request whose answer must be ``expect``, retried on dropped
        connections and (only in tolerant mode) on 503."""
        for _ in range(RETRIES):
            try:
                resp = self.call(kind, method, path, token, **kw)
            except requests.ConnectionError:
                time.sleep(0.5)
                continue
            if resp.status_code == 503 and self.cfg.tolerate_503:
                time.sleep(0.5)
                continue
            if resp.status_code != expect:
                raise RuntimeError(f"{method} {path} -> {resp.status_code} {resp.text[:300]}")
            return resp.json()
        raise RuntimeError(f"{method} {path}: no answer after {RETRIES} attempts")

    def get_json(self, kind: str, path: str, token: str | None = None) -> dict[str, Any]:
        return self._json(kind, "GET", path, 200, token)

    def create(self, game: str, players: list[str]) -> dict[str, Any]:
        return self._json("create", "POST", "/v1/games", 201, json={"game": game, "players": players})

    def play(self, game: str, rng: random.Random, max_intents: int = 20_000, stop_after: int | None = None) -> GameRun:
        """Create a two-player game and play it to the end (or ``stop_after``
        intents) following ``/legal`` only."""
        created = self.create(game, [f"p{rng.randrange(10**6)}a", f"p{rng.randrange(10**6)}b"])
        gid = created["id"]
        run = GameRun(gid, game)
        tokens = {s["seat"]: s["token"] for s in created["seats"]}
        version = created["version"]
        stale = 0
        while len(run.accepted) < max_intents and (stop_after is None or len(run.accepted) < stop_after):
            view = self.get_json("game", f"/v1/games/{gid}?min_version={version}")
            if view["version"] < version:
                # Read model still behind after the bounded wait: ask again, a while.
                stale += 1
                if stale > 30:
                    raise RuntimeError(f"{gid}: read model stuck at {view['version']} < {version}")
                continue
            stale = 0
            if view["status"] == "finished":
                run.finished = True
                break
            seat = rng.choice(view["to_act"])
            legal = self.get_json("legal", f"/v1/games/{gid}/legal?min_version={version}", tokens[seat])
            if legal["version"] != version or not legal["intents"]:
                raise RuntimeError(f"{gid}: legal at {legal['version']} for seat {seat} is {legal['intents']!r}")
            intent = rng.choice(legal["intents"])
            answer = self.post_intent(gid, tokens[seat], intent, version)
            seqs = [e["seq"] for e in answer["events"]]
            run.accepted.append(Accepted(seqs, intent, bool(answer.get("replayed"))))
            version = answer["version"]
        run.final_version = version
        return run

    def post_intent(self, gid: str, token: str, intent: dict[str, Any], version: int) -> dict[str, Any]:
        key = uuid.uuid4().hex
        body = {"intent": intent, "expected_version": version}
        for _ in range(RETRIES):
            try:
                resp = self.call(
                    "intent", "POST", f"/v1/games/{gid}/intents", token, json=body, headers={"Idempotency-Key": key}
                )
            except requests.ConnectionError:
                time.sleep(0.5)
                continue
            if resp.status_code == 201:
                return resp.json()
            if resp.status_code == 503 and self.cfg.tolerate_503:
                time.sleep(0.5)
                continue
            raise RuntimeError(f"intent {intent} at {version} -> {resp.status_code} {resp.text[:300]}")
        raise RuntimeError(f"intent {intent} at {version}: no 201 after {RETRIES} attempts")


# -- checks -------------------------------------------------------------------
def spec_paths(url: str) -> set[str]:
    return set(requests.get(url + "/openapi.json", timeout=30).json().get("paths", {}))


def engine_names(url: str) -> list[str]:
    spec = requests.get(url + "/openapi.json", timeout=30).json()
    try:
        names = spec["components"]["schemas"]["CreateGameIn"]["properties"]["game"]["enum"]
    except KeyError:
        names = []
    if not names:
        from service.games import registry

        names = registry.names()
    return list(names)


def stream_via_feed(client: Client, gid: str) -> list[dict[str, Any]]:
    """The whole stream, page after page (the feed is paged: ``X-Next-After``)."""
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        resp = client.call("events", "GET", f"/v1/games/{gid}/events", client.cfg.admin_token, params={"after": after})
        if resp.status_code != 200:
            raise RuntimeError(f"events feed of {gid} -> {resp.status_code} {resp.text[:200]}")
        events += [json.loads(line) for line in resp.text.splitlines() if line.strip()]
        following = resp.headers.get("X-Next-After")
        if following is None:
            return events
        after = int(following)


def stream_via_sql(database_url: str, gid: str) -> list[dict[str, Any]]:
    """The stream as the store reads it (digests and prev_hash derived, migration 0009)."""
    import psycopg

    from service.adapters.eventstore import event_columns, rows_to_events

    with psycopg.connect(database_url) as conn:
        rows = conn.execute(f"SELECT {event_columns()} FROM events WHERE game_id = %s ORDER BY seq", (gid,)).fetchall()

    def missing(_gid: str, seq: int) -> dict[str, Any]:
        raise LookupError(f"{gid}: seq {seq} has no meta to inherit")

    return [e.to_json() for e in rows_to_events(rows, missing)]


def check_stream(run: GameRun, events: list[dict[str, Any]]) -> list[str]:
    """Exactly-once of accepted intents, no gap, every link."""
    gid = run.game_id
    problems = []
    seqs = [e["seq"] for e in events]
    if seqs != list(range(1, len(seqs) + 1)):
        problems.append(f"{gid}: seqs are not dense from 1 ({seqs[:5]}... {len(seqs)} events)")
    prev = "0" * 64
    for e in events:
        if e["prev_hash"] != prev:
            problems.append(f"{gid}: seq {e['seq']} prev_hash does not link to seq {e['seq'] - 1}")
            break
        link = canonical.link_hash(
            gid, e["seq"], e["type"], e["schema_version"], e["data_digest"], e["meta_digest"], prev
        )
        if link != e["hash"]:
            problems.append(f"{gid}: seq {e['seq']} hash does not cover its digests and link")
            break
        prev = e["hash"]
    by_seq = {e["seq"]: e for e in events}
    groups: dict[str, list[int]] = defaultdict(list)
    for e in events:
        meta = e.get("meta") or {}
        if meta.get("seat") is not None:
            groups[meta["intent_id"]].append(e["seq"])
    seen_ids = set()
    for a in run.accepted:
        ids = {(by_seq.get(s) or {}).get("meta", {}).get("intent_id") for s in a.seqs}
        if len(ids) != 1 or None in ids:
            problems.append(f"{gid}: accepted intent with seqs {a.seqs} maps to intent ids {ids}")
            continue
        (iid,) = ids
        if iid in seen_ids:
            problems.append(f"{gid}: two accepted intents share intent id {iid}")
        seen_ids.add(iid)
        if sorted(groups[iid]) != sorted(a.seqs):
            problems.append(f"{gid}: intent {iid} is at seqs {groups[iid]}, its answer said {a.seqs}")
        recorded = by_seq[a.seqs[0]]["meta"].get("intent")
        if recorded != a.intent:
            problems.append(f"{gid}: seq {a.seqs[0]} records intent {recorded}, the client posted {a.intent}")
    extra = set(groups) - seen_ids
    if extra:
        problems.append(f"{gid}: {len(extra)} intent(s) in the stream that no client saw accepted")
    if run.final_version and len(seqs) != run.final_version:
        problems.append(f"{gid}: stream has {len(seqs)} events, the last answer said version {run.final_version}")
    return problems


def audit(client: Client, run: GameRun, has_endpoint: bool, local: Any) -> str | None:
    if has_endpoint:
        resp = client.call("audit", "GET", f"/v1/games/{run.game_id}/audit", client.cfg.admin_token)
        if resp.status_code != 200:
            return f"{run.game_id}: audit -> {resp.status_code} {resp.text[:200]}"
        body = resp.json()
    else:
        from service.audit.checks import audit_game

        body = audit_game(local[0], local[1], run.game_id).to_json()
    if not body.get("ok"):
        bad = {k: v for k, v in body.get("checks", {}).items() if not (isinstance(v, dict) and v.get("ok"))}
        return f"{run.game_id}: audit failed: {json.dumps(bad)[:500]}"
    return None


@contextlib.contextmanager
def _local_store(cfg: Config) -> Iterator[Any]:
    if not (cfg.database_url and cfg.redis_url):
        yield None
        return
    from service.bootstrap import bootstrap
    from service.config import Settings

    # The composition root's pieces, on the URLs under test (every other setting at its default).
    components = bootstrap(Settings.from_env({"DATABASE_URL": cfg.database_url, "REDIS_URL": cfg.redis_url}))
    try:
        yield (components.store, components.redis)
    finally:
        components.close()


def verify(cfg: Config, report: Report) -> None:
    client = Client(cfg, report, threading.Lock())
    paths = spec_paths(cfg.url)
    has_feed = "/v1/games/{game_id}/events" in paths and cfg.admin_token
    has_audit = "/v1/games/{game_id}/audit" in paths and cfg.admin_token
    if not has_feed:
        if not cfg.database_url:
            report.failures.append("cannot check streams: no events feed (or no ADMIN_TOKEN) and no DATABASE_URL")
            return
        report.notes.append("streams checked with SQL (GET /v1/games/{id}/events not available)")
    with _local_store(cfg) as local:
        if not has_audit:
            if local is None:
                report.notes.append("finished games NOT audited: no audit endpoint and no DATABASE_URL/REDIS_URL")
            else:
                report.notes.append(
                    "GET /v1/games/{id}/audit not available: audited in-process with service.audit.audit_game"
                )
        for run in report.games:
            if run.error:
                continue
            # The audit compares the read model with a rebuild: let it catch up first.
            client.get_json("game", f"/v1/games/{run.game_id}?min_version={run.final_version}")
            events = stream_via_feed(client, run.game_id) if has_feed else stream_via_sql(cfg.database_url, run.game_id)
            report.failures += check_stream(run, events)
            if run.finished and (has_audit or local is not None):
                problem = audit(client, run, bool(has_audit), local)
                report.audited += 1
                if problem:
                    report.failures.append(problem)


def play_all(cfg: Config, report: Report, engines: list[str], stop_after: int | None = None) -> None:
    lock = threading.Lock()
    queue = list(range(cfg.games))
    progress = {"done": 0}

    def worker(n: int) -> None:
        client = Client(cfg, report, lock)
        while True:
            with lock:
                if not queue:
                    return
                i = queue.pop(0)
            game = engines[i % len(engines)]
            rng = random.Random(cfg.seed * 1_000_003 + i)
            try:
                run = client.play(game, rng, stop_after=stop_after)
            except Exception as exc:
                run = GameRun("?", game, error=f"game #{i} ({game}): {type(exc).__name__}: {exc}")
            with lock:
                report.games.append(run)
                if run.error:
                    report.failures.append(run.error)
                progress["done"] += 1
                done = progress["done"]
            if not cfg.quiet and (done % max(1, cfg.games // 20) == 0 or done == cfg.games):
                rate = report.intents / max(time.monotonic() - started, 1e-9)
                print(f"  {done}/{cfg.games} games, {report.intents} intents, {rate:.0f} intents/s", flush=True)

    started = time.monotonic()
    # Daemon threads: Ctrl-C ends the run rather than waiting for every client.
    threads = [threading.Thread(target=worker, args=(n,), name=f"soak-{n}", daemon=True) for n in range(cfg.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report.seconds = time.monotonic() - started


def run(cfg: Config, stop_after: int | None = None) -> Report:
    """Play, then verify; the report says what was measured and what failed."""
    report = Report()
    engines = engine_names(cfg.url)
    if not cfg.quiet:
        print(f"soak: {cfg.games} games of {', '.join(engines)} by {cfg.clients} clients against {cfg.url}")
    play_all(cfg, report, engines, stop_after)
    verify(cfg, report)
    return report


# -- running our own service ----------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _devdata_env() -> dict[str, str]:
    path = ROOT / ".devdata" / "env"
    out: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            line = line.strip().removeprefix("export ").strip()
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                out[k.strip()] = v.strip().strip("'\"")
    return out


@contextlib.contextmanager
def own_service(database_url: str, redis_url: str, admin_token: str, workers: int = 2) -> Iterator[str]:
    """gunicorn (2 processes x 8 threads) + ``workers`` RQ workers on a private queue."""
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "ADMIN_TOKEN": admin_token,
        "QD_QUEUE": f"qd-soak-{secrets.token_hex(4)}",
        "QD_SWEEP_SECONDS": "1",
        "QD_LOG_LEVEL": os.environ.get("QD_LOG_LEVEL", "WARNING"),
        # A load test measures the service, not its abuse limits (docs/API.md "Rate limits").
        "QD_RATE_LIMITS": os.environ.get("QD_RATE_LIMITS", "off"),
    }
    subprocess.run([sys.executable, "-m", "service", "migrate"], cwd=ROOT, env=env, check=True)
    api_argv = [sys.executable, "-m", "gunicorn", "service.http.wsgi:app", "-k", "gthread", "--threads", "8", "-w", "2"]
    api_argv += ["-b", f"127.0.0.1:{port}", "--log-level", "warning"]
    procs = [subprocess.Popen(api_argv, cwd=ROOT, env=env, start_new_session=True)]
    # Projection workers: one process folds one job at a time, and every
    # client waits for its last intent's projection before the next /legal.
    for _ in range(workers):
        procs.append(subprocess.Popen([sys.executable, "-m", "workers"], cwd=ROOT, env=env, start_new_session=True))
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(requests.RequestException):
                if requests.get(url + "/readyz", timeout=10).status_code == 200:
                    break
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError("the service did not become ready")
            time.sleep(0.2)
        yield url
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=int(os.environ.get("SOAK_GAMES", "200")))
    parser.add_argument("--clients", type=int, default=int(os.environ.get("SOAK_CLIENTS", "32")))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED", "1")))
    parser.add_argument("--workers", type=int, default=int(os.environ.get("SOAK_WORKERS", "2")))
    ns = parser.parse_args(argv)
    env = {**_devdata_env(), **{k: v for k, v in os.environ.items() if v}}
    cfg = Config(
        url=env.get("QD_URL", ""),
        admin_token=env.get("ADMIN_TOKEN"),
        games=ns.games,
        clients=ns.clients,
        seed=ns.seed,
        database_url=env.get("DATABASE_URL"),
        redis_url=env.get("REDIS_URL"),
    )
    if cfg.url:
        report = run(cfg)
    else:
        if not (cfg.database_url and cfg.redis_url):
            print("error: set QD_URL, or DATABASE_URL and REDIS_URL (or start 'make run')", file=sys.stderr)
            return 2
        cfg.admin_token = cfg.admin_token or secrets.token_urlsafe(24)
        with own_service(cfg.database_url, cfg.redis_url, cfg.admin_token, ns.workers) as url:
            cfg.url = url
            report = run(cfg)
    print(report.summary())
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
