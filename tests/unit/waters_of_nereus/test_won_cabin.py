"""Waters of Nereus cabin: holds (WON-080 to WON-085), treasure chest (WON-090 to WON-092), storage
(WON-093 to WON-097)."""

from __future__ import annotations

import pytest
from support.waters_of_nereus import act, give, only_in_bag, rng, turn_of

from service.games.base import RuleViolation
from service.games.waters_of_nereus import ENGINE, cabin, data
from service.games.waters_of_nereus import commands as c


def purser_turn(seat=0):
    s = turn_of(4, seat, "purser")
    act(s, seat, c.PlaceMarker(4))
    return s


def test_won_080_icons_one_colour_bicolour_rainbow():
    """WON-080: one-colour icons take that colour, bi-coloured either, rainbow any."""
    s = purser_turn()
    me = s["seats"][0]
    assert cabin.hold_accepts(me, "captain", 0, "K") and not cabin.hold_accepts(me, "captain", 0, "W")
    assert cabin.hold_accepts(me, "explorer", 1, "Y") and cabin.hold_accepts(me, "explorer", 1, "W")
    assert not cabin.hold_accepts(me, "explorer", 1, "G")
    assert cabin.hold_accepts(me, "scientist", 2, "R") and cabin.hold_accepts(me, "scientist", 2, "P")
    assert all(cabin.hold_accepts(me, "boatswain", 0, t) for t in data.COLOURS)
    give(s, 0, "pending", "K")
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 0, c.PlaceTreasure("K", "hold", "pilot", 0), rng())
    assert err.value.code == "treasure_does_not_fit"
    act(s, 0, c.PlaceTreasure("K", "hold", "captain", 0))


PIECES = [*data.COLOURS, data.GEM]


def _fits(hold: list, crew: str, slot: int, piece: str) -> bool:
    """The placement rule written out on its own (not the engine's cabin code): a free icon takes
    its colour(s), a rainbow icon any colour, a gem any icon; the merchant's hold wants one colour,
    the boatswain's four different colours."""
    icon = data.HOLDS[crew][slot]
    if hold[slot] is not None:
        return False
    if piece == data.GEM:
        return True
    if icon != "*" and piece not in icon:
        return False
    if crew == "merchant":
        return all(x in (None, piece, data.GEM) for x in hold)
    if crew == "boatswain":
        return piece not in hold
    return True


def _first_fitting(crew: str, slot: int) -> str:
    return next(t for t in data.COLOURS if _fits([None] * len(data.HOLDS[crew]), crew, slot, t))


@pytest.mark.parametrize("crew", data.CREWS)
def test_won080_treasure_fits_every_free_matching_slot(crew):
    """WON-080: every free icon a treasure or gem fits is listed by ``legal`` and accepted
    by ``decide`` -- also an icon equal to another free one of the same hold (an empty purser hold
    takes a Y on slot 1 as well as on slot 0) -- and every icon it does not fit is refused.  Checked
    for each hold, empty and with each one of its icons already filled."""
    size = len(data.HOLDS[crew])
    checked = 0
    for prefilled in [None, *range(size)]:
        s = purser_turn()
        me = s["seats"][0]
        if prefilled is not None:
            t = _first_fitting(crew, prefilled)
            s["bag"][t] -= 1
            me["holds"][crew][prefilled] = t
        give(s, 0, "pending", *PIECES)
        hold = list(me["holds"][crew])
        placements = {x for x in ENGINE.legal(s, 0) if isinstance(x, c.PlaceTreasure) and x.area == "hold"}
        for slot in range(size):
            for piece in PIECES:
                cmd = c.PlaceTreasure(piece, "hold", crew, slot)
                if _fits(hold, crew, slot, piece):
                    assert cmd in placements, f"{cmd} missing from legal (hold {hold})"
                    events = ENGINE.decide(s, 0, cmd, rng())
                    placed = events[0]
                    assert placed.type == "TreasurePlaced"
                    assert (placed.data["crew"], placed.data["slot"], placed.data["treasure"]) == (crew, slot, piece)
                    checked += 1
                else:
                    assert cmd not in placements, f"{cmd} listed by legal (hold {hold})"
                    with pytest.raises(RuleViolation) as err:
                        ENGINE.decide(s, 0, cmd, rng())
                    assert err.value.code == "treasure_does_not_fit"
    assert checked >= size * 2  # at least the gem and one colour fit every free icon


def test_won080_purser_yellow_on_slot_1_of_an_empty_hold():
    """WON-080 (the case once refused): empty purser hold, Y in hand: slot 1 is legal and
    accepted just like slot 0; placing there leaves slot 0 free for the second Y."""
    s = purser_turn()
    give(s, 0, "pending", "Y", "Y")
    legal = ENGINE.legal(s, 0)
    assert c.PlaceTreasure("Y", "hold", "purser", 0) in legal
    assert c.PlaceTreasure("Y", "hold", "purser", 1) in legal
    act(s, 0, c.PlaceTreasure("Y", "hold", "purser", 1))
    assert s["seats"][0]["holds"]["purser"] == [None, "Y", None]
    act(s, 0, c.PlaceTreasure("Y", "hold", "purser", 0))
    assert s["seats"][0]["holds"]["purser"] == ["Y", "Y", None]
    ENGINE.check_invariants(s)


def test_won_081_treasures_split_between_areas():
    """WON-081: treasures acquired together may go to different areas."""
    s = purser_turn()
    give(s, 0, "pending", "W", "K")
    act(s, 0, c.PlaceTreasure("W", "chest"))
    act(s, 0, c.PlaceTreasure("K", "storage"))
    me = s["seats"][0]
    assert me["chest"] == ["W"] and "K" in me["storage"]


def test_won_082_won_083_hold_completion():
    """WON-082, WON-083: a full captain hold (K, P, R, G) scores 12, treasures back to the bag,
    completion token; merchant = 3 of one colour; boatswain = 4 different colours."""
    s = purser_turn()
    me = s["seats"][0]
    give(s, 0, "hold", "K", "P", "R", crew="captain")
    give(s, 0, "pending", "G")
    bag_g = s["bag"]["G"]
    bag_k = s["bag"]["K"]
    events = act(s, 0, c.PlaceTreasure("G", "hold", "captain", 3))
    assert events[-1].type == "HoldCompleted" and events[-1].data["vp"] == 12
    assert me["vp"] == 12 and "captain" in me["completed"]
    assert (s["bag"]["G"], s["bag"]["K"]) == (bag_g + 1, bag_k + 1)
    give(s, 0, "hold", "Y", "Y", crew="merchant")
    assert cabin.hold_accepts(me, "merchant", 2, "Y") and not cabin.hold_accepts(me, "merchant", 2, "W")
    give(s, 0, "hold", "W", "Y", crew="boatswain")
    assert not cabin.hold_accepts(me, "boatswain", 2, "W") and cabin.hold_accepts(me, "boatswain", 2, "K")
    ENGINE.check_invariants(s)


def test_won_084_enhanced_not_on_completion_turn():
    """WON-084 (WON-052): completing the merchant hold during a merchant turn gives no enhanced
    VP that turn; the next merchant play does."""
    s = turn_of(4, 0, "merchant")
    act(s, 0, c.PlaceMarker(4))
    give(s, 0, "hold", "W", "W", crew="merchant")
    give(s, 0, "pending", "W")
    vp = s["seats"][0]["vp"]
    act(s, 0, c.PlaceTreasure("W", "hold", "merchant", 2))
    assert s["seats"][0]["vp"] == vp + 5
    assert s["turn"]["enhanced"] is False
    s2 = turn_of(4, 0, "merchant")
    s2["seats"][0]["completed"].append("merchant")
    events = act(s2, 0, c.PlaceMarker(4))
    assert s2["turn"]["enhanced"] is True
    assert [e.data["vp"] for e in events if e.type == "VPScored"] == [1]


def test_won_085_completed_hold_accepts_nothing():
    """WON-085: a completed hold accepts nothing more; its gems go back to the supply."""
    s = purser_turn()
    me = s["seats"][0]
    give(s, 0, "hold", "Y", "*", crew="purser")
    give(s, 0, "pending", "W")
    supply = s["gem_supply"]
    act(s, 0, c.PlaceTreasure("W", "hold", "purser", 2))
    assert "purser" in me["completed"] and s["gem_supply"] == supply + 1
    give(s, 0, "pending", "Y")
    assert not any(cmd.crew == "purser" for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.PlaceTreasure))


def test_won_090_chest_in_order():
    """WON-090: the chest fills W, Y, G, R, P, K; only the next slot, matching colour."""
    s = purser_turn()
    give(s, 0, "pending", "Y", "W")
    assert c.PlaceTreasure("Y", "chest") not in ENGINE.legal(s, 0)
    act(s, 0, c.PlaceTreasure("W", "chest"))
    assert c.PlaceTreasure("Y", "chest") in ENGINE.legal(s, 0)


@pytest.mark.parametrize(
    ("filled", "colour", "gold", "vp"),
    [(0, "W", 1, 1), (1, "Y", 3, 2), (3, "R", 0, 3), (4, "P", 0, 4), (5, "K", 0, 5)],
)
def test_won_091_chest_rewards(filled, colour, gold, vp):
    """WON-091: chest rewards W +1g +1VP, Y +3g +2VP, R 3, P 4, K 5 VP."""
    s = purser_turn()
    give(s, 0, "chest", *data.CHEST_ORDER[:filled])
    give(s, 0, "pending", colour)
    me = s["seats"][0]
    g, v = me["gold"], me["vp"]
    act(s, 0, c.PlaceTreasure(colour, "chest"))
    assert (me["gold"] - g, me["vp"] - v) == (gold, vp)


def test_won_091_green_draws_from_bag():
    """WON-091: the green slot draws a random treasure from the bag."""
    s = purser_turn()
    give(s, 0, "chest", "W", "Y")
    give(s, 0, "pending", "G")
    only_in_bag(s, "P")
    events = act(s, 0, c.PlaceTreasure("G", "chest"))
    assert events[-1].type == "TreasureDrawn" and s["seats"][0]["pending"] == ["P"]


def test_won_092_chest_treasures_never_move():
    """WON-092: treasures in the chest cannot be unloaded."""
    s = turn_of(4, 0, "boatswain")
    give(s, 0, "chest", "W")
    act(s, 0, c.PlaceMarker(1))
    act(s, 0, c.PerformAction())
    assert all(cmd.area != "chest" for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.UnloadTreasure))
    with pytest.raises(RuleViolation):
        ENGINE.decide(s, 0, c.UnloadTreasure("W", "chest"), rng())


def test_won_093_storage_limits():
    """WON-093: storage holds at most 6 treasures and 3 gems."""
    s = purser_turn()
    give(s, 0, "storage", "K", "K", "P", "P", "R")  # 6 with the setup W
    give(s, 0, "storage", "*", "*", "*")
    give(s, 0, "pending", "G")
    legal = ENGINE.legal(s, 0)
    assert c.PlaceTreasure("G", "storage") not in legal
    assert c.ExchangeTreasures("K") not in legal  # no free gem slot
    act(s, 0, c.SellTreasure("K"))
    assert c.PlaceTreasure("G", "storage") in ENGINE.legal(s, 0)


def test_won_094_exchange_pair_for_gem():
    """WON-094: two same-coloured storage treasures go back to the bag for a gem."""
    s = purser_turn()
    give(s, 0, "storage", "W")
    bag = s["bag"]["W"]
    act(s, 0, c.ExchangeTreasures("W"))
    me = s["seats"][0]
    assert me["storage"] == [] and me["gems"] == 1 and s["bag"]["W"] == bag + 2
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 0, c.ExchangeTreasures("W"), rng())
    assert err.value.code == "storage_rule"


def test_won_095_gem_is_wild_and_moves_freely():
    """WON-095: a gem moves from storage to any treasure space for free and counts as any colour."""
    s = purser_turn()
    give(s, 0, "storage", "*")
    act(s, 0, c.TakeGem())
    targets = {(cmd.area, cmd.crew) for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.PlaceTreasure)}
    assert ("hold", "captain") in targets and ("chest", "") in targets and ("hold", "scientist") in targets
    act(s, 0, c.PlaceTreasure("*", "hold", "captain", 2))
    assert s["seats"][0]["holds"]["captain"][2] == "*"


def test_won_096_selling():
    """WON-096: a storage treasure sells for 2 gold, a gem for 5."""
    s = purser_turn()
    give(s, 0, "storage", "*")
    me = s["seats"][0]
    g = me["gold"]
    act(s, 0, c.SellTreasure("W"))
    act(s, 0, c.SellTreasure("*"))
    assert me["gold"] == g + 7 and me["storage"] == [] and me["gems"] == 0
    ENGINE.check_invariants(s)


def test_won_097_any_time_only_in_own_turn():
    """WON-097, WON-A08: exchanging and selling happen only in one's own turn or final scoring."""
    s = purser_turn(0)
    give(s, 1, "storage", "W")
    assert ENGINE.legal(s, 1) == []
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 1, c.SellTreasure("W"), rng())
    assert err.value.code == "not_your_turn"
    s["phase"] = "final"
    s["active"] = 1
    s["turn"] = None
    assert c.ExchangeTreasures("W") in ENGINE.legal(s, 1)
