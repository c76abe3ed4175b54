"""Nauticus acceptance scenarios NAU-S01..S07: the rulebook's worked examples, with the exact numbers (rule IDs
of ``docs/rules/nauticus.md``).

Fixtures state the prices and blue workers they rely on (monkeypatched by ``support.nauticus.place_action``), so
these tests do not depend on the placeholder tables NAU-D01 and NAU-D02.
"""

from __future__ import annotations

import pytest
from support.nauticus import add_ship, add_wh, do, new_game, place_action, refused

from service.games.nauticus import ENGINE, scoring
from service.games.nauticus.commands import (
    BuyItem,
    ChooseAction,
    EndTurn,
    PassAction,
    ScoreCrowns,
    TakeGift,
)

# ``do`` and ``refused`` are the checked helpers: every command these tests send must also be in ``legal``.


def test_NAU_S01_setup_money_and_workers_by_player_count():
    """NAU-S01 (NAU-010..017, NAU-020)."""
    expected = {2: [(15, 4), (16, 4)], 3: [(15, 4), (16, 4), (17, 5)], 4: [(15, 4), (16, 4), (16, 5), (17, 6)]}
    for n, money in expected.items():
        state = new_game(n)
        assert [(s["taler"], s["workers"]) for s in state["seats"]] == money
        for s in state["seats"]:
            assert s["vp"] == 10
            assert s["passes"] == 0
            assert s["extra_tile"] is True
        assert state["round"] == 1
        assert state["start_player"] == 0
        assert state["turntable_anchor"] == 0
        assert state["rounds"] == (4 if n == 2 else 5)


def test_NAU_S02_bonus_then_all_hulls_bow_stern_and_free_single(monkeypatch):
    """NAU-S02: the rulebook's hull example (NAU-023, 041..043, 053, 055, 057, 073, 027, 028)."""
    state = new_game(3)
    place_action(monkeypatch, state, "buy_hulls", 3, [0, 1, 2, 3], 2)
    # 1. A chooses buy hulls on space 3: +2 VP bonus.
    do(state, 0, ChooseAction(3, ""))
    a = state["seats"][0]
    assert a["vp"] == 12
    # 2. The 0-price single cannot go to the shipyard (Golden Rule).
    assert refused(state, 0, BuyItem("single", "new_ship", 0, 0)) == "golden_rule"
    do(state, 0, BuyItem("single", "warehouse", 0, 0))
    do(state, 0, BuyItem("bow", "new_ship", 0, 0))
    do(state, 0, BuyItem("stern", "ship", 0, 1))
    do(state, 0, BuyItem("center", "new_ship", 0, 0))
    assert state["turn"]["main"]["gift"] == 1  # all four bought: the gift is due
    assert refused(state, 0, EndTurn()) == "gift_pending"
    do(state, 0, TakeGift("single"))
    assert a["taler"] == 9
    assert a["workers"] == 2  # 2 blue + 2 own workers
    assert a["warehouse"] == {"single": 2}
    assert a["wh_used"] == 2
    assert [s["hull"] for s in a["ships"]] == [["bow", "stern"], ["center"]]
    do(state, 0, EndTurn())
    # 3. B buys bow + stern as one ship: 1 + 3 = 4 Taler, both blue workers.
    b = state["seats"][1]
    do(state, 1, BuyItem("bow", "new_ship", 0, 0))
    do(state, 1, BuyItem("stern", "ship", 0, 1))
    assert (b["taler"], b["workers"]) == (12, 4)
    do(state, 1, EndTurn())
    # 4. C "buys" the 0-Taler single into the warehouse with 1 blue worker; the other is lost.
    c = state["seats"][2]
    do(state, 2, BuyItem("single", "warehouse", 0, 0))
    assert state["turn"]["main"]["blue"] == 1
    assert (c["taler"], c["workers"], c["warehouse"]) == (17, 5, {"single": 1})
    do(state, 2, EndTurn())
    # 5. Phase over: tile face down, anchor tile on space 3, start figure to B.
    assert state["face_down"][3] is True
    assert state["anchor_tile"] == 3
    assert state["start_player"] == 1
    assert state["step"] == "choose"


def test_NAU_S03_masts_whale_to_warehouse_anchors_on_ship(monkeypatch):
    """NAU-S03: whale 0 (-> warehouse), anchor 1 and anchor 4 on one ship; mixing crests refused."""
    state = new_game(2)
    place_action(monkeypatch, state, "buy_masts", 3, [0, 1, 2, 3], 0)
    a = state["seats"][0]
    a["taler"], a["workers"] = 10, 3
    add_ship(state, 0, ["bow", "center", "stern"])
    do(state, 0, ChooseAction(3, ""))
    a["vp"] = 10
    assert refused(state, 0, BuyItem("mast_whale", "ship", 0, 0)) == "golden_rule"
    do(state, 0, BuyItem("mast_whale", "warehouse", 0, 0))
    do(state, 0, BuyItem("mast_anchor", "ship", 0, 0))
    do(state, 0, BuyItem("mast_anchor", "ship", 0, 1))
    assert a["taler"] == 5
    assert a["workers"] == 0
    assert a["warehouse"] == {"mast_whale": 1}
    assert a["wh_used"] == 2  # a mast takes 2 spaces
    assert a["ships"][0]["masts"] == ["anchor", "anchor", None]
    # A whale mast on that ship afterwards: refused (one crest per ship).
    a["workers"] = 1
    assert refused(state, 0, BuyItem("mast_whale", "ship", 0, 2)) == "illegal_placement"


def test_NAU_S04_goods_and_the_cheaper_full_set(monkeypatch):
    """NAU-S04: fish+grain+coffee+2nd coffee = 7 Taler, no gift; the full set costs 6 and gives a coffee."""
    state = new_game(2)
    place_action(monkeypatch, state, "buy_goods", 3, [0, 1, 2, 3], 0)
    a = state["seats"][0]
    a["taler"], a["workers"] = 10, 4
    add_ship(state, 0, ["bow", "center", "stern"])
    do(state, 0, ChooseAction(3, ""))
    do(state, 0, BuyItem("fish", "warehouse", 0, 0))  # by choice, though a hull part is free
    do(state, 0, BuyItem("grain", "ship", 0, 0))
    assert refused(state, 0, BuyItem("coffee", "ship", 0, 1)) == "golden_rule"
    do(state, 0, BuyItem("coffee", "warehouse", 0, 0))
    do(state, 0, BuyItem("coffee", "ship", 0, 1))
    assert a["taler"] == 3  # 2 + 1 + 0 + 4 = 7
    assert a["workers"] == 0
    assert state["turn"]["main"]["gift"] == 0
    assert a["warehouse"] == {"fish": 1, "coffee": 1}
    assert a["ships"][0]["goods"] == ["grain", "coffee", None]

    # Counter-case: the four different goods for 6 Taler and a coffee as the gift; both coffees stored.
    state = new_game(2)
    place_action(monkeypatch, state, "buy_goods", 3, [0, 1, 2, 3], 0)
    a = state["seats"][0]
    a["taler"], a["workers"] = 10, 4
    add_ship(state, 0, ["bow", "center", "stern"])
    do(state, 0, ChooseAction(3, ""))
    do(state, 0, BuyItem("coffee", "warehouse", 0, 0))
    do(state, 0, BuyItem("grain", "ship", 0, 0))
    do(state, 0, BuyItem("fish", "ship", 0, 1))
    do(state, 0, BuyItem("salt", "ship", 0, 2))
    do(state, 0, TakeGift("coffee"))
    assert a["taler"] == 4
    assert a["workers"] == 0
    assert a["warehouse"] == {"coffee": 2}


@pytest.mark.parametrize(("uses", "gain"), [(3, 9), (5, 15), (6, 15)])
def test_NAU_S05_crown_scoring_and_the_15_cap(monkeypatch, uses, gain):
    """NAU-S05: 3 crowns (crown mast on a ship, crown sail in the warehouse, 1 pass tile turned)."""
    state = new_game(2)
    place_action(monkeypatch, state, "score_crowns", 7, [0, 1, 2, 3], 2)
    b = state["seats"][1]
    add_ship(state, 1, ["single"], masts=["crown"])
    add_wh(state, 1, "sail_crown")
    b["passes"] = 1
    b["vp"] = 20
    b["workers"] = 2 if uses == 3 else 4
    workers_before = b["workers"]
    do(state, 0, ChooseAction(7, ""))
    do(state, 0, PassAction())
    do(state, 0, EndTurn())
    assert state["acting"] == 1
    assert scoring.crowns(b) == 3
    for _ in range(uses):
        do(state, 1, ScoreCrowns())
    assert b["vp"] == 20 + gain
    assert b["workers"] == workers_before - (uses - 2)
    if uses == 3:
        assert b["workers"] == 1


def test_NAU_S06_final_scoring_example():
    """NAU-S06: goods 39, ships 34, material 13 Taler -> 21 Taler -> +7 VP; V + 80; remainder 0."""
    state = new_game(2)
    seat = state["seats"][0]
    seat["delivered"] = {"grain": 2, "fish": 3, "coffee": 6}
    for good, n in seat["delivered"].items():
        state["stacks"][good] -= n
    for _ in range(3):
        add_ship(state, 0, ["single"], masts=["whale"], sails=["whale"])
    add_ship(state, 0, ["bow", "stern"], masts=["whale", "whale"], sails=["whale", "crown"])
    add_ship(state, 0, ["bow", "center", "stern"], masts=["anchor"] * 3, sails=["anchor"] * 3)
    # unfinished: 3 hull parts, 1 mast, 1 sail; 3 undelivered goods on ships
    add_ship(state, 0, ["bow", "center"], masts=["whale", None], sails=["whale", None], goods=["salt", "salt"])
    add_ship(state, 0, ["stern"], goods=["grain"])
    seat["workers"] = 2
    add_wh(state, 0, "coffee")
    add_wh(state, 0, "bow")
    add_wh(state, 0, "mast_crestC")
    seat["taler"] = 8
    seat["vp"] = 17
    ENGINE.check_invariants(state)
    b = scoring.seat_breakdown(seat)
    assert b["delivered_goods"] == 39
    assert b["completed_ships"] == 34
    assert b["material_taler"] == 13
    assert b["taler_total"] == 21
    assert b["remaining_material_vp"] == 7
    assert b["remainder"] == 0
    assert b["total"] == 17 + 80


def test_NAU_S07_start_player_passes_and_keeps_the_bonus():
    """NAU-S07: choose the 4-Taler space, pass: +4 Taler, -3 tile turned, 1 crown this round."""
    state = new_game(3)
    do(state, 0, ChooseAction(7, ""))
    do(state, 0, PassAction())
    a = state["seats"][0]
    assert a["taler"] == 19
    assert a["passes"] == 1
    assert scoring.crowns(a) == 1
