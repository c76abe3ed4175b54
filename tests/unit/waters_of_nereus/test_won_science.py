"""Waters of Nereus science cards (WON-125 to WON-129)."""

from __future__ import annotations

import pytest
from support.waters_of_nereus import act, give, rng, turn_of

from service.games.base import RuleViolation
from service.games.waters_of_nereus import ENGINE, context, data, scoring
from service.games.waters_of_nereus import commands as c


def with_hand(s, seat, cards):
    """Give ``seat`` exactly ``cards`` (swapping with the deck and other hands)."""
    pool = s["science_deck"]
    me = s["seats"][seat]
    for card in cards:
        for holder in [pool] + [p["hand"] for p in s["seats"]]:
            if card in holder:
                holder.remove(card)
    pool.extend(me["hand"])
    me["hand"] = list(cards)
    others = sum(len(p["hand"]) for p in s["seats"])
    assert len(pool) + others + len(s["science_discard"]) == 22


def test_won_125_power_cost_and_zero_power():
    """WON-125: playing costs 1 power; at 0 no card can be played."""
    s = turn_of(4, 0, "purser")
    act(s, 0, c.PlaceMarker(1))
    with_hand(s, 0, ["SC08"])
    assert c.PlayScience("SC08") not in ENGINE.legal(s, 0)
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 0, c.PlayScience("SC08"), rng())
    assert err.value.code == "science_unplayable"
    s["seats"][0]["science"] = 1
    act(s, 0, c.PlayScience("SC08"))
    assert (s["seats"][0]["science"], s["seats"][0]["vp"]) == (0, 3)


def test_won_126_several_turn_cards_before_and_after():
    """WON-126: on-your-turn cards before and after the action, 1 power each."""
    s = turn_of(4, 0, "purser")
    with_hand(s, 0, ["SC08", "SC09"])
    s["seats"][0]["science"] = 2
    act(s, 0, c.PlaceMarker(1))
    act(s, 0, c.PlayScience("SC08"))
    act(s, 0, c.PerformAction())
    act(s, 0, c.PlayScience("SC09"))
    assert s["seats"][0]["vp"] == 6 and s["seats"][0]["science"] == 0


def test_won_127_game_end_cards_only_at_the_end():
    """WON-127: game-end cards are not playable in a turn, only at final scoring, for 1 power."""
    s = turn_of(4, 0, "purser")
    with_hand(s, 0, ["SC13"])
    s["seats"][0]["science"] = 2
    act(s, 0, c.PlaceMarker(1))
    assert c.PlayScience("SC13") not in ENGINE.legal(s, 0)
    s["phase"], s["active"], s["turn"] = "final", 0, None
    s["seats"][0]["completed"] = ["purser", "pilot"]
    act(s, 0, c.PlayScience("SC13"))
    assert s["seats"][0]["vp"] == 4 and s["seats"][0]["science"] == 1


@pytest.mark.parametrize(
    ("card", "setup", "vp"),
    [
        ("SC15", {"chest": ["W", "Y"]}, 2),
        ("SC16", {"gems": 2}, 6),
        ("SC17", {"gold": 9}, 2),
        ("SC19", {"science": 3}, 4),
        ("SC20", {"chest": list(data.CHEST_ORDER)}, 6),
        ("SC21", {"storage": ["W", "W", "K"]}, 2),
        ("SC22", {"completed": ["pilot", "purser", "captain", "scientist"]}, 6),
    ],
)
def test_won_128_card_effects(card, setup, vp):
    """WON-128 (WON-D06): game-end card values; SC19 counts power left after paying."""
    s = turn_of(4, 0, "purser")
    me = s["seats"][0]
    me.update(setup)
    if card == "SC19":
        me["science"] -= 1  # as the engine does before scoring it
    assert scoring.end_card_vp(s, me, card) == vp


def test_won_128_turn_card_effects():
    """WON-128 (WON-D06): SC07 gem, SC10 any-colour explore, SC11 two moves, SC12 two cards."""
    s = turn_of(4, 0, "purser")
    with_hand(s, 0, ["SC07", "SC10", "SC11", "SC12"])
    s["seats"][0]["science"] = 4
    act(s, 0, c.PlaceMarker(1))
    act(s, 0, c.PlayScience("SC07"))
    assert s["seats"][0]["gems"] == 1
    act(s, 0, c.PlayScience("SC10"))
    assert s["turn"]["explores"] == ["WYGRPK"]
    act(s, 0, c.PlayScience("SC11"))
    assert s["turn"]["moves"] == 2
    act(s, 0, c.PlayScience("SC12"))
    assert len(s["seats"][0]["hand"]) == 2


def test_won_128_sc06_ship_move():
    """WON-128 (WON-D06) SC06: a 0-2 move in any direction, not while another move is open."""
    s = turn_of(4, 0, "captain")
    with_hand(s, 0, ["SC06"])
    s["seats"][0]["science"] = 1
    act(s, 0, c.PlaceMarker(1))
    assert c.PlayScience("SC06") not in ENGINE.legal(s, 0)
    act(s, 0, c.DropAnchor())
    act(s, 0, c.PlayScience("SC06"))
    assert s["turn"]["move"]["left"] == 2 and s["turn"]["move"]["basic"] is False


def test_won_129_discard_and_empty_deck():
    """WON-129, WON-A12: played cards are discarded; an empty deck draws nothing (no reshuffle)."""
    s = turn_of(4, 0, "scientist")
    with_hand(s, 0, ["SC08"])
    s["seats"][0]["science"] = 1
    s["science_discard"].extend(s["science_deck"])
    s["science_deck"] = []
    act(s, 0, c.PlaceMarker(4))
    act(s, 0, c.PlayScience("SC08"))
    assert "SC08" in s["science_discard"]
    events = act(s, 0, c.PerformAction())
    assert [e.type for e in events] == ["ActionPerformed"]
    ctx = context.Ctx(s, rng())
    context.draw_science(ctx, 0)
    assert ctx.events == []
    give(s, 0, "storage")
    ENGINE.check_invariants(s)
