"""``check``: the invariants every Nauticus state keeps; a broken one raises ``AssertionError``."""

from __future__ import annotations

from typing import Any

from service.games.base import State, forfeited
from service.games.nauticus import hulls
from service.games.nauticus.data import ALL_ITEMS, CROWN, PHASES_PER_ROUND, SIZE, STACKS, WAREHOUSE_CAPACITY


def _ship_items(ship: dict[str, Any]) -> dict[str, int]:
    """The tiles a ship is made of and carries, by item."""
    counts: dict[str, int] = {}
    for part in ship["hull"]:
        counts[part] = counts.get(part, 0) + 1
    for crest in ship["masts"]:
        if crest is not None:
            counts["mast_" + crest] = counts.get("mast_" + crest, 0) + 1
    for crest in ship["sails"]:
        if crest is not None:
            counts["sail_" + crest] = counts.get("sail_" + crest, 0) + 1
    for good in ship["goods"]:
        if good is not None:
            counts[good] = counts.get(good, 0) + 1
    return counts


def _check_ship(ship: dict[str, Any]) -> None:
    """A well-formed ship: NAU-071, NAU-072 hulls, NAU-081, NAU-091 one mast / sail per place, one crest."""
    hull = ship["hull"]
    n = len(hull)
    assert 1 <= n <= 4, "NAU-072: a hull has 1 to 4 parts"
    assert len(ship["masts"]) == len(ship["sails"]) == len(ship["goods"]) == n
    if "single" in hull:
        assert hull == ["single"], "NAU-071: nothing joins a single-vessel hull"
    else:
        assert "bow" not in hull[1:], "NAU-072: a bow only at the front"
        assert "stern" not in hull[:-1], "NAU-072: a stern only at the back"
        assert hull.count("center") <= 2, "NAU-072: at most 2 centers"
    crest = None
    for i in range(n):
        m, s = ship["masts"][i], ship["sails"][i]
        assert s is None or m is not None, "NAU-091: a sail only on a mast"
        for c in (m, s):
            if c is not None and c != CROWN:
                assert crest in (None, c), "NAU-082, NAU-093: one crest per ship"
                crest = c
    assert ship["complete"] == hulls.is_complete(ship), "NAU-160: completion flag matches the ship"


def check(state: State) -> None:
    """Components conserved (NAU-002), nothing negative, warehouses within capacity (NAU-113), ships well formed."""
    totals = dict.fromkeys(ALL_ITEMS, 0)
    for item, n in state["stacks"].items():
        assert n >= 0, f"NAU-003: negative stack {item}"
        totals[item] += n
    for i, seat in enumerate(state["seats"]):
        assert seat["taler"] >= 0, f"seat {i}: negative Taler"
        assert seat["workers"] >= 0, f"seat {i}: negative workers"
        assert seat["passes"] >= 0
        used = 0
        for item, n in seat["warehouse"].items():
            assert n > 0, f"seat {i}: empty warehouse entry {item}"
            totals[item] += n
            used += SIZE[item] * n
        assert used == seat["wh_used"], f"seat {i}: warehouse space count"
        assert used <= WAREHOUSE_CAPACITY, f"seat {i}: NAU-113 warehouse over capacity"
        for good, n in seat["delivered"].items():
            assert n > 0
            totals[good] += n
        for ship in seat["ships"]:
            _check_ship(ship)
            for item, n in _ship_items(ship).items():
                totals[item] += n
    assert totals == STACKS, f"NAU-002: components not conserved: {totals} != {STACKS}"
    step = state["step"]
    assert step in ("choose", "act", "over"), f"transient step {step} left in the state"
    assert 1 <= state["round"] <= state["rounds"] + 1
    assert 0 <= state["phase"] <= PHASES_PER_ROUND
    assert sum(state["face_down"]) == state["phase"] or step == "over"
    out = forfeited(state)
    assert len(set(out)) == len(out) and all(0 <= s < len(state["seats"]) for s in out), "forfeited seats"
    # NAU-Q10: a seat that left never acts or chooses.
    assert step != "act" or state["acting"] not in out, "a forfeited seat is acting"
    assert step != "choose" or state["start_player"] not in out, "a forfeited seat chooses"
    if step == "act":
        assert state["turn"] is not None and state["acting"] is not None
        act = state["turn"]["main"]
        assert act["blue"] >= 0
        if state["turn"]["extra"] is not None:
            assert state["turn"]["extra"]["blue"] == 0, "NAU-176: no blue workers in the extra action"
