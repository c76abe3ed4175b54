"""Nautilus Industries: upkeep (NIN-110..113), game end and scoring (NIN-120..126)."""

from __future__ import annotations

from support.nautilus_industries import E, act, finish_actions, give, new_state, set_tile, to_sell_step, types

from service.games.nautilus_industries import data as D
from service.games.nautilus_industries.commands import Hold, PlaceSub, Sell, SwitchTiles
from service.games.nautilus_industries.scoring import final_result


def test_NIN_110_112_113_upkeep() -> None:
    """NIN-110 / NIN-A13: each tile, in line order, gets 5 random gems from the bag;
    NIN-112: moved marks are cleared; NIN-113: the first-player marker passes clockwise."""
    s = new_state(3)
    first = s["first"]
    s, _ = act(s, first, SwitchTiles(0, 1))
    line = list(s["line"])
    gems_before = [sum(t["gems"].values()) for t in s["tiles"]]
    s, events = finish_actions(s)
    drawn = [e.data for e in events if e.type == "GemsDrawn"]
    assert [d["tile"] for d in drawn] == line
    assert all(len(d["gems"]) == 5 for d in drawn)
    assert [sum(t["gems"].values()) for t in s["tiles"]] == [g + 5 for g in gems_before]
    assert not any(t["moved"] for t in s["tiles"])
    assert s["first"] == (first + 1) % 3 and E.to_act(s) == [(first + 1) % 3]
    assert types(events)[-1] == "RoundStarted"
    E.check_invariants(s)


def test_NIN_111_bag_runs_out() -> None:
    """NIN-111: with too few gems in the bag, tiles get what is left, in line order."""
    s = new_state(3)
    # move all but 7 bag gems onto tile 0
    left = 7
    for c in D.COLOURS:
        keep = min(s["bag"][c], left)
        left -= keep
        set_tile(s, 0, **{c: s["tiles"][0]["gems"][c] + s["bag"][c] - keep})
    assert sum(s["bag"].values()) == 7
    s, events = finish_actions(s)
    drawn = [len(e.data["gems"]) for e in events if e.type == "GemsDrawn"]
    assert drawn == [5, 2, 0]
    assert sum(s["bag"].values()) == 0
    E.check_invariants(s)


def _end_position(position: int, n: int = 3) -> tuple[dict, int]:
    """A market step where the seller's sale drives gold from 22 to 24 at ``position``."""
    s = new_state(n)
    seller = (s["first"] - 1) % n  # last in turn order: everyone else has had their sell step
    s["stock"]["Y"] = 22
    s["players"][seller]["capacity"] = 6
    give(s, seller, Y=4)
    to_sell_step(s, seller, position=position)
    return s, seller


def test_NIN_120_121_trigger_finishes_the_step_then_locks() -> None:
    """NIN-120: reaching space 24 in a step 3 triggers the end; NIN-121: every colour of that
    tile is still adjusted, then both tracks lock."""
    s, seller = _end_position(0)
    s, events = act(s, seller, Sell("Y", 4))
    kinds = types(events)
    trigger = kinds.index("GameEndTriggered")
    assert kinds[trigger - 6 : trigger - 1] == ["MarketAdjusted"] * 5
    assert events[trigger].data["colours"] == ["Y"]
    assert s["locked"] is True and s["stock"]["Y"] == 24
    assert kinds.count("MarketAdjusted") == 5  # nothing changes for the later tiles
    assert E.to_act(s) == [] and E.result(s) is not None


def test_NIN_122_remaining_tiles_collect_without_market_changes() -> None:
    """NIN-122: unresolved tiles still collect (subs take gems), with no sell step and no
    adjustment."""
    s, seller = _end_position(0)
    later = s["line"][1]
    other = (seller + 1) % 3
    set_tile(s, later, K=3)
    s["tiles"][later]["subs"]["K"] = other
    s["players"][other]["subs"] -= 1
    commodity_before = dict(s["commodity"])
    s, events = act(s, seller, Sell("Y", 4))
    collected = [e.data for e in events if e.type == "SubCollected"]
    assert collected == [{"tile": later, "colour": "K", "seat": other, "own": 2, "upgrade": None, "upgrade_gems": 0}]
    assert "SellTurnStarted" not in types(events)
    # the K collected at the later tile is sold at the locked value (after the first tile's +1)
    sale = next(e.data for e in events if e.type == "FinalSale" and e.data["seat"] == other)
    assert sale["gems"] == {"K": 2} and sale["money"] == 2 * (commodity_before["K"] + 1)
    assert s["players"][other]["subs"] == 3


def test_NIN_123_everything_is_sold_at_the_end() -> None:
    """NIN-123: every player sells all gems, warehouse included, at the locked values."""
    s, seller = _end_position(1)
    other = (seller + 1) % 3
    s["players"][other]["capacity"] = 3
    give(s, other, B=2, O=1)
    money = s["players"][other]["money"]
    s, events = act(s, seller, Sell("Y", 4))
    assert all(sum(p["gems"].values()) == 0 for p in s["players"])
    assert s["players"][other]["money"] == money + 2 * s["commodity"]["B"] + s["commodity"]["O"]
    E.check_invariants(s)


def test_NIN_124_score_is_money_plus_stock_value() -> None:
    """NIN-124 / NIN-D01: score = money + Σ shares × multiplier of the company's space."""
    s = new_state(2)
    s["players"][0]["money"] = 10
    s["certs"]["Y"][4] = 0  # Y-5
    s["certs"]["K"][0] = 0  # K-1
    s["stock"].update({"Y": 24, "K": 7})
    r = final_result(s)
    assert r["breakdown"]["0"]["stock_value"] == 5 * 10 + 1 * 1
    assert r["scores"]["0"] == 10 + 51
    assert D.MULTIPLIER == (0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10)


def test_NIN_125_tie_is_a_shared_win() -> None:
    """NIN-125: the highest score wins; equal scores share the rank."""
    s = new_state(3)
    for seat, money in enumerate((30, 30, 12)):
        s["players"][seat]["money"] = money
    r = final_result(s)
    assert r["ranks"] == {"0": 1, "1": 1, "2": 3}
    assert r["ranking"] == [0, 1, 2]
    assert r["tiebreak"] is not None and "NIN-125" in r["tiebreak"]
    s["players"][1]["money"] = 29
    r = final_result(s)
    assert r["ranks"] == {"0": 1, "1": 2, "2": 3} and r["tiebreak"] is None


def test_NIN_126_trigger_at_the_last_tile() -> None:
    """NIN-126: at the last tile there is nothing left to collect; the final sale still happens."""
    s, seller = _end_position(2)
    other = (seller + 2) % 3
    s["players"][other]["capacity"] = 2
    give(s, other, G=1)
    s, events = act(s, seller, Sell("Y", 4))
    kinds = types(events)
    assert "TileResolutionStarted" not in kinds and "SubCollected" not in kinds
    assert "FinalSale" in kinds and kinds[-1] == "GameEnded"
    assert s["phase"] == "over"
    assert E.legal(s, other) == []


def test_game_end_refuses_further_intents() -> None:
    """After the end (NIN-120) every intent is refused."""
    s, seller = _end_position(2)
    s, _ = act(s, seller, Sell("Y", 4))
    try:
        E.decide(s, seller, Hold(), None)  # type: ignore[arg-type]
    except Exception as exc:
        assert getattr(exc, "code", None) == "game_over"
    else:
        raise AssertionError("accepted after the end")
    assert PlaceSub(0, "Y") not in E.legal(s, seller)
