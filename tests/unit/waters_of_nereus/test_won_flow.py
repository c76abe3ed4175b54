"""Waters of Nereus game structure: days, phases, cycles, explorer phase, conclude
(WON-020, WON-030, WON-031, WON-040 to WON-045, WON-060 to WON-064, WON-070 to WON-073)."""

from __future__ import annotations

import pytest
from support.waters_of_nereus import act, choose_all, put, rng, start, turn_of

from service.games.base import RuleViolation
from service.games.waters_of_nereus import ENGINE, context, data
from service.games.waters_of_nereus import commands as c


def end_turn_quickly(s, seat):
    """Place the first free marker and end the turn doing nothing else."""
    act(s, seat, ENGINE.legal(s, seat)[0])
    if s["turn"]["move"] is not None:
        act(s, seat, c.DropAnchor())
    act(s, seat, c.EndTurn())


def play_cycle(s):
    choose_all(s, {})
    while s["phase"] == "turn" and s["turn"]["explorer_pos"] is None:
        end_turn_quickly(s, s["active"])


def test_won_020_four_days_of_four_cycles():
    """WON-020, WON-045, WON-073: 4 days of 4 cycles, then the game ends."""
    s = start(3)
    cycles = 0
    while s["phase"] not in ("final", "over"):
        if s["phase"] == "choose":
            play_cycle(s)
            cycles += 1
        elif s["phase"] == "explorer_offer":
            act(s, s["active"], c.DeclineExplorerTurn())
    assert cycles == 16
    assert s["day"] == 4 and s["discovery_stack"] == []
    while s["phase"] == "final":
        act(s, s["active"], c.FinishScoring())
    assert ENGINE.result(s) is not None and ENGINE.to_act(s) == []


def test_won_030_discovery_card_flipped_each_day():
    """WON-030, WON-072: each day flips the top discovery card; the conclude phase removes it."""
    s = start(4)
    assert s["day"] == 1 and s["discovery_current"] is not None
    assert len(s["discovery_stack"]) == 3
    first = s["discovery_current"]
    for _ in range(4):
        play_cycle(s)
    while s["phase"] == "explorer_offer":
        act(s, s["active"], c.DeclineExplorerTurn())
    assert s["day"] == 2 and first in s["discovery_used"] and s["discovery_current"] != first


def test_won_031_at_most_three_treasures_on_a_space():
    """WON-031: no treasure on a ship's space and no 4th treasure on a space."""
    s = start(4)
    ship = s["ships"][0]
    target = 7 if ship != 7 else 8
    while len(s["board"][target]) < 3:
        put(s, target // 6, target % 6, "W")
    ctx = context.Ctx(s, rng(3))
    context.place_on_board(ctx, [ship, target])
    assert ctx.events[0].data["cells"] == []


def test_won_040_simultaneous_choice_and_reveal():
    """WON-040: all seats choose at once; choices stay hidden until the last one, then one reveal."""
    s = start(3)
    assert ENGINE.to_act(s) == [0, 1, 2]
    ev = act(s, 0, c.ChooseCrew("merchant"))
    assert [e.type for e in ev] == ["CrewChosen"]
    assert ENGINE.to_act(s) == [1, 2]  # WON-Q02: who has chosen is public (what is not)
    assert "chosen" not in ENGINE.view(s, 1)["seats"][0]
    assert ENGINE.view(s, 0)["seats"][0]["chosen"] == "merchant"
    act(s, 1, c.ChooseCrew("merchant"))
    ev = act(s, 2, c.ChooseCrew("captain"))
    reveal = next(e for e in ev if e.type == "CrewRevealed")
    assert reveal.data["cards"] == ["merchant", "merchant", "captain"]


def test_won_041_turn_order_from_hourglass():
    """WON-041: from the hourglass holder, clockwise."""
    s = start(4, sun=2)
    choose_all(s, {})
    order = []
    while s["phase"] == "turn":
        order.append(s["active"])
        end_turn_quickly(s, s["active"])
    assert order == [2, 3, 0, 1]


def test_won_042_marker_first_on_available_space():
    """WON-042: the active player must first place a marker on an available space of that row."""
    s = turn_of(4, 0, "purser")
    assert ENGINE.legal(s, 0) == [c.PlaceMarker(i) for i in (1, 2, 3, 4)]
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 0, c.PerformAction(), rng())
    assert err.value.code == "marker_first"
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 1, c.PlaceMarker(1), rng())
    assert err.value.code == "not_your_turn"


def test_won_043_occupied_spaces_unavailable_until_day_end():
    """WON-043: a placed marker stays until the day ends and blocks that space."""
    s = turn_of(4, 0, "purser", others={1: "purser"})
    act(s, 0, c.PlaceMarker(1))
    act(s, 0, c.EndTurn())
    assert s["active"] == 1
    assert c.PlaceMarker(1) not in ENGINE.legal(s, 1)
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 1, c.PlaceMarker(1), rng())
    assert err.value.code == "space_unavailable"


def test_won_044_crew_card_once_a_day():
    """WON-044: a played crew card stays face up and cannot be chosen again that day."""
    s = start(2)
    play_cycle(s)
    played = s["seats"][0]["played"]
    assert len(played) == 1
    assert c.ChooseCrew(played[0]) not in ENGINE.legal(s, 0)
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 0, c.ChooseCrew(played[0]), rng())
    assert err.value.code == "crew_unavailable"


def test_won_045_hourglass_passes_sun_stays():
    """WON-045, WON-A18: after each cycle the hourglass moves one seat; the sun stays."""
    s = start(4, sun=1)
    play_cycle(s)
    assert (s["sun"], s["hourglass"], s["cycle"]) == (1, 2, 2)
    play_cycle(s)
    assert (s["sun"], s["hourglass"], s["cycle"]) == (1, 3, 3)


def _to_explorer_phase(s, explorer_seats):
    """Play a day's 4 cycles; the named seats play the explorer in cycle 1."""
    crews = {seat: "explorer" for seat in explorer_seats}
    choose_all(s, crews)
    while s["phase"] == "turn":
        end_turn_quickly(s, s["active"])
    for _ in range(3):
        play_cycle(s)


def test_won_060_won_061_explorer_phase_order_and_cost():
    """WON-060, WON-061: extra turns in marker order (left to right), costing 2, 3, 4."""
    s = start(3, sun=0)
    _to_explorer_phase(s, [0, 1, 2])
    assert s["phase"] == "explorer_offer"
    seen = []
    while s["phase"] == "explorer_offer":
        seen.append((s["active"], s["turn"]["cost"]))
        act(s, s["active"], c.DeclineExplorerTurn())
    assert seen == [(0, 2), (1, 3), (2, 4)]
    assert data.EXPLORER_COSTS[3] == 5  # WON-D03: a 4th player pays 5


def test_won_062_explorer_turn_plays_another_card():
    """WON-062: pay, play a crew card not played today, move the marker from the explorer row."""
    s = start(3, sun=0)
    _to_explorer_phase(s, [0])
    s["seats"][0]["gold"] = 10
    offered = {cmd.crew for cmd in ENGINE.legal(s, 0) if isinstance(cmd, c.TakeExplorerTurn)}
    assert offered == set(data.CREWS) - set(s["seats"][0]["played"])
    crew = sorted(offered)[0]
    pos = s["rows"]["explorer"].index(0)
    act(s, 0, c.TakeExplorerTurn(crew))
    assert s["seats"][0]["gold"] == 8
    act(s, 0, ENGINE.legal(s, 0)[0])
    assert s["rows"]["explorer"][pos] is None
    assert 0 in s["rows"][crew]


def test_won_063_decline_and_insufficient_gold():
    """WON-063: a player may decline; without the gold only declining is offered."""
    s = start(3, sun=0)
    _to_explorer_phase(s, [0])
    s["seats"][0]["gold"] = 1
    assert ENGINE.legal(s, 0) == [c.DeclineExplorerTurn()]
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, 0, c.TakeExplorerTurn("purser"), rng())
    assert err.value.code == "insufficient_gold"
    gold = s["seats"][0]["gold"]
    act(s, 0, c.DeclineExplorerTurn())
    assert s["seats"][0]["gold"] == gold


def test_won_064_won_070_won_071_phase_end_and_conclude():
    """WON-064, WON-070, WON-071: after the last explorer turn the day concludes: markers back,
    crew cards back in hand, sun and hourglass to the next seat."""
    s = start(3, sun=0)
    _to_explorer_phase(s, [1])
    while s["phase"] == "explorer_offer":
        act(s, s["active"], c.DeclineExplorerTurn())
    assert s["day"] == 2 and s["phase"] == "choose"
    assert all(m is None for row in s["rows"].values() for m in row)
    assert all(p["played"] == [] for p in s["seats"])
    assert (s["sun"], s["hourglass"]) == (1, 1)
    assert len(ENGINE.legal(s, 0)) == 7


def test_won_072_won_073_game_ends_when_stack_empty():
    """WON-072, WON-073: used discovery cards leave the game; no 5th day."""
    s = start(2)
    while s["phase"] not in ("final", "over"):
        if s["phase"] == "choose":
            play_cycle(s)
        else:
            act(s, s["active"], c.DeclineExplorerTurn())
    assert len(s["discovery_used"]) == 4 and s["phase"] == "final"
