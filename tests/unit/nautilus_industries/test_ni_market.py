"""Nautilus Industries: the market phase (NIN-090..098) and the sell intents."""

from __future__ import annotations

from support.nautilus_industries import (
    E,
    act,
    clear_tiles,
    finish_actions,
    give,
    new_state,
    refused,
    set_tile,
    to_sell_step,
    types,
)

from service.games.base import clone_state
from service.games.nautilus_industries import data as D
from service.games.nautilus_industries.commands import Hold, PlaceSub, Sell, SwitchTiles, UpgradeSub


def test_NIN_090_tiles_resolve_in_line_order() -> None:
    """NIN-090: tiles are resolved one at a time from position 0 (after a switch, too)."""
    s = new_state(3)
    a = s["first"]
    s, _ = act(s, a, SwitchTiles(0, 2))
    line = list(s["line"])
    assert line == [2, 1, 0]
    s, events = finish_actions(s)  # nobody holds gems: the whole market runs at once
    started = [e.data["tile"] for e in events if e.type == "TileResolutionStarted"]
    assert started == line


def test_NIN_091_collect_order_and_amounts() -> None:
    """NIN-091 / NIN-D05: spots are visited Y, G, B, K, O; each sub takes min(2, gems)."""
    s = new_state(3)
    clear_tiles(s)
    tile = s["line"][0]
    set_tile(s, tile, Y=5, G=1, B=0, K=2, O=3)
    seats = []
    for colour in ("O", "K", "B", "G", "Y"):
        seat = E.to_act(s)[0]
        seats.append(seat)
        s, _ = act(s, seat, PlaceSub(tile, colour))
    s, events = finish_actions(s)
    visits = [(e.data["colour"], e.data["own"]) for e in events if e.type == "SubCollected"]
    assert visits == [("Y", 2), ("G", 1), ("B", 0), ("K", 2), ("O", 2)]
    assert s["tiles"][tile]["gems"] == {"Y": 3, "B": 0, "K": 0, "O": 1, "G": 0}


def test_NIN_092_093_upgrade_of_the_same_colour_takes_three() -> None:
    """NIN-092 / NIN-093 / NIN-A04: own colour first (2), then the upgrade gem (1): a
    same-colour upgrade takes 3 from that spot; the marker gem returns to the bag."""
    s = new_state(2)
    a = s["first"]
    clear_tiles(s)
    tile = s["line"][0]
    set_tile(s, tile, B=4)
    s["players"][a]["money"] = 5
    s, _ = act(s, a, PlaceSub(tile, "B"))
    s, _ = act(s, a, UpgradeSub("B"))
    s, events = finish_actions(s)
    got = next(e.data for e in events if e.type == "SubCollected")
    assert (got["own"], got["upgrade"], got["upgrade_gems"]) == (2, "B", 1)
    assert s["tiles"][tile]["gems"]["B"] == 1
    E.check_invariants(s)


def test_NIN_092_upgrade_gem_missing() -> None:
    """NIN-092: the upgrade takes a gem only 'if possible'."""
    s = new_state(2)
    a = s["first"]
    clear_tiles(s)
    tile = s["line"][0]
    set_tile(s, tile, B=2)
    s["players"][a]["money"] = 5
    s, _ = act(s, a, PlaceSub(tile, "B"))
    s, _ = act(s, a, UpgradeSub("B"))
    s, events = finish_actions(s)
    got = next(e.data for e in events if e.type == "SubCollected")
    assert (got["own"], got["upgrade_gems"]) == (2, 0)


def test_NIN_094_subs_return_to_their_owners() -> None:
    """NIN-094: after collecting, each sub goes back to its owner, usable next round."""
    s = new_state(2)
    for _ in range(6):
        seat = E.to_act(s)[0]
        free = [c for c in E.legal(s, seat) if c.type == "place_sub"]
        s, _ = act(s, seat, free[0])
        if s["pending"]:
            s, _ = act(s, seat, E.legal(s, seat)[-1])
    while s["phase"] == "market":
        seat = E.to_act(s)[0]
        sells = [c for c in E.legal(s, seat) if c.type == "sell"]
        s, _ = act(s, seat, Hold() if Hold() in E.legal(s, seat) else sells[-1])
    assert all(p["subs"] == 3 for p in s["players"])
    assert all(v is None for t in s["tiles"] for v in t["subs"].values())


def test_NIN_095_every_holder_sells_in_turn_order() -> None:
    """NIN-095 / NIN-A10: each player holding gems (not only collectors) sells or holds in
    turn order from the first player; the bank pays at once; sold gems go to the sold pool.
    NIN-Q02: a player holding nothing is skipped."""
    s = new_state(3)
    first = s["first"]
    second, third = (first + 1) % 3, (first + 2) % 3
    give(s, first, Y=1)
    give(s, third, K=1)
    to_sell_step(s, first, position=0)
    assert E.legal(s, first) == [Sell("Y", 1), Hold()]
    price = s["commodity"]["Y"]
    s, events = act(s, first, Sell("Y", 1))
    assert s["players"][first]["money"] == price
    assert events[0].data == {"seat": first, "colour": "Y", "count": 1, "price": price, "money": price}
    assert s["market"]["sold"]["Y"] == 1 or types(events).count("MarketAdjusted") == 5
    # the first sold out; the second holds nothing and is skipped; the third decides
    assert E.to_act(s) == [third]
    assert E.legal(s, second) == []
    s, events = act(s, third, Hold())
    assert "MarketAdjusted" in types(events)


def test_NIN_096_over_capacity_must_sell_the_excess() -> None:
    """NIN-096 / NIN-A02: above capacity, hold is not offered (and refused) until the kept
    gems fit; the player still chooses what to sell, and may sell more."""
    s = new_state(2)
    a = s["first"]
    give(s, a, Y=2, B=1)  # capacity 1
    to_sell_step(s, a)
    legal = E.legal(s, a)
    assert Hold() not in legal
    assert set(legal) == {Sell("Y", 1), Sell("Y", 2), Sell("B", 1)}
    assert refused(s, a, Hold()) == "over_capacity"
    s, _ = act(s, a, Sell("Y", 1))
    assert Hold() not in E.legal(s, a)
    s, _ = act(s, a, Sell("B", 1))
    assert E.legal(s, a) == [Sell("Y", 1), Hold()]
    assert refused(s, a, Sell("Y", 2)) == "not_enough_gems"
    assert refused(s, a, Sell("Y", 0)) == "invalid_count"
    s, events = act(s, a, Hold())
    assert s["players"][a]["gems"]["Y"] == 1  # kept in the warehouse


def _adjust(colour: str, sold: int, stock: int, commodity: int) -> dict:
    s = new_state(2)
    a = s["first"]
    s["stock"][colour] = stock
    s["commodity"][colour] = commodity
    s["players"][a]["capacity"] = 6
    give(s, a, **{colour: sold})
    to_sell_step(s, a, position=0)
    s, events = act(s, a, Sell(colour, sold))
    return next(e.data for e in events if e.type == "MarketAdjusted" and e.data["colour"] == colour)


def test_NIN_097_commodity_and_stock_adjustment() -> None:
    """NIN-097: commodity -n (min 1) or +1 if none sold (max 10); stock +n on row 1, n-1 on
    row 2, n-2 on row 3 (by the start space, NIN-A09), never negative (NIN-A07), at most 24
    (NIN-A08)."""
    d = _adjust("Y", 3, stock=4, commodity=6)
    assert (d["stock_after"], d["commodity_after"]) == (7, 3)
    d = _adjust("Y", 3, stock=9, commodity=2)
    assert (d["stock_after"], d["commodity_after"]) == (12, 1)  # row 1 start: full move; min 1
    d = _adjust("B", 1, stock=10, commodity=5)
    assert (d["stock_after"], d["commodity_after"]) == (10, 4)  # NIN-A07: 1 - 1 = 0
    d = _adjust("K", 2, stock=18, commodity=5)
    assert d["stock_after"] == 18  # row 3: 2 - 2 = 0
    d = _adjust("O", 6, stock=17, commodity=9)
    assert d["stock_after"] == 22  # row 2 start: 6 - 1
    d = _adjust("G", 6, stock=22, commodity=9)
    assert d["stock_after"] == 24  # 22 + 4 = 26 capped at 24 (NIN-A08)


def test_NIN_097_unsold_colours_rise() -> None:
    """NIN-097: a colour with no sale gains 1 commodity value, up to 10; its stock stays."""
    s = new_state(2)
    s["commodity"].update({"Y": 10, "B": 3})
    s["stock"]["B"] = 5
    s, events = finish_actions(s)
    first_tile = [e.data for e in events if e.type == "MarketAdjusted"][:5]
    by_colour = {d["colour"]: d for d in first_tile}
    assert by_colour["Y"]["commodity_after"] == 10
    assert by_colour["B"]["commodity_after"] == 4 and by_colour["B"]["stock_after"] == 5


def test_NIN_098_sold_gems_return_to_the_bag() -> None:
    """NIN-098: after the adjustment the sold pool goes back to the bag."""
    s = new_state(2)
    a = s["first"]
    give(s, a, G=1)
    to_sell_step(s, a, position=0)
    bag = s["bag"]["G"]
    s_copy = clone_state(s)
    s, events = act(s, a, Sell("G", 1))
    kinds = types(events)
    back = kinds.index("SoldGemsReturned")
    assert kinds[back - 5 : back] == ["MarketAdjusted"] * 5  # after every colour is adjusted
    assert events[back].data["gems"]["G"] == 1
    for event in events[: back + 1]:
        s_copy = E.evolve(s_copy, event)
    assert s_copy["market"]["sold"] == dict.fromkeys(D.COLOURS, 0)
    assert s_copy["bag"]["G"] == bag + 1
