"""Nautilus Industries intents on the wire (schemas) and the engine interface."""

from __future__ import annotations

import json
import random

import pytest
from marshmallow import ValidationError
from support.nautilus_industries import SEED, E, new_state

from schemas.intents import load_intent
from schemas.intents.nautilus_industries import SCHEMAS
from service.games.base import fold
from service.games.nautilus_industries.commands import (
    COMMANDS,
    BuyStock,
    DeclineUpgrade,
    Hold,
    PlaceSub,
    Sell,
    SwitchGemFrom,
    SwitchGemWith,
    SwitchTiles,
    UpgradeSub,
    UpgradeWarehouse,
)
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, random_playout, replay

GAME = "nautilus-industries"

ALL = [
    PlaceSub(3, "K"),
    UpgradeSub("G"),
    DeclineUpgrade(),
    UpgradeWarehouse(),
    SwitchGemFrom(0, "Y"),
    SwitchGemWith(5, "O"),
    SwitchTiles(1, 4),
    BuyStock("B", 6),
    Sell("Y", 12),
    Hold(),
]


def test_one_schema_per_command() -> None:
    assert set(SCHEMAS) == set(COMMANDS) == {c.type for c in ALL}
    assert E.commands == COMMANDS


@pytest.mark.parametrize("cmd", ALL, ids=lambda c: c.type)
def test_round_trip(cmd) -> None:
    assert load_intent(GAME, json.loads(json.dumps(cmd.to_json()))) == cmd


@pytest.mark.parametrize(
    "wire",
    [
        {"type": "place_sub", "tile": 0},
        {"type": "place_sub", "tile": 6, "colour": "Y"},
        {"type": "place_sub", "tile": "0", "colour": "Y"},
        {"type": "place_sub", "tile": 0, "colour": "R"},
        {"type": "sell", "colour": "Y", "count": 0},
        {"type": "sell", "colour": "Y", "count": 1.5},
        {"type": "buy_stock", "company": "Y", "shares": 7},
        {"type": "hold", "extra": 1},
        {"type": "pass"},
        ["sell"],
    ],
)
def test_schema_refuses(wire) -> None:
    with pytest.raises(ValidationError):
        load_intent(GAME, wire)


def test_legal_lists_stay_short() -> None:
    """Small atomic intents (NIN-Q03): legal lists stay around a hundred even with 6 players."""
    p = random_playout(E, 6, {}, SEED, random.Random(5), max_steps=300)
    state = fold(E, E.setup(6, {}, Rng(SEED, domain=SETUP_DOMAIN)))
    longest = len(E.legal(state, E.to_act(state)[0]))
    for step in p.steps:
        for event in E.decide(state, step.seat, step.command, Rng(SEED, domain=step.domain)):
            state = E.evolve(state, event)
        if E.to_act(state):
            longest = max(longest, len(E.legal(state, E.to_act(state)[0])))
    assert 30 <= longest <= 130


def test_replay_is_deterministic() -> None:
    """Same seed, same intents -> the same events (upkeep draws come from the seeded rng)."""
    p = random_playout(E, 4, {}, SEED, random.Random(3), max_steps=400)
    again, state = replay(E, 4, {}, SEED, p.steps)
    canon = [json.dumps(e.to_json(), sort_keys=True) for e in again]
    assert canon == [json.dumps(e.to_json(), sort_keys=True) for e in p.events]
    assert state == p.state


def test_decide_does_not_mutate_and_refuses_other_seats() -> None:
    s = new_state(3)
    before = json.dumps(s, sort_keys=True)
    seat = E.to_act(s)[0]
    for cmd in E.legal(s, seat):
        E.decide(s, seat, cmd, Rng(SEED))
    assert json.dumps(s, sort_keys=True) == before
    assert E.legal(s, (seat + 1) % 3) == []


def test_a_whole_game_ends_with_a_result() -> None:
    p = random_playout(E, 3, {}, SEED, random.Random(11))
    assert p.finished
    result = E.result(p.state)
    assert set(result["scores"]) == {"0", "1", "2"} and sorted(result["ranking"]) == [0, 1, 2]
    for seat, entry in result["breakdown"].items():
        assert entry["money"] + entry["stock_value"] == result["scores"][seat]
