"""Nauticus shipyard: hull geometry, masts, sails, completion and rewards (NAU-070..094, NAU-160..165)."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError
from support.nauticus import add_ship, add_wh, do, new_game, refused, start

from schemas.intents import load_intent
from service.games.nauticus import ENGINE, hulls
from service.games.nauticus.commands import BuyItem, ChooseReward, EndTurn, PassAction, Transport
from service.games.nauticus.data import HULL_PARTS

# --- hulls ------------------------------------------------------------------------------------------------


def test_NAU_070_071_hull_items_and_the_single_vessel():
    """NAU-070: single, bow, center, stern; NAU-071: a single is a complete 1-tile hull, nothing joins it."""
    assert HULL_PARTS == ["single", "bow", "center", "stern"]
    assert hulls.hull_closed(["single"])
    for part in HULL_PARTS:
        assert hulls.attach_positions(["single"], part) == []


def test_NAU_072_bow_front_stern_back_at_most_two_centers():
    """NAU-072: bow + 0..2 centers + stern, at most 4 parts."""
    assert hulls.attach_positions(["bow"], "bow") == []
    assert hulls.attach_positions(["bow"], "stern") == [1]
    assert hulls.attach_positions(["stern"], "bow") == [0]
    assert hulls.attach_positions(["stern"], "stern") == []
    assert hulls.attach_positions(["bow", "center", "center"], "center") == []
    assert hulls.attach_positions(["bow", "center", "center"], "stern") == [3]
    assert hulls.attach_positions(["center", "center"], "center") == []
    assert hulls.attach_positions(["center", "center"], "bow") == [0]


def test_NAU_073_start_from_either_end_or_the_middle():
    """NAU-073: a part starts a new ship or joins an open end; 3-4 tile hulls from one end or the middle."""
    assert hulls.attach_positions(["center"], "center") == [0, 1]
    assert hulls.attach_positions(["center"], "bow") == [0]
    assert hulls.attach_positions(["center"], "stern") == [1]
    assert hulls.attach_positions(["bow"], "center") == [1]
    assert hulls.attach_positions(["stern"], "center") == [0]
    assert ("new_ship", 0, 0) in hulls.positions([], "center")


def test_NAU_074_075_no_insertion_and_no_gaps():
    """NAU-074: once bow and stern meet, nothing is inserted; NAU-075: a bow and a stern laid apart are two
    ships for good."""
    for part in HULL_PARTS:
        assert hulls.attach_positions(["bow", "stern"], part) == []
        assert hulls.attach_positions(["bow", "center", "stern"], part) == []
    ships = [hulls.new_ship("bow"), hulls.new_ship("stern")]
    spots = hulls.positions(ships, "center")
    assert spots == [("new_ship", 0, 0), ("ship", 0, 1), ("ship", 1, 0)]
    hulls.place(ships, "center", "ship", 0, 1)
    assert [s["hull"] for s in ships] == [["bow", "center"], ["stern"]]


def test_NAU_076_077_parts_never_move_hull_over_several_actions(monkeypatch):
    """NAU-076: shipyard tiles never move again (transport only takes warehouse tiles); NAU-077: a hull can
    be finished in a later action."""
    state = new_game(2)
    add_ship(state, 0, ["bow"])
    add_wh(state, 0, "center")
    start(monkeypatch, state, "transport", blue=2, prices=(1, 1, 1, 1))
    assert refused(state, 0, Transport("bow", "new_ship", 0, 0)) == "not_in_warehouse"
    do(state, 0, Transport("center", "ship", 0, 1))
    do(state, 0, EndTurn())
    do(state, 1, PassAction())
    do(state, 1, EndTurn())
    # a later phase: buy the stern and close the hull
    assert state["phase"] == 1
    state["start_player"] = 0
    start(monkeypatch, state, "buy_hulls", prices=(1, 1, 1, 1), blue=1, space=5)
    do(state, 0, BuyItem("stern", "ship", 0, 2))
    assert state["seats"][0]["ships"][0]["hull"] == ["bow", "center", "stern"]


# --- masts and sails --------------------------------------------------------------------------------------


def test_NAU_080_090_crown_masts_and_sails_cannot_be_bought(monkeypatch):
    """NAU-080 / NAU-090: only the 4 crests are on sale; crowns come from rewards."""
    for action, crown in (("buy_masts", "mast_crown"), ("buy_sails", "sail_crown")):
        state = new_game(2)
        start(monkeypatch, state, action, blue=2, prices=(1, 1, 1, 1))
        assert all(getattr(c, "item", "") != crown for c in ENGINE.legal(state, 0))
        assert refused(state, 0, BuyItem(crown, "warehouse", 0, 0)) == "invalid_item"
        with pytest.raises(ValidationError):
            load_intent("nauticus", BuyItem(crown, "warehouse", 0, 0).to_json())


def test_NAU_081_082_083_masts_one_per_hull_part_one_crest_crowns_wild(monkeypatch):
    """NAU-081: a mast on a hull part without one, finished hull or not; NAU-082: one crest per ship, crown
    masts mix with any; NAU-083: paid masts may go straight on a ship."""
    state = new_game(2)
    add_ship(state, 0, ["bow", "center"])
    start(monkeypatch, state, "buy_masts", prices=(1, 1, 1, 1), blue=0)
    state["seats"][0]["workers"] = 4
    do(state, 0, BuyItem("mast_whale", "ship", 0, 1))
    assert refused(state, 0, BuyItem("mast_whale", "ship", 0, 1)) == "illegal_placement"
    assert refused(state, 0, BuyItem("mast_anchor", "ship", 0, 0)) == "illegal_placement"
    ship = state["seats"][0]["ships"][0]
    assert hulls.mast_positions(ship, "crown") == [0]
    assert hulls.mast_positions(ship, "whale") == [0]
    ship2 = {"hull": ["single"], "masts": ["crown"], "sails": [None], "goods": [None], "complete": False}
    assert hulls.mast_positions(ship2, "anchor") == []  # every hull part already has a mast
    ship3 = hulls.new_ship("bow")
    hulls.place([ship3], "mast_crown", "ship", 0, 0)
    assert hulls.ship_crest(ship3) is None


def test_NAU_091_092_093_094_sails(monkeypatch):
    """NAU-091: a sail on a mast without a sail; NAU-092: regular sails match the crest, crown sails go on
    any mast; NAU-093: a regular sail on a crown mast if it matches the ship's crest (or the ship has none);
    NAU-094: paid sails may go straight on a mast, free ones to the warehouse."""
    ship = {
        "hull": ["bow", "center", "stern"],
        "masts": ["crown", "anchor", None],
        "sails": [None, None, None],
        "goods": [None] * 3,
        "complete": False,
    }
    assert hulls.sail_positions(ship, "anchor") == [0, 1]
    assert hulls.sail_positions(ship, "whale") == []
    assert hulls.sail_positions(ship, "crown") == [0, 1]
    crown_only = {"hull": ["single"], "masts": ["crown"], "sails": [None], "goods": [None], "complete": False}
    assert hulls.sail_positions(crown_only, "whale") == [0]
    state = new_game(2)
    add_ship(state, 0, ["bow", "stern"], masts=["whale", None])
    start(monkeypatch, state, "buy_sails", prices=(0, 1, 2, 3), blue=2)
    assert refused(state, 0, BuyItem("sail_whale", "ship", 0, 0)) == "golden_rule"
    assert refused(state, 0, BuyItem("sail_anchor", "ship", 0, 0)) == "illegal_placement"
    assert refused(state, 0, BuyItem("sail_anchor", "ship", 0, 1)) == "illegal_placement"
    do(state, 0, BuyItem("sail_whale", "warehouse", 0, 0))
    do(state, 0, BuyItem("sail_whale", "ship", 0, 0))  # 2nd copy, 4 Taler: paid, straight on the mast
    assert state["seats"][0]["ships"][0]["sails"] == ["whale", None]


# --- completion and rewards -------------------------------------------------------------------------------


def test_NAU_160_161_completion_interrupts_with_one_reward_per_mast(monkeypatch):
    """NAU-160: complete = finished hull + mast on every part + sail on every mast (goods irrelevant);
    NAU-161: the turn is interrupted at once, 1 reward per mast."""
    state = new_game(2)
    add_ship(state, 0, ["bow", "center", "center", "stern"], ["whale"] * 4, ["whale"] * 3 + [None])
    add_wh(state, 0, "sail_whale")
    start(monkeypatch, state, "transport", blue=1, prices=(1, 1, 1, 1))
    events = do(state, 0, Transport("sail_whale", "ship", 0, 3))
    assert [e.type for e in events] == ["TileTransported", "ShipCompleted"]
    assert events[1].data["rewards"] == 4
    assert all(isinstance(c, ChooseReward) for c in ENGINE.legal(state, 0))
    assert refused(state, 0, EndTurn()) == "reward_pending"
    assert state["seats"][0]["ships"][0]["complete"]


def test_NAU_162_163_the_six_rewards_at_most_twice_each(monkeypatch):
    """NAU-162: crown mast / crown sail to the warehouse, +3 VP, +7 Taler, +3 workers, 2 different goods to the
    warehouse; NAU-163: each at most twice per ship."""
    state = new_game(2)
    add_ship(state, 0, ["bow", "center", "center", "stern"], ["anchor"] * 4, ["anchor"] * 3 + [None])
    add_wh(state, 0, "sail_anchor")
    start(monkeypatch, state, "transport", blue=1, prices=(1, 1, 1, 1))
    s = state["seats"][0]
    do(state, 0, Transport("sail_anchor", "ship", 0, 3))
    vp, taler, workers = s["vp"], s["taler"], s["workers"]
    options = ENGINE.legal(state, 0)
    assert {c.reward for c in options} == {"crown_mast", "crown_sail", "victory_points", "taler", "workers", "goods"}
    assert ChooseReward("goods", ["coffee", "grain"]) in options
    assert ChooseReward("goods", ["coffee", "coffee"]) not in options
    do(state, 0, ChooseReward("crown_mast", []))
    do(state, 0, ChooseReward("crown_mast", []))
    assert refused(state, 0, ChooseReward("crown_mast", [])) == "reward_limit"
    assert refused(state, 0, ChooseReward("goods", ["salt", "fish"])) == "invalid_reward"  # slot order
    do(state, 0, ChooseReward("goods", ["fish", "salt"]))
    do(state, 0, ChooseReward("victory_points", []))
    assert s["warehouse"] == {"mast_crown": 2, "salt": 1, "fish": 1}
    assert s["vp"] == vp + 3
    assert (s["taler"], s["workers"]) == (taler, workers)
    assert state["turn"]["rewards"] is None
    # the other three
    state = new_game(2)
    add_ship(state, 0, ["bow", "stern"], ["anchor"] * 2, ["anchor", None])
    add_wh(state, 0, "sail_crown")
    start(monkeypatch, state, "transport", blue=1, prices=(1, 1, 1, 1))
    s = state["seats"][0]
    do(state, 0, Transport("sail_crown", "ship", 0, 1))
    do(state, 0, ChooseReward("taler", []))
    do(state, 0, ChooseReward("workers", []))
    assert (s["taler"], s["workers"]) == (15 + 7, 4 + 3)


def test_NAU_164_165_rewards_usable_at_once_and_chaining(monkeypatch):
    """NAU-164: a reward crown sail can be transported at once and complete a further ship (more rewards);
    NAU-165: a ship's rewards come once only."""
    state = new_game(2)
    add_ship(state, 0, ["single"], ["whale"])
    add_ship(state, 0, ["single"], ["anchor"])
    add_wh(state, 0, "sail_whale")
    start(monkeypatch, state, "transport", blue=3, prices=(1, 1, 1, 1))
    events = do(state, 0, Transport("sail_whale", "ship", 0, 0))
    assert events[-1].type == "ShipCompleted"
    do(state, 0, ChooseReward("crown_sail", []))
    events = do(state, 0, Transport("sail_crown", "ship", 1, 0))
    assert events[-1].type == "ShipCompleted" and events[-1].data["ship"] == 1
    do(state, 0, ChooseReward("workers", []))
    add_wh(state, 0, "coffee")
    events = do(state, 0, Transport("coffee", "ship", 0, 0))
    assert [e.type for e in events] == ["TileTransported"]  # no second reward for ship 0


def test_NAU_072_073_074_any_legal_placement_sequence_keeps_hulls_valid():
    """NAU-072..075 as a property: whatever legal hull placements are made, every hull stays a single, or
    bow? center{0,2} stern? with at most 4 parts, and a closed hull never grows."""
    import random

    for seed in range(300):
        r = random.Random(seed)
        ships: list[dict] = []
        for _ in range(12):
            part = r.choice(HULL_PARTS)
            spots = hulls.positions(ships, part)
            closed_before = [hulls.hull_closed(s["hull"]) for s in ships]
            sizes_before = [len(s["hull"]) for s in ships]
            to, k, pos = r.choice(spots)
            hulls.place(ships, part, to, k, pos)
            for i, closed in enumerate(closed_before):
                if closed:
                    assert len(ships[i]["hull"]) == sizes_before[i]
            for s in ships:
                h = s["hull"]
                assert 1 <= len(h) <= 4
                if "single" in h:
                    assert h == ["single"]
                else:
                    core = h[1 if h[0] == "bow" else 0 : len(h) - (1 if h[-1] == "stern" else 0)]
                    assert set(core) <= {"center"} and len(core) <= 2
                    need = len(h) + (h[0] != "bow") + (h[-1] != "stern")
                    assert need <= 4
