"""``scripts/bot_iterations.py`` (docs/BOTS.md, "Search speed"): its count of a search's iterations, read off
the clock, is the count the search itself reports."""

from __future__ import annotations

from scripts import bot_iterations
from service.bots.levels import choose


def _ticking(step: float):
    now = 0.0

    def clock() -> float:
        nonlocal now
        now += step
        return now

    return clock


def test_iterations_counted_from_clock_reads_are_the_searchs_own_count() -> None:
    saved = bot_iterations.positions(2, seed=3)
    assert {p["game"] for p in saved} == {"nauticus", "nautilus-industries", "waters-of-nereus"}
    for p in saved:
        for level, step in ((2, 0.0007), (3, 0.0011)):
            counted = bot_iterations.count_iterations(p, level, _ticking(step))
            stats: dict[str, int] = {}
            choose(
                p["game"], p["seat"], p["view"], p["legal"], level=level, seed=7, cpu_clock=_ticking(step), stats=stats
            )
            assert counted == stats["iterations"] > 1
