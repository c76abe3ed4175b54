"""Waters of Nereus two-player variant, the neutral player (WON-130 to WON-139)."""

from __future__ import annotations

from support.waters_of_nereus import act, cell, choose_all, clear_board, new_game, put, rng, start

from service.games.waters_of_nereus import ENGINE, context, data, flow
from service.games.waters_of_nereus import commands as c
from service.games.waters_of_nereus.data import NEUTRAL


def test_won_130_won_131_neutral_setup():
    """WON-130, WON-131, WON-A17: a shuffled 7-card neutral deck, compass on N, ship in the centre
    (placed before the setup fill, so the centre stays empty)."""
    s = new_game(2, neutral=True)
    assert sorted(s["neutral_deck"]) == sorted(data.CREWS)
    assert s["compass"] == 0 and s["neutral_ship"] == cell(s, 2, 2)
    assert "neutral_deck" not in ENGINE.view(s, 0) and ENGINE.view(s, 0)["neutral_deck_count"] == 7
    s = start(2, neutral=True)
    assert s["board"][cell(s, 2, 2)] == [] or cell(s, 2, 2) in [
        r * 5 + col for r, col in data.DISCOVERY_CARDS[s["discovery_current"]]
    ]


def test_won_132_won_133_neutral_flips_first_each_cycle():
    """WON-132, WON-133: after both have chosen, the neutral card is flipped and its marker goes
    on the leftmost free space, before the first real player acts."""
    s = start(2, neutral=True, sun=1)
    top = s["neutral_deck"][-1]
    events = choose_all(s, {})
    types = [e.type for e in events]
    flip = types.index("NeutralCardFlipped")
    assert types.index("CrewRevealed") < flip < types.index("TurnStarted")
    assert s["rows"][top][0] == NEUTRAL
    assert s["active"] == 1  # the hourglass still orders the real players


def test_won_134_neutral_plays_four_cards():
    """WON-134: the neutral player plays 4 cards in Phase 2 (one per cycle) and nothing else."""
    s = start(2, neutral=True)
    flips = 0
    for _ in range(4):
        flips += sum(e.type == "NeutralCardFlipped" for e in choose_all(s, {}))
        while s["phase"] == "turn" and s["turn"]["explorer_pos"] is None:
            seat = s["active"]
            act(s, seat, ENGINE.legal(s, seat)[0])
            if s["turn"]["move"] is not None:
                act(s, seat, c.DropAnchor())
            act(s, seat, c.EndTurn())
    assert flips == 4
    assert s["phase"] in ("explorer_offer", "choose")


def _neutral_pilot(s, compass, at):
    clear_board(s)
    s["neutral_ship"] = at
    s["compass"] = compass
    s["neutral_deck"].remove("pilot")
    s["neutral_deck"].append("pilot")


def test_won_135_won_136_neutral_moves_by_compass_to_edge():
    """WON-135, WON-136: the die turns the compass clockwise; the ship moves that way (even
    diagonally for the pilot) the space's distance, stopping at the edge, re-rolling if stuck."""
    s = start(2, neutral=True)
    _neutral_pilot(s, 7, cell(s, 2, 4))
    ctx = context.Ctx(s, rng(38))  # rolls 3 then 2
    flow.neutral_turn(ctx, None)
    moved = [e for e in ctx.events if e.type == "NeutralShipMoved"]
    assert len(moved) == 1 and moved[0].data["cell"] == cell(s, 4, 4)
    assert [e.data["compass"] for e in ctx.events if e.type == "NeutralDieRolled"] == [2, 4]
    for k in range(30):
        s2 = start(2, neutral=True)
        _neutral_pilot(s2, 0, cell(s2, 2, 2))
        ctx = context.Ctx(s2, rng(k))
        flow.neutral_turn(ctx, None)
        rolls = [e for e in ctx.events if e.type == "NeutralDieRolled"]
        assert len(rolls) == 1  # from the centre every direction moves
        assert 1 <= rolls[0].data["roll"] <= 6


def test_won_137_neutral_lands_on_ships_and_returns_treasures():
    """WON-137: the neutral ship may stop on a ship's space; it returns its final space's treasures."""
    s = start(2, neutral=True)
    _neutral_pilot(s, 7, cell(s, 2, 4))
    s["ships"][0] = cell(s, 4, 4)
    put(s, 3, 4, "W")
    ctx = context.Ctx(s, rng(38))
    flow.neutral_turn(ctx, None)
    assert ctx.events[-1].data["cell"] == cell(s, 4, 4)
    for ev in ctx.events:
        ENGINE.evolve(s, ev)
    assert s["board"][cell(s, 3, 4)] == ["W"]  # passed spaces keep their treasures
    put(s, 1, 4, "K")
    s["neutral_deck"].remove("captain")
    s["neutral_deck"].append("captain")
    ctx = context.Ctx(s, rng(0))
    flow.neutral_turn(ctx, None)
    moved = ctx.events[-1].data
    assert moved["returned"] == list(s["board"][moved["cell"]])


def test_won_138_neutral_explorer_phase():
    """WON-138, WON-A14: a neutral explorer marker flips a 5th card in its place in the order,
    moving to that crew's leftmost free space; it pays nothing."""
    s = start(2, neutral=True)
    s["rows"]["explorer"] = [0, NEUTRAL, 1]
    queue = flow.explorer_queue(s)
    assert queue == [[0, 2, 0], [NEUTRAL, 0, 1], [1, 3, 2]]
    s["explorer_queue"] = [[NEUTRAL, 0, 1]]
    top = s["neutral_deck"][-1]
    ctx = context.Ctx(s, rng(1))
    flow.neutral_turn(ctx, 1)
    for ev in ctx.events:
        ENGINE.evolve(s, ev)
    assert s["rows"]["explorer"][1] is None and s["rows"][top][0] == NEUTRAL
    assert s["explorer_queue"] == []


def test_won_139_neutral_reshuffled_each_day():
    """WON-139: Phase 4 removes neutral markers and reshuffles all 7 neutral cards."""
    s = start(2, neutral=True)
    s["explorer_queue"] = []
    ctx = context.Ctx(s, rng(4))
    flow.conclude_day(ctx)
    types = [e.type for e in ctx.events]
    assert "NeutralDeckShuffled" in types
    for ev in ctx.events:
        ENGINE.evolve(s, ev)
    assert sorted(s["neutral_deck"]) == sorted(data.CREWS) and s["neutral_played"] == []
    assert all(NEUTRAL not in row for row in s["rows"].values())
