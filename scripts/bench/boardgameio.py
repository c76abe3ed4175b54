"""The ``bgio`` phase of ``make bench``: the server a team would pick instead.

boardgame.io (npm ``boardgame.io``) with its PostgreSQL storage adapter
(``bgio-postgres``), at the exact versions of ``scripts/bench/bgio/package-lock.json``,
installed by ``make bench-deps`` (``make bench`` runs it; never at run time).  Its
server (``bgio/server.js``) runs on the bench's PostgreSQL in a database of its own,
serving a game shaped like Nautilus Industries (``bgio/game.js``): as many moves a
game as our engine's random playouts make, a state ``G`` whose JSON is as long as the
engine's state, a random legal move checked against the rules.  16 closed-loop
clients (``bgio/load.js``, boardgame.io's own client over its socket.io transport)
play 32 matches, as ``api_intents_16`` plays 32 games.

Figures: ``bgio_moves_16`` (moves/s) and ``cpu_ms_per_bgio_move`` (its Node process
and PostgreSQL, from ``/proc`` as ``cpu_ms_per_intent`` is measured; the matches'
rows written to the database are waited for, as our backlog is).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from statistics import mean
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from scripts.bench import cpu as bench_cpu
from scripts.bench import plan as bench_plan
from scripts.bench.env import OUT, BenchEnv, free_port
from scripts.bench.report import Results
from service.games import registry
from service.games.base import fold
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN

DIR = Path(__file__).resolve().parent / "bgio"
CLIENTS = 16
GAMES = 32
#: How to get the phase's pieces, said when they are missing.
HOW = "run `make bench-deps` (needs Node >= 18 and npm: apt-get install nodejs npm)"


def missing() -> str | None:
    """Why the phase cannot run here, or None."""
    if shutil.which("node") is None:
        return f"node is not on PATH; {HOW}"
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    if not version.startswith("v") or int(version[1:].split(".")[0] or 0) < 18:  # fetch() came with Node 18
        return f"node {version or '?'} is older than 18; {HOW}"
    for package in ("boardgame.io", "bgio-postgres"):
        if not (DIR / "node_modules" / package / "package.json").exists():
            return f"{package} is not installed in {DIR.relative_to(DIR.parents[2])}/node_modules; {HOW}"
    return None


def shape(games: int = 8) -> dict[str, float]:
    """What the bgio game is sized by, from our engine's random playouts (2 players):
    intents per whole game, and the mean length of the state's JSON over a game
    (every 10th state)."""
    engine = registry.get(bench_plan.GAME)
    moves, sizes = [], []
    for n in range(games):
        plan = bench_plan.plan_game(bench_plan.GAME, 2, 9000 + n)
        moves.append(len(plan.steps))
        state = fold(engine, engine.setup(2, {}, Rng(plan.seed, domain=SETUP_DOMAIN)))
        for i, step in enumerate(plan.steps):
            for e in step.events:
                state = engine.evolve(state, e)
            if i % 10 == 0:
                sizes.append(len(json.dumps(state)))
    return {"moves_per_game": round(mean(moves)), "state_bytes": round(mean(sizes)), "playouts": games}


class _Database:
    """The phase's own database on the bench's PostgreSQL server."""

    def __init__(self, base_url: str, name: str):
        self.name = name
        self.url = make_conninfo(base_url, dbname=name)
        self.admin = make_conninfo(base_url, dbname="postgres")

    def uri(self) -> str:
        """The database as a URL, the only form Sequelize takes as a string."""
        p = conninfo_to_dict(self.url)
        auth = quote(str(p.get("user", "postgres")), safe="")
        if p.get("password"):
            auth += ":" + quote(str(p["password"]), safe="")
        return f"postgresql://{auth}@{p.get('host', '127.0.0.1')}:{p.get('port', 5432)}/{quote(self.name, safe='')}"

    def create(self) -> None:
        self.drop()
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.name)))

    def drop(self) -> None:
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (self.name,),
            )
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(self.name)))

    def backends(self) -> set[int]:
        with psycopg.connect(self.url, autocommit=True) as conn:
            rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()").fetchall()
        return {int(row[0]) for row in rows}

    def stored(self, expected: dict[str, int], timeout: float = 60.0) -> float:
        """Wait until every match's row holds at least its expected ``_stateID`` (the
        writes of the last moves, which boardgame.io sends to the clients before it
        stores them); returns seconds waited."""
        started = time.monotonic()
        with psycopg.connect(self.url, autocommit=True) as conn:
            while time.monotonic() - started < timeout:
                rows = conn.execute(
                    """SELECT id, (state->>'_stateID')::int FROM "Games" WHERE id = ANY(%s)""", (list(expected),)
                ).fetchall()
                if sum(1 for gid, at in rows if at >= expected[gid]) == len(expected):
                    break
                time.sleep(0.02)
        return time.monotonic() - started


def _node_env(env: BenchEnv, sized: dict[str, float]) -> dict[str, str]:
    return env.env() | {
        "NODE_ENV": "production",
        "QD_BGIO_MOVES": str(sized["moves_per_game"]),
        "QD_BGIO_STATE_BYTES": str(sized["state_bytes"]),
    }


def _wait_up(url: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"bench: the boardgame.io server exited with {proc.returncode}; see {OUT / 'bgio.log'}")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/games", timeout=1.0) as resp:
            if resp.status == 200:
                return
        time.sleep(0.1)
    raise SystemExit(f"bench: the boardgame.io server at {url} did not answer within {timeout:.0f}s")


def run(env: BenchEnv, res: Results, seconds: float, say: Callable[[str], None]) -> None:
    sized = shape()
    say(
        f"bgio_moves_16: boardgame.io + bgio-postgres, {CLIENTS} socket.io clients on {GAMES} matches;"
        f" {sized['moves_per_game']} moves a game and a {sized['state_bytes']:,}-byte state, as our playouts"
    )
    db = _Database(env.base_db_url, f"{env.db_name}_bgio")
    db.create()
    node_env = _node_env(env, sized)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env.start_process("bgio", ["node", str(DIR / "server.js"), str(port), db.uri()], extra_env=node_env)
    load = None
    try:
        _wait_up(url, env.procs["bgio"])
        log = open(OUT / "bgio-load.log", "wb")  # noqa: SIM115 - the child owns it
        load = subprocess.Popen(
            ["node", str(DIR / "load.js"), url, str(CLIENTS), str(GAMES), str(seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=node_env,
            text=True,
        )
        log.close()
        assert load.stdin is not None and load.stdout is not None
        if (line := load.stdout.readline().strip()) != "ready":
            raise SystemExit(f"bench: the boardgame.io load did not get ready ({line!r}); see {OUT / 'bgio-load.log'}")
        server = env.procs["bgio"].pid
        groups = {"bgio": lambda: bench_cpu.tree(server), "postgres": bench_cpu.trees_named("postgres")}
        cpu0 = bench_cpu.snapshot(groups)
        load.stdin.write("go\n")
        load.stdin.flush()
        if (line := load.stdout.readline().strip()) != "done":
            raise SystemExit(f"bench: the boardgame.io load failed ({line!r}); see {OUT / 'bgio-load.log'}")
        cpu_server = bench_cpu.snapshot({"bgio": groups["bgio"]})
        out: dict[str, Any] = json.loads(load.stdout.readline())
        drained = db.stored(out.pop("state_ids"))
        cpu1 = bench_cpu.snapshot({"postgres": groups["postgres"]}) | cpu_server
        load.wait(timeout=30)
        backends = db.backends()
    finally:
        if load is not None and load.poll() is None:
            load.kill()
            load.wait()
        env.stop("bgio")
        if not env.keep:
            db.drop()
    moves = out["moves"]
    res.put(
        "bgio_moves_16",
        out["rate"],
        **{k: v for k, v in out.items() if k != "rate"},
        client_cpu_share=out["client_cpu_s"] / max(out["seconds"], 1e-9),
        stored_after_s=drained,
        shape=sized,
        versions={"boardgame.io": _version("boardgame.io"), "bgio-postgres": _version("bgio-postgres")},
    )
    ms = {g: bench_cpu.used(cpu0, cpu1, g) * 1000 for g in cpu1}
    ms["postgres_bench_db_only"] = bench_cpu.used(cpu0, cpu1, "postgres", backends) * 1000
    total = ms["bgio"] + ms["postgres"]
    res.put(
        "cpu_ms_per_bgio_move",
        total / moves if moves else None,
        requests=moves,
        counted=["bgio", "postgres"],
        cpu_ms=ms,
        **{f"{g}_ms_per_request": v / max(moves, 1) for g, v in ms.items()},
    )
    say(
        f"  {out['rate']:,.0f} moves/s, p50 {out['p50_ms'] or 0:.1f} ms, p99 {out['p99_ms'] or 0:.1f} ms,"
        f" errors {sum(out['errors'].values())}; client CPU {out['client_cpu_s'] / max(out['seconds'], 1e-9):.0%}"
        f" of a core; rows stored {drained:.1f}s after the last answer"
    )
    say(
        f"  cpu_ms_per_bgio_move: {total / max(moves, 1):.2f} ms over {moves:,} moves (bgio"
        f" {ms['bgio'] / max(moves, 1):.2f}, postgres {ms['postgres'] / max(moves, 1):.2f},"
        f" its database's backends {ms['postgres_bench_db_only'] / max(moves, 1):.2f})"
    )


def _version(package: str) -> str | None:
    with contextlib.suppress(OSError, ValueError):
        return json.loads((DIR / "node_modules" / package / "package.json").read_text())["version"]
    return None
