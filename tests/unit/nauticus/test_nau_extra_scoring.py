"""Nauticus extra action (NAU-170..176, NAU-142's second cap) and final scoring (NAU-190..194)."""

from __future__ import annotations

from support.nauticus import do, new_game, refused, start

from service.games.nauticus import ENGINE, scoring
from service.games.nauticus.commands import (
    BuyItem,
    EndExtraAction,
    EndTurn,
    PassAction,
    ScoreCrowns,
    TakeGift,
    UseExtraAction,
    WithdrawMoney,
)
from service.games.nauticus.data import SHIP_VP, goods_set_vp


def test_NAU_170_171_174_175_176_extra_action_before_the_board_action(monkeypatch):
    """NAU-170: once per game in one's own turn, here before the board action; NAU-171: +2 workers first;
    NAU-174: each use costs a worker; NAU-176: no blue workers; NAU-175: the tile is gone afterwards."""
    state = new_game(2)
    start(monkeypatch, state, "withdraw_money", blue=2)
    assert UseExtraAction("withdraw_money") not in ENGINE.legal(state, 1)  # not in another's turn
    s = state["seats"][0]
    do(state, 0, UseExtraAction("withdraw_money"))
    assert s["workers"] == 6 and s["extra_tile"] is False
    assert state["turn"]["extra"]["blue"] == 0
    assert refused(state, 0, EndExtraAction()) == "no_use_made"
    do(state, 0, WithdrawMoney())
    assert s["workers"] == 5  # own worker, not a blue one
    do(state, 0, EndExtraAction())
    assert refused(state, 0, UseExtraAction("withdraw_money")) == "extra_action_used"
    do(state, 0, WithdrawMoney())  # the board action with its blue workers
    assert s["workers"] == 5 and s["taler"] == 19
    do(state, 0, EndTurn())
    do(state, 1, PassAction())
    do(state, 1, EndTurn())
    # later turns: no extra action any more
    assert not any(isinstance(c, UseExtraAction) for c in ENGINE.legal(state, 1))
    state["start_player"] = 0
    legal = ENGINE.legal(state, 0)
    do(state, 0, legal[0])
    assert not any(isinstance(c, UseExtraAction) for c in ENGINE.legal(state, 0))


def test_NAU_170_extra_action_after_the_board_action_or_after_passing(monkeypatch):
    """NAU-170 / NAU-A13: after the board action (never between two of its uses), or after passing."""
    state = new_game(2)
    start(monkeypatch, state, "withdraw_money", blue=2)
    do(state, 0, WithdrawMoney())
    do(state, 0, UseExtraAction("score_crowns"))
    assert state["turn"]["main"]["done"] is True
    assert refused(state, 0, WithdrawMoney()) == "wrong_action"
    do(state, 0, ScoreCrowns())
    assert refused(state, 0, EndExtraAction()) == "no_extra_action"
    do(state, 0, EndTurn())
    assert state["acting"] == 1
    do(state, 1, PassAction())
    assert state["acting"] == 1  # may still play the extra action after passing
    do(state, 1, UseExtraAction("withdraw_money"))
    do(state, 1, WithdrawMoney())
    do(state, 1, EndTurn())
    assert state["step"] == "choose"


def test_NAU_172_173_any_action_even_face_down_price_2(monkeypatch):
    """NAU-172: any of the 8 actions, even a face-down one, no bonus, board tile untouched;
    NAU-173: every item 2 Taler, the 2nd identical 4, all four give the gift."""
    state = new_game(2)
    start(monkeypatch, state, "withdraw_money", blue=2, space=3)
    hull_space = state["layout"].index("buy_hulls")
    state["face_down"][hull_space] = True  # as if chosen earlier this round
    state["phase"] = 1
    state["anchor_tile"] = hull_space
    s = state["seats"][0]
    s["taler"] = 20
    vp = s["vp"]
    face_down = list(state["face_down"])
    do(state, 0, UseExtraAction("buy_hulls"))
    paid = []
    for part in ("single", "single", "bow", "center", "stern"):
        before = s["taler"]
        do(state, 0, BuyItem(part, "warehouse", 0, 0))
        paid.append(before - s["taler"])
    assert paid == [2, 4, 2, 2, 2]
    do(state, 0, TakeGift("stern"))
    assert s["warehouse"] == {"single": 2, "bow": 1, "center": 1, "stern": 2}
    assert BuyItem("bow", "new_ship", 0, 0) in ENGINE.legal(state, 0)  # 2 Taler is paid: straight to the yard
    assert state["face_down"] == face_down and s["vp"] == vp


def test_NAU_142_extra_action_has_its_own_crown_cap(monkeypatch):
    """NAU-142 / NAU-A11: 15 VP per round from score crowns, and once per game 15 more via the extra action."""
    state = new_game(2)
    state["seats"][0]["passes"] = 3
    start(monkeypatch, state, "score_crowns", blue=2)
    s = state["seats"][0]
    s["workers"] = 10
    vp = s["vp"]
    for _ in range(6):
        do(state, 0, ScoreCrowns())
    assert s["vp"] == vp + 15
    do(state, 0, UseExtraAction("score_crowns"))
    for _ in range(6):
        do(state, 0, ScoreCrowns())
    assert s["vp"] == vp + 30


# --- final scoring ----------------------------------------------------------------------------------------


def test_NAU_190_goods_sets():
    """NAU-190: 1->2, 2->5, 3->9, 4->14, 5->20, each further +5."""
    assert [goods_set_vp(n) for n in range(1, 9)] == [2, 5, 9, 14, 20, 25, 30, 35]


def test_NAU_191_ship_sizes():
    """NAU-191: 1-tile 2, 2-tile 8, 3-tile 20, 4-tile 35."""
    assert SHIP_VP == {1: 2, 2: 8, 3: 20, 4: 35}


def _seat(**kw) -> dict:
    seat = {
        "taler": 0,
        "workers": 0,
        "vp": 10,
        "warehouse": {},
        "wh_used": 0,
        "ships": [],
        "delivered": {},
        "passes": 0,
        "extra_tile": False,
        "crown_vp_round": 0,
    }
    seat.update(kw)
    return seat


def test_NAU_192_193_remaining_material_and_taler():
    """NAU-192: 1 Taler per worker, warehouse tile, part of an unfinished ship and undelivered good (A15: a
    completed ship's parts give nothing); NAU-193: +1 VP per full 3 Taler, the Taler are kept."""
    done = {"hull": ["single"], "masts": ["whale"], "sails": ["whale"], "goods": ["fish"], "complete": True}
    open_ship = {"hull": ["bow", "center"], "masts": ["anchor", None], "sails": [None, None], "goods": [None] * 2}
    open_ship["complete"] = False
    seat = _seat(taler=4, workers=3, warehouse={"mast_whale": 1, "coffee": 2}, wh_used=4, ships=[done, open_ship])
    b = scoring.seat_breakdown(seat)
    # workers 3 + warehouse 3 + unfinished parts 3 + undelivered good 1 = 10; 14 Taler -> 4 VP, remainder 2
    assert b["material_taler"] == 10
    assert b["taler_total"] == 14
    assert b["remaining_material_vp"] == 4
    assert b["remainder"] == 2
    assert b["completed_ships"] == 2
    assert b["total"] == 10 + 2 + 4
    assert seat["taler"] == 4  # scoring changes nothing


def _state(*seats: dict) -> dict:
    return {"players": len(seats), "seats": list(seats)}


def test_NAU_194_most_vp_then_remainder_then_total_taler_then_shared():
    """NAU-194: most VP wins; tie -> larger remainder (Taler mod 3); tie -> more Taler; tie -> shared place."""
    r = scoring.final_result(_state(_seat(vp=20), _seat(vp=12)))
    assert r["ranking"] == [0, 1] and r["tiebreak"] is None
    # 10 + 5//3 = 11 (remainder 2) vs 10 + 4//3 = 11 (remainder 1)
    r = scoring.final_result(_state(_seat(taler=4), _seat(taler=5)))
    assert r["scores"] == {"0": 11, "1": 11}
    assert r["ranking"] == [1, 0] and r["ranks"] == {"1": 1, "0": 2}
    assert "mod 3" in r["tiebreak"]
    # 10 + 8//3 = 12 (rem 2, 8 Taler) vs 11 + 5//3 = 12 (rem 2, 5 Taler)
    r = scoring.final_result(_state(_seat(vp=11, taler=5), _seat(taler=8)))
    assert r["ranking"] == [1, 0] and "most Taler" in r["tiebreak"]
    r = scoring.final_result(_state(_seat(taler=7), _seat(taler=7), _seat(vp=30)))
    assert r["ranks"] == {"2": 1, "0": 2, "1": 2}
    assert "shared" in r["tiebreak"]
    assert set(r["breakdown"]["0"]) >= {"delivered_goods", "completed_ships", "remaining_material_vp", "track"}
