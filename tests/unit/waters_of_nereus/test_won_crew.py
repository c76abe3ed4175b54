"""Waters of Nereus crew actions and turn contents (WON-050 to WON-055, WON-100 to WON-124)."""

from __future__ import annotations

import pytest
from support.waters_of_nereus import (
    act,
    cell,
    clear_board,
    complete_hold,
    give,
    only_in_bag,
    put,
    rng,
    ship_to,
    turn_of,
)

from service.games.base import RuleViolation
from service.games.waters_of_nereus import ENGINE
from service.games.waters_of_nereus import commands as c

FAR = [(5, 5), (5, 0), (0, 5)]


def turn(crew, seat=0, row=2, col=2, gold=None, enhanced=False, space=None):
    s = turn_of(4, seat, crew)
    clear_board(s)
    others = [p for p in range(4) if p != seat]
    for p, (r, c_) in zip(others, FAR, strict=True):
        ship_to(s, p, r, c_)
    ship_to(s, seat, row, col)
    if gold is not None:
        s["seats"][seat]["gold"] = gold
    if enhanced:
        complete_hold(s, seat, crew)
    if space is not None:
        act(s, seat, c.PlaceMarker(space))
    return s


def refused(s, seat, cmd, code):
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, seat, cmd, rng())
    assert err.value.code == code, err.value.message
    assert "WON-" in err.value.message or code == "not_allowed"


# --- turn contents ----------------------------------------------------------------------


def test_won_050_won_a11_basic_action_optional():
    """WON-050, WON-A11: after the marker the basic action is optional; the turn may just end."""
    s = turn("merchant", space=1)
    act(s, 0, c.EndTurn())
    assert s["seats"][0]["vp"] == 0 and s["rows"]["merchant"][0] == 0


def test_won_051_one_gold_action_per_turn():
    """WON-051, WON-A06: one gold action per turn, the played crew's."""
    s = turn("merchant", gold=10, space=4)
    act(s, 0, c.BuyVp())
    assert c.BuyVp() not in ENGINE.legal(s, 0)
    refused(s, 0, c.BuyVp(), "gold_action_used")
    refused(s, 0, c.BuyTreasure(), "gold_action_used")
    s2 = turn("merchant", gold=10, space=4)
    refused(s2, 0, c.BuyTreasure(), "gold_action_unavailable")


def test_won_052_enhanced_only_if_completed_before():
    """WON-052: the enhanced action needs the hold completed before this turn."""
    s = turn("purser", space=1)
    assert s["turn"]["enhanced"] is False
    s2 = turn("purser", enhanced=True)
    g = s2["seats"][0]["gold"]
    act(s2, 0, c.PlaceMarker(1))
    assert s2["turn"]["enhanced"] is True and s2["seats"][0]["gold"] == g + 2


def test_won_053_free_order_of_parts():
    """WON-053: gold action before the basic action, or after it."""
    s = turn("merchant", gold=10, space=4)
    act(s, 0, c.BuyVp())
    act(s, 0, c.PerformAction())
    s2 = turn("merchant", gold=10, space=4)
    act(s2, 0, c.PerformAction())
    act(s2, 0, c.BuyVp())
    assert s["seats"][0]["vp"] == s2["seats"][0]["vp"] == 3
    s3 = turn("boatswain", enhanced=True)
    only_in_bag(s3, "K")
    act(s3, 0, c.PlaceMarker(1))  # the enhanced draw comes before the basic moves
    assert s3["seats"][0]["pending"] == ["K"]


def test_won_054_science_cards_in_a_turn():
    """WON-054: science cards may be played during the turn (1 power each)."""
    s = turn("purser", space=1)
    me = s["seats"][0]
    me["science"] = 2
    me["hand"], s["science_deck"] = (
        ["SC04", "SC05"],
        [x for x in s["science_deck"] + me["hand"] if x not in ("SC04", "SC05")],
    )
    g = me["gold"]
    act(s, 0, c.PlayScience("SC04"))
    act(s, 0, c.PlayScience("SC05"))
    assert me["gold"] == g + 8 and me["science"] == 0


def test_won_055_won_a09_all_treasures_placed_by_end():
    """WON-055, WON-A09: the turn cannot end with treasures in hand."""
    s = turn("purser", space=1)
    give(s, 0, "pending", "W")
    assert c.EndTurn() not in ENGINE.legal(s, 0)
    refused(s, 0, c.EndTurn(), "treasures_unplaced")


# --- captain ----------------------------------------------------------------------------


def test_won_100_captain_spaces():
    """WON-100: space 1 two steps any direction; space 3/4 diagonal only."""
    s = turn("captain", space=1)
    dirs = {cmd.direction for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.SailShip)}
    assert dirs == {"N", "NE", "E", "SE", "S", "SW", "W", "NW"}
    assert s["turn"]["move"]["left"] == 2
    s = turn("captain", space=4)
    dirs = {cmd.direction for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.SailShip)}
    assert dirs == {"NE", "SE", "SW", "NW"} and s["turn"]["move"]["left"] == 1


def test_won_101_straight_line_and_board_edge():
    """WON-101: one straight line, no leaving the board."""
    s = turn("captain", row=0, col=0, space=1)
    dirs = {cmd.direction for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.SailShip)}
    assert dirs == {"E", "SE", "S"}
    act(s, 0, c.SailShip("E"))
    assert [cmd.direction for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.SailShip)] == ["E"]
    refused(s, 0, c.SailShip("S"), "illegal_step")


def test_won_102_pass_through_fee_and_no_stopping_on_ships():
    """WON-102: pass through another ship paying its owner 1 gold; never stop on it."""
    s = turn("captain", row=2, col=0, space=1)
    ship_to(s, 1, 2, 1)
    put(s, 2, 2, "Y")
    act(s, 0, c.SailShip("E"))
    refused(s, 0, c.DropAnchor(), "occupied_space")
    g0, g1 = s["seats"][0]["gold"], s["seats"][1]["gold"]
    act(s, 0, c.SailShip("E"))
    assert (s["seats"][0]["gold"], s["seats"][1]["gold"]) == (g0 - 1, g1 + 1)
    act(s, 0, c.DropAnchor())
    assert s["seats"][0]["pending"] == ["Y"]


def test_won_102_won_a03_fee_must_be_payable():
    """WON-102, WON-A03: without gold for the fee the ship may not pass through."""
    s = turn("captain", row=2, col=0, gold=0, space=1)
    ship_to(s, 1, 2, 1)
    assert c.SailShip("E") not in ENGINE.legal(s, 0)


def test_won_103_pick_up_only_at_stop():
    """WON-103: only the treasures of the final space are picked up."""
    s = turn("captain", row=0, col=0, space=1)
    put(s, 0, 1, "W")
    put(s, 0, 2, "K", "P")
    act(s, 0, c.SailShip("E"))
    act(s, 0, c.SailShip("E"))
    act(s, 0, c.DropAnchor())
    assert sorted(s["seats"][0]["pending"]) == ["K", "P"] and s["board"][cell(s, 0, 1)] == ["W"]


def test_won_104_captain_gold_action():
    """WON-104: 2 gold for +1 space, 3 gold for +2."""
    s = turn("captain", gold=3, space=2)
    assert {cmd.spaces for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.BuyMoves)} == {1, 2}
    act(s, 0, c.BuyMoves(1))
    assert s["turn"]["move"]["left"] == 2 and s["seats"][0]["gold"] == 1


def test_won_105_captain_enhanced():
    """WON-105: a completed captain hold adds 1 to the movement."""
    s = turn("captain", enhanced=True, space=1)
    assert s["turn"]["move"]["left"] == 3


def test_won_106_pilot_orthogonal():
    """WON-106: pilot spaces move 4/3/2/1, orthogonally only."""
    s = turn("pilot", space=1)
    dirs = {cmd.direction for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.SailShip)}
    assert dirs == {"N", "E", "S", "W"} and s["turn"]["move"]["left"] == 4


def test_won_107_pilot_turns_for_gold():
    """WON-107, WON-A02: 2 gold lets the pilot turn (orthogonally), never revisiting a space."""
    s = turn("pilot", row=0, col=0, gold=2, space=1)
    act(s, 0, c.SailShip("E"))
    act(s, 0, c.BuyTurns())
    dirs = {cmd.direction for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.SailShip)}
    assert dirs == {"E", "S"}  # W would revisit the start


def test_won_108_pilot_enhanced_free_turns():
    """WON-108: a completed pilot hold makes turns free."""
    s = turn("pilot", row=0, col=0, enhanced=True, space=1)
    act(s, 0, c.SailShip("E"))
    assert c.SailShip("S") in ENGINE.legal(s, 0)
    assert c.BuyTurns() not in ENGINE.legal(s, 0)


def test_won_109_explorer_spaces():
    """WON-109: space 1 W/Y, 2 G/R, 3 P/K, 4 any, from an orthogonal neighbour."""
    s = turn("explorer", space=1)
    put(s, 1, 2, "W", "K")
    put(s, 1, 1, "Y")  # diagonal: never
    assert [cmd for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.Explore)] == [c.Explore(1, 2, "W")]
    s = turn("explorer", space=4)
    put(s, 2, 3, "W", "K")
    assert len([cmd for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.Explore)]) == 2


def test_won_110_explorer_may_gain_nothing():
    """WON-110: with no allowed treasure next to the ship the action yields nothing."""
    s = turn("explorer", space=3)
    put(s, 2, 3, "W")
    assert not any(isinstance(cmd, c.Explore) for cmd in ENGINE.legal(s, 0))
    refused(s, 0, c.Explore(2, 3, "W"), "no_treasure")
    act(s, 0, c.EndTurn())


def test_won_111_explorer_gold_action_is_phase_3():
    """WON-111: the explorer has no in-turn gold action (it is the Phase-3 turn)."""
    s = turn("explorer", gold=10, space=1)
    names = {cmd.type for cmd in ENGINE.legal(s, 0)}
    assert not names & {"buy_moves", "buy_turns", "buy_vp", "buy_treasure", "buy_research"}


def test_won_112_explorer_enhanced_any_colour():
    """WON-112: a completed explorer hold takes any colour regardless of space."""
    s = turn("explorer", enhanced=True, space=1)
    put(s, 2, 1, "K")
    assert c.Explore(2, 1, "K") in ENGINE.legal(s, 0)


def test_won_113_boatswain_spaces():
    """WON-113: space 1 +3 VP and 4 moves; space 4 +1 VP and 2 moves."""
    s = turn("boatswain", space=1)
    act(s, 0, c.PerformAction())
    assert (s["seats"][0]["vp"], s["turn"]["moves"]) == (3, 4)
    s = turn("boatswain", space=4)
    act(s, 0, c.PerformAction())
    assert (s["seats"][0]["vp"], s["turn"]["moves"]) == (1, 2)
    act(s, 0, c.UnloadTreasure("W", "storage"))
    assert s["turn"]["moves"] == 1 and s["seats"][0]["pending"] == ["W"]


def test_won_114_boatswain_gold_action():
    """WON-114: 1 gold for 1 more treasure move."""
    s = turn("boatswain", space=2)
    act(s, 0, c.BuyTreasureMove())
    assert s["turn"]["moves"] == 1 and s["seats"][0]["gold"] == 2


def test_won_115_boatswain_enhanced_draw():
    """WON-115: a completed boatswain hold draws a random treasure when played."""
    s = turn("boatswain", enhanced=True)
    only_in_bag(s, "G")
    events = act(s, 0, c.PlaceMarker(3))
    assert [e.data["treasure"] for e in events if e.type == "TreasureDrawn"] == ["G"]


@pytest.mark.parametrize(("space", "gold"), [(1, 6), (2, 5), (3, 4), (4, 3)])
def test_won_116_purser_spaces(space, gold):
    """WON-116: take 6/5/4/3 gold."""
    s = turn("purser", gold=0, space=space)
    act(s, 0, c.PerformAction())
    assert s["seats"][0]["gold"] == gold


def test_won_117_purser_gold_action():
    """WON-117: 3 gold to draw a random treasure."""
    s = turn("purser", gold=3, space=1)
    only_in_bag(s, "R")
    act(s, 0, c.BuyTreasure())
    assert s["seats"][0]["gold"] == 0 and s["seats"][0]["pending"] == ["R"]


def test_won_118_purser_enhanced():
    """WON-118: +2 gold with a completed purser hold."""
    s = turn("purser", gold=0, enhanced=True, space=4)
    act(s, 0, c.PerformAction())
    assert s["seats"][0]["gold"] == 5


@pytest.mark.parametrize(("space", "cost", "vp"), [(1, 3, 5), (2, 4, 4), (3, 4, 3), (4, 3, 2)])
def test_won_119_merchant_spaces(space, cost, vp):
    """WON-119: pay 3->5, 4->4, 4->3, 3->2; too little gold -> marker only."""
    s = turn("merchant", gold=cost, space=space)
    act(s, 0, c.PerformAction())
    assert (s["seats"][0]["gold"], s["seats"][0]["vp"]) == (0, vp)
    s = turn("merchant", gold=cost - 1, space=space)
    refused(s, 0, c.PerformAction(), "insufficient_gold")


def test_won_120_merchant_gold_action():
    """WON-120: 1 gold for 1 VP."""
    s = turn("merchant", gold=1, space=1)
    act(s, 0, c.BuyVp())
    assert (s["seats"][0]["gold"], s["seats"][0]["vp"]) == (0, 1)


def test_won_121_merchant_enhanced():
    """WON-121: +1 VP when a completed merchant is played."""
    s = turn("merchant", enhanced=True, space=1)
    assert s["seats"][0]["vp"] == 1


def test_won_122_scientist_spaces():
    """WON-122: science +2; +1 and a card; +1; a card; 2-3-player side space 3 = +1 OR a card."""
    for space, science, cards in ((1, 2, 3), (2, 1, 4), (3, 1, 3), (4, 0, 4)):
        s = turn("scientist", space=space)
        act(s, 0, c.PerformAction())
        assert (s["seats"][0]["science"], len(s["seats"][0]["hand"])) == (science, cards)
    s = turn_of(3, 0, "scientist")
    act(s, 0, c.PlaceMarker(3))
    assert [cmd for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.PerformAction)] == [
        c.PerformAction("science"),
        c.PerformAction("card"),
    ]
    act(s, 0, c.PerformAction("card"))
    assert (s["seats"][0]["science"], len(s["seats"][0]["hand"])) == (0, 4)


def test_won_123_scientist_gold_action():
    """WON-123: 3 gold for science +1 or a card."""
    s = turn("scientist", gold=3, space=1)
    act(s, 0, c.BuyResearch("science"))
    assert (s["seats"][0]["gold"], s["seats"][0]["science"]) == (0, 1)


def test_won_124_scientist_enhanced_draw_then_discard():
    """WON-124, WON-A07: optional draw, then a compulsory discard."""
    s = turn("scientist", enhanced=True, space=4)
    act(s, 0, c.DrawScienceEnhanced())
    hand = s["seats"][0]["hand"]
    assert len(hand) == 4
    legal = ENGINE.legal(s, 0)
    assert all(isinstance(cmd, c.DiscardScience) for cmd in legal)
    refused(s, 0, c.EndTurn(), "discard_first")
    act(s, 0, legal[0])
    assert len(hand) == 3 and legal[0].card in s["science_discard"]
    act(s, 0, c.EndTurn())
