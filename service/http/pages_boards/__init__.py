"""Boards for people: one presenter per game turns a view (the JSON API's
``view``, for one viewer) into what its SVG template (``templates/boards/``)
draws, with the positions worked out here so the templates stay markup, and
a text alternative for each drawing.

A presenter reads only the view it is given and the game's printed component
data (prices, hold colours...): never the engine state.
"""

from __future__ import annotations

import importlib
from typing import Any

#: API name -> presenter module (inside this package).
_MODULES = {
    "nauticus": "nauticus",
    "nautilus-industries": "nautilus_industries",
    "waters-of-nereus": "waters_of_nereus",
}

#: One colour per seat (distinct from one another in colour-blind simulations, and
#: each drawn with the player's initial, so colour is never the only cue).
SEAT_COLOURS = ["#c0392b", "#1f6fb2", "#d98c00", "#7b3fa0", "#23967f", "#6d4c41"]


def seats(players: list[str], to_act: list[int], result: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The players around the table: name, colour, initial, to act, rank and score."""
    result = result or {}
    ranks = result.get("ranks") or {}
    scores = result.get("scores") or {}
    return [
        {
            "index": i,
            "name": name,
            "initial": name[:1].upper(),
            "colour": SEAT_COLOURS[i % len(SEAT_COLOURS)],
            "to_act": i in (to_act or []),
            "rank": ranks.get(str(i)),
            "score": scores.get(str(i)),
        }
        for i, name in enumerate(players)
    ]


def present(
    game: str, view: dict[str, Any], players: list[str], to_act: list[int], result: dict[str, Any] | None
) -> dict[str, Any]:
    """What ``templates/boards/<game>.html`` needs, plus ``seats`` and ``template``."""
    table = seats(players, to_act, result)
    module_name = _MODULES.get(game)
    if module_name is None or not view:
        return {"template": "boards/_generic.html", "seats": table, "view": view, "words": []}
    module = importlib.import_module(f"{__name__}.{module_name}")
    board = module.present(view, table)
    board["template"] = f"boards/{game}.html"
    board["seats"] = table
    return board
