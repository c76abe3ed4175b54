"""The house bots' levels and the one entry point, :func:`choose`.

A level is an algorithm, a CPU budget per decision and an iteration cap (docs/BOTS.md, "House bots").  The
budget is CPU seconds read from the caller's ``cpu_clock`` (the worker passes ``time.thread_time``), never
wall time: a bot thinks as long on a busy machine as on a quiet one.  The clock is read only between
iterations, so the same seed and the same clock readings give the same move, and without a clock the
iteration cap alone decides (fully deterministic).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.bots.greedy import choose_greedy
from service.bots.ismcts import SearchShape, choose_ismcts
from service.bots.position import candidates, seat_view
from service.games import registry


@dataclass(frozen=True)
class Level:
    number: int
    #: ``"greedy"`` (one ply, ``iterations`` = determinizations) or ``"ismcts"``.
    algorithm: str
    #: CPU seconds per decision.
    budget_s: float
    #: Upper bound on iterations (greedy: determinizations) per decision.
    iterations: int
    description: str
    #: Rollouts of ISMCTS levels; None for greedy.
    shape: SearchShape | None = None


LEVELS: dict[int, Level] = {
    1: Level(1, "greedy", 0.01, 4, "one-ply greedy: the best evaluated result of each legal intent"),
    2: Level(
        2,
        "ismcts",
        0.02,
        300,
        "Information-Set MCTS, short greedy rollouts",
        SearchShape(rollout_depth=4, rollout_width=2),
    ),
    3: Level(
        3,
        "ismcts",
        0.05,
        1000,
        "Information-Set MCTS, more iterations and longer greedy rollouts",
        SearchShape(rollout_depth=6, rollout_width=2),
    ),
}


class UnknownLevel(LookupError):
    pass


def choose(
    game: str,
    seat: int,
    view: dict[str, Any],
    legal: list[dict[str, Any]],
    *,
    level: int,
    seed: int,
    cpu_clock: Callable[[], float] | None = None,
    stats: dict[str, int] | None = None,
) -> dict[str, Any]:
    """One intent of ``legal`` (the element itself, postable as is) for ``seat`` of a game of ``game`` (its
    API name), from the seat's ``view`` (the ``GET /v1/games/{id}`` body or its ``view``) and ``legal`` (the
    ``/legal`` intents or body).  ``seed`` makes the choice repeatable; ``cpu_clock`` (seconds) bounds it by
    the level's budget, and without it only the level's iteration cap does.  ``stats``, when given, gets
    ``"iterations"``: how many the search ran (greedy: determinizations; 0 for a forced move)."""
    if level not in LEVELS:
        raise UnknownLevel(f"no bot level {level!r}; levels: {sorted(LEVELS)}")
    spec = LEVELS[level]
    intents = candidates(legal)
    if not intents:
        raise ValueError("no legal intent to choose from")
    if stats is not None:
        stats["iterations"] = 0
    if len(intents) == 1:
        return intents[0]
    engine = registry.get(game)
    rnd = random.Random(seed)
    state_view = seat_view(view)
    if cpu_clock is None:

        def out_of_budget() -> bool:
            return False

    else:
        deadline = cpu_clock() + spec.budget_s

        def out_of_budget() -> bool:
            return cpu_clock() >= deadline

    ask: Callable[[], bool] = out_of_budget
    if stats is not None:
        # The search asks before every iteration but the first: each "go on" is one more.
        stats["iterations"] = 1
        counts = stats

        def counted() -> bool:
            stop = out_of_budget()
            counts["iterations"] += 0 if stop else 1
            return stop

        ask = counted

    if spec.algorithm == "greedy":
        return choose_greedy(engine, seat, state_view, intents, rnd, samples=spec.iterations, out_of_budget=ask)
    assert spec.shape is not None
    return choose_ismcts(
        engine,
        seat,
        state_view,
        intents,
        rnd,
        iterations=spec.iterations,
        shape=spec.shape,
        out_of_budget=ask,
    )
