"""A person clicking a game page at random against a house bot, offline: no server, no browser.

The engine plays the game; seat 0 is the person, who clicks among the controls the game page
would offer, modelled on ``service/http/static/play.js`` (the actions panel's moves and steps,
``SHORT`` moves to a group before it is chosen in steps, and the board's playable elements, which
post when exactly one move names them and otherwise narrow the panel); the other seat is the
house bot of the given level, choosing from its seat's view as the bot worker does.  A control's
chance is the weight of its kind, as ``tests/support/play_helpers.play_randomly`` reads it: a
move's intent type (``hold``), ``group:<group>`` for a step, ``board:<target prefix>`` for a board
element; 1 for a kind not named.  Used to choose the browser tests' click weights
(``tests/support/play_pages.CLICK_WEIGHTS``)::

    python -m scripts.click_model --game nautilus-industries --games 30 \\
        --weights '{"hold": 3, "switch_tiles": 0.05}'

It prints, per game, whether it ended, its events, the person's clicks and moves, then the
medians and maxima.  The model ignores what only a browser has (races with the stream, a 409).
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

from service.bots.levels import choose
from service.bots.position import intent_key, legal_by_key
from service.games import registry
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, decision_domain
from service.http.pages_text import describe_intents

#: ``play.js``: a group with at most this many moves lists them all.
SHORT = 6

Choice = dict[str, Any]  # the pending choice: {"group", "path", "target"}
Control = tuple[str, Any, str]  # (kind: intent | choice | board, what it carries, its weight's key)


def _step(d: dict[str, Any], i: int) -> str:
    return d["steps"][i] if i < len(d["steps"]) else ""


def _narrowed(descs: list[dict[str, Any]], choice: Choice) -> list[dict[str, Any]]:
    out = descs
    if choice["target"]:
        out = [d for d in out if choice["target"] in d["targets"]]
    if choice["group"] is not None:
        out = [
            d
            for d in out
            if d["group"] == choice["group"] and all(_step(d, i) == p for i, p in enumerate(choice["path"]))
        ]
    return out


def controls(descs: list[dict[str, Any]], choice: Choice) -> list[Control]:
    """The controls the page offers for the seat's described intents and the pending choice
    (``play.js``: ``drawPanel``, ``drawGroup``, ``markBoard``); resets a choice no longer legal."""
    out: list[Control] = []
    moves = _narrowed(descs, choice)
    if not moves and (choice["group"] is not None or choice["target"]):
        choice.update(group=None, path=[], target=None)
        moves = _narrowed(descs, choice)
    groups: dict[str, list[dict[str, Any]]] = {}
    for d in moves:
        groups.setdefault(d["group"], []).append(d)
    for group, rest in groups.items():
        depth = len(choice["path"]) if choice["group"] == group else 0
        path = list(choice["path"]) if choice["group"] == group else []
        while len(rest) > SHORT and depth < max(len(d["steps"]) for d in rest):
            values = {_step(d, depth) for d in rest}
            if len(values) > 1:
                break
            path.append(values.pop())
            depth += 1
        if len(rest) > SHORT and any(_step(d, depth) for d in rest):
            counts: dict[str, int] = {}
            for d in rest:
                if _step(d, depth):
                    counts[_step(d, depth)] = counts.get(_step(d, depth), 0) + 1
            for value, n in counts.items():
                if n == 1:
                    d = next(d for d in rest if _step(d, depth) == value)
                    out.append(("intent", d, d["intent"]["type"]))
                else:
                    out.append(("choice", (group, [*path, value]), f"group:{group}"))
            out += [("intent", d, d["intent"]["type"]) for d in rest if not _step(d, depth)]
        else:
            out += [("intent", d, d["intent"]["type"]) for d in rest]
    targets: list[str] = []
    for d in moves if choice["group"] is not None else descs:
        targets += [t for t in d["targets"] if t not in targets]
    out += [("board", t, "board:" + t.split(":")[0]) for t in targets]
    return out


def play(game: str, game_seed: int, click_seed: int, weights: dict[str, float], level: int, cap: int) -> dict[str, Any]:
    """One game of two seats: the person (seat 0) clicking with ``weights``, the bot of ``level``."""
    engine = registry.get(game)
    seed = game_seed.to_bytes(32, "big")
    setup = engine.setup(2, {}, Rng(seed, domain=SETUP_DOMAIN))
    state: Any = None
    for event in setup:
        state = engine.evolve(state, event)
    events = len(setup)
    clicks = moves = 0
    rng, bot_rng = random.Random(click_seed), random.Random(game_seed)
    choice: Choice = {"group": None, "path": [], "target": None}

    def apply(seat: int, intent: dict[str, Any]) -> None:
        nonlocal state, events
        command = legal_by_key(engine, state, seat)[intent_key(intent)]
        new = engine.decide(state, seat, command, Rng(seed, domain=decision_domain(events)))
        for event in new:
            state = engine.evolve(state, event)
        events += len(new)

    while clicks < cap:
        to_act = engine.to_act(state)
        if not to_act:
            return {"ended": True, "events": events, "clicks": clicks, "moves": moves}
        seat = to_act[0]
        legal = json.loads(json.dumps([c.to_json() for c in engine.legal(state, seat)]))
        view = json.loads(json.dumps(engine.view(state, seat)))
        if seat != 0:
            apply(seat, choose(game, seat, view, legal, level=level, seed=bot_rng.getrandbits(64)))
            continue
        descs = describe_intents(game, legal, view, seat, ["person", "bot"])
        offered = controls(descs, choice)
        kind, what, _key = rng.choices(offered, [weights.get(c[2], 1.0) for c in offered])[0]
        clicks += 1
        naming = [what] if kind == "intent" else [d for d in descs if what in d["targets"]] if kind == "board" else []
        if kind == "choice":
            choice = {"group": what[0], "path": what[1], "target": choice["target"]}
        elif len(naming) == 1:
            apply(seat, naming[0]["intent"])
            moves += 1
            choice = {"group": None, "path": [], "target": None}
        else:
            choice = {"group": None, "path": [], "target": what}
    return {"ended": False, "events": events, "clicks": clicks, "moves": moves}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="nautilus-industries")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=5000, help="the first game's seed (click seeds from 0)")
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--cap", type=int, default=4000, help="clicks after which a game is stopped")
    parser.add_argument("--weights", default="{}", help="JSON: a control's kind -> its weight")
    args = parser.parse_args(argv)
    weights = json.loads(args.weights)
    runs = [play(args.game, args.seed + g, g, weights, args.level, args.cap) for g in range(args.games)]
    for g, run in enumerate(runs):
        print(g, run)
    print(f"ended {sum(r['ended'] for r in runs)}/{len(runs)}")
    for key in ("events", "clicks", "moves"):
        values = sorted(r[key] for r in runs)
        print(f"{key}: median {values[len(values) // 2]}, max {values[-1]}")


if __name__ == "__main__":
    main()
