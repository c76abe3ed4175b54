"""The cabin: holds with their icons (WON-080, WON-082, WON-083, WON-085), the treasure chest
(WON-090, WON-091, WON-092) and storage (WON-093, WON-094, WON-095, WON-096)."""

from __future__ import annotations

from typing import Any

from service.games.waters_of_nereus import data

GEM = data.GEM


def hold_accepts(seat: dict[str, Any], crew: str, slot: int, t: str) -> bool:
    """WON-080, WON-083, WON-085: may treasure (or gem) ``t`` go on icon ``slot`` of ``crew``'s hold?"""
    if crew in seat["completed"]:
        return False  # WON-085: a completed hold accepts no more treasures
    hold = seat["holds"][crew]
    if not 0 <= slot < len(hold) or hold[slot] is not None:
        return False
    if t == GEM:
        return True  # WON-095: a gem is wild
    icon = data.HOLDS[crew][slot]
    if icon != "*" and t not in icon:
        return False
    rule = data.HOLD_RULE.get(crew)
    if rule == "same":
        return all(x is None or x in (t, GEM) for x in hold)
    if rule == "different":
        return t not in hold
    return True


def chest_accepts(seat: dict[str, Any], t: str) -> bool:
    """WON-090, WON-A05: only the next chest slot, in order, by its colour or a gem."""
    n = len(seat["chest"])
    return n < len(data.CHEST_ORDER) and (t == GEM or t == data.CHEST_ORDER[n])


def storage_accepts(seat: dict[str, Any], t: str) -> bool:
    """WON-093: 6 treasures and 3 gems."""
    if t == GEM:
        return seat["gems"] < data.STORAGE_GEMS
    return len(seat["storage"]) < data.STORAGE_TREASURES


def chest_reward(seat: dict[str, Any]) -> tuple[int, int, int]:
    """WON-091: (gold, VP, treasures to draw) for filling the next chest slot."""
    return data.CHEST_REWARDS[data.CHEST_ORDER[len(seat["chest"])]]


def targets(seat: dict[str, Any], t: str) -> list[tuple[str, str, int]]:
    """Every place (area, crew, slot) where ``t`` may go now: storage, the chest, and EVERY free
    hold icon that accepts it (WON-080).  Equal icons of one hold are all listed, even though
    they are interchangeable: ``decide`` accepts exactly what ``legal`` lists, so an icon left
    out here would be refused (slot 1 of an empty purser hold refusing a Y, for one)."""
    out: list[tuple[str, str, int]] = []
    if storage_accepts(seat, t):
        out.append(("storage", "", 0))
    if chest_accepts(seat, t):
        out.append(("chest", "", 0))
    completed = seat["completed"]
    for crew, hold in seat["holds"].items():
        if crew in completed:
            continue  # WON-085
        for i, x in enumerate(hold):
            if x is None and hold_accepts(seat, crew, i, t):
                out.append(("hold", crew, i))
    return out


def completes_hold(seat: dict[str, Any], crew: str, slot: int) -> bool:
    """WON-082: would filling ``slot`` leave no empty icon in the hold?"""
    hold = seat["holds"][crew]
    return all(x is not None for i, x in enumerate(hold) if i != slot)


def unload_sources(seat: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    """WON-092, WON-A21: treasures that may be moved: any hold or storage, never the chest.
    (treasure, area, crew, slot); storage colours listed once each."""
    out: list[tuple[str, str, str, int]] = []
    for t in sorted(set(seat["storage"])):
        out.append((t, "storage", "", 0))
    if seat["gems"]:
        out.append((GEM, "storage", "", 0))
    for crew, hold in seat["holds"].items():
        for i, x in enumerate(hold):
            if x is not None:
                out.append((x, "hold", crew, i))
    return out


def exchangeable(seat: dict[str, Any], gem_supply: int) -> list[str]:
    """WON-094: colours with 2 in storage, if a gem slot and a supply gem are free."""
    if gem_supply <= 0 or seat["gems"] >= data.STORAGE_GEMS:
        return []
    storage = seat["storage"]
    return [t for t in data.COLOURS if storage.count(t) >= 2]


def sellable(seat: dict[str, Any]) -> list[str]:
    """WON-096: distinct storage treasures, and a gem."""
    out = [t for t in data.COLOURS if t in seat["storage"]]
    if seat["gems"]:
        out.append(GEM)
    return out
