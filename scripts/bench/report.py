"""The benchmark's figures, ratios and targets: the printed table,
``.bench/latest.json``, and the table of docs/PERFORMANCE.md.

``python -m scripts.bench.report`` (``make bench-report``) copies a run's JSON to
``docs/bench/latest.json`` and writes its table into docs/PERFORMANCE.md between
the markers, so the page's figures are always a run's, never typed by hand."""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: key -> (unit, what), in the issue's order.
FIGURES: dict[str, tuple[str, str]] = {
    "pg_commit_1": ("events/s", "baseline: psycopg INSERT+COMMIT, 1 connection"),
    "pg_commit_16": ("events/s", "baseline: psycopg INSERT+COMMIT, 16 connections"),
    "flask_insert_16": ("req/s", "baseline: minimal Flask INSERT+COMMIT, our gunicorn, 16 clients"),
    "minimum_intents_16": ("req/s", "the design's minimum: append + nudge + bare worker, our gunicorn, 16 clients"),
    "cpu_ms_per_minimum_intent": ("ms", "CPU per request of the design's minimum: gunicorn + worker + PostgreSQL"),
    "api_ratio_bound": ("ratio", "minimum_intents_16 / flask_insert_16: the highest api/flask the design leaves"),
    "peer_cmd_1": ("cmds/s", "peer: eventsourcing reload-decide-save, in process"),
    "api_intents_16": ("intents/s", "ours: legal intents over HTTP, 16 clients"),
    "bgio_moves_16": ("moves/s", "boardgame.io + bgio-postgres: moves over its socket.io, 16 clients"),
    "cpu_ms_per_intent": ("ms", "CPU per intent: gunicorn + RQ worker (backlog drained) + PostgreSQL"),
    "cpu_ms_per_bgio_move": ("ms", "CPU per boardgame.io move: its Node process + PostgreSQL (rows stored)"),
    "cpu_ms_per_intent_at_lag_rate": ("ms", "the same in the lag phase, at its fixed rate (compares between runs)"),
    "api_intents_16_rate_limited": ("intents/s", "api_intents_16 with make run's rate limits on (off elsewhere)"),
    "cpu_ms_per_intent_rate_limited": ("ms", "cpu_ms_per_intent with the rate limits on: what make run pays"),
    "cpu_ms_per_flask_insert": ("ms", "CPU per baseline request: its gunicorn + PostgreSQL"),
    "lag_p50_ms": ("ms", "commit -> visible in Redis, p50 (at half api rate)"),
    "lag_p99_ms": ("ms", "commit -> visible in Redis, p99"),
    "fold_ceiling": ("events/s", "fold + board views in memory, one process"),
    "rebuild_rate": ("events/s", "make rebuild from PostgreSQL"),
    "pg_bytes_per_event": ("bytes", "PostgreSQL events table + indexes per event (played games, default clock)"),
    "redis_bytes_per_active_game": ("bytes", "MEMORY USAGE of a game's hash half-way (3 games of each kind)"),
    "redis_bytes_per_finished_game": ("bytes", "the same, finished; it leaves Redis after QD_FINISHED_RETENTION_S"),
    "latency_seq20": ("ms", "p50 intent latency near the start of a game"),
    "latency_seq2000": ("ms", "p50 intent latency at seq ~2000"),
    "followers_delivery_p50_ms": ("ms", "projection commit -> read by a follower, p50 (2,000 followers, 50 games)"),
    "followers_delivery_p99_ms": ("ms", "projection commit -> read by a follower, p99"),
    "healthz_p99_ms_with_followers": ("ms", "/healthz p99 while 2,000 followers and 16 intent clients run"),
    "api_intents_16_with_followers": ("intents/s", "api_intents_16 while 2,000 followers follow the games"),
    "click_move_p50_ms": ("ms", "a person's click -> the page shows the move, p50 (browser, followers)"),
    "click_move_p95_ms": ("ms", "the same, p95"),
    "click_reply_p50_ms": ("ms", "the move's 201 -> the level-1 house bot's reply shown, p50"),
    "click_reply_p95_ms": ("ms", "the same, p95 (the bot's 10 ms budget included)"),
    "followers_ratio_bound": (
        "ratio",
        "highest intents ratio bare-socket delivery leaves here (bench/floor.py)",
    ),
}


@dataclass
class Target:
    name: str
    value: float | None
    goal: str
    met: bool | None


@dataclass
class Results:
    figures: dict[str, float | None] = field(default_factory=dict)
    #: Load average (1 min) when each figure was taken.
    loads: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.time)

    def put(self, key: str, value: float | None, **detail: Any) -> None:
        self.figures[key] = value
        self.loads[key] = os.getloadavg()[0]
        if detail:
            self.details[key] = detail

    def get(self, key: str) -> float | None:
        v = self.figures.get(key)
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    def ratio(self, a: str, b: str) -> float | None:
        x, y = self.get(a), self.get(b)
        return x / y if x is not None and y else None

    def targets(self) -> list[Target]:
        def at_least(name: str, v: float | None, goal: float) -> Target:
            return Target(name, v, f">= {goal:g}", None if v is None else v >= goal)

        def at_most(name: str, v: float | None, goal: float) -> Target:
            return Target(name, v, f"<= {goal:g}", None if v is None else v <= goal)

        # Stated against bounds measured in the same run (the design's minimum, the floor
        # of delivery), so that a goal means the same on a fast machine and a busy one.
        followers_share = self.ratio("api_intents_16_with_followers", "api_intents_16")
        floor = self.get("followers_ratio_bound")
        out = [
            at_least("api_intents_16 / minimum_intents_16", self.ratio("api_intents_16", "minimum_intents_16"), 0.8),
            at_most(
                "cpu_ms_per_intent / cpu_ms_per_minimum_intent",
                self.ratio("cpu_ms_per_intent", "cpu_ms_per_minimum_intent"),
                1.3,
            ),
            at_least(
                "(api with followers / api) / followers_ratio_bound",
                followers_share / floor if followers_share is not None and floor else None,
                0.75,
            ),
            at_most("followers_delivery_p99_ms", self.get("followers_delivery_p99_ms"), 100),
            at_most("healthz_p99_ms_with_followers", self.get("healthz_p99_ms_with_followers"), 100),
            at_least("api_intents_16 / peer_cmd_1", self.ratio("api_intents_16", "peer_cmd_1"), 2),
            at_least("api_intents_16 / bgio_moves_16", self.ratio("api_intents_16", "bgio_moves_16"), 1),
            at_most(
                "cpu_ms_per_intent / cpu_ms_per_bgio_move", self.ratio("cpu_ms_per_intent", "cpu_ms_per_bgio_move"), 1
            ),
            at_most("click_move_p95_ms", self.get("click_move_p95_ms"), 150),
            at_most("click_reply_p95_ms", self.get("click_reply_p95_ms"), 300),
            at_least("rebuild_rate / fold_ceiling", self.ratio("rebuild_rate", "fold_ceiling"), 0.5),
            at_most("lag_p50_ms", self.get("lag_p50_ms"), 5),
            at_most("lag_p99_ms", self.get("lag_p99_ms"), 20),
        ]
        growth = self.details.get("rebuild_rate", {}).get("rss_growth")
        out.append(at_most("rebuild RSS growth (largest / smallest scale)", growth, 1.25))
        out.append(at_most("pg_bytes_per_event", self.get("pg_bytes_per_event"), 450))
        out.append(at_most("latency_seq2000 / latency_seq20", self.ratio("latency_seq2000", "latency_seq20"), 1.2))
        for key in sorted(k for k in self.figures if k.startswith("playout.")):
            out.append(at_least(key, self.get(key), 10_000))
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            **self.figures,
            "targets": [t.__dict__ for t in self.targets()],
            "load_avg_1m": self.loads,
            "details": self.details,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "seconds": round(time.time() - self.started, 1),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Results:
        """The results :meth:`to_json` wrote (targets are recomputed from the figures)."""
        meta = {"targets", "load_avg_1m", "details", "machine", "started_utc", "seconds"}
        res = cls(
            figures={k: v for k, v in data.items() if k not in meta},
            loads=dict(data.get("load_avg_1m") or {}),
            details=dict(data.get("details") or {}),
        )
        return res

    def write(self, path: Path) -> None:
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2, sort_keys=False, default=str) + "\n")


def _fmt(v: float | None) -> str:
    if v is None:
        return "—"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.2f}"


def _derived(key: str) -> tuple[str, str]:
    """Unit and meaning of a figure named per game or level."""
    if key.startswith("bots.cpu_p99_ms."):
        return "ms", "house bot CPU per decision, p99 over the bots phase (goal: budget x 1.2)"
    if key.startswith("bots.iterations."):
        return "iterations", "house bot search iterations per decision, mean (docs/BOTS.md)"
    if key.startswith("bots."):
        return "win rate", "house bots, seats rotated, against their goal (docs/BOTS.md, Measured strength)"
    return "intents/s", "random playouts in process, 2 players"


def table(res: Results) -> str:
    lines = [f"{'figure':<28} {'value':>12}  {'unit':<10} {'load':>5}  what", "-" * 110]
    keys = list(FIGURES) + sorted(k for k in res.figures if k.startswith(("playout.", "bots.")))
    for key in keys:
        unit, what = FIGURES.get(key) or _derived(key)
        load = res.loads.get(key)
        lines.append(
            f"{key:<28} {_fmt(res.get(key)):>12}  {unit:<10} {'' if load is None else f'{load:.1f}':>5}  {what}"
        )
    api = res.details.get("api_intents_16", {})
    if api:
        lines.append(f"{'  api p50 / p99 latency':<28} {api.get('p50_ms', 0):>6.1f} / {api.get('p99_ms', 0):<6.1f} ms")
    lines += ["", f"{'target':<52} {'value':>10}  {'goal':<9} met", "-" * 79]
    for t in res.targets():
        met = "—" if t.met is None else ("yes" if t.met else "NO")
        lines.append(f"{t.name:<52} {_fmt(t.value):>10}  {t.goal:<9} {met}")
    # The bounds the targets are stated against, and the bare-Flask baseline, from the same
    # run: what no implementation of the design (or no stream server) could beat here.
    bounds = [
        ("the design's minimum, intents/s (minimum_intents_16)", res.get("minimum_intents_16")),
        ("the design's minimum, CPU ms an intent", res.get("cpu_ms_per_minimum_intent")),
        ("the minimum against bare Flask (api_ratio_bound)", res.get("api_ratio_bound")),
        ("ours against bare Flask (api / flask)", res.ratio("api_intents_16", "flask_insert_16")),
        ("intents ratio bare-socket delivery leaves", res.get("followers_ratio_bound")),
    ]
    if any(v is not None for _, v in bounds):
        lines += ["", f"{'measured beside the targets':<54} {'value':>10}", "-" * 75]
        lines += [f"{name:<54} {_fmt(v):>10}" for name, v in bounds if v is not None]
    return "\n".join(lines)


ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "PERFORMANCE.md"
KEPT = ROOT / "docs" / "bench" / "latest.json"
BEGIN = "<!-- bench-report: generated by `make bench-report` from docs/bench/latest.json; do not edit -->"
END = "<!-- bench-report: end -->"


def markdown(data: dict[str, Any]) -> str:
    """The page's table of one run (the JSON :meth:`Results.to_json` wrote)."""
    machine = data.get("machine") or {}
    conditions = (data.get("details") or {}).get("conditions") or {}
    about = (
        f"Run started {data.get('started_utc', '?')}, {data.get('seconds', '?')} s;"
        f" {machine.get('cpus', '?')} CPUs, Python {machine.get('python', '?')}, {machine.get('platform', '?')};"
        f" scale {conditions.get('scale', '?')}, {conditions.get('seconds_per_phase', '?')} s per load phase."
        " The `load` column is the 1-minute load average when each figure was taken."
    )
    return f"{about}\n\n```\n{table(Results.from_json(data))}\n```"


def publish(page: str, data: dict[str, Any]) -> str:
    """``page`` with the text between the markers replaced by :func:`markdown`."""
    head, begin, rest = page.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"the page has no markers {BEGIN!r} ... {END!r}")
    return f"{head}{BEGIN}\n{markdown(data)}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench.report", description=__doc__)
    ap.add_argument("json", nargs="?", type=Path, default=ROOT / ".bench" / "latest.json", help="a run's figures")
    args = ap.parse_args(argv)
    if not args.json.exists():
        raise SystemExit(f"bench-report: {args.json} does not exist: run make bench first")
    data = json.loads(args.json.read_text())
    KEPT.parent.mkdir(exist_ok=True)
    if args.json.resolve() != KEPT.resolve():
        KEPT.write_text(json.dumps(data, indent=2) + "\n")
    PAGE.write_text(publish(PAGE.read_text(), data))
    print(f"{PAGE.relative_to(ROOT)}: the table of {args.json} ({data.get('started_utc', '?')})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
