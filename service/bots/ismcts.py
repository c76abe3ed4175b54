"""Levels 2 and 3: single-observer Information-Set MCTS (Cowling, Powley & Whitehouse 2012, "SO-ISMCTS").

Every iteration draws a fresh determinization of the seat's view (``engine.determinize``) and walks the one
tree of the bot's information set in it: at each node only the moves legal in *this* determinization are
available, selection is UCB1 with availability counts (the paper's ISMCTS-UCB), and the first untried
available move is expanded.  From there a rollout plays ``rollout_depth`` intents with a heuristic policy
(the best of ``rollout_width`` random legal intents by ``evaluate``, for the seat to act) and the position is
scored by ``evaluate``, or by the result when the game ended.  Each node is credited from the view of the
seat that made its move.

Where several seats are to act at once (a simultaneous choice), the tree lets the lowest seat move first, but
at the root the bot's own seat moves: the others' earlier choices are already drawn by ``determinize``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.bots.position import after, apply, intent_key, legal_by_key, margin, new_rng
from service.games.base import Command, Engine, State
from service.games.rng import Rng

#: UCB1's exploration constant; rewards are in [0, 1].
EXPLORATION = 0.7


@dataclass(frozen=True)
class SearchShape:
    """How deep and how wide the rollouts look."""

    rollout_depth: int
    rollout_width: int


class _Node:
    __slots__ = ("avail", "children", "reward", "seat", "visits")

    def __init__(self, seat: int) -> None:
        self.seat = seat  # who made the move that leads here
        self.children: dict[str, _Node] = {}
        self.visits = 0
        self.avail = 0
        self.reward = 0.0


def rewards(engine: Engine, state: State) -> list[float]:
    """Per seat, in [0, 1]: 1 a win, 0 a loss (ties share) at the end of the game; else a logistic of the
    seat's evaluated margin over the best other seat, scaled by the size of the evaluations."""
    result = engine.result(state)
    if result is not None:
        ranks = result["ranks"]
        n = len(ranks)
        firsts = [s for s in range(n) if ranks[str(s)] == 1]
        return [(1.0 / len(firsts)) if s in firsts else 0.0 for s in range(n)]
    values = engine.evaluate(state)
    scale = 0.1 * (sum(abs(v) for v in values) / len(values)) + 1.0
    return [1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, margin(values, s) / scale)))) for s in range(len(values))]


def _mover(engine: Engine, state: State, seat: int | None) -> int | None:
    seats = engine.to_act(state)
    if not seats:
        return None
    return seat if seat in seats else min(seats)


def _rollout(engine: Engine, state: State, rnd: random.Random, rng: Rng, shape: SearchShape) -> State:
    for _ in range(shape.rollout_depth):
        mover = _mover(engine, state, None)
        if mover is None:
            break
        legal = engine.legal(state, mover)
        if len(legal) == 1:
            state = apply(engine, state, mover, legal[0], rng)
            continue
        picks = [legal[rnd.randrange(len(legal))] for _ in range(shape.rollout_width)]
        best: tuple[float, State] | None = None
        for command in picks:
            nxt = after(engine, state, mover, command, rng)
            score = margin(engine.evaluate(nxt), mover)
            if best is None or score > best[0]:
                best = (score, nxt)
        assert best is not None
        state = best[1]
    return state


def choose_ismcts(
    engine: Engine,
    seat: int,
    view: dict[str, Any],
    intents: list[dict[str, Any]],
    rnd: random.Random,
    *,
    iterations: int,
    shape: SearchShape,
    out_of_budget: Callable[[], bool],
) -> dict[str, Any]:
    """The intent of ``intents`` whose root child was visited most after up to ``iterations`` iterations
    (at least one; no more once ``out_of_budget()``)."""
    wanted = {intent_key(i): i for i in intents}
    root = _Node(seat)
    for done in range(iterations):
        if done and out_of_budget():
            break
        rng = new_rng(rnd)
        state = engine.determinize(view, seat, rng)
        node = root
        path = [root]
        first = True
        while True:
            mover = seat if first else _mover(engine, state, None)
            if mover is None:
                break
            legal = legal_by_key(engine, state, mover)
            if first:
                legal = {k: c for k, c in legal.items() if k in wanted}
                first = False
            untried: list[tuple[str, Command]] = []
            available: list[_Node] = []
            moves: list[Command] = []
            for key, command in legal.items():
                child = node.children.get(key)
                if child is None:
                    untried.append((key, command))
                else:
                    child.avail += 1
                    available.append(child)
                    moves.append(command)
            if untried:
                key, command = untried[rnd.randrange(len(untried))]
                child = _Node(mover)
                child.avail = 1
                node.children[key] = child
                state = apply(engine, state, mover, command, rng)
                path.append(child)
                break
            if not available:
                break
            best = max(
                range(len(available)),
                key=lambda i: (
                    available[i].reward / available[i].visits
                    + EXPLORATION * math.sqrt(math.log(available[i].avail) / available[i].visits)
                ),
            )
            node = available[best]
            state = apply(engine, state, mover, moves[best], rng)
            path.append(node)
        state = _rollout(engine, state, rnd, rng, shape)
        reward = rewards(engine, state)
        for visited in path:
            visited.visits += 1
            visited.reward += reward[visited.seat]
    best_key = max(
        (k for k in root.children if k in wanted),
        key=lambda k: (root.children[k].visits, root.children[k].reward),
        default=None,
    )
    return wanted[best_key] if best_key is not None else intents[0]
