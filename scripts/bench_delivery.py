"""The ``followers`` phase of ``make bench``: live delivery at scale.

2,000 concurrent followers (``GET /v1/games/{id}/stream``, half as spectators,
half as a seat) spread over 50 running games, while 16 clients post intents
to those games, under gunicorn as ``make run`` starts it.  Two helper
processes (``scripts/bench_followers.py``, gevent; loopback only, bounded):

* the *watcher* hears every projection's announcement (``g:{id}:changed``,
  published inside the projection's MULTI: the moment its write commits) and
  notes its wall-clock time;
* the *followers* note the wall-clock time at which each board line is read.

Figures: ``followers_delivery_p50_ms`` / ``_p99_ms`` (from the projection's
commit to the follower's read, per line), ``healthz_p99_ms_with_followers``
(one prober, every 20 ms, during the intents), ``api_intents_16_with_followers``
(the intents rate meanwhile; the target is its ratio to ``api_intents_16``),
and in the details: the same intents rate measured just before on another 50
games with no follower (``api_intents_16_same_sitting``), and whether every
follower received every change in order and ended at its game's head.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import bench_api
import bench_plan
from bench_env import OUT, SCRIPTS, BenchEnv, cpu_seconds
from bench_http import percentile
from bench_report import Results

from projections.runner import project_game
from service.core.commands import GameService

FOLLOWERS = 2000
GAMES = 50
CLIENTS = 16


def _start(argv: list[str], name: str) -> subprocess.Popen[str]:
    log = open(OUT / f"{name}.log", "w")  # noqa: SIM115 - the child owns it
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPTS / "bench_followers.py"), *argv], stdout=subprocess.PIPE, stderr=log, text=True
    )
    log.close()
    return proc


def _ready(proc: subprocess.Popen[str], name: str) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != "ready":
        raise SystemExit(f"bench: {name} did not get ready ({line!r}); see {OUT / (name + '.log')}")


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class _Prober(threading.Thread):
    """``/healthz`` every 20 ms on a fresh connection; latencies in seconds."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url + "/healthz"
        self.latencies: list[float] = []
        self.errors = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            t0 = time.perf_counter()
            try:
                with urllib.request.urlopen(self.url, timeout=10) as resp:
                    resp.read()
                self.latencies.append(time.perf_counter() - t0)
            except OSError:
                self.errors += 1
            self.stop.wait(0.02)


def _create(svc: GameService, ctx: Any, first: int, n: int, steps: int) -> list[bench_plan.Created]:
    out = []
    for i in range(n):
        created = bench_plan.create(svc, bench_plan.plan_game(bench_plan.GAME, 2, first + i, max_steps=steps))
        project_game(ctx.redis, ctx.store, created.game_id)
        out.append(created)
    return out


def run(env: BenchEnv, res: Results, svc: GameService, ctx: Any, seconds: float, say: Callable[[str], None]) -> None:
    url = env.start_gunicorn("api-followers")
    env.start_worker()
    steps = max(120, int(1500 * (seconds + 1) / GAMES))
    say(f"followers: planning {2 * GAMES} games ({steps} intents each at most)")
    quiet = _create(svc, ctx, 7000, GAMES, steps)
    followed = _create(svc, ctx, 8000, GAMES, steps)

    say(f"  api_intents_16 on {GAMES} games, no follower (same sitting)")
    alone = bench_api.api_intents(url, quiet, CLIENTS, seconds)
    env.wait_queue_empty()

    watch_out, follow_out = OUT / "watch.json", OUT / "followers.json"
    watcher = _start(["--url", url, "--watch", env.redis_url, "--seconds", "900", "--out", str(watch_out)], "watcher")
    followers = None
    prober = _Prober(url)
    try:
        _ready(watcher, "watcher")
        ids = ",".join(g.game_id for g in followed)
        tokens = ",".join(g.tokens[1] for g in followed)
        t0 = time.perf_counter()
        argv = ["--url", url, "--games", ids, "--tokens", tokens, "--streams", str(FOLLOWERS)]
        followers = _start([*argv, "--seconds", "900", "--out", str(follow_out)], "followers")
        _ready(followers, "followers")
        say(f"  {FOLLOWERS} followers connected over {GAMES} games in {time.perf_counter() - t0:.1f}s")
        started = time.time()
        # CPU seconds by process during the phase: who spends the two cores.
        procs = {
            "api": env.pids("api-followers"),
            "worker": env.pids("worker"),
            "followers_client": [followers.pid],
            "watcher": [watcher.pid],
        }
        cpu0 = {k: cpu_seconds(v) for k, v in procs.items()}
        wall0 = time.perf_counter()
        prober.start()
        with_followers = bench_api.api_intents(url, followed, CLIENTS, seconds)
        wall = time.perf_counter() - wall0
        cpu_share = {k: round((cpu_seconds(v) - cpu0[k]) / wall, 2) for k, v in procs.items()}
        prober.stop.set()
        prober.join(15)
        env.wait_queue_empty()
        time.sleep(2.0)  # the last deliveries
    finally:
        prober.stop.set()
        if followers is not None:
            _stop(followers)
        _stop(watcher)
        env.stop("api-followers")
        env.stop("worker")

    heard = json.loads(watch_out.read_text())["watch"]
    streams = json.loads(follow_out.read_text())["streams"]
    committed: dict[tuple[str, int], float] = {}
    for gid, version, at in heard:
        committed.setdefault((gid, version), at)
    published: dict[str, list[int]] = {}
    for gid, version, at in heard:
        if at >= started:
            published.setdefault(gid, []).append(version)
    heads = {g.game_id: g.version for g in followed}
    delays: list[float] = []
    missed = unordered = short = 0
    for f in streams:
        versions = [int(v) for v, _ in f["boards"]]
        if versions != sorted(set(versions)):
            unordered += 1
        if not versions or versions[-1] != heads[f["game"]]:
            short += 1
        got = set(versions)
        missed += sum(1 for v in set(published.get(f["game"], [])) if v not in got)
        for version, at in f["boards"]:
            t_commit = committed.get((f["game"], int(version)))
            if t_commit is not None and t_commit >= started:
                delays.append(at - t_commit)
    expected = sum(len(set(published.get(f["game"], []))) for f in streams)
    p50, p99 = percentile(delays, 50) * 1000, percentile(delays, 99) * 1000
    health = prober.latencies
    detail = {
        "followers": len(streams),
        "connected": sum(1 for f in streams if f["status"] == 200 and f["boards"]),
        "games": GAMES,
        "lines": len(delays),
        "changes_published": sum(len(set(v)) for v in published.values()),
        "changes_missed": missed,
        "changes_expected": expected,
        "out_of_order_followers": unordered,
        "followers_not_at_head": short,
        "every_follower_every_change_in_order": missed == 0 and unordered == 0 and short == 0,
        "errors": sum(1 for f in streams if f["error"]),
        "cpu_cores_used": cpu_share,
    }
    res.put("followers_delivery_p50_ms", p50, **detail)
    res.put("followers_delivery_p99_ms", p99)
    res.put(
        "healthz_p99_ms_with_followers",
        percentile(health, 99) * 1000,
        p50_ms=percentile(health, 50) * 1000,
        probes=len(health),
        errors=prober.errors,
    )
    res.put(
        "api_intents_16_with_followers",
        with_followers.rate,
        p50_ms=with_followers.p(50),
        p99_ms=with_followers.p(99),
        errors=with_followers.errors,
        api_intents_16_same_sitting=alone.rate,
        ratio_same_sitting=with_followers.rate / alone.rate if alone.rate else None,
    )
    say(
        f"  delivery p50 {p50:.1f} ms, p99 {p99:.1f} ms over {len(delays):,} lines; healthz p99 "
        f"{percentile(health, 99) * 1000:.1f} ms; intents {with_followers.rate:,.0f}/s with followers, "
        f"{alone.rate:,.0f}/s without; missed {missed} of {expected} changes, {unordered} out of order, "
        f"{short} not at the head; cores used {cpu_share}"
    )
