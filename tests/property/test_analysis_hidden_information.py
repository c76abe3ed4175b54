"""A game's analysis reads each seat's column from that seat's view alone: games of Waters of Nereus (hands,
decks and face-down crew cards hidden) analysed twice, once as played and once with every position's hidden
parts reshuffled consistently with what the analysed seat saw (``support.waters_of_nereus.perturb``,
independent of the engine's own ``determinize``), give that seat identical values, decisions and preferred
moves.  The searches are bounded by their iteration caps only (no clock), so both runs are deterministic."""

from __future__ import annotations

import random

import pytest
from support.waters_of_nereus import CONFIGS, perturb

from service.bots import analysis
from service.bots.position import intent_key
from service.games.base import fold
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, decision_domain
from service.games.waters_of_nereus import ENGINE

#: Small budgets: the property is about what is read, not about strength.
BUDGET = analysis.Budget(search_iterations=12, value_samples=2)


def played_game(players: int, neutral: bool, seed: bytes) -> list[analysis.Step]:
    """A seeded random game to its end, as the steps of its stream."""
    options = {"neutral": True} if neutral else {}
    opening = ENGINE.setup(players, options, Rng(seed, domain=SETUP_DOMAIN))
    steps = [analysis.Step(1, None)] + [
        analysis.Step(2 + i, e, batch_end=i == len(opening) - 1) for i, e in enumerate(opening)
    ]
    state = fold(ENGINE, opening)
    chooser = random.Random(seed)
    count = len(steps)
    while ENGINE.to_act(state):
        seat = chooser.choice(ENGINE.to_act(state))
        command = chooser.choice(ENGINE.legal(state, seat))
        new = ENGINE.decide(state, seat, command, Rng(seed, domain=decision_domain(count)))
        for i, event in enumerate(new):
            first, last = i == 0, i == len(new) - 1
            steps.append(
                analysis.Step(
                    count + 1, event, seat if first else None, command.to_json() if first else None, batch_end=last
                )
            )
            state = ENGINE.evolve(state, event)
            count += 1
    steps.append(analysis.Step(count + 1, None))  # GameFinished
    return steps


@pytest.mark.parametrize(("players", "neutral"), [CONFIGS[1], CONFIGS[3]])
def test_the_analysis_of_a_seat_is_the_same_whatever_the_others_held(players: int, neutral: bool) -> None:
    seed = (500 * players + neutral).to_bytes(32, "big")
    game = list(analysis.positions(ENGINE, played_game(players, neutral, seed)))
    shuffle = random.Random(11)
    for seat in range(players):

        def reshuffle(state: dict | None, seat: int = seat) -> dict | None:
            """The state with the hidden parts reshuffled, where the seat sees the same (not once the
            game is over: then everything is shown)."""
            if state is None:
                return None
            other = perturb(state, seat, shuffle)
            return other if ENGINE.view(other, seat) == ENGINE.view(state, seat) else state

        reshuffled = [analysis.Position(p.step, reshuffle(p.before), reshuffle(p.after)) for p in game]
        changed = sum(q.after != p.after for p, q in zip(game, reshuffled, strict=True))
        assert changed > len(game) // 4, "the reshuffle must change the hidden parts of many positions"
        kwargs = {"seed": b"analysis", "budget": BUDGET}
        real = analysis.analyse_seat(ENGINE, seat, game, **kwargs)
        other = analysis.analyse_seat(ENGINE, seat, reshuffled, **kwargs)
        assert real["decisions"], "the seat made decisions to analyse"
        assert [intent_key(d["preferred"]) for d in real["decisions"]] == [
            intent_key(d["preferred"]) for d in other["decisions"]
        ]
        assert real == other, f"seat {seat}: the analysis read hidden information"


def test_the_whole_analysis_has_a_value_per_event_and_seat_and_marks_mistakes() -> None:
    steps = played_game(3, False, b"\x05" * 32)
    report = analysis.analyse(ENGINE, steps, 3, seed=b"x", budget=BUDGET)
    assert [e["seq"] for e in report["events"]] == [s.step.seq for s in analysis.positions(ENGINE, steps)]
    assert all(len(e["values"]) == 3 for e in report["events"])
    assert report["events"][0]["values"] == [0.0, 0.0, 0.0]  # before setup: nothing known
    decided = {(d["seq"], d["seat"]) for d in report["decisions"]}
    assert {(m["seq"], m["seat"]) for m in report["mistakes"]} <= decided
    assert all(m["loss"] >= analysis.MISTAKE_POINTS for m in report["mistakes"])
    # A random player errs: its level-3 analysis finds mistakes and agrees with it at most sometimes.
    assert report["mistakes"]
    for a in report["agreement"]:
        assert 0 <= a["matched"] < a["decisions"]
