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
from service.games.base import Command, Engine, State, clone_state
from service.games.rng import Rng

#: UCB1's exploration constant; rewards are in [0, 1].
EXPLORATION = 0.7
#: Virtual visits the root's children start with, worth their one-ply reward (a prior: with few iterations
#: the search falls back on level 1's judgement instead of on a handful of noisy rollouts).
PRIOR_VISITS = 3


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


@dataclass(frozen=True)
class Scale:
    """How rewards are read off evaluations: a seat's margin over the best other seat (``position.margin``)
    at the leaf, less its margin at the root, in units of ``unit``: the spread of the root's one-ply margins,
    so one good move's worth moves a reward visibly whatever the game's units."""

    root: list[float]
    unit: float


def measure_scale(
    engine: Engine, state: State, seat: int, moves: dict[str, Command], rng: Rng
) -> tuple[Scale, dict[str, float]]:
    """The root's margins per seat, the mean absolute deviation of ``seat``'s one-ply margins, and each
    move's one-ply reward in those units."""
    values = engine.evaluate(state)
    root = [margin(values, s) for s in range(len(values))]
    ply = {k: margin(engine.evaluate(after(engine, state, seat, m, rng)), seat) for k, m in moves.items()}
    mean = sum(ply.values()) / len(ply)
    spread = sum(abs(p - mean) for p in ply.values()) / len(ply)
    scale = Scale(root, spread if spread > 1e-9 else 1.0)
    return scale, {k: _logistic((p - root[seat]) / scale.unit) for k, p in ply.items()}


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, x))))


def rewards(engine: Engine, state: State, scale: Scale) -> list[float]:
    """Per seat, in [0, 1]: 1 a win, 0 a loss (ties share) at the end of the game; else a logistic of how
    much the seat's evaluated margin grew since the root, in :class:`Scale` units."""
    result = engine.result(state)
    if result is not None:
        ranks = result["ranks"]
        n = len(ranks)
        firsts = [s for s in range(n) if ranks[str(s)] == 1]
        return [(1.0 / len(firsts)) if s in firsts else 0.0 for s in range(n)]
    values = engine.evaluate(state)
    return [_logistic((margin(values, s) - scale.root[s]) / scale.unit) for s in range(len(values))]


def _mover(engine: Engine, state: State, seat: int | None) -> int | None:
    seats = engine.to_act(state)
    if not seats:
        return None
    return seat if seat in seats else min(seats)


def _rollout(engine: Engine, state: State, rnd: random.Random, rng: Rng, shape: SearchShape) -> State:
    """``state`` (the iteration's own: changed in place) after up to ``rollout_depth`` greedy steps."""
    for _ in range(shape.rollout_depth):
        mover = _mover(engine, state, None)
        if mover is None:
            break
        legal = engine.legal(state, mover)
        if len(legal) == 1:
            state = apply(engine, state, mover, legal[0], rng)
            continue
        picks = [rnd.randrange(len(legal)) for _ in range(shape.rollout_width)]
        distinct = list(dict.fromkeys(picks))
        best: tuple[float, State] | None = None
        for n, pick in enumerate(distinct):
            # The last candidate is played on the state itself: one copy fewer a step.
            last = n == len(distinct) - 1
            nxt = apply(engine, state if last else clone_state(state), mover, legal[pick], rng)
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
    root_keys: dict[str, str] = {}
    scale: Scale | None = None
    for done in range(iterations):
        if done and out_of_budget():
            break
        rng = new_rng(rnd)
        state = engine.determinize(view, seat, rng)
        if scale is None:
            first_moves = {k: c for k, c in legal_by_key(engine, state, seat).items() if k in wanted}
            scale, priors = measure_scale(engine, state, seat, first_moves, rng)
            for key, prior in priors.items():
                child = root.children[key] = _Node(seat)
                child.visits = child.avail = PRIOR_VISITS
                child.reward = PRIOR_VISITS * prior
        node = root
        path = [root]
        first = True
        while True:
            mover = seat if first else _mover(engine, state, None)
            if mover is None:
                break
            if first:
                legal = {}
                for command in engine.legal(state, mover):
                    # The wire form's canonical JSON once per distinct command, not once per iteration.
                    spelled = repr(command)
                    if spelled not in root_keys:
                        root_keys[spelled] = intent_key(command.to_json())
                    key = root_keys[spelled]
                    if key in wanted:
                        legal[key] = command
                first = False
            else:
                # Below the root a node's moves are keyed by the command's repr: the same move in every
                # determinization, and far cheaper than the wire form's canonical JSON.
                legal = {repr(c): c for c in engine.legal(state, mover)}
            untried: list[tuple[str, Command]] = []
            available: list[_Node] = []
            moves: list[Command] = []
            for key, command in legal.items():
                known = node.children.get(key)
                if known is None:
                    untried.append((key, command))
                else:
                    known.avail += 1
                    available.append(known)
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
        reward = rewards(engine, state, scale)
        for visited in path:
            visited.visits += 1
            visited.reward += reward[visited.seat]
    best_key = max(
        (k for k in root.children if k in wanted),
        key=lambda k: (root.children[k].visits, root.children[k].reward),
        default=None,
    )
    return wanted[best_key] if best_key is not None else intents[0]
