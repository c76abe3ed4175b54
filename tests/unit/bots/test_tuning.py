"""Tuning the evaluation (docs/BOTS.md, "Tuning the evaluation"): the fit, its sign constraint, the
self-play games it fits on, and that a tunable game's ``evaluate`` is its weighted components."""

from __future__ import annotations

import random

import pytest

from service.bots import tuning
from service.games import registry
from service.games.base import fold
from service.games.nauticus import data, search
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, decision_domain


def _noisy_rows(coef: list[float], n: int = 400, seed: int = 1) -> list[tuple[list[float], float]]:
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        x = [rnd.uniform(-5, 5) for _ in coef]
        out.append((x, sum(c * v for c, v in zip(coef, x, strict=True)) + rnd.gauss(0, 0.1)))
    return out


def test_least_squares_recovers_known_weights() -> None:
    fitted = tuning.least_squares(_noisy_rows([0.7, -0.3, 2.0]))
    assert fitted == pytest.approx([0.7, -0.3, 2.0], abs=0.02)


def test_the_nonnegative_fit_sets_a_negative_weight_to_zero_and_refits_the_rest() -> None:
    rows = _noisy_rows([0.7, -0.3])
    fitted = tuning.nonnegative_least_squares(rows)
    assert fitted[1] == 0.0
    assert fitted[0] == pytest.approx(tuning.least_squares([([x[0]], y) for x, y in rows])[0])
    assert tuning.mse(rows, fitted) > tuning.mse(rows, tuning.least_squares(rows))


def test_a_component_that_never_varies_cannot_be_fitted() -> None:
    with pytest.raises(ValueError, match="never varies"):
        tuning.least_squares([([1.0, 0.0], 1.0), ([2.0, 0.0], 2.0)])


def _states(count: int = 60, seed: int = 5, game: str = "nauticus") -> list[dict]:
    engine = registry.get(game)
    rng_seed = seed.to_bytes(32, "big")
    events = engine.setup(3, {}, Rng(rng_seed, domain=SETUP_DOMAIN))
    state = fold(engine, events)
    chooser = random.Random(seed)
    n = len(events)
    out = [state]
    while len(out) < count and engine.to_act(state):
        seat = chooser.choice(engine.to_act(state))
        command = chooser.choice(engine.legal(state, seat))
        new = engine.decide(state, seat, command, Rng(rng_seed, domain=decision_domain(n)))
        state = fold(engine, new, state)
        n += len(new)
        out.append(state)
    return out


def test_nauticus_evaluate_is_its_weighted_components() -> None:
    seen_progress = False
    for state in _states():
        parts = search.evaluate_components(state)
        seen_progress |= any(p["ship_in_progress"] > 0 for p in parts)
        expected = [
            p["scored"]
            + data.EVAL_SHIP_IN_PROGRESS * p["ship_in_progress"]
            + data.EVAL_GOODS_ON_SHIPS * p["goods_on_ships"]
            for p in parts
        ]
        assert search.evaluate(state) == pytest.approx(expected)
    assert seen_progress, "no position with a ship under way: the check saw nothing"


def test_nauticus_scored_component_is_the_final_scoring_before_rounding() -> None:
    """NAU-190 to NAU-193: ``scored`` counts as ``scoring.seat_breakdown`` does (the Taler not rounded down),
    and an unfinished ship's progress and the goods on ships are counted only where the rulebook's scoring
    leaves them unpaid."""
    from service.games.nauticus import hulls, scoring

    seen_complete = False
    for state in _states(400) + _states(400, seed=9):
        for seat, parts in zip(state["seats"], search.evaluate_components(state), strict=True):
            b = scoring.seat_breakdown(seat)
            assert parts["scored"] == pytest.approx(
                b["track"] + b["delivered_goods"] + b["completed_ships"] + b["taler_total"] / data.TALER_PER_VP
            )
            finished = [s for s in seat["ships"] if s["complete"] and hulls.is_complete(s)]
            seen_complete |= bool(finished)
            if len(finished) == len(seat["ships"]):
                assert parts["ship_in_progress"] == 0
            if not any(g is not None for s in seat["ships"] for g in s["goods"]):
                assert parts["goods_on_ships"] == 0
    assert seen_complete, "no position with a finished ship: the check saw too little"


def test_waters_of_nereus_evaluate_is_its_weighted_components() -> None:
    from service.games.waters_of_nereus import data as won_data
    from service.games.waters_of_nereus import search as won_search

    seen = set()
    for state in _states(200, game="waters-of-nereus"):
        parts = won_search.evaluate_components(state)
        seen |= {k for p in parts for k, v in p.items() if v}
        expected = [
            p["scored"]
            + won_data.EVAL_HOLD_SHARE * p["hold_progress"]
            + won_data.EVAL_PENDING_VP * p["pending"]
            + won_data.EVAL_SCIENCE_VP * p["science"]
            for p in parts
        ]
        assert won_search.evaluate(state) == pytest.approx(expected)
    assert {"scored", "hold_progress", "pending"} <= seen, seen


def test_self_play_is_seeded_and_labels_every_sample_with_the_final_score() -> None:
    engine = registry.get("nauticus")
    tunable = tuning.TUNABLE["nauticus"]()
    first = tuning.self_play(engine, tunable, seats=2, seed=11, epsilon=0.1, sample=0.2)
    again = tuning.self_play(engine, tunable, seats=2, seed=11, epsilon=0.1, sample=0.2)
    assert first, "a whole game sampled at 20 % gave no position"
    assert [(s.by_shape, s.final) for s in first] == [(s.by_shape, s.final) for s in again]
    assert all(s.final is not None and len(s.final) == 2 for s in first)
    assert all(len(s.by_shape) == len(tunable.shapes) for s in first)
