"""The house bots' entry point (docs/BOTS.md, "House bots"): what ``choose`` takes and returns, the levels,
the CPU budget and the iteration cap, and repeatability (the same seed gives the
same move)."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from service.bots import LEVELS, choose
from service.bots.levels import UnknownLevel
from service.games import registry
from service.games.base import clone_state, fold
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, decision_domain

GAMES = ("nauticus", "nautilus-industries", "waters-of-nereus")


def position(game: str, steps: int, seed: int = 3) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    """A seat to act, its view and its legal intents (through JSON, as the API serves them) after ``steps``
    random intents of a two-player game, moved on to the first seat with a real choice."""
    engine = registry.get(game)
    chooser = random.Random(seed)
    rng_seed = seed.to_bytes(32, "big")
    state = fold(engine, engine.setup(2, {}, Rng(rng_seed, domain=SETUP_DOMAIN)))
    step = 0
    while True:
        seats = engine.to_act(state)
        assert seats, "the game ended before a position with a choice"
        seat = chooser.choice(seats)
        legal = engine.legal(state, seat)
        if step >= steps and len(legal) > 1:
            view = json.loads(json.dumps(engine.view(state, seat)))
            return seat, view, json.loads(json.dumps([c.to_json() for c in legal]))
        new = engine.decide(state, seat, chooser.choice(legal), Rng(rng_seed, domain=decision_domain(step)))
        state = fold(engine, new, state)
        step += 1


def ticking(step: float, reads: list[float] | None = None) -> Callable[[], float]:
    """A CPU clock that advances ``step`` seconds per reading (recorded in ``reads``)."""
    counter = itertools.count()

    def clock() -> float:
        now = next(counter) * step
        if reads is not None:
            reads.append(now)
        return now

    return clock


def test_the_levels() -> None:
    assert sorted(LEVELS) == [1, 2, 3]
    assert [LEVELS[n].algorithm for n in (1, 2, 3)] == ["greedy", "ismcts", "ismcts"]
    for number, level in LEVELS.items():
        assert level.number == number and level.budget_s > 0 and level.iterations > 0 and level.description
    # A higher level thinks longer and at least as many iterations.
    assert LEVELS[1].budget_s < LEVELS[2].budget_s < LEVELS[3].budget_s
    assert LEVELS[2].iterations < LEVELS[3].iterations


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("level", sorted(LEVELS))
def test_choose_returns_one_of_the_legal_intents_itself(game: str, level: int) -> None:
    for steps in (0, 25, 80):
        seat, view, legal = position(game, steps)
        pick = choose(game, seat, view, legal, level=level, seed=steps, cpu_clock=ticking(0.002))
        assert any(pick is intent for intent in legal), pick


@pytest.mark.parametrize("game", GAMES)
def test_the_same_seed_gives_the_same_move_when_the_cap_binds(game: str) -> None:
    seat, view, legal = position(game, 30)
    picks = {json.dumps(choose(game, seat, view, legal, level=2, seed=11)) for _ in range(2)}
    assert len(picks) == 1


@pytest.mark.parametrize("game", GAMES)
def test_the_same_clock_readings_give_the_same_move(game: str) -> None:
    seat, view, legal = position(game, 30)
    picks = {json.dumps(choose(game, seat, view, legal, level=3, seed=5, cpu_clock=ticking(0.003))) for _ in range(3)}
    assert len(picks) == 1


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_the_budget_stops_the_search_after_one_iteration(level: int) -> None:
    """A clock past the budget at its second reading: the deadline is read once, then one iteration runs
    (every level decides on at least one) and the first check ends the search."""
    seat, view, legal = position("waters-of-nereus", 40)
    reads: list[float] = []
    choose("waters-of-nereus", seat, view, legal, level=level, seed=1, cpu_clock=ticking(10.0, reads))
    assert len(reads) == 2


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_the_iteration_cap_binds_while_the_budget_lasts(level: int) -> None:
    """A clock that never moves: the level's cap alone ends the search, one reading per further iteration."""
    seat, view, legal = position("nauticus", 20)
    reads: list[float] = []
    choose("nauticus", seat, view, legal, level=level, seed=1, cpu_clock=ticking(0.0, reads))
    assert len(reads) == LEVELS[level].iterations


def test_a_bot_never_resigns_while_it_may_do_anything_else() -> None:
    seat, view, legal = position("nauticus", 10)
    with_resign = [{"type": "resign"}, *legal]
    for seed in range(20):
        assert choose("nauticus", seat, view, with_resign, level=1, seed=seed)["type"] != "resign"
    only = [{"type": "resign"}]
    assert choose("nauticus", seat, view, only, level=3, seed=0) is only[0]


def test_choose_takes_the_api_bodies_as_they_are() -> None:
    """``view`` may be the whole ``GET /v1/games/{id}`` body and ``legal`` the ``/legal`` body."""
    seat, view, legal = position("waters-of-nereus", 50)
    game_body = {"id": "g", "game": "waters-of-nereus", "version": 51, "status": "active", "view": view}
    legal_body = {"version": 51, "seat": seat, "intents": legal}
    bare = choose("waters-of-nereus", seat, view, legal, level=2, seed=4, cpu_clock=ticking(0.002))
    wrapped = choose("waters-of-nereus", seat, game_body, legal_body, level=2, seed=4, cpu_clock=ticking(0.002))
    assert bare == wrapped


def test_an_unknown_level_is_refused() -> None:
    seat, view, legal = position("nauticus", 5)
    with pytest.raises(UnknownLevel):
        choose("nauticus", seat, view, legal, level=9, seed=0)


def test_level_1_takes_the_intent_with_the_best_evaluated_margin() -> None:
    """Level 1 is one-ply greedy: in Nauticus (nothing hidden, NAU-005; chance only lays out tiles, which
    ``evaluate`` does not read) its choice has the best margin over the other seat after the intent."""
    engine = registry.get("nauticus")
    checked = 0
    for steps in range(0, 120, 7):
        seat, view, legal = position("nauticus", steps, seed=9)
        state = engine.determinize(view, seat, Rng(bytes(32)))
        margins = {}
        for command in engine.legal(state, seat):
            after = fold(engine, engine.decide(state, seat, command, Rng(bytes(32), domain=7)), clone_state(state))
            values = engine.evaluate(after)
            margins[json.dumps(command.to_json(), sort_keys=True)] = values[seat] - values[1 - seat]
        pick = choose("nauticus", seat, view, legal, level=1, seed=steps)
        assert margins[json.dumps(pick, sort_keys=True)] == max(margins.values()), (steps, pick)
        checked += len(set(margins.values())) > 1
    assert checked >= 5, "too few positions where the intents differ"
