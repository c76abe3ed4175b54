"""Ship geometry in the shipyard: where hull parts, masts, sails and goods may go, and when a ship is complete.

A ship is a dict ``{"hull": [...], "masts": [...], "sails": [...], "goods": [...], "complete": bool}``; the
lists run from the bow end (index 0) to the stern end, one entry per hull part.  Masts and sails hold a crest
id (``"whale"``, ..., ``"crown"``) or None; goods hold a good or None.  Positions are hull indices from the bow
end and ships keep their number all game (NAU-Q06).  Nothing here moves a tile once placed (NAU-076, NAU-103),
and a hull may be finished over any number of actions (NAU-077).
"""

from __future__ import annotations

from typing import Any

from service.games.nauticus.data import CROWN

Ship = dict[str, Any]


def new_ship(part: str) -> Ship:
    """NAU-073: a hull part placed on its own starts a new ship (a center too: "from the middle", NAU-A09)."""
    return {"hull": [part], "masts": [None], "sails": [None], "goods": [None], "complete": False}


def hull_closed(hull: list[str]) -> bool:
    """NAU-071, NAU-074: a single-vessel hull, or a bow joined to a stern, is a finished hull."""
    return hull == ["single"] or (len(hull) >= 2 and hull[0] == "bow" and hull[-1] == "stern")


def attach_positions(hull: list[str], part: str) -> list[int]:
    """Where ``part`` may join this hull: 0 (front/bow end) and/or len(hull) (back/stern end).

    NAU-070: the four hull parts.  NAU-071: nothing joins a single.  NAU-074: nothing joins a closed hull (no
    insertion).  NAU-072: bow only at the front, stern only at the back, at most 2 centers and 4 parts: the hull
    after joining must still be completable to at most 4 parts.  NAU-073, NAU-075: parts are only joined at an
    open end (no gaps, no merging of two ships)."""
    if part == "single" or hull_closed(hull):
        return []
    out = []
    front_open = hull[0] != "bow"
    back_open = hull[-1] != "stern"
    n = len(hull) + 1
    if front_open and part in ("bow", "center"):
        need = n + (0 if part == "bow" else 1) + (1 if back_open else 0)
        if need <= 4:
            out.append(0)
    if back_open and part in ("stern", "center"):
        need = n + (0 if part == "stern" else 1) + (1 if front_open else 0)
        if need <= 4:
            out.append(len(hull))
    return out


def ship_crest(ship: Ship) -> str | None:
    """NAU-082, NAU-093, NAU-A10: the one regular crest shared by all non-crown masts and sails of a ship."""
    for crest in ship["masts"]:
        if crest is not None and crest != CROWN:
            return crest
    for crest in ship["sails"]:
        if crest is not None and crest != CROWN:
            return crest
    return None


def mast_positions(ship: Ship, crest: str) -> list[int]:
    """NAU-081: a hull part without a mast, finished hull or not; NAU-082: a regular mast must match the ship's
    crest; crown masts are wild."""
    if crest != CROWN:
        own = ship_crest(ship)
        if own is not None and own != crest:
            return []
    return [i for i, m in enumerate(ship["masts"]) if m is None]


def sail_positions(ship: Ship, crest: str) -> list[int]:
    """NAU-091: a mast without a sail; NAU-092: a regular sail matches the crest, a crown sail goes on any mast;
    NAU-093: a regular sail on a crown mast if it matches the ship's crest (or the ship has none yet)."""
    if crest != CROWN:
        own = ship_crest(ship)
        if own is not None and own != crest:
            return []
    sails = ship["sails"]
    return [i for i, m in enumerate(ship["masts"]) if m is not None and sails[i] is None]


def good_positions(ship: Ship) -> list[int]:
    """NAU-101: any hull part without a good, finished ship or not; NAU-102: one good per hull part, any mix."""
    return [i for i, g in enumerate(ship["goods"]) if g is None]


def is_complete(ship: Ship) -> bool:
    """NAU-160: finished hull, a mast on every hull part and a sail on every mast; goods do not matter."""
    return hull_closed(ship["hull"]) and None not in ship["masts"] and None not in ship["sails"]


def is_loaded(ship: Ship) -> bool:
    """NAU-130: a good under every hull part."""
    return None not in ship["goods"]


def positions(ships: list[Ship], item: str) -> list[tuple[str, int, int]]:
    """Every shipyard destination for ``item``: ("new_ship", 0, 0) or ("ship", ship index, position).

    NAU-110: hull parts may start a new ship; everything else goes onto an existing one."""
    out: list[tuple[str, int, int]] = []
    if item in ("single", "bow", "center", "stern"):
        out.append(("new_ship", 0, 0))
        for k, ship in enumerate(ships):
            for p in attach_positions(ship["hull"], item):
                out.append(("ship", k, p))
    elif item.startswith("mast_"):
        crest = item[5:]
        for k, ship in enumerate(ships):
            for p in mast_positions(ship, crest):
                out.append(("ship", k, p))
    elif item.startswith("sail_"):
        crest = item[5:]
        for k, ship in enumerate(ships):
            for p in sail_positions(ship, crest):
                out.append(("ship", k, p))
    else:
        for k, ship in enumerate(ships):
            for p in good_positions(ship):
                out.append(("ship", k, p))
    return out


def place(ships: list[Ship], item: str, to: str, ship: int, position: int) -> None:
    """Apply a placement already checked by :func:`positions` (used by ``evolve``)."""
    if to == "new_ship":
        ships.append(new_ship(item))
        return
    s = ships[ship]
    if item in ("single", "bow", "center", "stern"):
        if position == 0:
            s["hull"].insert(0, item)
            s["masts"].insert(0, None)
            s["sails"].insert(0, None)
            s["goods"].insert(0, None)
        else:
            s["hull"].append(item)
            s["masts"].append(None)
            s["sails"].append(None)
            s["goods"].append(None)
    elif item.startswith("mast_"):
        s["masts"][position] = item[5:]
    elif item.startswith("sail_"):
        s["sails"][position] = item[5:]
    else:
        s["goods"][position] = item
