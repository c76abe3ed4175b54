"""Nautilus Industries: the action phase (NIN-030..082)."""

from __future__ import annotations

from support.nautilus_industries import E, act, clear_tiles, new_state, refused, set_tile, types

from service.games.base import Command
from service.games.nautilus_industries import data as D
from service.games.nautilus_industries.commands import (
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


def test_NIN_030_three_laps_in_turn_order() -> None:
    """NIN-030: each player takes 3 actions one at a time, clockwise from the first player."""
    s = new_state(3)
    order = []
    first = s["first"]
    for _ in range(9):
        seat = E.to_act(s)[0]
        order.append(seat)
        s, _ = act(s, seat, UpgradeWarehouse())
    assert order == [first, (first + 1) % 3, (first + 2) % 3] * 3
    # nobody held gems, so the market and upkeep ran by themselves: round 2 began
    assert s["round"] == 2 and s["first"] == (first + 1) % 3 and s["actions_done"] == 0


def test_NIN_030_not_your_turn() -> None:
    """NIN-030: only the seat to act may act."""
    s = new_state(3)
    other = (s["first"] + 1) % 3
    assert refused(s, other, UpgradeWarehouse()) == "not_your_turn"
    assert E.legal(s, other) == []


def test_NIN_031_no_pass() -> None:
    """NIN-031: there is no pass intent; legal never offers one and an unknown command is refused."""
    s = new_state(2)
    seat = s["first"]
    assert {c.type for c in E.legal(s, seat)} <= {
        "place_sub",
        "upgrade_warehouse",
        "switch_gem_from",
        "switch_tiles",
        "buy_stock",
    }

    class Pass(Command):
        type = "pass"

    assert refused(s, seat, Pass()) == "unknown_command"
    assert refused(s, seat, Hold()) == "wrong_phase"


def test_NIN_032_same_action_repeatedly() -> None:
    """NIN-032: a player may take the same action in several of their actions."""
    s = new_state(2)
    me = s["first"]
    for _ in range(3):
        while E.to_act(s)[0] != me:
            s, _ = act(s, E.to_act(s)[0], UpgradeWarehouse())
        if s["phase"] != "action":
            break
        s, _ = act(s, me, UpgradeWarehouse())
    assert s["players"][me]["capacity"] == 4


def test_NIN_033_forfeit_when_no_action() -> None:
    """NIN-033 / NIN-A06: a player with no legal action forfeits it automatically."""
    s = new_state(2)
    me = s["first"]
    nxt = (me + 1) % 2
    p = s["players"][nxt]
    p["capacity"] = 6  # no warehouse upgrade
    p["subs"] = 0  # no sub in hand ...
    s["players"][me]["subs"] = 0
    for _t, tile in enumerate(s["tiles"]):  # ... placed: every sub of nxt and me on the board
        for c in D.COLOURS:
            tile["subs"][c] = None
    s["tiles"][0]["subs"]["Y"] = nxt
    s["tiles"][0]["subs"]["B"] = nxt
    s["tiles"][0]["subs"]["K"] = nxt
    s["tiles"][1]["subs"]["Y"] = me
    s["tiles"][1]["subs"]["B"] = me
    s["tiles"][1]["subs"]["K"] = me
    clear_tiles(s)  # no gems to switch
    s["tiles"][1]["moved"] = True  # only one tile may still move: no switch of tiles
    # no money: no stock
    E.check_invariants(s)
    assert E.legal(s, me) == [UpgradeWarehouse()]
    s, events = act(s, me, UpgradeWarehouse())
    assert types(events)[:2] == ["WarehouseUpgraded", "ActionForfeited"]
    assert events[1].data["seat"] == nxt
    assert E.to_act(s) == [me] and s["actions_done"] == 2


def test_NIN_040_041_042_place_sub() -> None:
    """NIN-040: a sub goes on one colour spot of a tile; NIN-041: one sub per spot;
    NIN-042: several subs of one player on one tile, and an empty spot may be chosen."""
    s = new_state(2)
    a = s["first"]
    b = (a + 1) % 2
    clear_tiles(s)
    s, _ = act(s, a, PlaceSub(0, "Y"))  # empty spot is fine (NIN-042)
    assert s["tiles"][0]["subs"]["Y"] == a and s["players"][a]["subs"] == 2
    assert refused(s, b, PlaceSub(0, "Y")) == "spot_taken"  # NIN-041
    assert PlaceSub(0, "Y") not in E.legal(s, b)
    s, _ = act(s, b, PlaceSub(0, "B"))
    s, _ = act(s, a, PlaceSub(0, "K"))  # same tile, other colour (NIN-042)
    assert s["tiles"][0]["subs"]["K"] == a
    assert refused(s, b, PlaceSub(5, "Y")) == "no_such_tile"
    assert refused(s, b, PlaceSub(0, "Z")) == "no_such_colour"


def test_NIN_040_no_free_sub() -> None:
    """NIN-040: only an unused sub can be placed."""
    s = new_state(2)
    a = s["first"]
    s["players"][a]["subs"] = 0
    s["tiles"][1]["subs"].update({"Y": a, "B": a, "K": a})
    assert refused(s, a, PlaceSub(0, "Y")) == "no_free_sub"
    assert not any(c.type == "place_sub" for c in E.legal(s, a))


def test_NIN_043_044_upgrade() -> None:
    """NIN-043: pay $5 and put a chosen-colour gem from the bag on the sub; NIN-044: needs
    $5 and a gem of that colour in the bag; the colour may equal the sub's."""
    s = new_state(2)
    a = s["first"]
    s["players"][a]["money"] = 7
    s, events = act(s, a, PlaceSub(0, "Y"))
    assert events[0].data["upgrade_offered"] is True
    legal = E.legal(s, a)
    assert UpgradeSub("Y") in legal and DeclineUpgrade() in legal
    assert all(c.type in ("upgrade_sub", "decline_upgrade") for c in legal)
    assert refused(s, a, UpgradeWarehouse()) == "action_in_progress"
    bag_y = s["bag"]["Y"]
    s["bag"]["K"], s["tiles"][1]["gems"]["K"] = 0, s["tiles"][1]["gems"]["K"] + s["bag"]["K"]
    assert refused(s, a, UpgradeSub("K")) == "colour_not_in_bag"
    assert UpgradeSub("K") not in E.legal(s, a)
    s, _ = act(s, a, UpgradeSub("Y"))
    assert s["players"][a]["money"] == 2 and s["bag"]["Y"] == bag_y - 1
    assert s["tiles"][0]["upgrades"]["Y"] == "Y"
    E.check_invariants(s)


def test_NIN_044_no_upgrade_without_money() -> None:
    """NIN-044: under $5 the placement is the whole action; UpgradeSub is refused."""
    s = new_state(2)
    a = s["first"]
    s["players"][a]["money"] = 4
    s, events = act(s, a, PlaceSub(0, "Y"))
    assert events[0].data["upgrade_offered"] is False
    assert E.to_act(s) != [a]
    assert refused(s, E.to_act(s)[0], UpgradeSub("Y")) == "no_action_in_progress"


def test_NIN_045_upgrade_lasts_one_market_phase() -> None:
    """NIN-045: after its collection the sub returns without its upgrade."""
    from support.nautilus_industries import finish_actions

    s = new_state(2)
    a = s["first"]
    s["players"][a]["money"] = 5
    s, _ = act(s, a, PlaceSub(s["line"][0], "G"))
    s, _ = act(s, a, UpgradeSub("B"))
    s, events = finish_actions(s)
    assert any(e.type == "SubCollected" and e.data["upgrade"] == "B" for e in events)
    assert all(u is None for t in s["tiles"] for u in t["upgrades"].values())


def test_NIN_050_upgrade_warehouse() -> None:
    """NIN-050: capacity +1, only below 6."""
    s = new_state(2)
    a = s["first"]
    s, events = act(s, a, UpgradeWarehouse())
    assert events[0].data == {"seat": a, "capacity": 2}
    s2 = new_state(2)
    s2["players"][a]["capacity"] = 6
    assert refused(s2, a, UpgradeWarehouse()) == "capacity_at_maximum"
    assert UpgradeWarehouse() not in E.legal(s2, a)


def test_NIN_060_061_switch_two_gems() -> None:
    """NIN-060: a gem of one tile is exchanged with a gem of another tile, each to its colour
    spot; NIN-061 / NIN-A05: the two gems must differ in colour."""
    s = new_state(2)
    a = s["first"]
    clear_tiles(s)
    set_tile(s, 0, Y=1, B=1)
    set_tile(s, 1, Y=2)
    legal = E.legal(s, a)
    assert SwitchGemFrom(0, "B") in legal and SwitchGemFrom(1, "Y") in legal
    assert SwitchGemFrom(0, "Y") not in legal  # its only partner would be a yellow gem
    assert refused(s, a, SwitchGemFrom(0, "Y")) == "no_gem_to_switch_with"
    assert refused(s, a, SwitchGemFrom(0, "K")) == "no_such_gem"
    s, _ = act(s, a, SwitchGemFrom(0, "B"))
    assert E.legal(s, a) == [SwitchGemWith(1, "Y")]
    assert refused(s, a, SwitchGemWith(1, "B")) == "same_colour"
    assert refused(s, a, SwitchGemWith(0, "Y")) == "same_tile"
    s, _ = act(s, a, SwitchGemWith(1, "Y"))
    assert s["tiles"][0]["gems"]["Y"] == 2 and s["tiles"][0]["gems"]["B"] == 0
    assert s["tiles"][1]["gems"]["B"] == 1 and s["tiles"][1]["gems"]["Y"] == 1
    assert s["actions_done"] == 1
    E.check_invariants(s)


def test_NIN_070_071_switch_tiles() -> None:
    """NIN-070: two tiles swap line positions with their gems and subs; NIN-071 / NIN-A12: a
    moved tile cannot move again this action phase (in either role)."""
    s = new_state(4)
    a = s["first"]
    s, _ = act(s, a, PlaceSub(1, "Y"))
    gems1 = dict(s["tiles"][1]["gems"])
    b = E.to_act(s)[0]
    s, events = act(s, b, SwitchTiles(1, 3))
    assert s["line"] == [0, 3, 2, 1]
    assert s["tiles"][1]["subs"]["Y"] == a and s["tiles"][1]["gems"] == gems1  # NIN-A11
    c = E.to_act(s)[0]
    assert refused(s, c, SwitchTiles(0, 1)) == "tile_already_moved"
    assert refused(s, c, SwitchTiles(3, 2)) == "tiles_not_ordered"
    assert refused(s, c, SwitchTiles(2, 2)) == "same_tile"
    legal_pairs = {(x.tile_a, x.tile_b) for x in E.legal(s, c) if x.type == "switch_tiles"}
    assert legal_pairs == {(0, 2)}


def test_NIN_080_081_082_buy_stock() -> None:
    """NIN-080: pay the printed price (NIN-D02) and take the certificate; NIN-081: not without
    the money; NIN-082: no limit per player, never sold back."""
    s = new_state(2)
    a = s["first"]
    assert not any(c.type == "buy_stock" for c in E.legal(s, a))  # $0 at the start
    assert refused(s, a, BuyStock("Y", 1)) == "insufficient_funds"
    s["players"][a]["money"] = 12
    legal = {(c.company, c.shares) for c in E.legal(s, a) if c.type == "buy_stock"}
    assert legal == {(c, k) for c in D.COLOURS for k in (1, 2, 3)}
    s, _ = act(s, a, BuyStock("O", 2))
    assert s["players"][a]["money"] == 4 and s["certs"]["O"][1] == a
    b = E.to_act(s)[0]
    s["players"][b]["money"] = 100
    assert refused(s, b, BuyStock("O", 2)) == "certificate_sold"
    assert refused(s, b, BuyStock("O", 7)) == "no_such_certificate"
    s, _ = act(s, b, BuyStock("O", 1))
    s, _ = act(s, a, BuyStock("Y", 1))  # a second certificate: no limit (NIN-082)
    assert [k + 1 for k, o in enumerate(s["certs"]["O"]) if o == a] == [2]
    assert not any(c.type.startswith("sell_stock") for c in E.legal(s, E.to_act(s)[0]))


def test_NIN_099_no_selling_in_the_action_phase() -> None:
    """NIN-099: gems can be sold only in the market phase's step 2."""
    s = new_state(2)
    a = s["first"]
    s["players"][a]["gems"]["Y"] = 1
    s["bag"]["Y"] -= 1
    assert refused(s, a, Sell("Y", 1)) == "wrong_phase"
