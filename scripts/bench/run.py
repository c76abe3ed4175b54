"""``make bench``: Quarterdeck's speed, measured side by side with the
machine's limits and a peer library, in one run.

Absolute numbers drift between machines; ratios measured together do not.
One run measures (see ``docs/PERFORMANCE.md``):

* baselines — bare psycopg INSERT+COMMIT (1 and 16 connections) and a minimal
  Flask INSERT endpoint under the same gunicorn set-up as ``make run``;
* the design's minimum — an append and a nudge behind the same Flask and gunicorn,
  and a bare worker that reads and writes what it marks (``scripts/bench/minimum.py``):
  what any implementation of our data flow costs, the bound of our ratios;
* the peer — the ``eventsourcing`` library's reload-decide-save, in process;
* the server a team would pick instead — boardgame.io with bgio-postgres, its moves
  over its socket transport (``scripts/bench/boardgameio.py``);
* ours — intents over HTTP (16 clients), projection lag, intent latency early
  and late in long games, live delivery to 2,000 followers (``scripts/bench/delivery.py``),
  a person's clicks in a browser against a house bot (``scripts/bench/click.py``),
  the in-memory fold ceiling, ``make rebuild`` (rate and peak memory at two
  sizes), random playouts per game;

prints a table with the ratios and targets, and writes ``.bench/latest.json``.

It uses the PostgreSQL and Redis servers of ``DATABASE_URL`` / ``REDIS_URL``
(``make bench`` takes them from a running ``make run`` otherwise) but its own
databases (``quarterdeck_bench``, and ``quarterdeck_bench_rebuild`` for the rebuild; dropped at
the end unless ``--keep``), empty Redis DB numbers and its own gunicorn and worker processes.

Options: ``BENCH_SCALE`` (default 1: ~2.5 minutes; 10 rebuilds 1M events),
``BENCH_SECONDS`` (per load phase, default 8), ``BENCH_LAG_RATE`` (intents/s
of the lag phase; default half of ``api_intents_16``), ``--only a,b`` to run some
phases.
Run it on a quiet machine: the load average at each figure is in the output.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from projections.runner import project_game
from scripts.bench import api as bench_api
from scripts.bench import baseline as bench_baseline
from scripts.bench import boardgameio as bench_bgio
from scripts.bench import click as bench_click
from scripts.bench import cpu as bench_cpu
from scripts.bench import delivery as bench_delivery
from scripts.bench import fold as bench_fold
from scripts.bench import minimum as bench_minimum
from scripts.bench import peer as bench_peer
from scripts.bench import plan as bench_plan
from scripts.bench import storage as bench_storage
from scripts.bench.env import OUT, ROOT, BenchEnv, cpu_seconds
from scripts.bench.load import LoadResult
from scripts.bench.report import Results, table
from service.bootstrap import bootstrap as make_context
from service.bots import arena
from service.config import Settings
from service.games import registry
from service.service_layer.commands import GameService

CLIENTS = 16
_t0 = time.perf_counter()


def say(msg: str) -> None:
    load = os.getloadavg()[0]
    print(f"[{time.perf_counter() - _t0:6.1f}s load {load:4.1f}] {msg}", file=sys.stderr, flush=True)


#: Phases that run only when named: the house bots' strength plays hundreds of
#: whole games in process (an hour or more on a 2-core machine).
OPT_IN = {"bots"}


def _phase(name: str, only: set[str]) -> bool:
    return name in only if name in OPT_IN else not only or name in only


def _create_games(svc: GameService, ctx: Any, plans: list[bench_plan.Plan]) -> list[bench_plan.Created]:
    out = []
    for plan in plans:
        created = bench_plan.create(svc, plan)
        project_game(ctx.redis, ctx.store, created.game_id)
        out.append(created)
    return out


def _plans(first: int, n: int, steps: int, label: str) -> list[bench_plan.Plan]:
    t = time.perf_counter()
    plans = [bench_plan.plan_game(bench_plan.GAME, 2, first + i, max_steps=steps) for i in range(n)]
    say(f"planned {n} {label} games ({sum(len(p.steps) for p in plans)} intents) in {time.perf_counter() - t:.1f}s")
    return plans


def run_http(env: BenchEnv, res: Results, svc: GameService, ctx: Any, seconds: float, only: set[str]) -> None:
    url = env.start_gunicorn("api")
    env.start_worker()
    say(f"API under gunicorn at {url} (make run's settings), worker on queue {env.queue}")
    games: list[bench_plan.Created] = []
    if _phase("api", only) or _phase("lag", only):
        # Enough planned intents for ~1,300 intents/s over both phases (a game
        # that runs out of planned intents leaves the load, and the lag phase
        # would fall short of its rate).
        steps = max(120, int(2000 * (seconds + 1) / (2 * CLIENTS)))
        games = _create_games(svc, ctx, _plans(1000, 2 * CLIENTS, steps, "load"))
    if _phase("api", only):
        say(f"api_intents_16: {CLIENTS} clients posting planned legal intents to {len(games)} games")
        r, drained, srv = _measure_intents(env, res, url, games, seconds, "api", "cpu_ms_per_intent")
        res.put(
            "api_intents_16",
            r.rate,
            p50_ms=r.p(50),
            p99_ms=r.p(99),
            accepted=r.ok,
            errors=r.errors,
            seconds=r.seconds,
            client_cpu_share=r.client_cpu / max(r.seconds, 1e-9),
            server_cpu_share=srv / max(r.seconds, 1e-9),
            projection_backlog_drain_s=drained,
        )
        say(
            f"  {r.rate:,.0f} intents/s, p50 {r.p(50):.1f} ms, p99 {r.p(99):.1f} ms, errors {r.errors or 0}; "
            f"client CPU {r.client_cpu / max(r.seconds, 1e-9):.0%} of a core; queue drained in {drained:.1f}s"
        )
    if _phase("lag", only):
        fixed = os.environ.get("BENCH_LAG_RATE")
        rate = float(fixed) if fixed else (res.get("api_intents_16") or 200) / 2
        why = "BENCH_LAG_RATE" if fixed else "half of api_intents_16"
        say(f"lag: {rate:,.0f} intents/s ({why}), listening to the projection's g:{{id}}:changed announcements")
        groups = _cpu_groups(env, "api", "worker")
        cpu0 = bench_cpu.snapshot(groups)
        steps0 = sum(g.next_step for g in games)
        r, lags, lost = bench_api.lag(url, env.redis(), games, rate, seconds)
        cpu_api = bench_cpu.snapshot({"api": groups["api"]})
        env.wait_queue_empty()
        bench_api.wait_projected(env.redis(), games)
        cpu1 = bench_cpu.snapshot({k: v for k, v in groups.items() if k != "api"}) | cpu_api
        # At a fixed rate (open loop), the CPU an intent costs compares between runs
        # better than in the closed loop, where batching moves with the rate reached.
        _put_cpu(res, "cpu_ms_per_intent_at_lag_rate", env, cpu0, cpu1, sum(g.next_step for g in games) - steps0)
        from scripts.bench.load import percentile

        p50, p99 = percentile(lags, 50) * 1000, percentile(lags, 99) * 1000
        res.put(
            "lag_p50_ms",
            p50,
            rate=r.rate,
            target_rate=rate,
            samples=len(lags),
            errors=r.errors,
            unheard=lost,
            method="pubsub",
        )
        res.put("lag_p99_ms", p99)
        say(f"  p50 {p50:.1f} ms, p99 {p99:.1f} ms over {len(lags)} intents at {r.rate:,.0f}/s")
        if lost:
            say(f"  WARNING: {lost} accepted intent(s) were never announced within 30 s (not counted)")
        if r.rate < 0.9 * rate:
            say(f"  WARNING: the lag phase reached {r.rate:,.0f} intents/s, short of its {rate:,.0f}")
    if _phase("depth", only):
        run_depth(url, res, svc, ctx)
    env.stop("api")
    env.stop("worker")


def _cpu_of_load(
    env: BenchEnv,
    res: Results,
    key: str,
    api: str,
    worker: str,
    load: Callable[[], Any],
    drain: Callable[[], Any],
    accepted: Callable[[], int],
) -> tuple[Any, Any]:
    """CPU per accepted request (``key``) of ``load()`` on the API process ``api``, with
    ``worker``'s and PostgreSQL's shares counted until ``drain()`` returns: the backlog
    the load left, every accepted request's projection, not only those done in time.
    Returns what ``load()`` and ``drain()`` returned."""
    groups = _cpu_groups(env, api, worker)
    before = accepted()
    cpu0 = bench_cpu.snapshot(groups)
    result = load()
    cpu_api = bench_cpu.snapshot({api: groups[api]})
    drained = drain()
    cpu1 = bench_cpu.snapshot({k: v for k, v in groups.items() if k != api}) | cpu_api
    _put_cpu(res, key, env, cpu0, cpu1, accepted() - before)
    return result, drained


def _measure_intents(
    env: BenchEnv, res: Results, url: str, games: list[bench_plan.Created], seconds: float, api: str, key: str
) -> tuple[LoadResult, float, float]:
    """``api_intents_16``'s load on the API process ``api``: its CPU per intent as ``key``.
    Returns the load's result, the seconds the queue took to drain and the servers' CPU."""
    servers = lambda: cpu_seconds(env.pids(api) + env.pids("worker"))  # noqa: E731

    def load() -> tuple[LoadResult, float]:
        srv0 = servers()
        r = bench_api.api_intents(url, games, CLIENTS, seconds)
        return r, servers() - srv0

    def drain() -> tuple[float, float]:
        return env.wait_queue_empty(), bench_api.wait_projected(env.redis(), games)

    (r, srv), (drained, drained_all) = _cpu_of_load(
        env, res, key, api, "worker", load, drain, lambda: sum(g.next_step for g in games)
    )
    res.details[key]["projections_drained_s"] = drained_all
    return r, drained, srv


#: ``make run``'s rate limits (off in every other phase): the default's windows, per
#: second and per minute, per address and per key, with amounts the bench's one client
#: address never reaches, so that each intent is counted as in production and none refused.
RATE_LIMITED = {
    "QD_RATE_LIMITS": "on",
    "QD_LIMIT_INTENTS": "1000000/second;100000000/minute",
    "QD_LIMIT_INTENTS_KEY": "1000000/second;100000000/minute",
}


def run_limited(env: BenchEnv, res: Results, svc: GameService, ctx: Any, seconds: float) -> None:
    """``api_intents_16`` again with the rate limits on, as ``make run`` has them."""
    url = env.start_gunicorn("api_limited", extra_env=RATE_LIMITED)
    env.start_worker()
    steps = max(120, int(1500 * (seconds + 1) / (2 * CLIENTS)))
    games = _create_games(svc, ctx, _plans(2000, 2 * CLIENTS, steps, "rate-limited"))
    say(f"api_intents_16_rate_limited: the same load with make run's rate limits on, at {url}")
    r, _, _ = _measure_intents(env, res, url, games, seconds, "api_limited", "cpu_ms_per_intent_rate_limited")
    res.put("api_intents_16_rate_limited", r.rate, p50_ms=r.p(50), p99_ms=r.p(99), errors=r.errors)
    say(f"  {r.rate:,.0f} intents/s, p50 {r.p(50):.1f} ms, p99 {r.p(99):.1f} ms, errors {r.errors or 0}")
    env.stop("api_limited")
    env.stop("worker")


def run_minimum(env: BenchEnv, res: Results, svc: GameService, seconds: float) -> None:
    """The design's minimum (``scripts/bench/minimum.py``) under ``api_intents_16``'s load.
    Run twice, before the ``api`` phase and after it: the second run is pooled with the first
    (:func:`_pool_minimum`), so a machine that drifts between the phases moves the bound
    with the figure it bounds."""
    again = res.get("minimum_intents_16") is not None
    # The first run's figures, before this run puts its own (pooled below).
    first = {k: (res.figures[k], res.details.get(k)) for k in MINIMUM_KEYS} if again else {}
    bench_minimum.prepare(env.database_url)
    games = [svc.create_game(bench_plan.GAME, ["a", "b"], {})["id"] for _ in range(2 * CLIENTS)]
    url = env.start_gunicorn("minimum", "scripts.bench.minimum_serve:make_app()")
    env.start_process("minimum_worker", bench_minimum.worker_argv())
    say(f"minimum_intents_16: the design's minimum (append + nudge; bare worker) under the same gunicorn at {url}")
    load = bench_minimum.Load(games, CLIENTS)
    r, drained = _cpu_of_load(
        env,
        res,
        "cpu_ms_per_minimum_intent",
        "minimum",
        "minimum_worker",
        lambda: load.run(url, seconds),
        lambda: load.wait_projected(env.redis()),
        lambda: load.accepted,
    )
    res.put("minimum_intents_16", r.rate, p50_ms=r.p(50), p99_ms=r.p(99), errors=r.errors, projected_after_s=drained)
    env.stop("minimum")
    env.stop("minimum_worker")
    bench_minimum.drop(env.database_url)
    say(f"  {r.rate:,.0f} req/s, p50 {r.p(50):.1f} ms, p99 {r.p(99):.1f} ms, errors {r.errors or 0}")
    if again:
        _pool_minimum(res, first)
    bound = res.ratio("minimum_intents_16", "flask_insert_16")
    if bound is not None:
        res.put("api_ratio_bound", bound)


#: The minimum's two figures, pooled over its runs.
MINIMUM_KEYS = ("minimum_intents_16", "cpu_ms_per_minimum_intent")


def _pool_minimum(res: Results, first: dict[str, tuple[Any, Any]]) -> None:
    """The minimum over its two runs (``first``: the first run's figures and details): the
    mean rate, and the CPU of both runs over both runs' requests; each run's figures are
    kept in the details (``runs``)."""
    rate0, rate_detail0 = first["minimum_intents_16"]
    rate1, rate_detail1 = res.figures["minimum_intents_16"], res.details["minimum_intents_16"]
    res.put(
        "minimum_intents_16",
        (rate0 + rate1) / 2,
        **rate_detail1,
        runs=[rate_detail0 | {"rate": rate0}, rate_detail1 | {"rate": rate1}],
    )
    cpu0, cpu_detail0 = first["cpu_ms_per_minimum_intent"]
    cpu1, cpu_detail1 = res.figures["cpu_ms_per_minimum_intent"], res.details["cpu_ms_per_minimum_intent"]
    n = cpu_detail0["requests"] + cpu_detail1["requests"]
    if not n:  # neither run had an append accepted: nothing to pool
        return
    ms = {g: cpu_detail0["cpu_ms"][g] + cpu_detail1["cpu_ms"][g] for g in cpu_detail1["cpu_ms"]}
    pooled = sum(ms[g] for g in cpu_detail1["counted"]) / n
    res.put(
        "cpu_ms_per_minimum_intent",
        pooled,
        requests=n,
        counted=cpu_detail1["counted"],
        cpu_ms=ms,
        **{f"{g}_ms_per_request": v / n for g, v in ms.items()},
        runs=[cpu_detail0 | {"value": cpu0}, cpu_detail1 | {"value": cpu1}],
    )
    say(
        f"  the minimum over both runs: {(rate0 + rate1) / 2:,.0f} req/s ({rate0:,.0f}, {rate1:,.0f}),"
        f" {pooled:.2f} ms an intent ({cpu0:.2f}, {cpu1:.2f})"
    )


def _cpu_groups(env: BenchEnv, *names: str) -> dict[str, Callable[[], list[int]]]:
    """The process groups whose CPU a phase costs: our processes ``names``
    (each with its children), and the PostgreSQL and Redis servers."""
    groups = {name: (lambda pid=env.procs[name].pid: bench_cpu.tree(pid)) for name in names}
    groups["postgres"] = bench_cpu.trees_named("postgres")
    groups["redis"] = bench_cpu.trees_named("redis-server")
    return groups


def _inserted(env: BenchEnv) -> int:
    """Rows the baseline endpoint has inserted so far (ids are a sequence, no rollbacks)."""
    with psycopg.connect(env.database_url, autocommit=True) as conn:
        row = conn.execute("SELECT coalesce(max(id), 0) FROM bench_insert").fetchone()
    return int(row[0]) if row else 0


def _put_cpu(
    res: Results, key: str, env: BenchEnv, before: bench_cpu.Snapshot, after: bench_cpu.Snapshot, n: int
) -> None:
    """``key``: CPU milliseconds per accepted request of every group but Redis
    (the issue's budget: our processes and PostgreSQL); the breakdown in details."""
    ms = {group: bench_cpu.used(before, after, group) * 1000 for group in after}
    # PostgreSQL is shared with the machine's other users: the bench database's
    # own backends are given apart (backends that closed during the phase are not in it).
    ms["postgres_bench_db_only"] = bench_cpu.used(before, after, "postgres", env.backends()) * 1000
    counted = [g for g in after if g != "redis"]
    total = sum(ms[g] for g in counted)
    per = {f"{g}_ms_per_request": v / max(n, 1) for g, v in ms.items()}
    res.put(key, total / n if n else None, requests=n, counted=counted, cpu_ms=ms, **per)
    say(
        f"  {key}: {total / max(n, 1):.2f} ms over {n:,} requests ("
        + ", ".join(f"{g} {v / max(n, 1):.2f}" for g, v in ms.items())
        + ")"
    )


def run_depth(url: str, res: Results, svc: GameService, ctx: Any) -> None:
    say("latency_seq20 / latency_seq2000: planning full games, loading two of them to seq ~2000")
    late_plans: list[bench_plan.Plan] = []
    seed = 2000
    while len(late_plans) < 2:  # random playouts vary in length: keep two that pass seq 2000 well
        plan = bench_plan.plan_game(bench_plan.GAME, 2, seed)
        seed += 1
        if plan.events > 2300:
            late_plans.append(plan)
    say(f"  two games of {late_plans[0].events} and {late_plans[1].events} events planned (seeds up to {seed - 1})")
    early = _create_games(svc, ctx, _plans(3000, 8, 60, "short"))
    late = _create_games(svc, ctx, late_plans)
    for g, seq in [(g, 14) for g in early] + [(g, 1990) for g in late]:
        # Bulk-append the events up to ~seq as the command path would have
        # written them (with a snapshot at the head, as it keeps one per 200).
        total, steps = g.version, 0
        for step in g.plan.steps:
            if total + len(step.events) > seq:
                break
            total += len(step.events)
            steps += 1
        bench_plan.advance(ctx.store, g, steps)
        project_game(ctx.redis, ctx.store, g.game_id)
    out = bench_api.latency_by_depth(url, early, late, per_game=6)
    e, lt = out["early"], out["late"]
    res.put("latency_seq20", e["p50_ms"], **e)
    res.put("latency_seq2000", lt["p50_ms"], **lt)
    say(
        f"  seq {e['seq_from']}-{e['seq_to']}: p50 {e['p50_ms']:.1f} ms; "
        f"seq {lt['seq_from']}-{lt['seq_to']}: p50 {lt['p50_ms']:.1f} ms"
    )


def seed_events(svc: GameService, ctx: Any, plans: list[bench_plan.Plan], target: int, have: int) -> int:
    """Full games (cycling through ``plans``) until the store holds ``target`` events."""
    t = time.perf_counter()
    n = 0
    while have < target:
        g = bench_plan.create(svc, plans[n % len(plans)])
        bench_plan.advance(ctx.store, g, len(g.plan.steps))
        have = g.version + have
        n += 1
    say(f"  loaded {n} games in {time.perf_counter() - t:.1f}s; the store holds {have:,} events")
    return have


def run_rebuild(env: BenchEnv, res: Results, svc: GameService, ctx: Any, scale: float) -> None:
    have = 0
    small, large = int(25_000 * scale), int(100_000 * scale)
    say(f"rebuild: loading full games up to {small:,} events")
    plans = _plans(5000, 4, 100_000, "full")
    have = seed_events(svc, ctx, plans, small, have)
    ids = ctx.store.game_ids(limit=100_000)
    streams = bench_fold.load_streams(ctx.store, ids)
    # The ceiling moves with the machine as much as the rebuild does: it is
    # taken before each rebuild and after the last, and the median is the
    # figure (all three are in the details).
    ceilings = [bench_fold.fold_ceiling(streams, repeat_until=1.5)]
    say(f"  fold_ceiling {ceilings[-1]['rate']:,.0f} events/s")
    runs = []
    for size in (small, large):
        have = seed_events(svc, ctx, plans, size, have)
        if size == large:
            ceilings.append(bench_fold.fold_ceiling(streams, repeat_until=1.5))
            say(f"  fold_ceiling {ceilings[-1]['rate']:,.0f} events/s")
        rb = bench_fold.rebuild(env.env())
        rb |= {"events": have, "rate": have / rb["seconds"], "rss_mib": rb["rss_kib"] / 1024}
        runs.append(rb)
        say(
            f"  rebuild of {have:,} events: {rb['rate']:,.0f} events/s, {rb['processes']} process(es),"
            f" peak RSS {rb['rss_mib']:.0f} MiB in all (largest {rb['rss_max_kib'] / 1024:.0f} MiB)"
        )
    ceilings.append(bench_fold.fold_ceiling(streams, repeat_until=1.5))
    say(f"  fold_ceiling {ceilings[-1]['rate']:,.0f} events/s")
    del streams
    rates = sorted(c["rate"] for c in ceilings)
    res.put("fold_ceiling", rates[1], measurements=ceilings, events=ceilings[0]["events"])
    growth = runs[-1]["rss_mib"] / runs[0]["rss_mib"]
    res.put("rebuild_rate", runs[-1]["rate"], runs=runs, rss_growth=growth)


@dataclass
class BenchRun:
    """What every phase measures with: the bench's servers and processes, the
    figures so far, a game service on the bench database, and the options."""

    env: BenchEnv
    res: Results
    svc: GameService
    ctx: Any
    seconds: float
    scale: float
    only: set[str]


#: The phases, in the order they run: (the names ``--only`` and the positional
#: arguments know it by, the function).  ``@phase`` adds to it.
PHASES: list[tuple[tuple[str, ...], Callable[[BenchRun], None]]] = []


def phase(*names: str) -> Callable[[Callable[[BenchRun], None]], Callable[[BenchRun], None]]:
    """Register a phase.  Adding one is this decorator on one function that
    measures and ``bench.res.put(key, value, **details)``s its figures (their
    unit and meaning go in ``scripts/bench/report.py``'s ``FIGURES``); it runs
    after the phases defined above it.  A function answering to several names
    (``api``, ``lag``, ``depth``) runs once if any of them is asked for."""

    def register(run: Callable[[BenchRun], None]) -> Callable[[BenchRun], None]:
        PHASES.append((names, run))
        return run

    return register


def phase_names() -> list[str]:
    # dict: a name registered twice (the minimum's two runs) is listed once, where it first runs.
    return list(dict.fromkeys(name for names, _ in PHASES for name in names))


@phase("pg")
def phase_pg(s: BenchRun) -> None:
    for n in (1, CLIENTS):
        say(f"pg_commit_{n}: bare psycopg INSERT+COMMIT on {n} connection(s)")
        rate = bench_baseline.pg_commit(s.env.database_url, n, s.seconds / 2)
        s.res.put(f"pg_commit_{n}", rate)
        say(f"  {rate:,.0f} events/s")


@phase("flask")
def phase_flask(s: BenchRun) -> None:
    env, res = s.env, s.res
    url = env.start_gunicorn("baseline", "scripts.bench.wsgi:app")
    say(f"flask_insert_16: minimal Flask INSERT endpoint under the same gunicorn at {url}")
    groups = _cpu_groups(env, "baseline")
    rows0 = _inserted(env)
    cpu0 = bench_cpu.snapshot(groups)
    r = bench_baseline.flask_insert(url, CLIENTS, s.seconds)
    cpu1 = bench_cpu.snapshot(groups)
    res.put("flask_insert_16", r.rate, p50_ms=r.p(50), p99_ms=r.p(99), errors=r.errors)
    _put_cpu(res, "cpu_ms_per_flask_insert", env, cpu0, cpu1, _inserted(env) - rows0)
    env.stop("baseline")
    say(f"  {r.rate:,.0f} req/s, p50 {r.p(50):.1f} ms, p99 {r.p(99):.1f} ms")


@phase("minimum")
def phase_minimum(s: BenchRun) -> None:
    run_minimum(s.env, s.res, s.svc, s.seconds)


@phase("peer")
def phase_peer(s: BenchRun) -> None:
    say("peer_cmd_1: eventsourcing reload-decide-save on the same PostgreSQL")
    peer = bench_peer.peer_cmd(s.env.database_url, s.seconds / 2)
    s.res.put("peer_cmd_1", peer.get("rate"), **peer)
    say(f"  {peer.get('rate') or 0:,.0f} commands/s")


@phase("bgio")
def phase_bgio(s: BenchRun) -> None:
    # Just before the api phase, so that the two rates compared are measured close together.
    why = bench_bgio.missing()
    if why:
        say(f"bgio: skipped: {why}")
        return
    bench_bgio.run(s.env, s.res, s.seconds, say)


@phase("api", "lag", "depth")
def phase_http(s: BenchRun) -> None:
    run_http(s.env, s.res, s.svc, s.ctx, s.seconds, s.only)


@phase("minimum")
def phase_minimum_again(s: BenchRun) -> None:
    # After the api phase: the minimum's second run (run_minimum pools the two).
    run_minimum(s.env, s.res, s.svc, s.seconds)


@phase("limits")
def phase_limits(s: BenchRun) -> None:
    run_limited(s.env, s.res, s.svc, s.ctx, s.seconds)


@phase("followers")
def phase_followers(s: BenchRun) -> None:
    bench_delivery.run(s.env, s.res, s.svc, s.ctx, s.seconds, say)


@phase("click")
def phase_click(s: BenchRun) -> None:
    why = bench_click.missing()
    if why:
        say(f"click: skipped: {why}")
        return
    bench_click.run(s.env, s.res, s.svc, s.ctx, s.seconds, say)


@phase("playout")
def phase_playout(s: BenchRun) -> None:
    say("playouts: random 2-player games in process")
    for name, p in bench_fold.playouts(max(1.0, s.seconds / 4)).items():
        s.res.put(f"playout.{name}", p["rate"], **p)
        say(f"  {name}: {p['rate']:,.0f} intents/s ({p['per_cpu_second']:,.0f} per CPU second)")


@phase("storage")
def phase_storage(s: BenchRun) -> None:
    say("storage: PostgreSQL bytes per event, in a database of its own (scripts/bench/storage.py)")
    pg = bench_storage.pg_bytes(s.env.database_url, say)
    s.res.put("pg_bytes_per_event", pg["bytes_per_event"], **pg)
    say("storage: Redis bytes of a game's read model, half-way and finished")
    rb = bench_storage.redis_bytes(s.ctx, s.svc, say)
    s.res.put("redis_bytes_per_active_game", rb["active_mean"], **rb)
    s.res.put("redis_bytes_per_finished_game", rb["finished_mean"], **rb)


@phase("rebuild")
def phase_rebuild(s: BenchRun) -> None:
    # A database of its own (and a Redis DB): the store holds full games at the two sizes
    # and nothing else.  The bench database holds the HTTP phases' hundreds of short games
    # (~90k events): rebuilt there, both sizes would be about the same and the memory growth
    # between them would compare nothing, and its events cannot be deleted (append-only).
    env = BenchEnv(s.env.base_db_url, s.env.base_redis_url, f"{s.env.db_name}_rebuild", None, s.env.keep)
    env.reset()
    ctx = make_context(Settings(database_url=env.database_url, redis_url=env.redis_url))
    try:
        run_rebuild(env, s.res, GameService(ctx.store, nudge=lambda _gid: None), ctx, s.scale)
    finally:
        ctx.close()
        env.close()


def bot_pairings() -> list[tuple[str, int, str, str]]:
    """The pairings with a goal (docs/BOTS.md, "Measured strength"): every game's level 1 against
    random and each level against those below with two seats; level 2 against 1 and 3 against 2 with
    three and four seats, and with five and six in Nautilus Industries (which seats them)."""
    out: list[tuple[str, int, str, str]] = []
    for game in registry.registered():
        out += [(game, 2, "1", "random"), (game, 2, "2", "1"), (game, 2, "3", "1"), (game, 2, "3", "2")]
        most = registry.get(game).max_players
        out += [(game, n, a, b) for n in range(3, most + 1) for a, b in (("2", "1"), ("3", "2"))]
    return out


@phase("bots")
def phase_bots(s: BenchRun) -> None:
    """The house bots' pairings (:func:`bot_pairings`; ``BENCH_BOT_PAIRINGS``, comma-separated
    ``game:seats:a:b``, picks some), seats rotated, ``BENCH_BOT_GAMES`` games a pairing (100): win
    rates with their 95 % interval against their goal, CPU and iterations per decision per level, and
    the strength table's rows.  ``BENCH_BOT_DOC=1`` writes them into docs/BOTS.md's table."""
    games = int(os.environ.get("BENCH_BOT_GAMES", "100"))
    wanted = {p.strip() for p in os.environ.get("BENCH_BOT_PAIRINGS", "").split(",") if p.strip()}
    reports = []
    for game, seats, a, b in bot_pairings():
        if wanted and f"{game}:{seats}:{a}:{b}" not in wanted:
            continue
        say(f"bots: {game}, {seats} seats, level {a} against {b}, {games} games")
        r = arena.run_strength(game, _bot(a), _bot(b), games=games, seats=seats)
        say(arena.format_report(r))
        say(arena.table_row(r))
        reports.append(r)
        s.res.put(f"bots.{game}.{seats}p.{a}_vs_{b}", r["win_rate"], goal=arena.goal(r), **r)
        for level, c in r["cpu_per_decision"].items():
            key = f"bots.cpu_p99_ms.level_{level}"
            worst = max(c["p99"] * 1000, s.res.get(key) or 0.0)
            s.res.put(key, worst, budget_ms=c["budget"] * 1000)
        for level, it in r["iterations_per_decision"].items():
            s.res.put(f"bots.iterations.{game}.{seats}p.level_{level}", it["mean"], p50=it["p50"], cap=it["cap"])
    print(arena.TABLE_HEADER)
    for r in reports:
        print(arena.table_row(r))
    if os.environ.get("BENCH_BOT_DOC") == "1" and reports:
        doc = ROOT / "docs" / "BOTS.md"
        doc.write_text(arena.write_table(doc.read_text(), reports))
        say(f"bots: {len(reports)} rows written into {doc}")


def _bot(name: str) -> str | int:
    return int(name) if name.isdigit() else name


def main(argv: list[str] | None = None) -> int:
    names = phase_names()
    ap = argparse.ArgumentParser(
        prog="python -m scripts.bench", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument("phases", nargs="*", metavar="phase", help=f"phases to run (default: all): {', '.join(names)}")
    ap.add_argument("--scale", type=float, default=float(os.environ.get("BENCH_SCALE") or 1))
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("BENCH_SECONDS") or 8))
    ap.add_argument("--only", default="", help="comma-separated phases (the same as naming them)")
    ap.add_argument("--keep", action="store_true", help="keep the bench database and Redis DB afterwards")
    ap.add_argument("--db", default=os.environ.get("BENCH_DB") or "quarterdeck_bench")
    ap.add_argument("--out", type=Path, default=OUT / "latest.json", help="where the figures go (JSON)")
    ap.add_argument(
        "--redis-db", type=int, default=int(os.environ["BENCH_REDIS_DB"]) if os.environ.get("BENCH_REDIS_DB") else None
    )
    args = ap.parse_args(argv)
    only = {p for p in args.only.split(",") if p} | set(args.phases)
    if only - set(names):
        ap.error(f"unknown phase(s) {sorted(only - set(names))}; phases: {', '.join(names)}")
    if not (os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL")):
        raise SystemExit("bench: set DATABASE_URL and REDIS_URL (make bench takes them from a running make run)")
    seconds = args.seconds
    env = BenchEnv(os.environ["DATABASE_URL"], os.environ["REDIS_URL"], args.db, args.redis_db, args.keep)
    res = Results()
    say(f"bench database {args.db}, Redis DB {env.redis_db}; scale {args.scale:g}, {seconds:g}s per load phase")
    if os.getloadavg()[0] > 1.5:
        say("warning: the machine is busy (load > 1.5): absolute figures will be low; ratios still compare")
    env.reset()
    ctx = make_context(Settings(database_url=env.database_url, redis_url=env.redis_url))
    bench = BenchRun(env, res, GameService(ctx.store, nudge=lambda _gid: None), ctx, seconds, args.scale, only)
    try:
        for phase_of, run in PHASES:
            if any(_phase(name, only) for name in phase_of):
                run(bench)
    finally:
        ctx.close()
        env.close()
    res.details["conditions"] = {"scale": args.scale, "seconds_per_phase": seconds, "clients": CLIENTS}
    out = args.out
    res.write(out)
    print(table(res))
    print(f"\nwritten to {out}; took {time.perf_counter() - _t0:.0f}s")
    return 0
