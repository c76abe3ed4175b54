"""Waters of Nereus on the table (docs/rules/waters-of-nereus.md: the sea with
its treasures and ships, the action board with the markers, the Sun, the
hourglass and the discovery card; each player's cabin: holds, treasure chest,
storage, gems, science track, crew cards, gold and VP).  Hidden cards are
absent from the view a viewer gets and so from the drawing: another seat's
hand is only counted, a secret crew choice is not shown at all."""

from __future__ import annotations

from typing import Any

from service.games.waters_of_nereus import data as D
from service.http.pages_text.waters_of_nereus import NAMES

TREASURE_COLOURS = {
    "W": "#f7f7f2",
    "Y": "#f2c81f",
    "G": "#2e9e44",
    "R": "#d7263d",
    "P": "#7b3fa0",
    "K": "#262626",
    "*": "#55d6e8",
}
NEUTRAL_COLOUR = "#7d8790"
SEA = 440
CABIN_WIDTH = 480


def _seat(seats: list[dict[str, Any]], who: Any) -> dict[str, Any] | None:
    if who == D.NEUTRAL:
        return {"index": -1, "name": "neutral", "initial": "N", "colour": NEUTRAL_COLOUR}
    if isinstance(who, int) and 0 <= who < len(seats):
        return seats[who]
    return None


def _sea(view: dict[str, Any], seats: list[dict[str, Any]]) -> dict[str, Any]:
    size = int(view.get("size") or 5)
    cell = (SEA - 40) / size
    discovery = {r * size + c for r, c in D.DISCOVERY_CARDS.get(view.get("discovery_current") or "", [])}
    ships: dict[int, list[dict[str, Any]]] = {}
    for seat, at in enumerate(view.get("ships") or []):
        if isinstance(at, int):
            ships.setdefault(at, []).append(_seat(seats, seat) or {})
    if view.get("neutral_ship") is not None:
        ships.setdefault(view["neutral_ship"], []).append(_seat(seats, D.NEUTRAL) or {})
    cells: list[dict[str, Any]] = []
    for i, treasures in enumerate(view.get("board") or []):
        row, col = divmod(i, size)
        x, y = 30 + col * cell, 30 + row * cell
        here = ships.get(i, [])
        cells.append(
            {
                "i": i,
                "name": f"{chr(65 + col)}{row + 1}",
                "x": round(x, 1),
                "y": round(y, 1),
                "discovery": i in discovery,
                "treasures": [
                    {
                        "t": t,
                        "fill": TREASURE_COLOURS.get(t, "#999"),
                        "cx": round(x + 14 + k * 16, 1),
                        "cy": round(y + cell - 13, 1),
                    }
                    for k, t in enumerate(treasures)
                ],
                "ships": [
                    {
                        **s,
                        "cx": round(x + cell / 2 + (k - (len(here) - 1) / 2) * 24, 1),
                        "cy": round(y + cell / 2 - 8, 1),
                    }
                    for k, s in enumerate(here)
                ],
            }
        )
    words = "; ".join(
        f"{c['name']}: "
        + ", ".join([NAMES.get(t["t"], t["t"]) for t in c["treasures"]] + [f"{s['name']}'s ship" for s in c["ships"]])
        for c in cells
        if c["treasures"] or c["ships"]
    )
    return {
        "size": size,
        "cell": round(cell, 2),
        "cells": cells,
        "cols": [{"x": round(30 + c * cell + cell / 2, 1), "label": chr(65 + c)} for c in range(size)],
        "rows": [{"y": round(30 + r * cell + cell / 2 + 4, 1), "label": str(r + 1)} for r in range(size)],
        "words": "The sea: " + (words or "empty") + ".",
    }


def _action_board(view: dict[str, Any], seats: list[dict[str, Any]]) -> dict[str, Any]:
    spaces = int(view.get("spaces") or 3)
    rows: list[dict[str, Any]] = []
    for r, crew in enumerate(D.CREWS):
        markers = (view.get("rows") or {}).get(crew) or [None] * spaces
        rows.append(
            {
                "crew": crew,
                "y": 40 + r * 38,
                "spaces": [{"n": k + 1, "x": 120 + k * 76, "who": _seat(seats, who)} for k, who in enumerate(markers)],
            }
        )
    words = "; ".join(
        f"{row['crew']}: "
        + ", ".join(f"space {s['n']} {s['who']['name'] if s['who'] else 'free'}" for s in row["spaces"])
        for row in rows
    )
    return {
        "rows": rows,
        "width": 120 + spaces * 76 + 10,
        "height": 40 + len(rows) * 38,
        "words": f"Action board: {words}.",
    }


def _cabin(seat: dict[str, Any], info: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
    holds: list[dict[str, Any]] = []
    completed = set(seat.get("completed") or [])
    for r, crew in enumerate(D.CREWS):
        need = D.HOLDS[crew]
        have = (seat.get("holds") or {}).get(crew) or [None] * len(need)
        slots = []
        for k, req in enumerate(need):
            got = have[k] if k < len(have) else None
            slots.append(
                {
                    "x": 110 + k * 34,
                    "need": req,
                    "need_fill": [TREASURE_COLOURS.get(c, "#fff") for c in req] if req != "*" else [],
                    "got": got,
                    "got_fill": TREASURE_COLOURS.get(got or "", "#fff"),
                }
            )
        rule = {"boatswain": "4 different", "merchant": "3 of a colour"}.get(crew, "")
        holds.append(
            {
                "crew": crew,
                "y": 124 + r * 30,
                "slots": slots,
                "done": crew in completed,
                "vp": D.HOLD_VP[crew],
                "rule": rule,
            }
        )
    chest = [
        {
            "colour": c,
            "x": 110 + k * 34,
            "fill": TREASURE_COLOURS[c],
            "got": (seat.get("chest") or [])[k] if k < len(seat.get("chest") or []) else None,
        }
        for k, c in enumerate(D.CHEST_ORDER)
    ]
    storage = [
        {"t": t, "fill": TREASURE_COLOURS.get(t, "#999"), "x": 110 + k * 24}
        for k, t in enumerate(seat.get("storage") or [])
    ]
    pending = [
        {"t": t, "fill": TREASURE_COLOURS.get(t, "#999"), "x": 110 + k * 24}
        for k, t in enumerate(seat.get("pending") or [])
    ]
    hand = seat.get("hand")
    hand_text = (", ".join(hand) or "no cards") if isinstance(hand, list) else f"{seat.get('hand_count', 0)} cards"
    chosen = seat.get("chosen")
    science = int(seat.get("science", 0))
    words = [
        f"{info['name']}: {seat.get('gold', 0)} gold, {seat.get('vp', 0)} VP, science power {science}; "
        f"hand: {hand_text}; played: {', '.join(seat.get('played') or []) or 'none'}; "
        f"revealed: {seat.get('revealed') or 'none'}" + (f"; chosen in secret: {chosen}" if chosen else "") + ".",
        "Holds: "
        + "; ".join(
            f"{h['crew']}{' (complete)' if h['done'] else ''}: "
            + ", ".join(NAMES.get(s["got"], s["got"]) if s["got"] else "empty" for s in h["slots"])
            for h in holds
        )
        + ".",
        "Chest: "
        + (", ".join(NAMES.get(c, c) for c in seat.get("chest") or []) or "empty")
        + f"; storage: {', '.join(NAMES.get(t, t) for t in seat.get('storage') or []) or 'empty'}; "
        f"gems: {seat.get('gems', 0)}; in hand: "
        + (", ".join(NAMES.get(t, t) for t in seat.get("pending") or []) or "nothing")
        + ".",
    ]
    return {
        **info,
        "gold": seat.get("gold", 0),
        "vp": seat.get("vp", 0),
        "science": science,
        "science_cells": [{"n": n, "x": 110 + n * 31, "on": n <= science} for n in range(D.SCIENCE_MAX + 1)],
        "hand_text": hand_text,
        "played": ", ".join(seat.get("played") or []) or "none",
        "revealed": seat.get("revealed"),
        "chosen": chosen,
        "holds": holds,
        "chest": chest,
        "storage": storage,
        "gems": int(seat.get("gems", 0)),
        "pending": pending,
        "sun": view.get("sun") == info["index"],
        "active": view.get("active") == info["index"],
        "width": CABIN_WIDTH,
        "height": 124 + len(D.CREWS) * 30 + 112,
        "chest_y": 124 + len(D.CREWS) * 30 + 12,
        "words": words,
    }


def present(view: dict[str, Any], seats: list[dict[str, Any]]) -> dict[str, Any]:
    sea = _sea(view, seats)
    board = _action_board(view, seats)
    cabins = [_cabin(s, info, view) for s, info in zip(view.get("seats") or [], seats, strict=False)]
    sun = _seat(seats, view.get("sun"))
    phase = view.get("phase") or ""
    status = (
        f"Day {view.get('day', 0)} of {D.DAYS}, cycle {view.get('cycle', 0)} of {D.CYCLES}, {phase.replace('_', ' ')}"
        if phase not in ("over",)
        else "The game is over"
    )
    bag = ", ".join(f"{n} {NAMES.get(c, c)}" for c, n in (view.get("bag") or {}).items())
    facts = [
        ("Sun", sun["name"] if sun else "–"),
        ("Hourglass", str(view.get("hourglass", 0))),
        ("Discovery card", view.get("discovery_current") or "–"),
        ("Discovery cards left", str(view.get("discovery_stack_count", "–"))),
        ("Science deck", f"{view.get('science_deck_count', '–')} cards"),
        ("Science discard", ", ".join(view.get("science_discard") or []) or "none"),
        ("Bag", bag or "empty"),
        ("Gems in supply", str(view.get("gem_supply", 0))),
    ]
    if view.get("neutral"):
        facts.append(("Neutral compass", D.COMPASS[int(view.get("compass") or 0) % len(D.COMPASS)]))
    words = [f"{status}.", sea["words"], board["words"], *[w for c in cabins for w in c["words"]]]
    return {
        "status": status,
        "sea": sea,
        "action_board": board,
        "cabins": cabins,
        "facts": facts,
        "words": words,
        "sea_size": SEA,
    }
