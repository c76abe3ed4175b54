"""Nauticus on the table (docs/rules/nauticus.md §1: the action board with its
turntable, the action tiles and the anchor; each player's shipyard, warehouse,
Taler, workers and pass tiles; the victory-point track; the supply)."""

from __future__ import annotations

import math
from typing import Any

from service.games.nauticus import data as D
from service.http.pages_text.nauticus import NAMES

#: Short labels of the action tiles (two lines each).
ACTION_LINES = {
    "buy_hulls": ("Buy", "hulls"),
    "buy_masts": ("Buy", "masts"),
    "buy_sails": ("Buy", "sails"),
    "buy_goods": ("Buy", "goods"),
    "transport": ("Trans-", "port"),
    "withdraw_money": ("With-", "draw"),
    "deliver_goods": ("Deliver", "goods"),
    "score_crowns": ("Score", "crowns"),
}
#: The bonus printed at each board space (NAU-030..037), as words.
BONUS_TEXT = ["+3 workers", "+mast", "+sail", "+2 VP", "+2 workers", "+1 worker, good", "+1 worker, 1 VP", "+4 Taler"]
#: Crest colours (NAU-D05: only equality matters; these tell them apart).
CREST_COLOURS = {"whale": "#2f6db5", "anchor": "#5f6b7a", "crestC": "#b4540a", "crestD": "#2e7d32", "crown": "#c99a06"}
GOOD_COLOURS = {"coffee": "#6f4e37", "grain": "#e3b23c", "fish": "#4aa3c7", "salt": "#d9d9d9"}
CREST_SHORT = {"whale": "whale", "anchor": "anchr", "crestC": "C", "crestD": "D", "crown": "crown"}
GOOD_LETTER = {"coffee": "C", "grain": "G", "fish": "F", "salt": "S"}

TURNTABLE_SIZE = 440
SEAT_WIDTH = 480
SLOT = 38  # one warehouse space
PART = 58  # one hull part
SHIP_ROW = 76  # one ship, masts and sails included


def _crest(item: str | None) -> str | None:
    """The crest of a mast or sail: items are ``mast_whale``; a ship's masts and sails hold the crest alone."""
    if not item:
        return None
    return item.split("_", 1)[1] if "_" in item else item


def _turntable(view: dict[str, Any]) -> dict[str, Any]:
    c = TURNTABLE_SIZE / 2
    radius = 160
    spaces = []
    for i, action in enumerate(view.get("layout") or []):
        angle = math.radians(-90 + i * 360 / D.SPACES)
        x, y = c + radius * math.cos(angle), c + radius * math.sin(angle)
        prices = None
        if action in D.ITEMS_OF:
            row = (view.get("prices_by_space") or D.PRICES)[i]
            prices = ", ".join(
                f"{NAMES[item].split()[0]} {p}" for item, p in zip(D.ITEMS_OF[action], row, strict=False)
            )
        spaces.append(
            {
                "index": i,
                "x": round(x, 1),
                "y": round(y, 1),
                "lines": ACTION_LINES.get(action, (action, "")),
                "action": NAMES.get(action, action),
                "face_down": bool((view.get("face_down") or [False] * D.SPACES)[i]),
                "blue": (view.get("blue_by_space") or [0] * D.SPACES)[i],
                "bonus": BONUS_TEXT[i],
                "chosen": view.get("space") == i,
                "anchor_tile": view.get("anchor_tile") == i,
                "prices": prices,
            }
        )
    anchor = view.get("turntable_anchor", 0)
    angle = math.radians(-90 + anchor * 360 / D.SPACES)
    pointer = {"x": round(c + 95 * math.cos(angle), 1), "y": round(c + 95 * math.sin(angle), 1)}
    return {"size": TURNTABLE_SIZE, "c": c, "spaces": spaces, "pointer": pointer}


def _warehouse(seat: dict[str, Any]) -> list[dict[str, Any]]:
    """Warehouse tiles in slot order, each with its place in the 10 spaces (masts take 2, NAU-111)."""
    tiles, slot = [], 0
    for item in D.ALL_ITEMS:
        for _ in range((seat.get("warehouse") or {}).get(item, 0)):
            size = D.SIZE[item]
            tiles.append(_tile(item, 12 + slot * SLOT, size))
            slot += size
    return tiles


def _tile(item: str, x: float, size: int) -> dict[str, Any]:
    kind = "hull" if item in D.HULL_PARTS else "mast" if item.startswith("mast_") else "sail"
    if item in D.GOODS:
        kind = "good"
    colour = GOOD_COLOURS.get(item) or CREST_COLOURS.get(_crest(item) or "", "#8d6e63")
    if kind == "hull":
        lines = ("hull", {"center": "centre"}.get(item, item))
    elif kind == "good":
        lines = (item, "")
    else:
        crest = _crest(item) or ""
        lines = (kind, CREST_SHORT.get(crest, crest))
    return {
        "item": item,
        "name": NAMES.get(item, item),
        "kind": kind,
        "x": x,
        "w": size * SLOT - 4,
        "colour": colour,
        "lines": lines,
        "text": "t-dark" if item in ("salt", "grain") else "t-on-dark",
    }


def _ships(seat: dict[str, Any], top: float) -> list[dict[str, Any]]:
    ships = []
    for n, ship in enumerate(seat.get("ships") or []):
        y = top + n * SHIP_ROW
        parts = []
        for i, part in enumerate(ship.get("hull") or []):
            x = 16 + i * PART
            mast = (ship.get("masts") or [None] * 4)[i] if i < len(ship.get("masts") or []) else None
            sail = (ship.get("sails") or [None] * 4)[i] if i < len(ship.get("sails") or []) else None
            good = (ship.get("goods") or [None] * 4)[i] if i < len(ship.get("goods") or []) else None
            parts.append(
                {
                    "part": part,
                    "x": x,
                    "mast": _crest(mast),
                    "mast_colour": CREST_COLOURS.get(_crest(mast) or "", "#444"),
                    "sail": _crest(sail),
                    "sail_colour": CREST_COLOURS.get(_crest(sail) or "", "#444"),
                    "good": good,
                    "good_colour": GOOD_COLOURS.get(good or "", "#999"),
                    "good_letter": GOOD_LETTER.get(good or "", ""),
                }
            )
        ships.append(
            {
                "number": n + 1,
                "y": y,
                "parts": parts,
                "complete": bool(ship.get("complete")),
                "words": _ship_words(n, ship),
            }
        )
    return ships


def _ship_words(n: int, ship: dict[str, Any]) -> str:
    def at(key: str, i: int) -> Any:
        values = ship.get(key) or []
        return values[i] if i < len(values) else None

    bits = []
    for i, part in enumerate(ship.get("hull") or []):
        extra = []
        if at("masts", i):
            extra.append(f"{_crest(at('masts', i))} mast")
        if at("sails", i):
            extra.append(f"{_crest(at('sails', i))} sail")
        if at("goods", i):
            extra.append(str(at("goods", i)))
        bits.append(NAMES.get(part, part) + (f" ({', '.join(extra)})" if extra else ""))
    done = ", complete" if ship.get("complete") else ""
    return f"ship {n + 1}{done}: " + ", ".join(bits)


def _seat_panel(seat: dict[str, Any], info: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
    ships_top = 168
    ships = _ships(seat, ships_top)
    height = ships_top + max(1, len(ships)) * SHIP_ROW + 8
    warehouse = _warehouse(seat)
    delivered = ", ".join(f"{n} {g}" for g, n in (seat.get("delivered") or {}).items() if n) or "none"
    stock = [NAMES.get(t["item"], t["item"]) for t in warehouse]
    words = [
        f"{info['name']}: {seat.get('taler', 0)} Taler, {seat.get('workers', 0)} workers, {seat.get('vp', 0)} VP, "
        f"{seat.get('crowns', 0)} crowns; pass tiles turned this round: {seat.get('passes', 0)}; "
        f"extra action tile {'still held' if seat.get('extra_tile') else 'used'}.",
        f"Warehouse ({seat.get('wh_used', 0)} of {D.WAREHOUSE_CAPACITY} spaces): {', '.join(stock) or 'empty'}.",
        *[s["words"] + "." for s in ships],
        f"Goods delivered: {delivered}.",
    ]
    return {
        **info,
        "taler": seat.get("taler", 0),
        "workers": seat.get("workers", 0),
        "vp": seat.get("vp", 0),
        "crowns": seat.get("crowns", 0),
        "passes": seat.get("passes", 0),
        "extra_tile": bool(seat.get("extra_tile")),
        "wh_used": seat.get("wh_used", 0),
        "capacity": D.WAREHOUSE_CAPACITY,
        "warehouse": warehouse,
        "slots": [12 + i * SLOT for i in range(D.WAREHOUSE_CAPACITY)],
        "ships": ships,
        "delivered": delivered,
        "start_player": view.get("start_player") == info["index"],
        "acting": view.get("acting") == info["index"],
        "width": SEAT_WIDTH,
        "height": height,
        "words": words,
    }


def _track(view: dict[str, Any], table: list[dict[str, Any]]) -> dict[str, Any]:
    """The victory-point track: 0..49 in five rows of 10 (a marker past 49 shows its full count)."""
    cells = [{"n": n, "x": 10 + (n % 10) * 42, "y": 28 + (n // 10) * 52} for n in range(50)]
    markers = []
    for info, seat in zip(table, view.get("seats") or [], strict=False):
        vp = int(seat.get("vp", 0))
        cell = cells[min(max(vp, 0), 49)]
        markers.append(
            {
                **info,
                "vp": vp,
                "x": cell["x"] + 11 + (info["index"] % 2) * 17,
                "y": cell["y"] + 22 + (info["index"] // 2) * 16,
            }
        )
    return {"cells": cells, "markers": markers}


def present(view: dict[str, Any], table: list[dict[str, Any]]) -> dict[str, Any]:
    turntable = _turntable(view)
    seats = [_seat_panel(s, info, view) for s, info in zip(view.get("seats") or [], table, strict=False)]
    chosen = next((s for s in turntable["spaces"] if s["chosen"]), None)
    status = f"Round {view.get('round', 0)} of {view.get('rounds', 0)}, action phase {view.get('phase', 0) + 1} of 7"
    if view.get("step") == "over":
        status = "The game is over"
    words = [
        status + ".",
        "Turntable: "
        + "; ".join(
            f"space {s['index'] + 1}: {s['action']}{' (face down)' if s['face_down'] else ''}, "
            f"{s['blue']} blue workers, bonus {s['bonus']}"
            + (f", prices {s['prices']}" if s["prices"] else "")
            + (", chosen this phase" if s["chosen"] else "")
            + (", anchor tile" if s["anchor_tile"] else "")
            for s in turntable["spaces"]
        )
        + ".",
    ]
    stacks = [{"name": NAMES.get(k, k), "count": v} for k, v in (view.get("stacks") or {}).items()]
    return {
        "status": status,
        "chosen": chosen,
        "turntable": turntable,
        "seat_panels": seats,
        "track": _track(view, table),
        "stacks": stacks,
        "words": words,
    }
