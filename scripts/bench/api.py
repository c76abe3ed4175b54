"""Our own paths over HTTP: ``api_intents_16``, the projection lag and the
latency of an intent early and late in a long game."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import redis

from projections import keys, publish
from scripts.bench.load import LoadResult, closed_loop, percentile
from scripts.bench.plan import Created

Progress = Callable[[str], None]


def _intents(games: list[Created], clients: int, on_accept: Callable[[Created, float], None] | None = None):
    """Script factory: client ``n`` posts the next planned intent of its own
    games in turn (one client per game, so no two clients race on a game)."""

    def script(n: int) -> Iterator[tuple[str, Any, str | None]]:
        mine = games[n::clients]
        i = 0
        while mine:
            g = mine[i % len(mine)]
            i += 1
            if g.next_step >= len(g.plan.steps):
                mine.remove(g)
                continue
            step = g.plan.steps[g.next_step]
            body = {"intent": step.intent, "expected_version": g.version}
            status, answer, t1 = yield f"/v1/games/{g.game_id}/intents", body, g.tokens[step.seat]
            if status == 201:
                g.version = answer["version"]
                g.next_step += 1
                if on_accept:
                    on_accept(g, t1)
            else:  # the game diverged from its plan: leave it (counted as an error)
                mine.remove(g)

    return script


def api_intents(url: str, games: list[Created], clients: int, seconds: float) -> LoadResult:
    return closed_loop(url, clients, seconds, _intents(games, clients))


def wait_projected(r: redis.Redis, games: list[Created], timeout: float = 120.0) -> float:
    """Wait until every game's read model shows the version its last accepted
    intent reached (the projection backlog is drained); returns seconds waited."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        with r.pipeline(transaction=False) as pipe:
            for g in games:
                pipe.hget(keys.game(g.game_id), "version")
            seen = pipe.execute()
        if all(v is not None and int(v) >= g.version for g, v in zip(games, seen, strict=True)):
            break
        time.sleep(0.02)
    return time.monotonic() - started


class LagWatcher:
    """Records, per accepted intent, the time from its 201 answer to its
    version being visible in Redis, by listening to what the projection
    announces: ``PUBLISH g:{<id>}:changed <version>`` is queued in the same
    ``MULTI`` that writes the game's new version (projections/publish.py), so
    hearing it is the moment the version became visible.  Listening, not
    polling: polling the pending games' versions every 0.5 ms would cost ~2,000
    round trips a second to the Redis server being measured, and half a
    millisecond of quantisation.  An intent whose version was announced before
    its answer reached its client counts 0."""

    def __init__(self, r: redis.Redis):
        self.r = r
        #: game id -> the highest version announced so far.
        self.heard: dict[str, int] = {}
        #: game id -> [(version awaited, the 201's time)].
        self.pending: dict[str, list[tuple[int, float]]] = {}
        self.lags: list[float] = []
        #: Intents whose announcement never came within 30 s of the end (pub/sub is fire and forget).
        self.lost = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.pubsub = r.pubsub()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def accept(self, g: Created, t1: float) -> None:
        with self.lock:
            if self.heard.get(g.game_id, 0) >= g.version:
                self.lags.append(0.0)
            else:
                self.pending.setdefault(g.game_id, []).append((g.version, t1))

    def _heard(self, game_id: str, version: int, now: float) -> None:
        with self.lock:
            if version > self.heard.get(game_id, 0):
                self.heard[game_id] = version
            waiting = self.pending.pop(game_id, None)
            if not waiting:
                return
            still = []
            for awaited, t1 in waiting:
                if awaited <= version:
                    self.lags.append(max(0.0, now - t1))
                else:
                    still.append((awaited, t1))
            if still:
                self.pending[game_id] = still

    def _run(self) -> None:
        deadline = None
        while True:
            message = self.pubsub.get_message(ignore_subscribe_messages=True, timeout=0.05)
            now = time.perf_counter()
            if message is not None and message["type"] == "pmessage":
                game_id = publish.game_of(message["channel"].decode())
                if game_id is not None:
                    self._heard(game_id, int(message["data"]), now)
            if self.stop.is_set():
                with self.lock:
                    left = sum(len(w) for w in self.pending.values())
                deadline = deadline or now + 30
                if not left or now > deadline:
                    self.lost = left
                    return

    def __enter__(self) -> LagWatcher:
        # Subscribed before the first intent is sent: its confirmation is awaited here.
        self.pubsub.psubscribe(publish.GAME_PATTERN)
        started = time.monotonic()
        while time.monotonic() - started < 10:
            message = self.pubsub.get_message(timeout=1)
            if message is not None and message["type"] == "psubscribe":
                break
        else:
            raise RuntimeError("the lag watcher could not subscribe to the projection's announcements")
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=40)
        self.pubsub.close()


def lag(
    url: str, r: redis.Redis, games: list[Created], rate: float, seconds: float
) -> tuple[LoadResult, list[float], int]:
    """Intents at a fixed ``rate`` (open loop, 16 clients: with fewer, each
    client's schedule outruns the answers and the rate is not reached); lags
    in seconds, and the intents whose announcement was never heard."""
    clients = 16
    with LagWatcher(r) as watcher:
        result = closed_loop(url, clients, seconds, _intents(games, clients, watcher.accept), pace=rate)
    return result, watcher.lags, watcher.lost


def latency_by_depth(url: str, early: list[Created], late: list[Created], per_game: int) -> dict[str, Any]:
    """p50 latency of single intents (one client, no concurrency) on games near
    their start and deep into their stream, interleaved (early, late, early...)
    so that both see the same machine load."""
    queue: list[tuple[str, Created]] = []
    width = max(len(early), len(late))
    for _ in range(per_game):
        for i in range(width):
            queue += [("early", early[i % len(early)]), ("late", late[i % len(late)])]
    samples: dict[str, list[tuple[str, int, float]]] = {"early": [], "late": []}

    def script(_n: int) -> Iterator[tuple[str, Any, str | None]]:
        for kind, g in queue:
            if g.next_step >= len(g.plan.steps):
                continue
            step = g.plan.steps[g.next_step]
            body = {"intent": step.intent, "expected_version": g.version}
            t0 = time.perf_counter()
            status, answer, t1 = yield f"/v1/games/{g.game_id}/intents", body, g.tokens[step.seat]
            if status == 201:
                samples[kind].append((g.game_id, g.version, t1 - t0))
                g.version = answer["version"]
                g.next_step += 1

    closed_loop(url, 1, 600, script, warmup=0)
    out: dict[str, Any] = {}
    for kind, rows in samples.items():
        # The first intents a gunicorn worker sees for a game load it (a cold
        # cache: snapshot + tail); the figure is the steady state, so each
        # game's first two samples are left out.
        seen: dict[str, int] = {}
        lat = []
        for gid, _, t in rows:
            seen[gid] = seen.get(gid, 0) + 1
            if seen[gid] > 2:
                lat.append(t)
        seqs = [v for _, v, _ in rows]
        out[kind] = {
            "p50_ms": percentile(lat, 50) * 1000,
            "n": len(lat),
            "seq_from": min(seqs, default=0),
            "seq_to": max(seqs, default=0),
        }
    return out
