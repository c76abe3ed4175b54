"""The worked examples of the Nautilus Industries rulebook, NIN-S01 to NIN-S04
(listed in §5 of docs/rules/nautilus-industries.md)."""

from __future__ import annotations

from support.nautilus_industries import (
    E,
    act,
    clear_tiles,
    finish_actions,
    give,
    new_state,
    set_tile,
    to_sell_step,
    types,
)

from service.games.nautilus_industries import data as D
from service.games.nautilus_industries.commands import (
    DeclineUpgrade,
    PlaceSub,
    Sell,
    UpgradeSub,
)
from service.games.nautilus_industries.setup import commodity_values


def test_NIN_S01_setup_commodity_values_with_ties() -> None:
    """NIN-S01 (NIN-015, NIN-016): B 8, Y 3, K 5, O 5, G 4 -> Y 6, G 5, K and O 4, B 2."""
    values = commodity_values({"B": 8, "Y": 3, "K": 5, "O": 5, "G": 4})
    assert values == {"Y": 6, "G": 5, "K": 4, "O": 4, "B": 2}
    assert 3 not in values.values()  # the 3 space stays empty
    # A real 5-player setup: stock markers on 0 and 100 - 25 - 10 = 65 gems in the bag.
    s = new_state(5)
    assert s["stock"] == dict.fromkeys(D.COLOURS, 0)
    assert sum(s["bag"].values()) == 65
    assert sum(sum(t["gems"].values()) for t in s["tiles"]) == 25


def test_NIN_S02_stock_moves_less_on_row_2() -> None:
    """NIN-S02 (NIN-097, NIN-A09): orange stock 12, commodity 5; 4 orange sold ->
    stock 12 -> 15 (4 - 1), commodity 5 -> 1; the sold gems go back to the bag."""
    s = new_state(2)
    seller = s["first"]
    s["stock"]["O"] = 12
    s["commodity"]["O"] = 5
    give(s, seller, O=4)
    to_sell_step(s, seller, position=1)  # the last tile: no later adjustment follows
    E.check_invariants(s)
    bag_before = s["bag"]["O"]
    s, events = act(s, seller, Sell("O", 4))
    assert s["players"][seller]["money"] == 20  # 4 × $5, paid at once (NIN-095)
    adjusted = next(e.data for e in events if e.type == "MarketAdjusted" and e.data["colour"] == "O")
    assert adjusted["sold"] == 4
    assert (adjusted["stock_before"], adjusted["stock_after"]) == (12, 15)
    assert (adjusted["commodity_before"], adjusted["commodity_after"]) == (5, 1)
    assert s["stock"]["O"] == 15 and s["commodity"]["O"] == 1
    returned = next(e.data for e in events if e.type == "SoldGemsReturned")
    assert returned["gems"]["O"] == 4  # NIN-098: back in the bag ...
    drawn = sum(e.data["gems"].count("O") for e in events if e.type == "GemsDrawn")
    assert s["bag"]["O"] == bag_before + 4 - drawn  # ... before the upkeep draws
    E.check_invariants(s)


def test_NIN_S03_upgrade_takes_a_gem_before_its_spot_is_visited() -> None:
    """NIN-S03 (NIN-092, NIN-093): tile B 2, O 1; P1's sub on blue with an orange upgrade,
    P2's sub on orange -> P1 gets 2 B + 1 O, P2 gets nothing; the marker returns to the bag."""
    s = new_state(2)
    p1 = s["first"]
    p2 = (p1 + 1) % 2
    clear_tiles(s)
    tile = s["line"][0]  # resolved first
    set_tile(s, tile, B=2, O=1)
    s["players"][p1]["money"] = 5
    s, _ = act(s, p1, PlaceSub(tile, "B"))
    s, _ = act(s, p1, UpgradeSub("O"))
    assert s["players"][p1]["money"] == 0
    s, _ = act(s, p2, PlaceSub(tile, "O"))  # p2 has no money: no upgrade offered
    bag_o = s["bag"]["O"]
    s, events = finish_actions(s)
    collected = {e.data["colour"]: e.data for e in events if e.type == "SubCollected"}
    assert collected["B"]["seat"] == p1 and collected["B"]["own"] == 2
    assert collected["B"]["upgrade"] == "O" and collected["B"]["upgrade_gems"] == 1
    assert collected["O"]["seat"] == p2 and collected["O"]["own"] == 0
    assert types(events).index("SubCollected") < len(events)
    # P1 holds what it collected (or sold part of it already, if the sell step began).
    assert s["players"][p2]["gems"] == dict.fromkeys(D.COLOURS, 0)
    assert s["players"][p1]["gems"]["B"] == 2 and s["players"][p1]["gems"]["O"] == 1
    assert s["bag"]["O"] == bag_o + 1  # the upgrade marker went back (NIN-A03)
    assert s["tiles"][tile]["gems"] == dict.fromkeys(D.COLOURS, 0)
    E.check_invariants(s)


def test_NIN_S04_final_scoring() -> None:
    """NIN-S04 (NIN-124): O on 18 (×7), G on 15 (×5), B on 24 (×10); O-1, O-3, G-2, B-6 and
    $124 after the final sale -> stocks 98, score 222."""
    s = new_state(2)
    player = s["first"]
    other = (player + 1) % 2
    for company, shares in (("O", 1), ("O", 3), ("G", 2), ("B", 6)):
        s["certs"][company][shares - 1] = player
    s["stock"].update({"O": 18, "G": 15, "B": 22, "Y": 0, "K": 0})
    s["commodity"].update({"B": 5, "K": 6})
    s["players"][player]["money"] = 110
    s["players"][player]["capacity"] = 2
    give(s, player, K=2)  # kept in the warehouse; sold at the end at K's locked value 7
    give(s, other, B=4)
    to_sell_step(s, other, position=1)  # the last tile (NIN-126: nothing left to collect)
    E.check_invariants(s)
    s, events = act(s, other, Sell("B", 4))  # B: 22 + (4 - 2) = 24 -> the game ends
    assert "GameEndTriggered" in types(events)
    assert s["stock"] == {"Y": 0, "B": 24, "K": 0, "O": 18, "G": 15}
    result = E.result(s)
    assert result is not None
    mine = result["breakdown"][str(player)]
    assert mine["money"] == 124
    assert mine["stock_value"] == (1 + 3) * 7 + 2 * 5 + 6 * 10 == 98
    assert result["scores"][str(player)] == 222
    assert [D.MULTIPLIER[x] for x in (18, 15, 24)] == [7, 5, 10]
    assert E.to_act(s) == []
    E.check_invariants(s)


def test_NIN_S03_without_upgrade_money_the_placement_ends_the_action() -> None:
    """NIN-S03 context (NIN-043): with less than $5 no upgrade is offered; with $5 it is
    optional (DeclineUpgrade)."""
    s = new_state(2)
    p1 = s["first"]
    s, events = act(s, p1, PlaceSub(0, "Y"))
    assert events[0].data["upgrade_offered"] is False and s["actions_done"] == 1
    s["players"][E.to_act(s)[0]]["money"] = 5
    seat = E.to_act(s)[0]
    s, events = act(s, seat, PlaceSub(0, "B"))
    assert s["pending"] == {"kind": "upgrade", "tile": 0, "colour": "B"} and s["actions_done"] == 1
    s, _ = act(s, seat, DeclineUpgrade())
    assert s["pending"] is None and s["actions_done"] == 2 and s["players"][seat]["money"] == 5
