"""A seat leaving the game, per game (each engine's ``forfeit``; the rules references' NIN-Q07,
NAU-Q10 and WON-Q15): what becomes of its components and its turns, and that the others play
on with every invariant holding."""

from __future__ import annotations

import random

import pytest

from service.games import registry
from service.games.base import RuleViolation, fold, forfeited
from service.games.rng import Rng
from service.games.waters_of_nereus import commands as wc

SEED = bytes(range(32))


def new(name: str, players: int, options: dict | None = None):
    engine = registry.get(name)
    return engine, fold(engine, engine.setup(players, options or {}, Rng(SEED, domain=1)))


def apply(engine, state, events):
    for e in events:
        state = engine.evolve(state, e)
    engine.check_invariants(state)
    return state


def play(engine, state, chooser: random.Random, until, limit: int = 20_000):
    """Random legal intents until ``until(state)``."""
    for k in range(limit):
        if until(state):
            return state
        seat = chooser.choice(engine.to_act(state))
        command = chooser.choice(engine.legal(state, seat))
        state = apply(engine, state, engine.decide(state, seat, command, Rng(SEED, domain=100 + k)))
    raise AssertionError("the position was never reached")


def forfeit(engine, state, seat, k: int = 7):
    events = engine.forfeit(state, seat, Rng(SEED, domain=k))
    assert events[0].type == "SeatForfeited" and events[0].data["seat"] == seat
    return apply(engine, state, events), events


def test_every_engine_refuses_a_second_forfeit_and_a_stranger():
    for name in registry.names():
        engine, state = new(name, 3)
        state, _ = forfeit(engine, state, 2)
        assert forfeited(state) == [2]
        for seat, code in ((2, "seat_forfeited"), (5, "no_such_seat"), ("0", "no_such_seat")):
            with pytest.raises(RuleViolation) as err:
                engine.forfeit(state, seat, Rng(SEED))
            assert err.value.code == code, name


# -- Nautilus Industries ------------------------------------------------------------------------


def test_nin_q07_subs_leave_the_tiles_gems_go_back_and_every_action_is_forfeited():
    engine, state = new("nautilus-industries", 3)
    chooser = random.Random(5)

    def placed_and_holding(s):
        subs = [c for t in s["tiles"] for c, owner in t["subs"].items() if owner == 1]
        return s["phase"] == "action" and subs and sum(s["players"][1]["gems"].values()) > 0

    state = play(engine, state, chooser, placed_and_holding)
    bag = sum(state["bag"].values())
    held = sum(state["players"][1]["gems"].values())
    upgrades = sum(1 for t in state["tiles"] for c, u in t["upgrades"].items() if u and t["subs"][c] == 1)
    state, events = forfeit(engine, state, 1)
    assert all(owner != 1 for t in state["tiles"] for owner in t["subs"].values())
    assert state["players"][1]["subs"] == 3 and sum(state["players"][1]["gems"].values()) == 0
    assert sum(state["bag"].values()) == bag + held + upgrades
    # From then on every action of seat 1 is forfeited and it never sells.
    seen = 0
    for k in range(3000):
        if engine.result(state) is not None:
            break
        assert 1 not in engine.to_act(state) and engine.legal(state, 1) == []
        seat = chooser.choice(engine.to_act(state))
        new_events = engine.decide(state, seat, chooser.choice(engine.legal(state, seat)), Rng(SEED, domain=k))
        seen += sum(1 for e in new_events if e.type == "ActionForfeited" and e.data["seat"] == 1)
        assert not any(e.type == "SellTurnStarted" and e.data["seat"] == 1 for e in new_events)
        state = apply(engine, state, new_events)
    assert seen >= 3


def test_nin_q07_a_half_done_action_of_the_actor_ends_with_it():
    engine, state = new("nautilus-industries", 3)
    chooser = random.Random(8)
    state = play(engine, state, chooser, lambda s: s["phase"] == "action" and s["pending"] is not None)
    actor = engine.to_act(state)[0]
    state, events = forfeit(engine, state, actor)
    assert state["pending"] is None or engine.to_act(state)[0] != actor
    assert events[1].type == "ActionForfeited" and events[1].data["seat"] == actor
    assert actor not in engine.to_act(state)


# -- Nauticus -------------------------------------------------------------------------------------


def test_nau_q10_the_start_player_figure_passes_on_and_turns_are_passed_over():
    engine, state = new("nauticus", 4)
    assert state["step"] == "choose" and state["start_player"] == 0
    state, events = forfeit(engine, state, 0)
    assert events[0].data["start_player"] == 1 and state["start_player"] == 1
    chooser = random.Random(2)
    acted = set()
    for k in range(400):
        if engine.result(state) is not None:
            break
        assert 0 not in engine.to_act(state) and engine.legal(state, 0) == []
        seat = chooser.choice(engine.to_act(state))
        acted.add(seat)
        command = chooser.choice(engine.legal(state, seat))
        state = apply(engine, state, engine.decide(state, seat, command, Rng(SEED, k)))
    assert acted == {1, 2, 3}


def test_nau_q10_the_acting_seats_turn_ends_at_once():
    engine, state = new("nauticus", 3)
    chooser = random.Random(4)
    state = play(engine, state, chooser, lambda s: s["step"] == "act" and s["acting"] != s["start_player"])
    acting = state["acting"]
    state, events = forfeit(engine, state, acting)
    assert events[1].type == "TurnEnded" and events[1].data["seat"] == acting
    assert acting not in engine.to_act(state)


# -- Waters of Nereus -----------------------------------------------------------------------------


def test_won_q15_a_card_laid_face_down_is_void_and_the_others_are_revealed():
    engine, state = new("waters-of-nereus", 3)
    chooser = random.Random(1)
    state = play(engine, state, chooser, lambda s: s["phase"] == "choose")
    state = apply(engine, state, engine.decide(state, 0, engine.legal(state, 0)[0], Rng(SEED)))
    state = apply(engine, state, engine.decide(state, 1, engine.legal(state, 1)[0], Rng(SEED)))
    assert engine.to_act(state) == [2]
    state, events = forfeit(engine, state, 2)
    reveal = next(e for e in events if e.type == "CrewRevealed")
    assert reveal.data["cards"][2] is None and None not in reveal.data["cards"][:2]
    assert state["phase"] == "turn" and state["active"] in (0, 1)
    assert state["ships"][2] is None  # its ship left the board


def test_won_q15_treasures_in_hand_go_back_and_the_turn_passes_on():
    engine, state = new("waters-of-nereus", 3)
    chooser = random.Random(6)
    state = play(engine, state, chooser, lambda s: s["phase"] == "turn" and s["seats"][s["active"]]["pending"])
    seat = state["active"]
    in_hand = list(state["seats"][seat]["pending"])
    bag, gems = sum(state["bag"].values()), state["gem_supply"]
    state, events = forfeit(engine, state, seat)
    assert events[0].data["returned"] == in_hand and not state["seats"][seat]["pending"]
    assert sum(state["bag"].values()) + state["gem_supply"] == bag + gems + len(in_hand)
    assert events[1].type == "TurnEnded" and state["active"] != seat


def test_won_q15_a_seat_that_left_chooses_no_crew_and_has_no_turn_until_the_end():
    engine, state = new("waters-of-nereus", 4)
    chooser = random.Random(9)
    state, _ = forfeit(engine, state, state["active"])  # while choosing a corner
    gone = forfeited(state)[0]
    types = set()
    for k in range(20_000):
        if engine.result(state) is not None:
            break
        assert gone not in engine.to_act(state) and engine.legal(state, gone) == []
        seat = chooser.choice(engine.to_act(state))
        new_events = engine.decide(state, seat, chooser.choice(engine.legal(state, seat)), Rng(SEED, k))
        types |= {e.type for e in new_events if e.data.get("seat") == gone}
        state = apply(engine, state, new_events)
    assert engine.result(state) is not None
    # Passed over, and scored at the end like every seat (the platform ranks it last).
    assert types <= {"ExplorerTurnSkipped", "FinalTurnEnded", "StorageSold", "VPScored"}, types
    with pytest.raises(RuleViolation):
        engine.decide(state, gone, wc.FinishScoring(), Rng(SEED))
