"""Search iterations per decision of the house bots' levels at their CPU budgets, on fixed positions.

The bench's ``bots.iterations.*`` figures come from whole games, whose positions differ from one tree to
another as soon as a move does.  To compare two trees, this first saves positions of random play
(``--save``: each game's seat views and legal intents, two seats), then has each tree's ``choose`` decide
every saved position at each search level's budget (``--load``), reading ``time.thread_time``.
Iterations are counted from the clock's reads (one sets the deadline, then one before every iteration
but the first), so a tree whose ``choose`` has no ``stats`` argument is measured the same way::

    python -m scripts.bot_iterations --save /tmp/positions.json
    mkdir /tmp/before && git archive <before> service | tar -x -C /tmp/before
    cp -r scripts /tmp/before/
    for i in 1 2 3; do
        (cd /tmp/before && $OLDPWD/.venv/bin/python -m scripts.bot_iterations --load /tmp/positions.json)
        .venv/bin/python -m scripts.bot_iterations --load /tmp/positions.json
    done

It prints one JSON line: per game and level, the mean iterations per decision.  Run the trees
alternately on a machine with the same load: two processes on a shared core get less done per CPU second.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from service.bots.levels import LEVELS, choose
from service.games import registry
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, decision_domain

#: Games of random play are sampled at this share of their decisions with at least 3 legal intents.
SAMPLE = 0.04


def positions(per_game: int, seed: int) -> list[dict[str, Any]]:
    """``per_game`` positions of each game: a seat to act, its view and its legal intents (as JSON)."""
    out: list[dict[str, Any]] = []
    for name in registry.registered():
        engine = registry.get(name)
        got = 0
        game = seed
        while got < per_game:
            game += 1
            rng_seed = game.to_bytes(32, "big")
            events = engine.setup(2, {}, Rng(rng_seed, domain=SETUP_DOMAIN))
            state = None
            for event in events:
                state = engine.evolve(state, event)
            chooser = random.Random(game)
            count = len(events)
            while engine.to_act(state) and got < per_game:
                seat = engine.to_act(state)[0]
                legal = engine.legal(state, seat)
                if len(legal) > 2 and chooser.random() < SAMPLE:
                    view = json.loads(json.dumps(engine.view(state, seat)))
                    out.append({"game": name, "seat": seat, "view": view, "legal": [c.to_json() for c in legal]})
                    got += 1
                new = engine.decide(state, seat, chooser.choice(legal), Rng(rng_seed, domain=decision_domain(count)))
                for event in new:
                    state = engine.evolve(state, event)
                count += len(new)
    return out


def count_iterations(p: dict[str, Any], level: int, clock: Callable[[], float] = time.thread_time) -> int:
    """The iterations ``choose`` runs on the saved position ``p`` at ``level``, counted from its reads of
    ``clock``: one sets the deadline, then one before every iteration but the first, the last of which stops
    the search (the levels' caps are not reached at their budgets)."""
    reads = 0

    def counting() -> float:
        nonlocal reads
        reads += 1
        return clock()

    choose(p["game"], p["seat"], p["view"], p["legal"], level=level, seed=7, cpu_clock=counting)
    return reads - 1


def iterations(saved: list[dict[str, Any]]) -> dict[str, float]:
    """Mean iterations per decision, by ``<game>/level <n>``, of every search level on ``saved``."""
    found: dict[str, list[int]] = {}
    for p in saved:
        for level, spec in sorted(LEVELS.items()):
            if spec.algorithm == "ismcts":
                found.setdefault(f"{p['game']}/level {level}", []).append(count_iterations(p, level))
    return {k: round(statistics.mean(v), 1) for k, v in sorted(found.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.bot_iterations", description=__doc__.split("\n\n")[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--save", help="write positions of random play to this file")
    where.add_argument("--load", help="measure the levels on the positions of this file")
    ap.add_argument("--per-game", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.save:
        saved = positions(args.per_game, args.seed)
        with open(args.save, "w") as f:
            json.dump(saved, f)
        print(f"{len(saved)} positions written to {args.save}")
        return 0
    with open(args.load) as f:
        print(json.dumps(iterations(json.load(f))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
