"""Nauticus setup, action phases, rounds, turntable and open information (NAU-001..029, 040, 044, 180..185)."""

from __future__ import annotations

import pytest
from support.nauticus import SEED, do, new_game, refused

from service.games.base import ADMIN, Event, RuleViolation
from service.games.nauticus import ENGINE
from service.games.nauticus import state as nau_state
from service.games.nauticus.commands import ChooseAction, EndTurn, PassAction, WithdrawMoney
from service.games.nauticus.data import ACTIONS, ITEMS_OF, STACKS, TURNTABLE
from service.games.rng import Rng

# ``do`` and ``refused`` are the checked helpers: every command these tests send must also be in ``legal``.


def run_phase(state: dict, space: int | None = None) -> list[Event]:
    """One action phase where the start player chooses (first legal or ``space``) and everybody passes."""
    start = state["start_player"]
    options = [c for c in ENGINE.legal(state, start) if space is None or c.space == space]
    events = do(state, start, options[0])
    while state["step"] == "act":
        seat = state["acting"]
        legal = ENGINE.legal(state, seat)
        events += do(state, seat, PassAction() if PassAction() in legal else EndTurn())
    return events


def test_NAU_001_player_counts_and_no_options():
    """NAU-001: 2-4 players; Nauticus has no options."""
    assert (ENGINE.min_players, ENGINE.max_players) == (2, 4)
    for bad in (1, 5):
        with pytest.raises(RuleViolation) as info:
            ENGINE.setup(bad, {}, Rng(SEED))
        assert info.value.code == "invalid_player_count"
    with pytest.raises(RuleViolation) as info:
        ENGINE.setup(3, {"start_seat": 1}, Rng(SEED))
    assert info.value.code == "invalid_options"


def test_NAU_002_stack_sizes():
    """NAU-002: 18 singles, bows, sterns, 9 centers; 15 per crest + 12 crown masts and sails; 12 per good."""
    state = new_game(4)
    stacks = state["stacks"]
    assert (stacks["single"], stacks["bow"], stacks["stern"], stacks["center"]) == (18, 18, 18, 9)
    assert [stacks["mast_" + c] for c in ("whale", "anchor", "crestC", "crestD", "crown")] == [15] * 4 + [12]
    assert [stacks["sail_" + c] for c in ("whale", "anchor", "crestC", "crestD", "crown")] == [15] * 4 + [12]
    assert [stacks[g] for g in ("coffee", "grain", "salt", "fish")] == [12] * 4
    assert stacks == STACKS


def test_NAU_005_everything_open_in_every_view():
    """NAU-005 (rules reference §4: no hidden information): workers, Taler, warehouse, delivered goods, pass
    tiles, extra tile and stack counts are open to every viewer; events are never redacted."""
    state = new_game(3)
    events = run_phase(state)
    for viewer in (0, 1, 2, None, ADMIN):
        v = ENGINE.view(state, viewer)
        assert len(v["seats"]) == 3
        for seat_view, seat in zip(v["seats"], state["seats"], strict=True):
            for key in ("workers", "taler", "warehouse", "delivered", "passes", "extra_tile", "vp"):
                assert seat_view[key] == seat[key]
            assert "crowns" in seat_view
        assert v["stacks"] == state["stacks"]
        for e in events:
            assert ENGINE.redact_event(e, viewer) is e


def test_NAU_006_eight_action_tiles_four_paid_four_free():
    """NAU-006: 8 action tiles, 4 blue (buying) and 4 light; each round's layout uses each once."""
    assert len(ACTIONS) == 8
    assert sorted(ITEMS_OF) == sorted(ACTIONS[:4])
    state = new_game(2)
    assert sorted(state["layout"]) == sorted(ACTIONS)


def test_NAU_010_011_012_013_017_opening_state():
    """NAU-010 turntable anchor at space 0; NAU-011 round 1; NAU-012 VP 10; NAU-013 empty warehouse,
    4 workers, 15 Taler, extra tile, pass tiles unturned; NAU-017 seat 0 starts."""
    state = new_game(2)
    assert state["turntable_anchor"] == 0
    assert state["round"] == 1
    assert state["start_player"] == 0
    assert ENGINE.to_act(state) == [0]
    for s in state["seats"]:
        assert s["vp"] == 10 and s["warehouse"] == {} and s["ships"] == [] and s["extra_tile"]
        assert s["passes"] == 0
    assert state["seats"][0]["taler"] == 15 and state["seats"][0]["workers"] == 4


@pytest.mark.parametrize(
    ("players", "money"),
    [(2, [(15, 4), (16, 4)]), (3, [(15, 4), (16, 4), (17, 5)]), (4, [(15, 4), (16, 4), (16, 5), (17, 6)])],
)
def test_NAU_014_015_016_later_positions_get_more(players, money):
    """NAU-014 (2p), NAU-015 (3p), NAU-016 (4p): extra Taler and workers by position."""
    state = new_game(players)
    assert [(s["taler"], s["workers"]) for s in state["seats"]] == money


def test_NAU_018_round_one_layout_is_a_seeded_shuffle_from_space_0():
    """NAU-018: the 8 tiles are shuffled with the seeded Rng and laid out from the anchor space (0)."""
    events = ENGINE.setup(3, {}, Rng(SEED))
    laid = events[1]
    assert laid.type == "ActionTilesLaidOut"
    assert laid.data["turntable_anchor"] == 0
    assert laid.data["order"] == Rng(SEED).shuffled(ACTIONS)
    assert laid.data["layout"] == laid.data["order"]  # starting at space 0
    assert ENGINE.setup(3, {}, Rng(SEED)) == events  # reproducible
    layouts = {tuple(ENGINE.setup(3, {}, Rng(bytes([i]) * 32))[1].data["layout"]) for i in range(8)}
    assert len(layouts) > 1


@pytest.mark.parametrize(("players", "rounds"), [(2, 4), (3, 5), (4, 5)])
def test_NAU_020_021_183_rounds_and_seven_phases(players, rounds):
    """NAU-020: 4 rounds with 2 players, 5 with 3-4; NAU-021: 7 phases per round, the 8th tile unused;
    NAU-183: after the last round the game is scored and over."""
    state = new_game(players)
    phases = 0
    round_ends = 0
    while ENGINE.result(state) is None:
        events = run_phase(state)
        phases += 1
        for e in events:
            if e.type == "RoundEnded":
                round_ends += 1
                assert phases == 7 * round_ends
        if state["step"] == "choose":
            assert sum(state["face_down"]) == state["phase"] <= 6
    assert round_ends == rounds
    assert phases == 7 * rounds
    assert ENGINE.to_act(state) == []
    assert state["step"] == "over"


def test_NAU_022_start_player_must_choose_first():
    """NAU-022 / NAU-A19: only the start player acts, and only by choosing a face-up tile."""
    state = new_game(3)
    assert ENGINE.legal(state, 1) == []
    assert all(isinstance(c, ChooseAction) for c in ENGINE.legal(state, 0))
    assert refused(state, 1, ChooseAction(0, "")) == "not_your_turn"
    assert refused(state, 0, WithdrawMoney()) == "choose_action_first"
    assert refused(state, 0, ChooseAction(9, "")) == "invalid_space"


def test_NAU_023_024_bonus_only_to_the_start_player_even_when_passing():
    """NAU-023: the start player gets the space's bonus even if passing; NAU-024: nobody else does."""
    state = new_game(3)
    before = [dict(vp=s["vp"], taler=s["taler"], workers=s["workers"]) for s in state["seats"]]
    run_phase(state, space=3)  # +2 VP bonus, everyone passes
    assert state["seats"][0]["vp"] == before[0]["vp"] + 2
    for i in (1, 2):
        assert state["seats"][i]["vp"] == before[i]["vp"]
        assert state["seats"][i]["taler"] == before[i]["taler"]


def test_NAU_025_then_every_other_player_clockwise():
    """NAU-025: start player first, then clockwise, each carries out or passes."""
    state = new_game(4)
    state["start_player"] = 2
    do(state, 2, ENGINE.legal(state, 2)[0])
    order = []
    while state["step"] == "act":
        order.append(state["acting"])
        assert ENGINE.to_act(state) == [state["acting"]]
        do(state, state["acting"], PassAction())
        if state["step"] == "act" and EndTurn() in ENGINE.legal(state, state["acting"]):
            do(state, state["acting"], EndTurn())
    assert order == [2, 3, 0, 1]


def test_NAU_026_027_tile_face_down_and_anchor_tile():
    """NAU-026: the used tile is face down for the round; NAU-027: the anchor tile lies on the first one."""
    state = new_game(2)
    run_phase(state, space=5)
    assert state["face_down"][5] and state["anchor_tile"] == 5
    assert refused(state, state["start_player"], ChooseAction(5, "")) == "tile_face_down"
    assert all(c.space != 5 for c in ENGINE.legal(state, state["start_player"]))
    run_phase(state, space=2)
    assert state["face_down"][2] and state["anchor_tile"] == 5


def test_NAU_028_185_start_player_passes_after_every_phase_not_at_round_end():
    """NAU-028: the figure passes clockwise after every phase, the 7th included, not again at round end;
    NAU-185: its holder begins the new round."""
    state = new_game(3)
    starts = []
    for _ in range(7):
        starts.append(state["start_player"])
        run_phase(state)
    assert starts == [0, 1, 2, 0, 1, 2, 0]
    assert state["round"] == 2
    assert state["start_player"] == 1  # 7 passes of the figure
    assert ENGINE.to_act(state) == [1]


def test_NAU_029_no_income_between_rounds():
    """NAU-029: a round change gives no Taler or workers."""
    state = new_game(2)
    for _ in range(6):
        run_phase(state)
    money = [(s["taler"], s["workers"]) for s in state["seats"]]
    events = run_phase(state, space=None)
    assert any(e.type == "RoundEnded" for e in events)
    bonus = next(e for e in events if e.type == "ActionChosen").data
    s0 = bonus["seat"]
    after = [(s["taler"], s["workers"]) for s in state["seats"]]
    for i in range(2):
        expected = money[i]
        if i == s0:
            expected = (expected[0] + bonus["bonus_taler"], expected[1] + bonus["bonus_workers"])
        assert after[i] == expected


def test_NAU_040_184_turntable_blue_workers_and_rotation():
    """NAU-040: blue workers at a space = turntable segment pointing at it, 0 at the anchor segment;
    NAU-184: each new round the turntable turns to the anchor tile and the tiles are laid from there."""
    assert TURNTABLE[0] == 0 and all(1 <= b <= 3 for b in TURNTABLE[1:])
    state = new_game(2)
    events = run_phase(state, space=4)
    chosen = next(e for e in events if e.type == "ActionChosen")
    assert chosen.data["blue"] == TURNTABLE[4]
    for _ in range(6):
        events = run_phase(state)
    laid = next(e for e in events if e.type == "ActionTilesLaidOut")
    assert laid.data["turntable_anchor"] == 4 == state["turntable_anchor"]
    assert laid.data["blue"][4] == 0
    assert laid.data["blue"] == [TURNTABLE[(s - 4) % 8] for s in range(8)]
    assert [laid.data["layout"][(4 + i) % 8] for i in range(8)] == laid.data["order"]
    assert state["anchor_tile"] is None and state["face_down"] == [False] * 8
    assert nau_state.blue_at(state, 5) == TURNTABLE[1]


def test_NAU_044_passing_gets_nothing_from_blue_workers():
    """NAU-044: a player who passes gains nothing from the blue workers."""
    state = new_game(2)
    space = state["layout"].index("withdraw_money")
    do(state, 0, next(c for c in ENGINE.legal(state, 0) if c.space == space))
    do(state, 0, PassAction())
    do(state, 0, EndTurn())
    b = state["seats"][1]
    before = (b["taler"], b["workers"])
    do(state, 1, PassAction())
    assert (b["taler"], b["workers"]) == before


@pytest.mark.parametrize(("passes", "penalty"), [(0, 6), (1, 3), (2, 1), (3, 0), (4, 0)])
def test_NAU_180_181_182_round_end_penalties(passes, penalty):
    """NAU-180: lose the un-turned pass tiles (6/3/1/0); NAU-181: VP may go negative;
    NAU-182: every pass tile is turned back (crowns from passes gone)."""
    state = new_game(2)
    withdraw = state["layout"].index("withdraw_money")
    for space in [sp for sp in range(8) if sp != withdraw][:6]:
        run_phase(state, space)
    start = state["start_player"]
    do(state, start, next(c for c in ENGINE.legal(state, start) if c.space == withdraw))
    for s in state["seats"]:
        s["passes"] = passes
        s["vp"] = 2
    events = []
    while state["step"] == "act":
        seat = state["acting"]
        # carry out the action (withdraw money) so that the pass count stays as set
        events += do(state, seat, WithdrawMoney() if state["turn"]["main"]["uses"] == 0 else EndTurn())
        assert "ActionPassed" not in [e.type for e in events]
    ended = next(e for e in events if e.type == "RoundEnded")
    assert ended.data["penalties"] == [penalty, penalty]
    assert [s["vp"] for s in state["seats"]] == [2 - penalty] * 2
    assert all(s["passes"] == 0 for s in state["seats"])
