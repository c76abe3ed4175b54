"""Waters of Nereus engine contract: random playouts, invariants, replay, JSON, schemas."""

from __future__ import annotations

import json
import marshal
import random

import pytest
from support.waters_of_nereus import SEED

from schemas.intents import load_intent
from service.games import registry
from service.games.base import ADMIN, Event, RuleViolation, fold
from service.games.rng import Rng
from service.games.waters_of_nereus import ENGINE, legal
from service.games.waters_of_nereus import commands as c

CONFIGS = [(2, False), (2, True), (3, False), (4, False)]

PROBES = [
    c.EndTurn(),
    c.DropAnchor(),
    c.PlaceMarker(1),
    c.ChooseCrew("captain"),
    c.SellTreasure("W"),
    c.PerformAction(),
    c.BuyVp(),
    c.FinishScoring(),
    c.DeclineExplorerTurn(),
    c.PlaceTreasure("K", "hold", "captain", 0),
]


def playout(seed: int, players: int, neutral: bool, check: bool = True):
    r = random.Random(seed)
    events = ENGINE.setup(players, {"neutral": True} if neutral else {}, Rng(SEED, domain=seed))
    state = fold(ENGINE, events)
    log = list(events)
    step = 0
    while ENGINE.result(state) is None:
        to_act = ENGINE.to_act(state)
        assert to_act
        seat = r.choice(to_act)
        legal = ENGINE.legal(state, seat)
        assert legal, "a seat to act has no legal command"
        cmd = r.choice(legal)
        if check:
            before = marshal.dumps(state)
            for probe in PROBES:
                if probe not in legal:
                    with pytest.raises(RuleViolation):
                        ENGINE.decide(state, seat, probe, Rng(SEED, domain=99))
            new = ENGINE.decide(state, seat, cmd, Rng(SEED, domain=1000 + step))
            assert marshal.dumps(state) == before, "decide mutated the state"
            assert load_intent("waters-of-nereus", json.loads(json.dumps(cmd.to_json()))) == cmd
        else:
            new = ENGINE.decide(state, seat, cmd, Rng(SEED, domain=1000 + step))
        for ev in new:
            state = ENGINE.evolve(state, ev)
        log.extend(new)
        if check:
            ENGINE.check_invariants(state)
        step += 1
        assert step < 5000
    return state, log


@pytest.mark.parametrize(("players", "neutral"), CONFIGS)
def test_won_random_playouts_end_with_invariants(players, neutral):
    """WON-020, WON-073: random games end; invariants hold after every intent; decide agrees with
    legal (refuses probes it does not list); commands survive a JSON + schema round trip."""
    for seed in range(4):
        state, _ = playout(seed, players, neutral)
        result = ENGINE.result(state)
        assert sorted(result["ranking"]) == list(range(players))


@pytest.mark.parametrize(("players", "neutral"), CONFIGS)
def test_won_replay_and_json_round_trip(players, neutral):
    """Replaying the JSON-encoded events rebuilds the exact state; views are JSON."""
    state, log = playout(7, players, neutral, check=False)
    wire = json.loads(json.dumps([e.to_json() for e in log]))
    replayed = fold(ENGINE, [Event.from_json(e) for e in wire])
    assert replayed == state
    assert json.loads(json.dumps(state)) == state
    for viewer in [None, ADMIN, *range(players)]:
        json.dumps(ENGINE.view(state, viewer))


def test_won_evolve_copies_event_data():
    """evolve never aliases event data."""
    events = ENGINE.setup(2, {}, Rng(SEED))
    state = fold(ENGINE, events)
    deck = next(e for e in events if e.type == "ScienceDeckShuffled").data["deck"]
    before = list(deck)
    state["science_deck"].append("X")
    assert deck == before


def test_won_engine_metadata():
    """ENGINE is registered with name, version and every command type."""
    assert registry.get("waters-of-nereus", "1.0.0") is ENGINE
    assert ENGINE.name == "waters-of-nereus" and ENGINE.version == "1.0.0"
    for wire, cls in ENGINE.commands.items():
        assert cls.type == wire
    with pytest.raises(RuleViolation):
        ENGINE.setup(2, {"neutral": True, "x": 1}, Rng(SEED))


def test_won_legal_stays_short():
    """Small atomic intents: legal lists tens of commands, not thousands."""
    r = random.Random(3)
    state = fold(ENGINE, ENGINE.setup(4, {}, Rng(SEED)))
    longest = 0
    step = 0
    while ENGINE.result(state) is None:
        seat = r.choice(ENGINE.to_act(state))
        legal = ENGINE.legal(state, seat)
        longest = max(longest, len(legal))
        for ev in ENGINE.decide(state, seat, r.choice(legal), Rng(SEED, domain=step)):
            ENGINE.evolve(state, ev)
        step += 1
    assert longest < 150


@pytest.mark.parametrize(("players", "neutral"), CONFIGS)
def test_won_filtered_legal_agrees_with_legal(players, neutral):
    """decide validates with legal(state, seat, type(cmd)): it must equal legal filtered by type."""
    r = random.Random(players)
    state = fold(ENGINE, ENGINE.setup(players, {"neutral": True} if neutral else {}, Rng(SEED)))
    step = 0
    while ENGINE.result(state) is None:
        seat = r.choice(ENGINE.to_act(state))
        full = legal.legal(state, seat)
        for cls in ENGINE.commands.values():
            assert legal.legal(state, seat, cls) == [x for x in full if type(x) is cls]
        for ev in ENGINE.decide(state, seat, r.choice(full), Rng(SEED, domain=step)):
            ENGINE.evolve(state, ev)
        step += 1
