"""Ship movement: straight lines and board edges (WON-101), pass-through fees (WON-102), pilot
turns (WON-107, WON-108), the path rules WON-A02, WON-A03, WON-A04, and the neutral ship (WON-135,
WON-136, WON-137)."""

from __future__ import annotations

from typing import Any

from service.games.base import State
from service.games.waters_of_nereus import data
from service.games.waters_of_nereus.data import NEUTRAL

DIR_SETS = {"any": data.COMPASS, "diag": data.DIAGONAL, "orth": data.ORTHOGONAL}


def step(size: int, cell: int, direction: str) -> int | None:
    """The neighbouring cell in ``direction``, or None off the board's edge (WON-101)."""
    dr, dc = data.DIRECTIONS[direction]
    r, c = divmod(cell, size)
    r += dr
    c += dc
    if 0 <= r < size and 0 <= c < size:
        return r * size + c
    return None


def ships_at(state: State, cell: int, me: int) -> list[int]:
    """Owners of the other ships on ``cell`` (seats, or NEUTRAL)."""
    out = [s for s, c in enumerate(state["ships"]) if c == cell and s != me]
    if state["neutral_ship"] == cell:
        out.append(NEUTRAL)
    return out


def _directions(move: dict[str, Any], last: str | None) -> list[str]:
    if last is not None and not move["turns"]:
        return [last]  # WON-101: straight line, no change of direction
    return DIR_SETS[move["dirs"]]


def _completable(
    state: State, me: int, move: dict[str, Any], cell: int, left: int, gold: int, last: str, seen: list[int]
) -> bool:
    """WON-Q04: can a move standing on ``cell`` still end legally?"""
    fees = ships_at(state, cell, me)
    if not fees:
        return True
    if left == 0 or gold < len(fees):  # WON-102, WON-A03
        return False
    size = state["size"]
    for d in _directions(move, last):
        nxt = step(size, cell, d)
        if nxt is None or nxt in seen:
            continue
        seen.append(nxt)
        ok = _completable(state, me, move, nxt, left - 1, gold - len(fees), d, seen)
        seen.pop()
        if ok:
            return True
    return False


def can_finish(state: State, me: int, move: dict[str, Any], left: int, gold: int) -> bool:
    cell = state["ships"][me]
    if move["steps"] == 0:
        return True  # WON-A04: moving 0 spaces is allowed
    return _completable(state, me, move, cell, left, gold, move["dir"], list(move["visited"]))


def legal_steps(state: State, me: int, move: dict[str, Any]) -> list[str]:
    """Directions the ship may take its next step in."""
    left = move["left"]
    if left <= 0:
        return []
    size = state["size"]
    cell = state["ships"][me]
    fee = len(ships_at(state, cell, me)) if move["steps"] else 0
    gold = state["seats"][me]["gold"] - fee
    if gold < 0:
        return []
    visited = move["visited"]
    out = []
    for d in _directions(move, move["dir"]):
        nxt = step(size, cell, d)
        if nxt is None or nxt in visited:  # WON-101 board edge; WON-A02 no space twice
            continue
        seen = [*visited, nxt]
        if _completable(state, me, move, nxt, left - 1, gold, d, seen):
            out.append(d)
    return out


def can_anchor(state: State, me: int, move: dict[str, Any]) -> bool:
    """WON-102: a ship may not stop on a space with another ship (0 steps = stays put)."""
    return move["steps"] == 0 or not ships_at(state, state["ships"][me], me)


def neutral_path(size: int, start: int, direction: str, distance: int) -> int:
    """WON-136: the cell the neutral ship reaches moving up to ``distance`` spaces (edge stops it)."""
    cell = start
    for _ in range(distance):
        nxt = step(size, cell, direction)
        if nxt is None:
            break
        cell = nxt
    return cell


def corner_cells(size: int) -> list[int]:
    """WON-012, WON-I05: corners clockwise from NW."""
    last = size - 1
    return [0, last, size * size - 1, last * size]
