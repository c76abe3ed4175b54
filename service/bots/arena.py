"""The strength measurement: bots against bots (or a uniform random player), engine only, no servers.

``run_strength`` plays ``games`` games of ``game`` with ``seats`` players: player ``a`` in one seat, rotated
game by game, and player ``b`` in every other seat.  Each bot decides from what its seat's client would
read (the view and legal intents, through JSON) with ``time.thread_time`` as its CPU clock.  It returns (and
the CLI prints) ``a``'s win rate with a 95 % Wilson interval (a shared first place counts half), CPU per
decision p50/p99 by player (decisions with more than one legal intent; a forced one costs nothing), and
games per minute::

    python -m service.bots.arena --game nauticus --a 1 --b random --games 100 --seats 2
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from service.bots.levels import LEVELS, choose
from service.bots.position import candidates, intent_key, legal_by_key
from service.games import registry
from service.games.base import Engine
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, decision_domain

RANDOM = "random"

#: A game still running after this many intents is stopped and counts as a draw for ``a``.
MAX_INTENTS = 20_000


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion ``wins / n``."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _player(name: str | int) -> str | int:
    if name == RANDOM:
        return RANDOM
    level = int(name)
    if level not in LEVELS:
        raise ValueError(f"no bot level {level}; levels: {sorted(LEVELS)} or {RANDOM!r}")
    return level


def play_game(
    engine: Engine,
    players: list[str | int],
    seed: int,
    cpu: dict[str, list[float]],
    iterations: dict[str, list[int]] | None = None,
) -> tuple[dict[str, Any] | None, int]:
    """One game; ``players[i]`` plays seat ``i``.  Appends each bot decision's CPU seconds to
    ``cpu[str(level)]`` (and its iterations to ``iterations[str(level)]``).  Returns the result (None:
    stopped at :data:`MAX_INTENTS`) and the intents played."""
    game_seed = seed.to_bytes(32, "big")
    events = engine.setup(len(players), {}, Rng(game_seed, domain=SETUP_DOMAIN))
    state = None
    for event in events:
        state = engine.evolve(state, event)
    assert state is not None
    chooser = random.Random(seed)
    count = len(events)
    for step in range(MAX_INTENTS):
        to_act = engine.to_act(state)
        if not to_act:
            return engine.result(state), step
        seat = to_act[chooser.randrange(len(to_act))]
        legal = json.loads(json.dumps([c.to_json() for c in engine.legal(state, seat)]))
        who = players[seat]
        if who == RANDOM:
            options = candidates(legal)
            intent = options[chooser.randrange(len(options))]
        else:
            view = json.loads(json.dumps(engine.view(state, seat)))
            started = time.thread_time()
            stats: dict[str, int] = {}
            intent = choose(
                engine.name,
                seat,
                view,
                legal,
                level=int(who),
                seed=chooser.getrandbits(64),
                cpu_clock=time.thread_time,
                stats=stats,
            )
            if len(candidates(legal)) > 1:
                cpu.setdefault(str(who), []).append(time.thread_time() - started)
                if iterations is not None:
                    iterations.setdefault(str(who), []).append(stats["iterations"])
        command = legal_by_key(engine, state, seat)[intent_key(intent)]
        new = engine.decide(state, seat, command, Rng(game_seed, domain=decision_domain(count)))
        for event in new:
            state = engine.evolve(state, event)
        count += len(new)
    return None, MAX_INTENTS


def run_strength(
    game: str,
    a: str | int,
    b: str | int,
    *,
    games: int = 100,
    seats: int = 2,
    seed: int = 0,
    progress: Callable[[int, float], None] | None = None,
) -> dict[str, Any]:
    """Player ``a`` (a level number or ``"random"``) against ``b`` in ``games`` games of ``game`` (API name)
    with ``seats`` players; ``a`` sits at seat ``g % seats`` in game ``g`` (seeds ``seed + g``), ``b`` in the
    other seats.  Returns ``a``'s wins (a shared first place counts half), win rate and its 95 % interval,
    games stopped unfinished, CPU seconds per decision (p50, p99, max, count) per level, and games per
    minute of wall time.  ``progress(played, wins)``, when given, is called after each game: a pairing of a
    search level runs for minutes."""
    engine = registry.get(game)
    pa, pb = _player(a), _player(b)
    cpu: dict[str, list[float]] = {}
    iterations: dict[str, list[int]] = {}
    wins = 0.0
    unfinished = 0
    intents = 0
    started = time.perf_counter()
    for g in range(games):
        at = g % seats
        players = [pa if s == at else pb for s in range(seats)]
        result, played = play_game(engine, players, seed + g, cpu, iterations)
        intents += played
        if result is None:
            unfinished += 1
            wins += 0.5
        elif result["ranks"][str(at)] == 1:
            wins += 1.0 / sum(1 for r in result["ranks"].values() if r == 1)
        if progress is not None:
            progress(g + 1, wins)
    wall = time.perf_counter() - started
    low, high = wilson(wins, games)
    return {
        "game": game,
        "seats": seats,
        "a": str(pa),
        "b": str(pb),
        "games": games,
        "wins": wins,
        "win_rate": wins / games if games else 0.0,
        "interval95": [round(low, 3), round(high, 3)],
        "unfinished": unfinished,
        "intents_per_game": intents / games if games else 0.0,
        "cpu_per_decision": {
            level: {
                "p50": percentile(values, 0.5),
                "p99": percentile(values, 0.99),
                "max": max(values),
                "decisions": len(values),
                "budget": LEVELS[int(level)].budget_s,
            }
            for level, values in sorted(cpu.items())
        },
        "iterations_per_decision": {
            level: {
                "mean": sum(counts) / len(counts),
                "p10": percentile([float(c) for c in counts], 0.1),
                "p50": percentile([float(c) for c in counts], 0.5),
                "cap": LEVELS[int(level)].iterations,
            }
            for level, counts in sorted(iterations.items())
        },
        "games_per_minute": games / wall * 60 if wall else 0.0,
    }


def join_reports(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """One report of several runs of the same pairing with different first seeds (``--seed``): the games,
    wins and unfinished games add up, the interval is the joined games'; the CPU and iteration figures per
    level and the games per minute are the worst run's (iterations: the fewest; the mean weighted by
    decisions); ``runs`` says how many were joined."""
    first = reports[0]
    pairing = ("game", "seats", "a", "b")
    if any(tuple(r[k] for k in pairing) != tuple(first[k] for k in pairing) for r in reports):
        raise ValueError("only runs of one pairing (game, seats, a, b) can be joined")
    games = sum(r["games"] for r in reports)
    wins = sum(r["wins"] for r in reports)
    low, high = wilson(wins, games)
    cpu: dict[str, dict[str, Any]] = {}
    its: dict[str, dict[str, Any]] = {}
    for level in first["cpu_per_decision"]:
        runs = [r["cpu_per_decision"][level] for r in reports]
        decisions = [c["decisions"] for c in runs]
        cpu[level] = {
            **{q: max(c[q] for c in runs) for q in ("p50", "p99", "max")},
            "decisions": sum(decisions),
            "budget": runs[0]["budget"],
        }
        if level in first.get("iterations_per_decision", {}):
            counted = [r["iterations_per_decision"][level] for r in reports]
            its[level] = {
                "mean": sum(i["mean"] * n for i, n in zip(counted, decisions, strict=True)) / sum(decisions),
                **{q: min(i[q] for i in counted) for q in ("p10", "p50")},
                "cap": counted[0]["cap"],
            }
    return {
        **{k: first[k] for k in pairing},
        "games": games,
        "wins": wins,
        "win_rate": wins / games,
        "interval95": [round(low, 3), round(high, 3)],
        "unfinished": sum(r["unfinished"] for r in reports),
        "intents_per_game": sum(r["intents_per_game"] * r["games"] for r in reports) / games,
        "cpu_per_decision": cpu,
        "iterations_per_decision": its,
        "games_per_minute": min(r["games_per_minute"] for r in reports),
        "runs": sum(r.get("runs", 1) for r in reports),
    }


def format_report(report: dict[str, Any]) -> str:
    """A few lines for a terminal."""
    low, high = report["interval95"]
    lines = [
        f"{report['game']} {report['seats']}p: {report['a']} vs {report['b']}: "
        f"{report['wins']:g}/{report['games']} = {report['win_rate']:.1%} (95% {low:.1%}-{high:.1%}), "
        f"{report['unfinished']} unfinished, {report['games_per_minute']:.1f} games/min"
    ]
    for level, c in report["cpu_per_decision"].items():
        lines.append(
            f"  level {level}: CPU/decision p50 {c['p50'] * 1000:.1f} ms, p99 {c['p99'] * 1000:.1f} ms, "
            f"max {c['max'] * 1000:.1f} ms over {c['decisions']} decisions (budget {c['budget'] * 1000:.0f} ms)"
        )
    for level, it in report.get("iterations_per_decision", {}).items():
        lines.append(
            f"  level {level}: iterations/decision mean {it['mean']:.1f}, p50 {it['p50']:.0f}, p10 {it['p10']:.0f} "
            f"(cap {it['cap']})"
        )
    return "\n".join(lines)


#: The strength table's markers and header in docs/BOTS.md ("Measured strength"); rows between them are
#: written by :func:`write_table`, never typed.
TABLE_START = "<!-- strength table -->"
TABLE_END = "<!-- end of the strength table -->"
TABLE_HEADER = (
    "| game | seats | player a | against (b) | games | a's wins | a's win rate (95 % interval) | goal | "
    "CPU/decision of a: p50 / p99 / max (budget) | of b | iterations/decision of a: mean (p50) | of b | games/min |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def _who(player: str) -> str:
    return player if player == RANDOM else f"level {player}"


def goal(report: dict[str, Any]) -> float | None:
    """The win rate ``a`` should reach against ``b`` (docs/BOTS.md): at least 0.9 against random with two
    seats; against a weaker level 0.6 with two seats (0.75 for level 3 against level 1), and 1/n + 0.15
    with n seats; None for other pairings."""
    a, b, seats = report["a"], report["b"], report["seats"]
    if b == RANDOM:
        return 0.9 if seats == 2 else None
    if a == RANDOM or int(a) <= int(b):
        return None
    if seats == 2:
        return 0.75 if (a, b) == ("3", "1") else 0.6
    return round(1 / seats + 0.15, 3)


def _held(target: float | None, low: float, high: float) -> str:
    if target is None:
        return "—"
    return f"{target:.0%}" + (" ✓" if low >= target else (" ✗" if high < target else " ?"))


def _old_goal(cells: list[str]) -> str:
    """The goal column of a row of the older layout, from its players and its interval's text."""
    a, b = (c.removeprefix("level ") for c in cells[2:4])
    found = re.search(r"\((\d+)%–(\d+)%\)", cells[6])
    if found is None:
        return "—"
    report = {"a": a, "b": b, "seats": int(cells[1])}
    return _held(goal(report), int(found[1]) / 100, int(found[2]) / 100)


def table_row(report: dict[str, Any]) -> str:
    """One row of the strength table for a :func:`run_strength` report."""
    low, high = report["interval95"]
    # Joined runs are marked for the table's footnote.
    games = f"{report['games']} ¹" if report.get("runs", 1) > 1 else str(report["games"])

    def cpu(level: str) -> str:
        c = report["cpu_per_decision"].get(level)
        if c is None:
            return "—"
        return f"{c['p50'] * 1000:.1f} / {c['p99'] * 1000:.1f} / {c['max'] * 1000:.1f} ms ({c['budget'] * 1000:.0f})"

    def its(level: str) -> str:
        it = report.get("iterations_per_decision", {}).get(level)
        return "—" if it is None else f"{it['mean']:.1f} ({it['p50']:.0f})"

    return (
        f"| {report['game']} | {report['seats']} | {_who(report['a'])} | {_who(report['b'])} | {games} | "
        f"{report['wins']:g} | {report['win_rate']:.0%} ({low:.0%}–{high:.0%}) | "
        f"{_held(goal(report), low, high)} | {cpu(report['a'])} | {cpu(report['b'])} | "
        f"{its(report['a'])} | {its(report['b'])} | {report['games_per_minute']:.1f} |"
    )


def write_table(text: str, reports: list[dict[str, Any]]) -> str:
    """``text`` (docs/BOTS.md) with the rows of ``reports`` in its strength table: a pairing measured again
    (game, seats, a, b) replaces its row, a new one is added; the rows stay in the order game, seats, a, b."""
    start, end = text.index(TABLE_START), text.index(TABLE_END)
    rows: dict[tuple[str, int, str, str], str] = {}
    for line in text[start + len(TABLE_START) : end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) not in (10, 13) or not cells[1].isdigit():
            continue  # the header
        if len(cells) == 10:  # a row measured before the goal and iteration columns: kept, its goal added
            cells = [*cells[:7], _old_goal(cells), cells[7], cells[8], "—", "—", cells[9]]
        rows[cells[0], int(cells[1]), cells[2], cells[3]] = "| " + " | ".join(cells) + " |"
    for r in reports:
        rows[r["game"], r["seats"], _who(r["a"]), _who(r["b"])] = table_row(r)

    def order(key: tuple[str, int, str, str]) -> tuple[str, int, int, str]:
        game, seats, a, b = key
        return (game, seats, 0 if b == RANDOM else 1, a + b)

    body = "\n".join(rows[k] for k in sorted(rows, key=order))
    return f"{text[:start]}{TABLE_START}\n{TABLE_HEADER}\n{body}\n{text[end:]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.bots.arena", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", required=True, choices=registry.registered())
    parser.add_argument("--a", required=True, help="a level number or 'random'")
    parser.add_argument("--b", required=True, help="a level number or 'random'")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    def progress(played: int, wins: float) -> None:
        # stderr, so that --json's standard output stays one document
        elapsed = time.perf_counter() - started
        print(f"{played}/{args.games} games, {args.a}'s wins {wins:g}, {elapsed:.0f} s", file=sys.stderr, flush=True)

    report = run_strength(
        args.game, args.a, args.b, games=args.games, seats=args.seats, seed=args.seed, progress=progress
    )
    print(json.dumps(report) if args.json else format_report(report))
    return 0


if __name__ == "__main__":  # pragma: no cover - the CLI
    raise SystemExit(main())
