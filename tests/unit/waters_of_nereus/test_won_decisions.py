"""Waters of Nereus: the resolutions (WON-Axx) and this engine's decisions (WON-Qxx)."""

from __future__ import annotations

import pytest
from support.waters_of_nereus import (
    act,
    clear_board,
    give,
    put,
    rng,
    ship_to,
    start,
    turn_of,
)

from service.games.base import RuleViolation
from service.games.waters_of_nereus import ENGINE, data
from service.games.waters_of_nereus import commands as c
from service.games.waters_of_nereus.data import NEUTRAL


def turn(crew, row, col, gold=None):
    s = turn_of(4, 0, crew)
    clear_board(s)
    for p, (r, c_) in zip((1, 2, 3), [(5, 5), (5, 0), (0, 5)], strict=True):
        ship_to(s, p, r, c_)
    ship_to(s, 0, row, col)
    if gold is not None:
        s["seats"][0]["gold"] = gold
    return s


def test_won_q02_choice_is_final_and_who_chose_is_public():
    """WON-Q02 (WON-040): a choice is final; the seat leaves to_act, the others see that it has
    chosen (committed, and the CrewChosen event's seat) but not what, until the reveal."""
    s = start(2)
    assert ENGINE.to_act(s) == [0, 1]
    events = act(s, 0, c.ChooseCrew("captain"))
    assert ENGINE.legal(s, 0) == [] and ENGINE.to_act(s) == [1]
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 0, c.ChooseCrew("purser"), rng())
    assert err.value.code == "crew_already_chosen"
    seen = ENGINE.redact_event(events[0], 1)
    assert seen.data == {"seat": 0, "crew": None}
    assert [p["committed"] for p in ENGINE.view(s, 1)["seats"]] == [True, False]
    assert "chosen" not in ENGINE.view(s, None)["seats"][0] and ENGINE.view(s, 0)["seats"][0]["chosen"] == "captain"
    events = act(s, 1, c.ChooseCrew("pilot"))
    reveal = next(e for e in events if e.type == "CrewRevealed")
    assert reveal.data["cards"] == ["captain", "pilot"]


def test_won_q03_marker_first():
    """WON-Q03: nothing but placing the marker before it is placed."""
    s = turn("purser", 2, 2)
    assert all(isinstance(x, c.PlaceMarker) for x in ENGINE.legal(s, 0))


def test_won_q04_never_stranded_on_a_ship():
    """WON-Q04: a step onto a ship needs the gold and movement to leave it again."""
    s = turn("captain", 2, 0, gold=5)
    ship_to(s, 1, 2, 1)
    act(s, 0, c.PlaceMarker(2))  # move 0-1: cannot pass the ship
    assert c.SailShip("E") not in ENGINE.legal(s, 0)
    act(s, 0, c.BuyMoves(1))
    assert c.SailShip("E") in ENGINE.legal(s, 0)
    act(s, 0, c.SailShip("E"))
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 0, c.EndTurn(), rng())
    assert err.value.code == "ship_moving"


def test_won_q05_won_a03_fee_paid_on_leaving_neutral_to_supply():
    """WON-Q05, WON-A03: the fee is paid when leaving a ship's space; for the neutral ship it
    goes to the supply."""
    s = turn("pilot", 2, 0, gold=1)
    s["neutral_ship"] = 2 * 6 + 1
    act(s, 0, c.PlaceMarker(2))
    act(s, 0, c.SailShip("E"))
    assert s["seats"][0]["gold"] == 1
    events = act(s, 0, c.SailShip("E"))
    assert events[0].data["fees"] == [NEUTRAL]
    assert s["seats"][0]["gold"] == 0
    assert sum(p["gold"] for p in s["seats"]) == 9  # 3 x 3 gold for the others, none gained


def test_won_a02_pilot_never_revisits():
    """WON-A02: the pilot's path may not visit a space twice."""
    s = turn("pilot", 2, 2, gold=2)
    act(s, 0, c.PlaceMarker(1))
    act(s, 0, c.BuyTurns())
    act(s, 0, c.SailShip("E"))
    act(s, 0, c.SailShip("S"))
    act(s, 0, c.SailShip("W"))
    assert c.SailShip("N") not in ENGINE.legal(s, 0)


def test_won_a04_zero_move_picks_nothing():
    """WON-A04: dropping anchor without moving picks up nothing."""
    s = turn("captain", 2, 2)
    act(s, 0, c.PlaceMarker(1))
    events = act(s, 0, c.DropAnchor())
    assert events[0].data["treasures"] == []


def test_won_a05_gem_in_the_chest():
    """WON-A05: a gem fills the next chest slot as that colour and earns its reward."""
    s = turn("purser", 2, 2)
    act(s, 0, c.PlaceMarker(1))
    give(s, 0, "chest", "W")
    give(s, 0, "storage", "*")
    act(s, 0, c.TakeGem())
    g, vp = s["seats"][0]["gold"], s["seats"][0]["vp"]
    act(s, 0, c.PlaceTreasure("*", "chest"))
    assert (s["seats"][0]["gold"] - g, s["seats"][0]["vp"] - vp) == (3, 2)
    ENGINE.check_invariants(s)


def test_won_q06_neutral_takes_no_cost_rank():
    """WON-Q06: the neutral player's marker does not raise the real players' costs."""
    from service.games.waters_of_nereus import flow

    s = start(2, neutral=True)
    s["rows"]["explorer"] = [NEUTRAL, 1, 0]
    assert [q[:2] for q in flow.explorer_queue(s)] == [[NEUTRAL, 0], [1, 2], [0, 3]]


def test_won_q08_sc10_and_explore_allowances():
    """WON-Q08: an explore uses the narrowest allowance containing the colour."""
    s = turn("explorer", 2, 2)
    put(s, 2, 3, "W", "K")
    act(s, 0, c.PlaceMarker(1))
    s["turn"]["explores"].append("WYGRPK")  # as SC10 does
    act(s, 0, c.Explore(2, 3, "W"))
    assert s["turn"]["explores"] == ["WYGRPK"]
    assert c.Explore(2, 3, "K") in ENGINE.legal(s, 0)


def test_won_a13_a16_no_hand_limit_unlimited_gold():
    """WON-A13, WON-A16: no hand limit; gold has no upper bound."""
    s = turn("purser", 2, 2, gold=200)
    act(s, 0, c.PlaceMarker(1))
    act(s, 0, c.PerformAction())
    assert s["seats"][0]["gold"] == 206
    assert data.SCIENCE_MAX == 10  # WON-D08


def test_won_a10_full_row_voids_the_turn():
    """WON-A10: if the crew's row is full (only with custom data) the turn is void: end it."""
    s = turn("purser", 2, 2)
    s["rows"]["purser"] = [1, 2, 3, 1]
    assert ENGINE.legal(s, 0) == [c.EndTurn()]
    act(s, 0, c.EndTurn())
    assert s["active"] != 0
