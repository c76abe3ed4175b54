"""Game invariants: components conserved, no negative amounts, cabin limits."""

from __future__ import annotations

from service.games.base import State, forfeited
from service.games.waters_of_nereus import data

GEM = data.GEM


def check(s: State) -> None:
    treasures = dict(s["bag"])
    gems = s["gem_supply"]
    for cell in s["board"]:
        assert len(cell) <= data.MAX_ON_SPACE, "WON-031: more than 3 treasures on a space"
        for t in cell:
            treasures[t] += 1
    for i, p in enumerate(s["seats"]):
        assert p["gold"] >= 0, f"seat {i} negative gold"
        assert 0 <= p["science"] <= data.SCIENCE_MAX, f"seat {i} science out of range"
        assert len(p["storage"]) <= data.STORAGE_TREASURES, "WON-093 storage over 6"
        assert 0 <= p["gems"] <= data.STORAGE_GEMS, "WON-093 gems over 3"
        assert len(p["chest"]) <= len(data.CHEST_ORDER)
        for k, t in enumerate(p["chest"]):
            assert t in (GEM, data.CHEST_ORDER[k]), "WON-090 chest out of order"
        gems += p["gems"]
        pieces = list(p["storage"]) + list(p["chest"]) + list(p["pending"])
        for crew, hold in p["holds"].items():
            if crew in p["completed"]:
                assert all(x is None for x in hold), "WON-085 completed hold holds treasures"
            pieces.extend(x for x in hold if x is not None)
        for t in pieces:
            if t == GEM:
                gems += 1
            else:
                treasures[t] += 1
        assert p["vp"] == sum(p["vp_by"].values()), "VP breakdown mismatch"
        assert len(set(p["played"])) == len(p["played"]), "WON-044 crew played twice"
    for t, n in treasures.items():
        assert s["bag"][t] >= 0, f"negative bag count {t}"
        assert n == data.TREASURES[t], f"WON-003 treasure {t} count {n} != {data.TREASURES[t]}"
    assert sum(treasures.values()) == data.TOTAL_TREASURES
    assert gems == data.GEMS, f"WON-004 gems {gems} != {data.GEMS}"
    assert s["gem_supply"] >= 0
    cards = list(s["science_deck"]) + list(s["science_discard"])
    for p in s["seats"]:
        cards.extend(p["hand"])
    assert sorted(cards) == sorted(data.SCIENCE_CARDS), "WON-007 science cards not conserved"
    ships = [c for c in s["ships"] if c is not None]
    moving = s["turn"]["seat"] if s["turn"] and s["turn"]["move"] and s["turn"]["move"]["steps"] else None
    still = [c for i, c in enumerate(s["ships"]) if c is not None and i != moving]
    assert len(set(still)) == len(still), "WON-102 two ships stopped on one space"
    for c in ships:
        if moving is None or c != s["ships"][moving]:
            assert not s["board"][c], "a ship's space holds treasures"
    if s["neutral"]:
        assert len(s["neutral_deck"]) + len(s["neutral_played"]) == len(data.CREWS)
    for crew, row in s["rows"].items():
        assert len(row) == s["spaces"], f"row {crew} size"
    assert 0 <= s["day"] <= data.DAYS
    for seat in forfeited(s):  # WON-Q15: a seat that left has no ship, nothing in hand, no turn
        assert s["ships"][seat] is None and not s["seats"][seat]["pending"], "a forfeited seat still plays"
        assert s["active"] != seat and s["seats"][seat]["chosen"] is None, "a forfeited seat is to act"
    if s["phase"] not in ("turn", "final"):
        assert all(not p["pending"] for p in s["seats"]), "WON-055 treasures left outside a cabin"
