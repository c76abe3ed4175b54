"""Level 1: one-ply greedy.  Each legal intent is played in determinizations of the seat's view and the
position after it is scored with the engine's ``evaluate``; the intent with the best mean margin wins."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from service.bots.position import after, intent_key, legal_by_key, margin, new_rng
from service.games.base import Engine


def choose_greedy(
    engine: Engine,
    seat: int,
    view: dict[str, Any],
    intents: list[dict[str, Any]],
    rnd: random.Random,
    *,
    samples: int,
    out_of_budget: Callable[[], bool],
) -> dict[str, Any]:
    """The intent of ``intents`` with the best mean margin over up to ``samples`` determinizations (at least
    one; no more once ``out_of_budget()``).  Ties go to the earlier intent of a seeded shuffle."""
    order = list(intents)
    rnd.shuffle(order)
    totals = [0.0] * len(order)
    for done in range(samples):
        if done and out_of_budget():
            break
        rng = new_rng(rnd)
        state = engine.determinize(view, seat, rng)
        commands = legal_by_key(engine, state, seat)
        for i, intent in enumerate(order):
            command = commands.get(intent_key(intent))
            if command is None:  # not legal in this determinization (never, by the conformance suite)
                totals[i] = float("-inf")
                continue
            totals[i] += margin(engine.evaluate(after(engine, state, seat, command, rng)), seat)
    best = max(range(len(order)), key=lambda i: (totals[i], -i))
    return order[best]
