"""Random playouts of any engine (pure: no infrastructure).

Used by the conformance suite (``tests/property/test_conformance.py``), by
``make bench`` (intents per second per game) and by demo bots.

Randomness: the game's own draws come from :class:`~service.games.rng.Rng`.  The
platform sets a game up with ``Rng(seed, domain=1)`` and decides every intent with
``Rng(seed, domain=stream_version_before_the_decision)``: the number of events already
in the game's stream, which starts with the platform's own ``GameCreated`` event
before the engine's setup events (see ``service/domain/pipeline.py``).
The simulator mirrors that exactly (:data:`SETUP_DOMAIN`, :func:`decision_domain`), so
a playout's events are what the platform would record for the same seed and intents.
The *choice* of seat and command comes from a separate ``random.Random``
(``chooser``), never from the game's ``Rng``.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from service.games.base import Command, Engine, Event, State, fold
from service.games.rng import Rng

#: The Rng domain of ``engine.setup`` (the platform's stream version after ``GameCreated``).
SETUP_DOMAIN = 1


def decision_domain(events_so_far: int) -> int:
    """The Rng domain of a decision taken after ``events_so_far`` engine events: the
    platform's stream version (its ``GameCreated`` event plus the engine's events)."""
    return 1 + events_so_far


@dataclass
class Step:
    """One decision of a playout: who sent what, and the Rng domain it was decided with."""

    seat: int
    command: Command
    domain: int


@dataclass
class Playout:
    steps: list[Step] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    state: State | None = None
    #: Number of intents decided.
    step_count: int = 0
    #: True when the game reached its end (``result`` is not None).
    finished: bool = False
    seconds: float = 0.0


def random_playout(
    engine: Engine,
    players: int,
    options: dict[str, Any],
    seed: bytes,
    chooser: random.Random,
    max_steps: int = 100_000,
) -> Playout:
    """Play one game picking a seat uniformly from ``to_act`` and a command uniformly
    from that seat's ``legal``; stop at the end of the game or after ``max_steps``."""
    started = time.perf_counter()
    out = Playout()
    events = engine.setup(players, options, Rng(seed, domain=SETUP_DOMAIN))
    out.events.extend(events)
    state = fold(engine, events)
    steps = 0
    while steps < max_steps:
        seats = engine.to_act(state)
        if not seats:
            break
        seat = seats[chooser.randrange(len(seats))] if len(seats) > 1 else seats[0]
        options_now = engine.legal(state, seat)
        if not options_now:
            raise AssertionError(f"seat {seat} is to act but has no legal command (step {steps})")
        command = options_now[chooser.randrange(len(options_now))]
        domain = decision_domain(len(out.events))
        new = engine.decide(state, seat, command, Rng(seed, domain=domain))
        for event in new:
            state = engine.evolve(state, event)
        out.events.extend(new)
        out.steps.append(Step(seat, command, domain))
        steps += 1
    out.state = state
    out.step_count = steps
    out.finished = engine.result(state) is not None
    out.seconds = time.perf_counter() - started
    return out


def replay(
    engine: Engine, players: int, options: dict[str, Any], seed: bytes, steps: list[Step]
) -> tuple[list[Event], State]:
    """Re-decide recorded steps with the same seed; returns the events and the final state."""
    events = engine.setup(players, options, Rng(seed, domain=SETUP_DOMAIN))
    state = fold(engine, events)
    for step in steps:
        new = engine.decide(state, step.seat, step.command, Rng(seed, domain=step.domain))
        for event in new:
            state = engine.evolve(state, event)
        events.extend(new)
    return events, state


def bench(engine: Engine, players: int, options: dict[str, Any], games: int = 20, base_seed: int = 0) -> dict[str, Any]:
    """Intents per second over ``games`` random playouts."""
    intents = 0
    seconds = 0.0
    finished = 0
    cpu_started = time.process_time()
    for g in range(games):
        seed = (base_seed + g).to_bytes(32, "big")
        p = random_playout(engine, players, options, seed, random.Random(base_seed + g))
        intents += p.step_count
        seconds += p.seconds
        finished += p.finished
    cpu = time.process_time() - cpu_started
    return {
        "game": engine.name,
        "players": players,
        "games": games,
        "finished": finished,
        "intents": intents,
        "seconds": round(seconds, 3),
        "intents_per_second": round(intents / seconds) if seconds else 0,
        # CPU time is steadier than wall time on a shared machine
        "intents_per_cpu_second": round(intents / cpu) if cpu else 0,
    }


if __name__ == "__main__":  # pragma: no cover - manual benchmark: python -m service.games.simulate
    import sys

    from service.games import registry

    names = sys.argv[1:] or registry.names()
    for name in names:
        eng = registry.get(name)
        for n in range(eng.min_players, eng.max_players + 1):
            print(bench(eng, n, {}))
