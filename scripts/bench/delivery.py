"""The ``followers`` phase of ``make bench``: live delivery at scale.

2,000 concurrent followers (``GET /v1/games/{id}/stream``, half as spectators,
half as a seat) spread over 50 running games, while 16 clients post intents
to those games, under gunicorn as ``make run`` starts it.  Two helper
processes (``scripts/bench/followers.py``, gevent; loopback only, bounded):

* the *watcher* hears every projection's announcement (``g:{id}:changed``,
  published inside the projection's MULTI: the moment its write commits) and
  notes its wall-clock time;
* the *followers* note the wall-clock time at which each board line is read.

Figures: ``followers_delivery_p50_ms`` / ``_p99_ms`` (from the projection's
commit to the follower's read, per line), ``healthz_p99_ms_with_followers``
(one prober, every 20 ms, during the intents), ``api_intents_16_with_followers``
(the intents rate meanwhile; the target is its ratio to ``api_intents_16``),
and in the details: the same intents rate measured just before on another 50
games with no follower (``api_intents_16_same_run``), and whether every
follower received every change in order and ended at its game's head.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from projections.runner import project_game
from scripts.bench import api as bench_api
from scripts.bench import plan as bench_plan
from scripts.bench.env import OUT, ROOT, BenchEnv, cpu_seconds
from scripts.bench.load import percentile
from scripts.bench.report import Results
from service.service_layer.commands import GameService

FOLLOWERS = 2000
GAMES = 50
CLIENTS = 16


def _start(argv: list[str], name: str) -> subprocess.Popen[str]:
    log = open(OUT / f"{name}.log", "w")  # noqa: SIM115 - the child owns it
    proc = subprocess.Popen(
        [sys.executable, "-m", "scripts.bench.followers", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
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

    say(f"  api_intents_16 on {GAMES} games, no follower (same run)")
    ticks0 = machine_ticks()
    alone = bench_api.api_intents(url, quiet, CLIENTS, seconds)
    busy_alone = busy_share(ticks0)
    env.wait_queue_empty()
    # A spectator's board line is at least this long (a seat's adds its legal list).
    with urllib.request.urlopen(f"{url}/v1/games/{followed[0].game_id}", timeout=10) as resp:
        line_bytes = len(resp.read()) + len(b'{"type":"board","version":1234,}')

    watch_out, follow_out = OUT / "watch.json", OUT / "followers.json"
    watcher = _start(["--url", url, "--watch", env.redis_url, "--seconds", "900", "--out", str(watch_out)], "watcher")
    followers = None
    prober = _Prober(url)
    try:
        _ready(watcher, "watcher")
        ids = ",".join(g.game_id for g in followed)
        tokens = ",".join(g.tokens[1] for g in followed)
        t0 = time.perf_counter()
        argv = ["--url", url, f"--games={ids}", f"--tokens={tokens}", "--streams", str(FOLLOWERS)]
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
        api_intents_16_same_run=alone.rate,
        ratio_same_run=with_followers.rate / alone.rate if alone.rate else None,
    )
    _floor(res, alone.rate, busy_alone, detail["changes_published"] / max(with_followers.ok, 1), line_bytes, say)
    say(
        f"  delivery p50 {p50:.1f} ms, p99 {p99:.1f} ms over {len(delays):,} lines; healthz p99 "
        f"{percentile(health, 99) * 1000:.1f} ms; intents {with_followers.rate:,.0f}/s with followers, "
        f"{alone.rate:,.0f}/s without; missed {missed} of {expected} changes, {unordered} out of order, "
        f"{short} not at the head; cores used {cpu_share}"
    )


def machine_ticks() -> tuple[float, float]:
    """``(busy, total)`` CPU ticks of the whole machine so far, from /proc/stat."""
    ticks = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = ticks[3] + ticks[4]  # idle + iowait
    return sum(ticks) - idle, sum(ticks)


def busy_share(since: tuple[float, float]) -> float:
    """The share of all cores busy since :func:`machine_ticks` gave ``since``."""
    now = machine_ticks()
    return (now[0] - since[0]) / max(now[1] - since[1], 1.0)


def _floor(
    res: Results,
    alone_rate: float,
    busy: float,
    changes_per_intent: float,
    line_bytes: int,
    say: Callable[[str], None],
) -> None:
    """The followers' floor (``scripts/bench/floor.py``) at the load the ratio
    target asks for: 0.9 of the intents rate without followers, as changes
    (``changes_per_intent``: the drain coalesces some), each a line for each
    follower of its game.  From its CPU per line, the highest intents ratio
    any Python delivery could leave on this machine, if the intents alone
    keep ``busy`` of the cores busy: ``1 / (busy + lines per intent x CPU per
    line x rate / cores)``."""
    rate = 0.9 * alone_rate * changes_per_intent
    say(f"  floor: bare sockets, {rate:,.0f} changes/s of {line_bytes:,}-byte lines to {FOLLOWERS} followers")
    out = subprocess.run(
        [sys.executable, "-m", "scripts.bench.floor", "--rate", f"{rate:.1f}", "--size", str(line_bytes)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    floor = json.loads(out.stdout)
    per_line = floor["writer_us_per_line"] + floor["reader_us_per_line"]
    cores = os.cpu_count() or 1
    lines_per_intent = changes_per_intent * FOLLOWERS / GAMES
    bound = 1 / (busy + lines_per_intent * per_line * 1e-6 * alone_rate / cores)
    floor.update(
        us_per_line=per_line,
        cores_at_target=floor["lines_per_second"] * per_line * 1e-6,
        machine_busy_without_followers=busy,
        changes_per_intent=changes_per_intent,
    )
    res.put("followers_ratio_bound", min(bound, 1.0), **floor)
    say(
        f"  floor: {per_line:.1f} us of CPU a line (write {floor['writer_us_per_line']:.1f} + read "
        f"{floor['reader_us_per_line']:.1f}), {floor['cores_at_target']:.2f} cores at the target's rate; "
        f"the intents used {busy:.0%} of the cores alone: ratio bound {min(bound, 1.0):.2f}"
    )
