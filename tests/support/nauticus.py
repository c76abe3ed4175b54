"""Helpers for the Nauticus engine tests (``tests/unit/nauticus``, ``tests/scenario/test_nau_scenarios.py``): a
fixed-seed game, commands applied straight to the engine, and fixtures that rig the board (action tiles, prices,
blue workers, ships, warehouses).  Rule IDs are those of ``docs/rules/nauticus.md``.

The fixtures write into the state dict directly and take every tile they place from the stacks, so the engine's
component-conservation invariant still holds afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from service.games.base import Event, RuleViolation, fold
from service.games.nauticus import ENGINE, hulls
from service.games.nauticus import state as nau_state
from service.games.rng import Rng

SEED = bytes(range(32))
# The RNG domain the platform would use for an intent; any fixed value keeps decisions reproducible.
DOMAIN = 99


def new_game(players: int = 2, seed: bytes = SEED) -> dict:
    """A freshly set-up game for ``players`` seats, folded from the engine's setup events."""
    return fold(ENGINE, ENGINE.setup(players, {}, Rng(seed)))


def do(state: dict, seat: int, cmd, *, domain: int = DOMAIN, check_legal: bool = True) -> list[Event]:
    """Decide ``cmd`` for ``seat``, apply its events to ``state`` and check the invariants; returns the events.

    With ``check_legal`` the command must also be one of ``ENGINE.legal(state, seat)`` (so the list of legal
    commands and ``decide`` are tested to agree); without it only ``decide`` is consulted.
    """
    if check_legal:
        assert cmd in ENGINE.legal(state, seat)
    events = ENGINE.decide(state, seat, cmd, Rng(SEED, domain=domain))
    for e in events:
        ENGINE.evolve(state, e)
    ENGINE.check_invariants(state)
    return events


def refused(state: dict, seat: int, cmd, *, check_legal: bool = True) -> str:
    """Assert that ``decide`` rejects ``cmd`` for ``seat`` and return the rule-violation code.

    With ``check_legal`` the command must also be missing from ``ENGINE.legal(state, seat)``.
    """
    if check_legal:
        assert cmd not in ENGINE.legal(state, seat)
    with pytest.raises(RuleViolation) as info:
        ENGINE.decide(state, seat, cmd, Rng(SEED, domain=DOMAIN))
    return info.value.code


def place_action(
    monkeypatch: pytest.MonkeyPatch, state: dict, action: str, space: int, prices: Sequence[int], blue: int
) -> None:
    """Put ``action``'s tile on ``space`` with these printed prices and blue workers.

    Prices and blue workers are monkeypatched into ``service.games.nauticus.state`` (where ``price`` and the
    turntable are read), so tests do not depend on the placeholder tables NAU-D01 and NAU-D02.
    """
    layout = state["layout"]
    i = layout.index(action)
    layout[i], layout[space] = layout[space], layout[i]
    table = [list(p) for p in nau_state.PRICES]
    table[space] = list(prices)
    monkeypatch.setattr(nau_state, "PRICES", table)
    turntable = list(nau_state.TURNTABLE)
    turntable[(space - state["turntable_anchor"]) % 8] = blue
    monkeypatch.setattr(nau_state, "TURNTABLE", turntable)


def start(
    monkeypatch: pytest.MonkeyPatch,
    state: dict,
    action: str,
    *,
    blue: int,
    prices: Sequence[int] = (0, 1, 2, 3),
    space: int = 3,
) -> None:
    """``place_action`` (default: on the +2 VP space 3), then the start player (seat 0) chooses that space."""
    place_action(monkeypatch, state, action, space, prices, blue)
    do(state, 0, next(c for c in ENGINE.legal(state, 0) if c.space == space))


def add_ship(state: dict, seat: int, hull: Sequence[str], masts=None, sails=None, goods=None) -> int:
    """Put a ship straight into ``seat``'s shipyard, taking its tiles from the stacks; returns its index.

    ``masts``/``sails`` are crests per hull part, ``goods`` goods per hull part (``None`` = empty slot).
    """
    n = len(hull)
    ship = {
        "hull": list(hull),
        "masts": list(masts or [None] * n),
        "sails": list(sails or [None] * n),
        "goods": list(goods or [None] * n),
        "complete": False,
    }
    for part in hull:
        state["stacks"][part] -= 1
    for kind in ("masts", "sails"):
        for crest in ship[kind]:
            if crest:
                state["stacks"][kind[:-1] + "_" + crest] -= 1
    for good in ship["goods"]:
        if good:
            state["stacks"][good] -= 1
    ship["complete"] = hulls.is_complete(ship)
    state["seats"][seat]["ships"].append(ship)
    return len(state["seats"][seat]["ships"]) - 1


def add_wh(state: dict, seat: int, item: str, n: int = 1) -> None:
    """Put ``n`` of ``item`` into ``seat``'s warehouse from the stacks (a mast takes two warehouse spaces)."""
    s = state["seats"][seat]
    s["warehouse"][item] = s["warehouse"].get(item, 0) + n
    s["wh_used"] += n * (2 if item.startswith("mast_") else 1)
    state["stacks"][item] -= n
