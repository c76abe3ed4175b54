"""Tuning a game's ``evaluate`` against self-play outcomes (docs/BOTS.md, "Tuning the evaluation").

A game is tunable when its search module has ``evaluate_components(state, shape) -> list[dict]``: per seat,
the parts ``evaluate`` adds up, each before its weight, with ``"scored"`` the final scoring as if the game
ended now (weight 1).  ``shape`` is the one weight that is not a plain factor (Nauticus: how many placed
items a closed hull counts for); it is tried on a grid.

The tool plays seeded self-play games of level-1 play (one determinization per intent, no clock) with a
little randomness (``epsilon``: the share of decisions taken uniformly at random) so that the positions
vary, and at sampled positions records each seat's components.  Then, for each shape on the grid, it fits
the factor weights by least squares: for each sampled position and seat, what the seat gained on the
others from there to the end (its final ``scored`` margin minus its ``scored`` margin now) is predicted
by its component margins (each seat's component minus the mean of the others'), with no weight below 0
(:func:`nonnegative_least_squares`).  The fitted weights are
therefore VP per unit of each component, the unit ``evaluate`` already adds, and the ``scored`` part keeps
weight 1 because it is what the game ends with.  The shape with the smallest mean squared error wins::

    python -m service.bots.tuning --game nauticus --games 300 --seats 2,3,4 --seed 0
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.bots.greedy import choose_greedy
from service.bots.position import candidates, intent_key, legal_by_key
from service.games import registry
from service.games.base import Engine, State
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, decision_domain

#: A self-play game still running after this many intents is dropped.
MAX_INTENTS = 20_000

Components = Callable[[State, float], list[dict[str, float]]]


@dataclass(frozen=True)
class Tunable:
    """What the tool needs of a game: its components, the names of the factor weights (component keys
    other than ``"scored"``), the current values (for comparison) and the shapes to try."""

    components: Components
    weights: tuple[str, ...]
    current: dict[str, float]
    shape_name: str
    shapes: tuple[float, ...]
    current_shape: float


def _nauticus() -> Tunable:
    from service.games.nauticus import data, search

    return Tunable(
        components=search.evaluate_components,
        weights=("ship_in_progress", "goods_on_ships"),
        current={"ship_in_progress": data.EVAL_SHIP_IN_PROGRESS, "goods_on_ships": data.EVAL_GOODS_ON_SHIPS},
        shape_name="EVAL_STEP_TO_SHIP",
        shapes=(0.0, 1.0, 2.0, 3.0, 4.0, 6.0),
        current_shape=float(data.EVAL_STEP_TO_SHIP),
    )


def _waters_of_nereus() -> Tunable:
    from service.games.waters_of_nereus import data, search

    return Tunable(
        # every weight is a plain factor: one shape, unused
        components=lambda state, _shape: search.evaluate_components(state),
        weights=("hold_progress", "pending", "science"),
        current={
            "hold_progress": data.EVAL_HOLD_SHARE,
            "pending": data.EVAL_PENDING_VP,
            "science": data.EVAL_SCIENCE_VP,
        },
        shape_name="",
        shapes=(0.0,),
        current_shape=0.0,
    )


#: Tunable games by API name.
TUNABLE: dict[str, Callable[[], Tunable]] = {"nauticus": _nauticus, "waters-of-nereus": _waters_of_nereus}


@dataclass
class Sample:
    """One sampled position: per shape, per seat components; filled in with the final ``scored``."""

    game: int
    by_shape: list[list[dict[str, float]]]
    final: list[float] | None = None


def self_play(
    engine: Engine,
    tunable: Tunable,
    *,
    seats: int,
    seed: int,
    epsilon: float,
    sample: float,
    game: int = 0,
) -> list[Sample]:
    """One seeded self-play game; its sampled positions with the final ``scored`` per seat (none when the
    game ran past :data:`MAX_INTENTS`)."""
    game_seed = seed.to_bytes(32, "big")
    events = engine.setup(seats, {}, Rng(game_seed, domain=SETUP_DOMAIN))
    state: State | None = None
    for event in events:
        state = engine.evolve(state, event)
    assert state is not None
    rnd = random.Random(seed)
    count = len(events)
    samples: list[Sample] = []
    for _ in range(MAX_INTENTS):
        to_act = engine.to_act(state)
        if not to_act:
            final = [c["scored"] for c in tunable.components(state, tunable.current_shape)]
            for s in samples:
                s.final = final
            return samples
        if rnd.random() < sample:
            samples.append(Sample(game, [tunable.components(state, shape) for shape in tunable.shapes]))
        seat = to_act[rnd.randrange(len(to_act))]
        intents = candidates([c.to_json() for c in engine.legal(state, seat)])
        if len(intents) == 1 or rnd.random() < epsilon:
            intent = intents[rnd.randrange(len(intents))]
        else:
            view = engine.view(state, seat)
            intent = choose_greedy(engine, seat, view, intents, rnd, samples=1, out_of_budget=lambda: True)
        command = legal_by_key(engine, state, seat)[intent_key(intent)]
        new = engine.decide(state, seat, command, Rng(game_seed, domain=decision_domain(count)))
        for event in new:
            state = engine.evolve(state, event)
        count += len(new)
    return []


def _margins(values: list[float]) -> list[float]:
    """Each seat's value minus the mean of the others'."""
    n = len(values)
    total = sum(values)
    return [v - (total - v) / (n - 1) for v in values]


def rows(samples: list[Sample], shape_index: int, weights: tuple[str, ...]) -> list[tuple[list[float], float]]:
    """The regression rows of one shape: (component margins, the scored margin still to be gained)."""
    out = []
    for s in samples:
        assert s.final is not None
        comps = s.by_shape[shape_index]
        now = _margins([c["scored"] for c in comps])
        end = _margins(s.final)
        xs = [_margins([c[w] for c in comps]) for w in weights]
        for seat in range(len(comps)):
            out.append(([x[seat] for x in xs], end[seat] - now[seat]))
    return out


def least_squares(data: list[tuple[list[float], float]]) -> list[float]:
    """The coefficients (no intercept: margins are centred by construction) minimising the squared error,
    from the normal equations by Gaussian elimination with partial pivoting."""
    k = len(data[0][0])
    a = [[sum(x[i] * x[j] for x, _ in data) for j in range(k)] for i in range(k)]
    b = [sum(x[i] * y for x, y in data) for i in range(k)]
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-12:
            raise ValueError(f"component {col} never varies in the samples: nothing to fit")
        a[col], a[pivot] = a[pivot], a[col]
        b[col], b[pivot] = b[pivot], b[col]
        for r in range(col + 1, k):
            f = a[r][col] / a[col][col]
            for c in range(col, k):
                a[r][c] -= f * a[col][c]
            b[r] -= f * b[col]
    coef = [0.0] * k
    for r in reversed(range(k)):
        coef[r] = (b[r] - sum(a[r][c] * coef[c] for c in range(r + 1, k))) / a[r][r]
    return coef


def nonnegative_least_squares(data: list[tuple[list[float], float]]) -> list[float]:
    """:func:`least_squares` with every coefficient at least 0: a coefficient the fit makes negative is set
    to 0 and the others are fitted again, until none is.  Why: each component is something the game pays
    for later (a ship, a delivery), so a negative weight says more about the self-play bots' habits than
    about the position, and a search given it would avoid building at all."""
    k = len(data[0][0])
    free = list(range(k))
    while True:
        coef = [0.0] * k
        if free:
            fitted = least_squares([([x[i] for i in free], y) for x, y in data])
            for i, c in zip(free, fitted, strict=True):
                coef[i] = c
        negative = [i for i in free if coef[i] < 0]
        if not negative:
            return coef
        worst = min(negative, key=lambda i: coef[i])
        free.remove(worst)


def mse(data: list[tuple[list[float], float]], coef: list[float]) -> float:
    """Mean squared error of ``coef`` on ``data``."""
    return sum((y - sum(c * v for c, v in zip(coef, x, strict=True))) ** 2 for x, y in data) / len(data)


def tune(
    game: str,
    *,
    games: int,
    seats: list[int],
    seed: int = 0,
    epsilon: float = 0.1,
    sample: float = 0.1,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Self-play ``games`` games of ``game`` (seeds ``seed + g``, seats cycling through ``seats``) and fit
    the evaluation weights; returns the fit per shape, the best one and the current weights' error."""
    if game not in TUNABLE:
        raise ValueError(f"{game!r} has no evaluate_components yet; tunable: {sorted(TUNABLE)}")
    engine = registry.get(game)
    tunable = TUNABLE[game]()
    samples: list[Sample] = []
    for g in range(games):
        samples += self_play(
            engine, tunable, seats=seats[g % len(seats)], seed=seed + g, epsilon=epsilon, sample=sample, game=g
        )
        if progress is not None:
            progress(g + 1)
    fits: list[dict[str, Any]] = []
    for i, shape in enumerate(tunable.shapes):
        data = rows(samples, i, tunable.weights)
        unconstrained = least_squares(data)
        coef = nonnegative_least_squares(data)
        fits.append(
            {
                "shape": shape,
                "weights": dict(zip(tunable.weights, coef, strict=True)),
                "mse": mse(data, coef),
                "unconstrained": dict(zip(tunable.weights, unconstrained, strict=True)),
            }
        )
    best = min(fits, key=lambda f: f["mse"])
    current_index = tunable.shapes.index(tunable.current_shape)
    current_data = rows(samples, current_index, tunable.weights)
    return {
        "game": game,
        "games": games,
        "seats": seats,
        "seed": seed,
        "epsilon": epsilon,
        "sample": sample,
        "positions": len(samples),
        "shape_name": tunable.shape_name,
        "fits": fits,
        "best": best,
        "current": {
            "shape": tunable.current_shape,
            "weights": tunable.current,
            "mse": mse(current_data, [tunable.current[w] for w in tunable.weights]),
        },
        "baseline_mse": mse(current_data, [0.0] * len(tunable.weights)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.bots.tuning", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", required=True, choices=sorted(TUNABLE))
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seats", default="2,3,4", help="comma-separated seat counts, cycled game by game")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epsilon", type=float, default=0.1, help="share of decisions taken at random")
    parser.add_argument("--sample", type=float, default=0.1, help="share of positions recorded")
    args = parser.parse_args(argv)

    def progress(played: int) -> None:
        if played % 10 == 0:
            print(f"{played}/{args.games} games", file=sys.stderr, flush=True)

    report = tune(
        args.game,
        games=args.games,
        seats=[int(s) for s in args.seats.split(",")],
        seed=args.seed,
        epsilon=args.epsilon,
        sample=args.sample,
        progress=progress,
    )
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":  # pragma: no cover - the CLI
    raise SystemExit(main())
