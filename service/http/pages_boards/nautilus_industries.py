"""Nautilus Industries on the table (docs/rules/nautilus-industries.md §1.1: the
mining zone tiles in their line with gems, subs and upgrades; the market chart's
commodity and stock tracks with the multipliers; the certificates; each
player's money, warehouse die, subs and gems; the bag)."""

from __future__ import annotations

import math
from typing import Any

from service.games.nautilus_industries import data as D
from service.http.pages_text.nautilus_industries import NAMES

GEM_COLOURS = {"Y": "#e0ac00", "B": "#2a6fdb", "K": "#262626", "O": "#ef7d12", "G": "#2e9e44"}
#: Text on a gem (a CSS class): dark on gold and orange, white on the others.
GEM_TEXT = {"Y": "t-dark", "B": "t-on-dark", "K": "t-on-dark", "O": "t-dark", "G": "t-on-dark"}
TILE = 150
TILES_PER_ROW = 3
WIDTH = 480
PLAYER_ROW = 96


def _tile(tile_id: int, position: int, tile: dict[str, Any], seats: list[dict[str, Any]]) -> dict[str, Any]:
    col, row = position % TILES_PER_ROW, position // TILES_PER_ROW
    x, y = 12 + col * (TILE + 6), 34 + row * (TILE + 28)
    cx, cy = x + TILE / 2, y + TILE / 2 + 8
    spots = []
    for i, colour in enumerate(D.SPOT_ORDER):
        angle = math.radians(-90 + i * 72)
        sx, sy = cx + 44 * math.cos(angle), cy + 44 * math.sin(angle)
        owner = (tile.get("subs") or {}).get(colour)
        upgrade = (tile.get("upgrades") or {}).get(colour)
        spots.append(
            {
                "colour": colour,
                "name": NAMES[colour],
                "fill": GEM_COLOURS[colour],
                "text": GEM_TEXT[colour],
                "x": round(sx, 1),
                "y": round(sy, 1),
                "gems": (tile.get("gems") or {}).get(colour, 0),
                "sub": seats[owner] if isinstance(owner, int) and owner < len(seats) else None,
                "sx": round(cx + 78 * math.cos(angle) * 0.86, 1),
                "sy": round(cy + 78 * math.sin(angle) * 0.86, 1),
                "upgrade": upgrade,
                "upgrade_fill": GEM_COLOURS.get(upgrade or "", "#999"),
            }
        )
    words = ", ".join(
        f"{s['gems']} {s['name']}"
        + (
            f" (sub of {s['sub']['name']}" + (f", upgraded {NAMES[s['upgrade']]})" if s["upgrade"] else ")")
            if s["sub"]
            else ""
        )
        for s in spots
    )
    return {
        "id": tile_id,
        "label": f"Zone {tile_id + 1}",
        "position": position,
        "x": x,
        "y": y,
        "moved": bool(tile.get("moved")),
        "spots": spots,
        "words": f"Zone {tile_id + 1}, mined {_ordinal(position + 1)}"
        + (" (moved this round)" if tile.get("moved") else "")
        + f": {words}",
    }


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _market(view: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for i, c in enumerate(D.COLOURS):
        value = (view.get("commodity") or {}).get(c, 0)
        space = (view.get("stock") or {}).get(c, 0)
        rows.append(
            {
                "colour": c,
                "name": NAMES[c],
                "fill": GEM_COLOURS[c],
                "text": GEM_TEXT[c],
                "value": value,
                "space": space,
                "multiplier": (view.get("multipliers") or {}).get(c, D.MULTIPLIER[min(max(space, 0), D.STOCK_END)]),
                "y": 46 + i * 26,
                "sy": 218 + i * 26,
                "vx": 70 + (value - 1) * 40 + 20,
                "stx": 70 + space * 15.6 + 7.8,
            }
        )
    commodity_cells = [{"n": n, "x": 70 + (n - 1) * 40} for n in range(D.COMMODITY_MIN, D.COMMODITY_MAX + 1)]
    stock_cells = [
        {
            "n": s,
            "x": 70 + s * 15.6,
            "row": 1 if s < D.STOCK_ROW2 else 2 if s < D.STOCK_ROW3 else 3,
            "mult": D.MULTIPLIER[s],
        }
        for s in range(D.STOCK_END + 1)
    ]
    return {"rows": rows, "commodity_cells": commodity_cells, "stock_cells": stock_cells}


def _certificates(view: dict[str, Any], seats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for i, c in enumerate(D.COLOURS):
        owners = (view.get("certs") or {}).get(c) or [None] * len(D.SHARES)
        cells = []
        for j, shares in enumerate(D.SHARES):
            owner = owners[j] if j < len(owners) else None
            cells.append(
                {
                    "shares": shares,
                    "price": D.CERT_PRICE[c][shares],
                    "owner": seats[owner] if isinstance(owner, int) and owner < len(seats) else None,
                    "x": 92 + j * 64,
                    "y": 34 + i * 40,
                }
            )
        out.append({"colour": c, "name": NAMES[c], "fill": GEM_COLOURS[c], "y": 34 + i * 40, "cells": cells})
    return out


def _players(view: dict[str, Any], seats: list[dict[str, Any]], certs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for info, p in zip(seats, view.get("players") or [], strict=False):
        owned = {
            c["colour"]: sum(x["shares"] for x in c["cells"] if x["owner"] and x["owner"]["index"] == info["index"])
            for c in certs
        }
        gems = [
            {"colour": c, "fill": GEM_COLOURS[c], "text": GEM_TEXT[c], "n": (p.get("gems") or {}).get(c, 0)}
            for c in D.COLOURS
        ]
        y = 30 + info["index"] * PLAYER_ROW
        out.append(
            {
                **info,
                "y": y,
                "money": p.get("money", 0),
                "capacity": p.get("capacity", 0),
                "subs": p.get("subs", 0),
                "gems": gems,
                "owned": owned,
                "owned_list": [{"name": NAMES[c], "n": n} for c, n in owned.items() if n],
                "first": view.get("first") == info["index"],
                "words": f"{info['name']}: ${p.get('money', 0)}, warehouse capacity {p.get('capacity', 0)}, "
                f"{p.get('subs', 0)} of {D.SUBS_PER_PLAYER} subs in hand, holds "
                + (", ".join(f"{g['n']} {NAMES[g['colour']]}" for g in gems if g["n"]) or "no gems")
                + "; shares: "
                + (", ".join(f"{n} {NAMES[c]}" for c, n in owned.items() if n) or "none")
                + ".",
            }
        )
    return out


def present(view: dict[str, Any], seats: list[dict[str, Any]]) -> dict[str, Any]:
    line = view.get("line") or list(range(len(view.get("tiles") or [])))
    tiles = [_tile(tid, pos, (view.get("tiles") or [])[tid], seats) for pos, tid in enumerate(line)]
    rows = math.ceil(max(len(tiles), 1) / TILES_PER_ROW)
    market = _market(view)
    certs = _certificates(view, seats)
    players = _players(view, seats, certs)
    phase = view.get("phase", "")
    status = (
        f"Round {view.get('round', 0)}, {phase} phase"
        if phase not in ("over", "setup")
        else ("The game is over" if phase == "over" else "Setting up")
    )
    first = seats[view["first"]]["name"] if isinstance(view.get("first"), int) and view["first"] < len(seats) else "?"
    bag = ", ".join(f"{n} {NAMES[c]}" for c, n in (view.get("bag") or {}).items()) or "empty"
    words = [
        f"{status}; first player {first}; bag: {bag}.",
        *[t["words"] + "." for t in tiles],
        "Market: "
        + "; ".join(
            f"{r['name']} commodity {r['value']}, stock space {r['space']} (×{r['multiplier']})" for r in market["rows"]
        )
        + ".",
        "Certificates: "
        + "; ".join(
            f"{c['name']}: "
            + ", ".join(f"{x['shares']} ({x['owner']['name'] if x['owner'] else 'for sale'})" for x in c["cells"])
            for c in certs
        )
        + ".",
        *[p["words"] for p in players],
    ]
    return {
        "status": status,
        "first": first,
        "bag": bag,
        "locked": bool(view.get("locked")),
        "tiles": tiles,
        "zones_height": 34 + rows * (TILE + 28),
        "zones_width": max(12 + min(len(tiles), TILES_PER_ROW) * (TILE + 6) + 6, 330),
        "width": WIDTH,
        "market": market,
        "certs": certs,
        "players": players,
        "players_height": 16 + len(players) * PLAYER_ROW,
        "words": words,
    }
