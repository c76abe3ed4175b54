"""Waters of Nereus: the rulebook's worked examples as scenarios, labelled WON-S01 to WON-S14
(the labels are listed in the introduction of docs/rules/waters-of-nereus.md)."""

from __future__ import annotations

import pytest
from support.waters_of_nereus import (
    act,
    cell,
    clear_board,
    complete_hold,
    give,
    new_game,
    only_in_bag,
    put,
    rng,
    ship_to,
    start,
    turn_of,
)

from service.games.base import RuleViolation
from service.games.waters_of_nereus import ENGINE, context, flow
from service.games.waters_of_nereus import commands as c
from service.games.waters_of_nereus.data import NEUTRAL

FAR = [(5, 5), (5, 0), (0, 5), (3, 3)]


def ships_apart(s, seat, row, col):
    """Put ``seat``'s ship on (row, col) and the other ships far away."""
    others = [p for p in range(s["players"]) if p != seat]
    for p, (r, c_) in zip(others, FAR, strict=False):
        ship_to(s, p, r, c_)
    ship_to(s, seat, row, col)


def test_won_s01_captain_space_1_one_step():
    """WON-S01: captain space 1, move 1 E, pick up the black treasure, place it before the turn ends."""
    s = turn_of(4, 0, "captain")
    clear_board(s)
    ships_apart(s, 0, 0, 0)
    put(s, 0, 1, "K")
    act(s, 0, c.PlaceMarker(1))
    assert s["rows"]["captain"][0] == 0
    act(s, 0, c.SailShip("E"))
    act(s, 0, c.DropAnchor())
    assert s["seats"][0]["pending"] == ["K"]
    assert s["board"][cell(s, 0, 1)] == []
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 0, c.EndTurn(), rng())
    assert err.value.code == "treasures_unplaced"
    act(s, 0, c.PlaceTreasure("K", "hold", "captain", 0))
    assert s["seats"][0]["holds"]["captain"][0] == "K"
    act(s, 0, c.EndTurn())
    assert s["rows"]["captain"][0] == 0  # the space stays occupied
    ENGINE.check_invariants(s)


def test_won_s02_merchant_space_1():
    """WON-S02: 3 gold on merchant space 1 -> gold 0, +5 VP."""
    s = turn_of(4, 1, "merchant")
    assert s["seats"][1]["gold"] == 3
    act(s, 1, c.PlaceMarker(1))
    act(s, 1, c.PerformAction())
    assert s["seats"][1]["gold"] == 0
    assert s["seats"][1]["vp"] == 5


def _explorer_phase_position():
    """Green (0) explorer space 1, Blue (2) space 2, Yellow (3) space 3; purser spaces 1 and 2
    taken; Red (1) is ending the last turn of the 4th cycle."""
    s = turn_of(4, 1, "merchant")
    act(s, 1, c.PlaceMarker(4))
    s["cycle"] = 4
    s["order"] = []
    s["rows"]["explorer"] = [0, 2, 3, None]
    s["rows"]["purser"] = [1, 3, None, None]
    s["seats"][0]["played"] = ["explorer", "captain", "pilot", "boatswain"]
    s["seats"][2]["played"] = ["explorer", "captain", "pilot", "boatswain"]
    s["seats"][3]["played"] = ["explorer", "captain", "purser", "boatswain"]
    s["seats"][0]["gold"] = 2
    s["seats"][2]["gold"] = 5
    s["seats"][3]["gold"] = 5
    return s


def test_won_s03_explorer_phase_order_and_costs():
    """WON-S03: Green pays 2, plays the purser onto purser space 3, takes 4 gold (net +2); then
    Blue may pay 3 and Yellow 4."""
    s = _explorer_phase_position()
    act(s, 1, c.EndTurn())
    assert s["phase"] == "explorer_offer" and s["active"] == 0
    assert s["turn"]["cost"] == 2
    assert c.TakeExplorerTurn("purser") in ENGINE.legal(s, 0)
    act(s, 0, c.TakeExplorerTurn("purser"))
    assert s["seats"][0]["gold"] == 0
    assert ENGINE.legal(s, 0) == [c.PlaceMarker(3), c.PlaceMarker(4)]
    act(s, 0, c.PlaceMarker(3))
    assert s["rows"]["explorer"][0] is None
    assert s["rows"]["purser"][2] == 0
    act(s, 0, c.PerformAction())
    assert s["seats"][0]["gold"] == 4  # net +2
    act(s, 0, c.EndTurn())
    assert s["active"] == 2 and s["turn"]["cost"] == 3
    act(s, 2, c.DeclineExplorerTurn())
    assert s["active"] == 3 and s["turn"]["cost"] == 4  # a decliner does not change costs (WON-A01)


def test_won_s04_chest_chain_gem_merchant_hold():
    """WON-S04: W, Y, G into the chest, the green reward draws a Y, Y+Y -> gem, gem completes
    the merchant hold: +4 gold, +8 VP; chest W, Y, G."""
    s = turn_of(4, 1, "purser")
    act(s, 1, c.PlaceMarker(1))
    give(s, 1, "storage", "Y")
    give(s, 1, "hold", "W", "W", crew="merchant")
    give(s, 1, "pending", "W", "Y", "G")
    only_in_bag(s, "Y")
    me = s["seats"][1]
    gold0, vp0, supply0 = me["gold"], me["vp"], s["gem_supply"]
    act(s, 1, c.PlaceTreasure("W", "chest"))
    assert (me["gold"] - gold0, me["vp"] - vp0) == (1, 1)
    act(s, 1, c.PlaceTreasure("Y", "chest"))
    assert (me["gold"] - gold0, me["vp"] - vp0) == (4, 3)
    events = act(s, 1, c.PlaceTreasure("G", "chest"))
    assert [e.data["treasure"] for e in events if e.type == "TreasureDrawn"] == ["Y"]
    assert me["pending"] == ["Y"]
    act(s, 1, c.PlaceTreasure("Y", "storage"))
    act(s, 1, c.ExchangeTreasures("Y"))
    assert me["gems"] == 1 and "Y" not in me["storage"]
    act(s, 1, c.TakeGem())
    events = act(s, 1, c.PlaceTreasure("*", "hold", "merchant", 2))
    assert [e.type for e in events] == ["TreasurePlaced", "HoldCompleted"]
    assert me["gold"] - gold0 == 4
    assert me["vp"] - vp0 == 8
    assert me["chest"] == ["W", "Y", "G"]
    assert "merchant" in me["completed"]
    assert me["holds"]["merchant"] == [None, None, None]
    assert s["gem_supply"] == supply0  # the gem went back to the supply (WON-A22)


def test_won_s05_captain_with_gold_action():
    """WON-S05: captain space 2 (0-1 any) + 3 gold -> move 3 E, pick up Y, G, R."""
    s = turn_of(4, 0, "captain")
    clear_board(s)
    ships_apart(s, 0, 0, 0)
    put(s, 0, 3, "Y", "G", "R")
    act(s, 0, c.PlaceMarker(2))
    act(s, 0, c.BuyMoves(2))
    assert s["seats"][0]["gold"] == 0
    for _ in range(3):
        act(s, 0, c.SailShip("E"))
    act(s, 0, c.DropAnchor())
    assert sorted(s["seats"][0]["pending"]) == ["G", "R", "Y"]
    act(s, 0, c.PlaceTreasure("Y", "storage"))
    act(s, 0, c.PlaceTreasure("G", "storage"))
    act(s, 0, c.PlaceTreasure("R", "storage"))
    act(s, 0, c.EndTurn())
    ENGINE.check_invariants(s)


def test_won_s06_pilot_turning_twice_for_one_payment():
    """WON-S06: pilot space 1, pay 2, path E, S, S, E -> (2,2); only (2,2)'s treasures; without the
    payment the turn is rejected."""
    s = turn_of(4, 0, "pilot")
    clear_board(s)
    ships_apart(s, 0, 0, 0)
    s["seats"][0]["gold"] = 2
    put(s, 0, 1, "W")
    put(s, 2, 2, "P")
    act(s, 0, c.PlaceMarker(1))
    act(s, 0, c.SailShip("E"))
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 0, c.SailShip("S"), rng())
    assert err.value.code == "illegal_step"
    act(s, 0, c.BuyTurns())
    assert s["seats"][0]["gold"] == 0
    for d in ("S", "S", "E"):
        act(s, 0, c.SailShip(d))
    act(s, 0, c.DropAnchor())
    assert s["ships"][0] == cell(s, 2, 2)
    assert s["seats"][0]["pending"] == ["P"]
    assert s["board"][cell(s, 0, 1)] == ["W"]


def test_won_s07_explorer_pickup_and_phase3_rank():
    """WON-S07: explorer space 3 takes the K next to the ship; Phase-3 cost 3 as 2nd, 4 once
    Red takes space 2."""
    s = turn_of(4, 3, "explorer")
    clear_board(s)
    ships_apart(s, 3, 2, 2)
    put(s, 2, 3, "K")
    s["rows"]["explorer"][0] = 2  # Blue holds space 1
    act(s, 3, c.PlaceMarker(3))
    act(s, 3, c.Explore(2, 3, "K"))
    assert s["seats"][3]["pending"] == ["K"]
    queue = flow.explorer_queue(s)
    assert [q[:2] for q in queue] == [[2, 2], [3, 3]]
    s["rows"]["explorer"][1] = 1  # Red takes space 2 later
    queue = flow.explorer_queue(s)
    assert [q[:2] for q in queue] == [[2, 2], [1, 3], [3, 4]]


def test_won_s08_boatswain_chain():
    """WON-S08: boatswain space 1: +3 VP; Y storage->chest; G explorer hold->chest draws R;
    W storage->merchant hold completes it: +10 VP, +3 gold, 3 of 4 moves used."""
    s = turn_of(4, 3, "boatswain")
    me = s["seats"][3]
    give(s, 3, "chest", "W")
    give(s, 3, "storage", "Y")  # storage: W (setup) and Y
    give(s, 3, "hold", "G", crew="explorer")
    give(s, 3, "hold", "W", "W", crew="merchant")
    only_in_bag(s, "R")
    gold0, vp0 = me["gold"], me["vp"]
    act(s, 3, c.PlaceMarker(1))
    act(s, 3, c.PerformAction())
    assert s["turn"]["moves"] == 4
    act(s, 3, c.UnloadTreasure("Y", "storage"))
    act(s, 3, c.PlaceTreasure("Y", "chest"))
    act(s, 3, c.UnloadTreasure("G", "hold", "explorer", 0))
    act(s, 3, c.PlaceTreasure("G", "chest"))
    assert me["pending"] == ["R"]
    act(s, 3, c.PlaceTreasure("R", "storage"))
    act(s, 3, c.UnloadTreasure("W", "storage"))
    act(s, 3, c.PlaceTreasure("W", "hold", "merchant", 2))
    assert "merchant" in me["completed"]
    assert me["vp"] - vp0 == 10
    assert me["gold"] - gold0 == 3
    assert s["turn"]["moves"] == 1
    act(s, 3, c.EndTurn())


def test_won_s09_purser_enhanced():
    """WON-S09: purser hold complete, purser space 2 -> +5 +2 = +7 gold."""
    s = turn_of(4, 2, "purser")
    complete_hold(s, 2, "purser")
    gold0 = s["seats"][2]["gold"]
    act(s, 2, c.PlaceMarker(2))
    act(s, 2, c.PerformAction())
    assert s["seats"][2]["gold"] - gold0 == 7


def test_won_s10_merchant_space_3():
    """WON-S10: merchant space 3: pay 4 -> +3 VP."""
    s = turn_of(4, 0, "merchant")
    s["seats"][0]["gold"] = 4
    act(s, 0, c.PlaceMarker(3))
    act(s, 0, c.PerformAction())
    assert (s["seats"][0]["gold"], s["seats"][0]["vp"]) == (0, 3)


def test_won_s11_scientist_space_2():
    """WON-S11: science 0 -> 1 and one card drawn (hand 3 -> 4)."""
    s = turn_of(4, 2, "scientist")
    act(s, 2, c.PlaceMarker(2))
    act(s, 2, c.PerformAction())
    assert s["seats"][2]["science"] == 1
    assert len(s["seats"][2]["hand"]) == 4


def test_won_s12_playing_a_science_card():
    """WON-S12: power 1, after a captain action play SC01: power 0, 2 treasures drawn and placed;
    a second card the same turn is rejected."""
    s = turn_of(4, 2, "captain")
    me = s["seats"][2]
    for card in ("SC01", "SC02"):
        if card not in me["hand"]:
            holder = s["science_deck"] if card in s["science_deck"] else None
            if holder is None:
                other = next(p for p in s["seats"] if card in p["hand"])
                other["hand"].remove(card)
                other["hand"].append(me["hand"].pop())
            else:
                holder.remove(card)
                holder.append(me["hand"].pop())
            me["hand"].append(card)
    me["science"] = 1
    act(s, 2, c.PlaceMarker(1))
    act(s, 2, c.DropAnchor())
    events = act(s, 2, c.PlayScience("SC01"))
    assert me["science"] == 0
    assert len([e for e in events if e.type == "TreasureDrawn"]) == 2
    assert len(me["pending"]) == 2
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 2, c.PlayScience("SC02"), rng())
    assert err.value.code == "science_unplayable"
    for t in list(me["pending"]):
        act(s, 2, c.PlaceTreasure(t, "storage"))
    act(s, 2, c.EndTurn())
    ENGINE.check_invariants(s)


def test_won_s13_neutral_ship():
    """WON-S13: neutral pilot on space 2 (move 3), die 3 then 2: NW->E (blocked), E->S; the ship
    goes (3,4), (4,4), stops at the edge after 2 and returns the W to the bag."""
    s = start(2, neutral=True)
    clear_board(s)
    s["neutral_ship"] = cell(s, 2, 4)
    s["compass"] = 7  # NW
    s["rows"]["pilot"][0] = 0
    put(s, 4, 4, "W")
    s["neutral_deck"].remove("pilot")
    s["neutral_deck"].append("pilot")
    bag_w = s["bag"]["W"]
    ctx = context.Ctx(s, rng(38))  # domain 38 rolls 3 then 2
    flow.neutral_turn(ctx, None)
    rolls = [e.data for e in ctx.events if e.type == "NeutralDieRolled"]
    assert [(r["roll"], r["direction"]) for r in rolls] == [(3, "E"), (2, "S")]
    flip = ctx.events[0].data
    assert (flip["crew"], flip["space"]) == ("pilot", 2)
    for ev in ctx.events:
        ENGINE.evolve(s, ev)
    assert s["rows"]["pilot"][1] == NEUTRAL
    assert s["neutral_ship"] == cell(s, 4, 4)
    assert s["board"][cell(s, 4, 4)] == []
    assert s["bag"]["W"] == bag_w + 1


def test_won_s14_discovery_limits():
    """WON-S14: a discovery card marking A (ship), B (3 treasures), C (1), D (empty): A and B
    unchanged, C gets a 2nd, D a 1st; the bag loses 2."""
    s = new_game(4)
    a, b, c_, d = cell(s, 0, 0), cell(s, 1, 1), cell(s, 2, 2), cell(s, 3, 3)
    s["ships"][0] = a
    put(s, 1, 1, "W", "Y", "G")
    put(s, 2, 2, "R")
    bag = sum(s["bag"].values())
    ctx = context.Ctx(s, rng(5))
    context.place_on_board(ctx, [a, b, c_, d])
    for ev in ctx.events:
        ENGINE.evolve(s, ev)
    assert s["board"][a] == []
    assert len(s["board"][b]) == 3
    assert len(s["board"][c_]) == 2
    assert len(s["board"][d]) == 1
    assert sum(s["bag"].values()) == bag - 2
