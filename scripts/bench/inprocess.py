"""CPU per intent inside one process, for A/B runs of a change on a noisy machine.

``make bench`` measures the service as it runs (gunicorn, the RQ worker, PostgreSQL), and on a
shared VM its figures wander by a third between runs of the same tree (docs/PERFORMANCE.md,
"Running the benchmark").  This measures one side at a time in this process only, against the real
PostgreSQL and Redis, so that two trees run alternately in one run compare:

* ``--part api``: the app's WSGI callable (``create_app``), called directly with prepared
  ``POST /v1/games/{id}/intents`` requests of planned legal intents: everything of an intent
  in the API except gunicorn and the socket;
* ``--part worker``: ``projections.runner.catch_up_many`` over batches of ``--batch`` games
  with one new intent each, with the drain job's own cache of its last writes: a drain's work
  except the wake;
* ``--part minimum``: the API side of the design's minimum (``scripts/bench/minimum_serve.py``), its
  WSGI callable called the same way with appends to the same games: what ``--part api``
  spends beyond it is the service's own work (validation, seats, rules, the chain, answers);
* ``--part domain``: of that work, what the rules themselves cost, in memory with no I/O and no
  framework: the same planned intents decided and sealed (``pipeline.act``: the rules, the
  clock, the hash chain) and each game's board fields rendered once an intent
  (``projections.boards.render_board_fields``: views and legal lists per seat, as a projection
  writes them).  It needs no database; ``act_us_per_intent`` and ``views_us_per_intent``
  split its figure.

``--limits`` turns the rate limits on (off in ``make bench``, on in ``make run``), with the
default's windows and amounts no single client reaches: what counting them costs an intent.

Prints one JSON line: ``us_per_intent`` (this process's CPU time; the worker's part: inside
the catch-ups only), ``wall_us_per_intent`` and ``postgres_us_per_intent`` (the bench
database's backends; the worker's part counts the appends that feed it too).  ``--profile`` prints a
cProfile (CPU clock) instead.  An A/B: run from a tree's root, ``python -m`` imports that
tree's ``service`` (the current directory comes first on the import path)::

    mkdir /tmp/before && git archive <before> | tar -x -C /tmp/before
    cp -r scripts /tmp/before/   # if that tree has no scripts.bench package
    for i in 1 2 3 4 5 6; do
        (cd /tmp/before && $OLDPWD/.venv/bin/python -m scripts.bench.inprocess)
        .venv/bin/python -m scripts.bench.inprocess
    done

It uses a database of its own (``--db``) and an empty Redis DB (``BENCH_REDIS_DB``, or the
first empty one from 15 down), both emptied afterwards.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from projections import boards, runner
from schemas.intents import parse_intent
from scripts.bench import plan as bench_plan
from scripts.bench.env import BenchEnv, backend_cpu_seconds
from service.bootstrap import bootstrap
from service.config import Settings
from service.domain import pipeline
from service.games import registry
from service.games.base import Event, fold
from service.service_layer.commands import GameService

GAMES = 24


def _postgres_cpu(env: BenchEnv) -> float:
    """CPU seconds so far of the bench database's backends (those alive now)."""
    return backend_cpu_seconds(sorted(env.backends()))


def _post(app: Callable[..., Any], path: str, body: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    """``POST path`` through the WSGI callable ``app``, as a server would call it; the JSON
    answer of a 201 (anything else stops the script)."""
    data = json.dumps(body).encode()
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "SERVER_NAME": "bench",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(data)),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(data),
        "wsgi.errors": sys.stderr,
        "wsgi.input_terminated": True,
    }
    if token is not None:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    status: list[str] = []
    answer = b"".join(app(environ, lambda s, _h, _e=None: status.append(s)))
    if not status[0].startswith("201"):
        raise SystemExit(f"bench_inprocess: {path} refused: {status[0]} {answer[:300]!r}")
    return json.loads(answer)


def _api(settings: Settings, games: list[bench_plan.Created]) -> Callable[[], int]:
    """One round: every game's next planned intent, posted through the WSGI callable."""
    from service.http.app import create_app

    app = create_app(settings)

    def post(g: bench_plan.Created) -> None:
        step = g.plan.steps[g.next_step]
        body = {"intent": step.intent, "expected_version": g.version}
        g.version = _post(app, f"/v1/games/{g.game_id}/intents", body, g.tokens[step.seat])["version"]
        g.next_step += 1

    def one_round() -> int:
        for g in games:
            post(g)
        return len(games)

    return one_round


def _minimum(env: BenchEnv, games: list[bench_plan.Created]) -> Callable[[], int]:
    """One round: an append of the design's minimum to each game, through its WSGI callable."""
    from scripts.bench import minimum as bench_minimum
    from scripts.bench import minimum_serve as bench_minimum_serve

    bench_minimum.prepare(env.database_url)
    os.environ.update(DATABASE_URL=env.database_url, REDIS_URL=env.redis_url)
    app = bench_minimum_serve.make_app()
    versions = dict.fromkeys((g.game_id for g in games), 0)

    def post(game_id: str) -> None:
        body = {"intent": bench_minimum.INTENT, "expected_version": versions[game_id]}
        versions[game_id] = _post(app, f"/append/{game_id}", body)["version"]

    def one_round() -> int:
        for g in games:
            post(g.game_id)
        return len(games)

    return one_round


def _worker(ctx: Any, games: list[bench_plan.Created], batch: int) -> Callable[[], int]:
    """One round: each game gets its next planned intent appended, then batches are
    caught up.  The CPU clock runs around the catch-ups only (a ``--profile`` also
    shows the appends that feed them)."""
    known = runner.Checkpoints(1024)
    spent = {"cpu": 0.0}

    def one_round() -> int:
        for first in range(0, len(games), batch):
            group = games[first : first + batch]
            for g in group:
                bench_plan.advance(ctx.store, g, 1, snapshot=False)
            started = time.process_time()
            _, failed = runner.catch_up_many(ctx.redis, ctx.store, [g.game_id for g in group], known=known)
            spent["cpu"] += time.process_time() - started
            if failed:
                raise SystemExit(f"bench_inprocess: projection failed: {failed}")
        return len(games)

    one_round.spent = spent  # type: ignore[attr-defined]
    return one_round


def _domain(plans: list[bench_plan.Plan], rounds: int) -> dict[str, Any]:
    """``--part domain``: the planned intents of ``rounds`` rounds (after 10 of warm-up) decided,
    sealed and rendered in memory; CPU per intent of each half."""
    games = []
    for n, plan in enumerate(plans):
        engine = registry.get(plan.game)
        game_id = f"00000000-0000-4000-8000-{n:012d}"
        meta = {"intent_id": "", "seat": None, "received_at": "2026-01-01T00:00:00.000Z"}
        opening = pipeline.open_game(engine, game_id, ["a", "b"], {}, plan.seed, meta)
        info = boards.info_of(game_id, opening[0].data, meta["received_at"])
        state = fold(engine, [Event(e.type, e.data) for e in opening[1:]])
        games.append([engine, info, state, pipeline.Head(game_id, plan.seed, len(opening), opening[-1].hash, meta)])
    spent = {"act": 0.0, "views": 0.0}
    for r in range(10 + rounds):
        for game, plan in zip(games, plans, strict=True):
            engine, info, state, head = game
            step = plan.steps[r]
            command = parse_intent(plan.game, step.intent)
            meta = {**head.meta, "seat": step.seat, "intent": step.intent}
            t0 = time.process_time()
            decision = pipeline.act(engine, state, step.seat, command, replace(head, meta=meta))
            t1 = time.process_time()
            boards.render_board_fields(engine, info, decision.state, head.version + len(decision.events), False)
            t2 = time.process_time()
            if [e.data for e in decision.events[: len(step.events)]] != [e.data for e in step.events]:
                raise SystemExit(f"bench_inprocess: {plan.game} decided otherwise than its plan at step {r}")
            if r >= 10:
                spent["act"] += t1 - t0
                spent["views"] += t2 - t1
            game[3] = head.after(decision.events)
    intents = rounds * len(plans)
    return {
        "part": "domain",
        "intents": intents,
        "us_per_intent": round(1e6 * (spent["act"] + spent["views"]) / intents, 1),
        "act_us_per_intent": round(1e6 * spent["act"] / intents, 1),
        "views_us_per_intent": round(1e6 * spent["views"] / intents, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("api", "worker", "minimum", "domain"), default="api")
    ap.add_argument("--rounds", type=int, default=60, help=f"rounds measured, {GAMES} intents each")
    ap.add_argument("--batch", type=int, default=3, help="worker: games per catch-up")
    ap.add_argument("--profile", action="store_true", help="print a cProfile (CPU clock) instead")
    ap.add_argument(
        "--limits",
        action="store_true",
        help="api: rate limits on, as make run has them (amounts raised so that this one client is never refused)",
    )
    ap.add_argument("--db", default="quarterdeck_bench_inprocess")
    args = ap.parse_args(argv)
    if args.part == "domain":
        plans = [bench_plan.plan_game(bench_plan.GAME, 2, 7000 + i, max_steps=args.rounds + 12) for i in range(GAMES)]
        print(json.dumps(_domain(plans, args.rounds)))
        return 0
    if not (os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL")):
        raise SystemExit("bench_inprocess: set DATABASE_URL and REDIS_URL")
    redis_db = int(os.environ["BENCH_REDIS_DB"]) if os.environ.get("BENCH_REDIS_DB") else None
    env = BenchEnv(os.environ["DATABASE_URL"], os.environ["REDIS_URL"], args.db, redis_db)
    env.reset()
    if args.limits:
        # The same windows as the defaults (per second and per minute, per address and per
        # key), so the same counting work, with room for this client's rate.
        os.environ.update(
            QD_RATE_LIMITS="on",
            QD_LIMIT_INTENTS="1000000/second;100000000/minute",
            QD_LIMIT_INTENTS_KEY="1000000/second;100000000/minute",
        )
    # The service's settings as the bench starts it (rate limits off unless --limits, a queue of its own).
    settings = Settings.from_env(env.env())
    ctx = bootstrap(settings)
    try:
        svc = GameService(ctx.store, nudge=lambda _gid: None)
        # Enough planned intents for the warm-up round and every round measured.
        plans = [bench_plan.plan_game(bench_plan.GAME, 2, 7000 + i, max_steps=args.rounds + 12) for i in range(GAMES)]
        games = [bench_plan.create(svc, p) for p in plans]
        for g in games:
            runner.project_game(ctx.redis, ctx.store, g.game_id)
        if min(len(p.steps) for p in plans) < args.rounds + 10:
            raise SystemExit("bench_inprocess: a planned game ends too early; use fewer --rounds")
        if args.part == "api":
            one_round = _api(settings, games)
        elif args.part == "minimum":
            one_round = _minimum(env, games)
        else:
            one_round = _worker(ctx, games, args.batch)
        for _ in range(10):  # warm-up: caches, prepared statements, imports
            one_round()
        spent = getattr(one_round, "spent", None)
        if spent is not None:
            spent["cpu"] = 0.0
        if args.profile:
            profile = cProfile.Profile(time.process_time)
            profile.enable()
            for _ in range(args.rounds):
                one_round()
            profile.disable()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(50)
            return 0
        pg0, cpu0, wall0 = _postgres_cpu(env), time.process_time(), time.perf_counter()
        intents = sum(one_round() for _ in range(args.rounds))
        cpu, wall, pg = time.process_time() - cpu0, time.perf_counter() - wall0, _postgres_cpu(env) - pg0
        if spent is not None:
            cpu = spent["cpu"]  # the worker's catch-ups only, not the appends that feed them
        print(
            json.dumps(
                {
                    "part": args.part,
                    "batch": args.batch if args.part == "worker" else None,
                    "limits": args.limits,
                    "intents": intents,
                    "us_per_intent": round(1e6 * cpu / intents, 1),
                    "wall_us_per_intent": round(1e6 * wall / intents, 1),
                    # The worker's part: the appends that feed its catch-ups are counted here too.
                    "postgres_us_per_intent": round(1e6 * pg / intents, 1),
                }
            )
        )
        return 0
    finally:
        ctx.close()
        env.close()


if __name__ == "__main__":
    raise SystemExit(main())
