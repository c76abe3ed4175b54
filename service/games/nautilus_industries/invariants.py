"""The invariants of a Nautilus Industries position (``check``), for the conformance suite
and the tests: every gem and sub is conserved, nothing is negative, tracks stay in range
and each phase's bookkeeping is consistent.
"""

from __future__ import annotations

from service.games.base import State, forfeited
from service.games.nautilus_industries import data as D
from service.games.nautilus_industries.legal import actor


def check(state: State) -> None:
    """Raise AssertionError if the position breaks an invariant of the game."""
    n = state["n"]
    assert D.MIN_PLAYERS <= n <= D.MAX_PLAYERS, "player count"  # NIN-001
    tiles = state["tiles"]
    players = state["players"]
    assert len(tiles) == n and len(players) == n
    assert sorted(state["line"]) == list(range(n)), "line is a permutation of the tile ids"
    # NIN-002: every gem of every colour is somewhere (bag, tiles, hands, sold pool,
    # upgrade markers on subs, track markers).
    market = state["market"]
    totals = dict(state["bag"])
    for t in tiles:
        for c, k in t["gems"].items():
            assert k >= 0, "negative gems on a tile"
            totals[c] += k
        for u in t["upgrades"].values():
            if u is not None:
                totals[u] += 1
    for p in players:
        for c, k in p["gems"].items():
            assert k >= 0, "negative gems held"
            totals[c] += k
    if market is not None:
        for c, k in market["sold"].items():
            assert k >= 0, "negative sold pool"
            totals[c] += k
    markers = D.MARKERS_PER_COLOUR if state["markers"] else 0
    for c in D.COLOURS:
        assert state["bag"][c] >= 0, "negative bag"
        assert totals[c] + markers == D.GEMS_PER_COLOUR, (
            f"gems of colour {c}: {totals[c] + markers} != {D.GEMS_PER_COLOUR}"
        )
    # NIN-005: subs conserved; NIN-041: one sub per spot (a spot holds one seat or None).
    placed = [0] * n
    for t in tiles:
        for s in t["subs"].values():
            if s is not None:
                placed[s] += 1
    for seat, p in enumerate(players):
        assert p["subs"] >= 0 and p["subs"] + placed[seat] == D.SUBS_PER_PLAYER, f"subs of seat {seat}"
        assert D.START_CAPACITY <= p["capacity"] <= D.MAX_CAPACITY, "capacity 1..6 (NIN-005)"
        assert p["money"] >= 0, "negative money"  # NIN-081: nothing is bought on credit
    for t in tiles:
        for c, u in t["upgrades"].items():
            assert u is None or t["subs"][c] is not None, "an upgrade without its sub"
    # Tracks (NIN-097, NIN-D06) and certificates (NIN-004).
    for c in D.COLOURS:
        assert D.STOCK_START <= state["stock"][c] <= D.STOCK_END, "stock space"
        if state["phase"] != "setup":
            assert D.COMMODITY_MIN <= state["commodity"][c] <= D.COMMODITY_MAX, "commodity value"
        assert len(state["certs"][c]) == len(D.SHARES)
        for owner in state["certs"][c]:
            assert owner is None or 0 <= owner < n
    phase = state["phase"]
    if phase == "action":
        assert 0 <= state["actions_done"] <= D.ACTIONS_PER_PLAYER * n
        assert market is None
        for p in players:  # NIN-096, NIN-A16: over capacity only inside a market step
            assert sum(p["gems"].values()) <= p["capacity"], "gems over capacity outside the market"
        pending = state["pending"]
        if pending is not None:
            assert actor(state) is not None
            if pending["kind"] == "upgrade":
                assert tiles[pending["tile"]]["subs"][pending["colour"]] == actor(state)
            else:
                assert tiles[pending["tile"]]["gems"][pending["colour"]] > 0
    if phase == "market":
        assert market is not None and 0 <= market["position"] < n
        seller = market["seller"]
        assert seller is None or sum(players[seller]["gems"].values()) > 0
        # NIN-A16: whoever finished their sell step at this tile fits their warehouse
        done = market["next_index"] - (0 if seller is None else 1)
        for k in range(done):
            p = players[(state["first"] + k) % n]
            assert sum(p["gems"].values()) <= p["capacity"], "kept more gems than the warehouse holds"
    if phase == "over":
        assert state["result"] is not None and state["locked"]
        for p in players:
            assert sum(p["gems"].values()) == 0, "every gem is sold at the end (NIN-123)"
    else:
        assert state["result"] is None
    # NIN-Q07: a seat that left holds no gems and no sub on a tile, and never acts again.
    out = forfeited(state)
    assert len(set(out)) == len(out) and all(0 <= s < n for s in out), "forfeited seats"
    for seat in out:
        assert sum(players[seat]["gems"].values()) == 0, "a forfeited seat holds gems"
        assert players[seat]["subs"] == D.SUBS_PER_PLAYER, "a forfeited seat has a sub on a tile"
        assert phase == "over" or actor(state) != seat, "a forfeited seat is to act"
    if not state["locked"]:
        assert all(v < D.STOCK_END for v in state["stock"].values()), "the game should have ended"
