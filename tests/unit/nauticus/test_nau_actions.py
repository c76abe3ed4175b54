"""Nauticus bonuses and actions: blue workers, prices, gift, Golden Rule, warehouse, transport, money,
delivery, crowns and passing (NAU-003, NAU-004, NAU-030..060, NAU-100..154)."""

from __future__ import annotations

import pytest
from support.nauticus import add_ship, add_wh, do, new_game, refused, start

from service.games.nauticus import ENGINE, hulls, scoring
from service.games.nauticus import state as nau_state
from service.games.nauticus.commands import (
    BuyItem,
    ChooseAction,
    DeliverGoods,
    EndTurn,
    PassAction,
    ScoreCrowns,
    TakeGift,
    Transport,
    WithdrawMoney,
)

# --- bonuses -----------------------------------------------------------------------------------------------


def _choose_on(monkeypatch, space: int, bonus_item: str = "") -> dict:
    state = new_game(2)
    layout = state["layout"]
    do(state, 0, ChooseAction(space, bonus_item))
    assert state["space"] == space and layout[space] == state["turn"]["main"]["action"]
    return state


@pytest.mark.parametrize(
    ("space", "workers", "vp", "taler"),
    [(0, 3, 0, 0), (3, 0, 2, 0), (4, 2, 0, 0), (6, 1, 1, 0), (7, 0, 0, 4)],
)
def test_NAU_030_033_034_036_037_plain_bonuses(monkeypatch, space, workers, vp, taler):
    """NAU-030 +3 workers; NAU-033 +2 VP; NAU-034 +2 workers; NAU-036 +1 worker +1 VP; NAU-037 +4 Taler."""
    state = _choose_on(monkeypatch, space)
    s = state["seats"][0]
    assert (s["workers"], s["vp"], s["taler"]) == (4 + workers, 10 + vp, 15 + taler)


def test_NAU_031_032_035_tile_bonuses_go_to_the_warehouse(monkeypatch):
    """NAU-031 a regular mast of choice, NAU-032 a regular sail, NAU-035 +1 worker and a good: all to the
    warehouse (Golden Rule); crown masts/sails are never a bonus."""
    state = new_game(2)
    options = {c.bonus_item for c in ENGINE.legal(state, 0) if c.space == 1}
    assert options == {"mast_whale", "mast_anchor", "mast_crestC", "mast_crestD"}
    assert {c.bonus_item for c in ENGINE.legal(state, 0) if c.space == 2} == {
        "sail_whale",
        "sail_anchor",
        "sail_crestC",
        "sail_crestD",
    }
    assert refused(state, 0, ChooseAction(1, "")) == "invalid_bonus_item"
    assert refused(state, 0, ChooseAction(1, "mast_crown")) == "invalid_bonus_item"
    do(state, 0, ChooseAction(1, "mast_anchor"))
    s = state["seats"][0]
    assert s["warehouse"] == {"mast_anchor": 1} and s["wh_used"] == 2
    assert state["stacks"]["mast_anchor"] == 14
    state = _choose_on(monkeypatch, 5, "salt")
    s = state["seats"][0]
    assert s["warehouse"] == {"salt": 1} and s["workers"] == 5
    state = _choose_on(monkeypatch, 2, "sail_crestD")
    assert state["seats"][0]["warehouse"] == {"sail_crestD": 1}


def test_NAU_038_bonus_tile_forfeited_when_it_cannot_be_stored():
    """NAU-038 / NAU-A06: no room (or empty stacks) -> the tile is forfeited, the rest is still given."""
    state = new_game(2)
    add_wh(state, 0, "single", 10)
    assert [c for c in ENGINE.legal(state, 0) if c.space == 5] == [ChooseAction(5, "")]
    events = do(state, 0, ChooseAction(5, ""))
    assert events[0].data["bonus_forfeited"] is True
    assert state["seats"][0]["workers"] == 5  # the worker part still given
    state = new_game(2)
    for good in ("coffee", "grain", "salt", "fish"):
        state["stacks"][good] = 0  # NAU-003: nothing left anywhere
        state["seats"][1]["delivered"][good] = 12
    assert [c for c in ENGINE.legal(state, 0) if c.space == 5] == [ChooseAction(5, "")]


# --- blue workers, uses, prices ---------------------------------------------------------------------------


def test_NAU_041_042_043_blue_workers_for_each_player_then_own(monkeypatch):
    """NAU-041: each player carrying out the action has the blue workers; NAU-042 they are used first and
    lost if unused; NAU-043 each further use costs a worker from personal stock."""
    state = new_game(3)
    start(monkeypatch, state, "withdraw_money", blue=2)
    for _ in range(3):
        do(state, 0, WithdrawMoney())
    assert state["seats"][0]["workers"] == 3  # 2 blue + 1 own
    assert state["seats"][0]["taler"] == 21
    do(state, 0, EndTurn())
    assert state["turn"]["main"]["blue"] == 2  # the next player has them again
    do(state, 1, WithdrawMoney())
    do(state, 1, EndTurn())
    assert state["seats"][1]["workers"] == 4  # the unused blue worker is lost, not kept
    assert state["seats"][1]["taler"] == 18


def test_NAU_050_051_one_worker_per_use_any_number_of_uses(monkeypatch):
    """NAU-050: every use costs 1 worker; NAU-051: any number of uses until workers run out.
    NAU-004: workers and Taler from the supply are unlimited; NAU-120: each use +2 Taler."""
    state = new_game(2)
    start(monkeypatch, state, "withdraw_money", blue=0)
    s = state["seats"][0]
    s["workers"] = 40
    for _ in range(40):
        do(state, 0, WithdrawMoney())
    assert s["taler"] == 15 + 80 and s["workers"] == 0
    assert refused(state, 0, WithdrawMoney()) == "no_workers"


def test_NAU_052_053_054_prices_by_space_and_the_4_taler_rule(monkeypatch):
    """NAU-052: the price is the number printed at the tile's space; NAU-053: the first copy of a type costs
    that; NAU-054: the 2nd and further copies cost 4."""
    state = new_game(2)
    start(monkeypatch, state, "buy_goods", prices=(3, 0, 2, 1), blue=0)  # coffee 3, grain 0, fish 2, salt 1
    s = state["seats"][0]
    s["workers"] = 10
    s["taler"] = 30
    paid = []
    for good in ("coffee", "salt", "salt", "salt", "grain", "grain"):
        before = s["taler"]
        do(state, 0, BuyItem(good, "warehouse", 0, 0))
        paid.append(before - s["taler"])
    assert paid == [3, 1, 4, 4, 0, 4]
    s["taler"] = 3
    assert refused(state, 0, BuyItem("coffee", "warehouse", 0, 0)) == "insufficient_funds"


def test_NAU_055_056_gift_for_all_four_once_per_action(monkeypatch):
    """NAU-055: buying all 4 types gives 1 more of the player's choice, no Taler, no worker, to the warehouse;
    NAU-056: only one gift even after two full sets."""
    state = new_game(2)
    start(monkeypatch, state, "buy_hulls", blue=0)
    s = state["seats"][0]
    s["workers"], s["taler"] = 9, 40
    for part in ("single", "bow", "center"):
        do(state, 0, BuyItem(part, "warehouse", 0, 0))
    do(state, 0, BuyItem("stern", "warehouse", 0, 0))
    gifts = ENGINE.legal(state, 0)
    assert gifts == [TakeGift(p) for p in ("single", "bow", "center", "stern")]
    assert refused(state, 0, BuyItem("bow", "warehouse", 0, 0)) == "gift_pending"
    workers, taler = s["workers"], s["taler"]
    do(state, 0, TakeGift("center"))
    assert (s["workers"], s["taler"]) == (workers, taler)
    assert s["warehouse"]["center"] == 2
    for part in ("single", "bow", "center", "stern"):
        do(state, 0, BuyItem(part, "warehouse", 0, 0))
    assert not any(isinstance(c, TakeGift) for c in ENGINE.legal(state, 0))
    assert refused(state, 0, TakeGift("bow")) == "no_gift"


def test_NAU_057_058_059_golden_rule(monkeypatch):
    """NAU-057: a tile received without paying >= 1 Taler goes to the warehouse; NAU-059: a worker is no
    payment (0-Taler purchase is free); NAU-058: a paid tile may go straight to the shipyard or be stored."""
    state = new_game(2)
    start(monkeypatch, state, "buy_hulls", prices=(0, 1, 2, 3), blue=1)
    legal = ENGINE.legal(state, 0)
    singles = [c for c in legal if getattr(c, "item", "") == "single"]
    assert singles == [BuyItem("single", "warehouse", 0, 0)]
    assert refused(state, 0, BuyItem("single", "new_ship", 0, 0)) == "golden_rule"
    assert BuyItem("bow", "new_ship", 0, 0) in legal and BuyItem("bow", "warehouse", 0, 0) in legal
    do(state, 0, BuyItem("bow", "new_ship", 0, 0))
    do(state, 0, BuyItem("single", "warehouse", 0, 0))
    assert state["seats"][0]["warehouse"] == {"single": 1}


def test_NAU_060_purchase_needs_a_destination(monkeypatch):
    """NAU-060 / NAU-A05: a tile with no warehouse room and no legal shipyard spot cannot be bought."""
    state = new_game(2)
    start(monkeypatch, state, "buy_masts", prices=(1, 2, 3, 0), blue=2)
    add_wh(state, 0, "single", 9)  # one space left: no room for a mast
    assert refused(state, 0, BuyItem("mast_whale", "warehouse", 0, 0)) == "warehouse_full"
    assert [c for c in ENGINE.legal(state, 0) if isinstance(c, BuyItem)] == []
    assert ENGINE.legal(state, 0)[0] == PassAction()


def test_NAU_003_empty_stack_cannot_be_bought(monkeypatch):
    """NAU-003: an empty stack cannot be obtained by any means."""
    state = new_game(2)
    start(monkeypatch, state, "buy_goods", blue=2)
    state["stacks"]["fish"] = 0
    state["seats"][1]["delivered"]["fish"] = 12
    assert refused(state, 0, BuyItem("fish", "warehouse", 0, 0)) == "stack_empty"


# --- goods ------------------------------------------------------------------------------------------------


def test_NAU_100_101_102_103_goods_on_ships(monkeypatch):
    """NAU-100: coffee, grain, salt, fish; NAU-101: a paid good under any free hull part, even of an
    unfinished ship; NAU-102: 1 good per hull part, identical goods allowed; NAU-103: a loaded good never moves
    (only warehouse tiles can be transported)."""
    state = new_game(2)
    start(monkeypatch, state, "buy_goods", prices=(1, 1, 1, 1), blue=0)
    s = state["seats"][0]
    s["workers"] = 5
    add_ship(state, 0, ["bow"])
    add_ship(state, 0, ["single"])
    do(state, 0, BuyItem("salt", "ship", 0, 0))
    assert refused(state, 0, BuyItem("salt", "ship", 0, 0)) == "illegal_placement"
    do(state, 0, BuyItem("salt", "ship", 1, 0))
    assert s["ships"][0]["goods"] == ["salt"] and s["ships"][1]["goods"] == ["salt"]
    assert {c.item for c in ENGINE.legal(state, 0) if isinstance(c, BuyItem)} == {"coffee", "grain", "salt", "fish"}
    assert not [c for c in ENGINE.legal(state, 0) if isinstance(c, BuyItem) and c.to == "ship"]
    assert hulls.positions(s["ships"], "salt") == []


# --- transport and warehouse ------------------------------------------------------------------------------


def test_NAU_110_transport_moves_one_tile_per_worker(monkeypatch):
    """NAU-110: each use moves 1 warehouse tile into the shipyard, joined legally or starting a ship."""
    state = new_game(2)
    add_wh(state, 0, "bow")
    add_wh(state, 0, "mast_whale")
    add_wh(state, 0, "coffee")
    start(monkeypatch, state, "transport", blue=1)
    legal = ENGINE.legal(state, 0)
    assert Transport("bow", "new_ship", 0, 0) in legal
    assert not [c for c in legal if isinstance(c, Transport) and c.item != "bow"]  # nothing to join yet
    do(state, 0, Transport("bow", "new_ship", 0, 0))
    do(state, 0, Transport("mast_whale", "ship", 0, 0))
    do(state, 0, Transport("coffee", "ship", 0, 0))
    s = state["seats"][0]
    assert s["warehouse"] == {} and s["wh_used"] == 0
    assert s["ships"][0] == {
        "hull": ["bow"],
        "masts": ["whale"],
        "sails": [None],
        "goods": ["coffee"],
        "complete": False,
    }
    assert s["workers"] == 2
    assert refused(state, 0, Transport("coffee", "ship", 0, 0)) == "not_in_warehouse"


def test_NAU_111_112_113_warehouse_capacity_masts_take_two():
    """NAU-111: hull parts, sails and goods take 1 space, masts 2; NAU-112: only the total counts (free
    rearranging); NAU-113: a full warehouse takes nothing more."""
    state = new_game(2)
    s = state["seats"][0]
    add_wh(state, 0, "single", 8)
    assert nau_state.fits(s, "mast_whale")  # 2 spaces left, wherever they are
    add_wh(state, 0, "coffee")
    assert not nau_state.fits(s, "mast_whale") and nau_state.fits(s, "sail_whale")
    add_wh(state, 0, "sail_whale")
    assert s["wh_used"] == 10
    assert not nau_state.fits(s, "coffee")
    assert {c.bonus_item for c in ENGINE.legal(state, 0) if c.space in (1, 2, 5)} == {""}


# --- deliver goods ----------------------------------------------------------------------------------------


def test_NAU_130_131_132_133_134_deliver_goods(monkeypatch):
    """NAU-130: only complete, fully loaded ships deliver; NAU-131: all goods or none, 1 worker per good;
    NAU-132: several ships in one turn; NAU-133: delivered goods kept by type; NAU-134: reloadable after."""
    state = new_game(2)
    full = add_ship(state, 0, ["bow", "stern"], ["whale", "whale"], ["whale", "whale"], ["coffee", "coffee"])
    small = add_ship(state, 0, ["single"], ["anchor"], ["anchor"], ["salt"])
    half = add_ship(state, 0, ["bow", "stern"], ["whale", "whale"], ["whale", "whale"], ["fish", None])
    unfinished = add_ship(state, 0, ["bow"], goods=["grain"])
    start(monkeypatch, state, "deliver_goods", blue=1)
    s = state["seats"][0]
    s["workers"] = 2
    assert {c.ship for c in ENGINE.legal(state, 0) if isinstance(c, DeliverGoods)} == {full, small}
    assert refused(state, 0, DeliverGoods(half)) == "ship_not_loaded"
    assert refused(state, 0, DeliverGoods(unfinished)) == "ship_not_complete"
    do(state, 0, DeliverGoods(full))  # 1 blue + 1 own
    assert s["workers"] == 1
    do(state, 0, DeliverGoods(small))
    assert s["workers"] == 0
    assert s["delivered"] == {"coffee": 2, "salt": 1}
    assert s["ships"][full]["goods"] == [None, None]
    assert hulls.good_positions(s["ships"][full]) == [0, 1]


def test_NAU_131_not_enough_workers_for_the_whole_cargo(monkeypatch):
    """NAU-131: no partial delivery: a 2-good ship with only 1 worker cannot deliver."""
    state = new_game(2)
    ship = add_ship(state, 0, ["bow", "stern"], ["whale", "whale"], ["whale", "whale"], ["coffee", "grain"])
    start(monkeypatch, state, "deliver_goods", blue=0)
    state["seats"][0]["workers"] = 1
    assert refused(state, 0, DeliverGoods(ship)) == "no_workers"


# --- score crowns -----------------------------------------------------------------------------------------


def test_NAU_140_141_142_crowns_times_uses_capped_at_15(monkeypatch):
    """NAU-140: crown masts + crown sails owned (warehouse or ship) + turned pass tiles; NAU-141: VP = crowns
    x uses; NAU-142: at most 15 per round from the action."""
    state = new_game(2)
    add_wh(state, 0, "mast_crown")
    add_ship(state, 0, ["single"], ["crown"], ["crown"])
    state["seats"][0]["passes"] = 1
    assert scoring.crowns(state["seats"][0]) == 4
    start(monkeypatch, state, "score_crowns", blue=2)
    s = state["seats"][0]
    s["vp"] = 0
    gains = []
    for _ in range(5):
        before = s["vp"]
        events = do(state, 0, ScoreCrowns())
        gains.append(s["vp"] - before)
    assert gains == [4, 4, 4, 3, 0]
    assert events[0].data["wasted"] is True
    assert s["crown_vp_round"] == 15


# --- passing ------------------------------------------------------------------------------------------------


def test_NAU_150_151_152_153_154_passing():
    """NAU-150: pass instead of carrying out (start player too); NAU-151, NAU-152: the -3 tile turns first, then
    -2, -1; NAU-153: each turned tile is a crown this round; NAU-154: a 4th pass is allowed, no effect."""
    state = new_game(2)
    turned = []
    for _ in range(4):
        start_seat = state["start_player"]
        do(state, start_seat, ENGINE.legal(state, start_seat)[0])
        while state["step"] == "act":
            seat = state["acting"]
            legal = ENGINE.legal(state, seat)
            events = do(state, seat, PassAction() if PassAction() in legal else EndTurn())
            turned += [e.data["pass_tile"] for e in events if e.type == "ActionPassed" and e.data["seat"] == 0]
    assert turned == [-3, -2, -1, 0]
    assert state["seats"][0]["passes"] == 4
    assert scoring.crowns(state["seats"][0]) == 3


def test_NAU_150_cannot_pass_after_using_the_action(monkeypatch):
    """NAU-150 / NAU-A01: passing is instead of carrying out; after a use the turn can only be ended."""
    state = new_game(2)
    start(monkeypatch, state, "withdraw_money", blue=1)
    assert refused(state, 0, EndTurn()) == "no_use_made"
    do(state, 0, WithdrawMoney())
    assert refused(state, 0, PassAction()) == "cannot_pass"
