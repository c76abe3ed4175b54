"""Games for ``make bench``: planned in memory, created with a known seed, and
(optionally) bulk-loaded to any depth.

A *plan* is a random playout with its events grouped per intent.  Because the
platform decides every intent with ``Rng(seed, domain=stream version)`` exactly
as ``service.games.simulate`` does, a game created with the plan's seed accepts
the plan's intents one after the other: load clients post them without asking
``/legal`` first, so they cost almost nothing and never send an illegal intent.
"""

from __future__ import annotations

import random
import secrets
import types
import uuid
from dataclasses import dataclass
from typing import Any
from unittest import mock

from service.adapters.eventstore import EventStore
from service.domain.pipeline import GAME_FINISHED, finished_data
from service.domain.pipeline import seal as seal_events
from service.domain.records import NewEvent
from service.games import registry
from service.games.base import Event, State, fold
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, decision_domain
from service.service_layer.commands import GameService, now_iso

GAME = "nautilus-industries"


@dataclass
class Step:
    seat: int
    intent: dict[str, Any]
    events: list[Event]


@dataclass
class Plan:
    game: str
    players: int
    seed: bytes
    steps: list[Step]
    finished: bool

    @property
    def events(self) -> int:
        return sum(len(s.events) for s in self.steps)


def plan_game(game: str, players: int, n: int, max_steps: int = 100_000) -> Plan:
    """A random playout of ``game`` with seed and choices derived from ``n``."""
    engine = registry.get(game)
    seed = n.to_bytes(32, "big")
    chooser = random.Random(n)
    setup = engine.setup(players, {}, Rng(seed, domain=SETUP_DOMAIN))
    state = fold(engine, setup)
    count = len(setup)
    steps: list[Step] = []
    while len(steps) < max_steps:
        seats = engine.to_act(state)
        if not seats:
            break
        seat = seats[chooser.randrange(len(seats))] if len(seats) > 1 else seats[0]
        legal = engine.legal(state, seat)
        command = legal[chooser.randrange(len(legal))]
        new = engine.decide(state, seat, command, Rng(seed, domain=decision_domain(count)))
        for e in new:
            state = engine.evolve(state, e)
        count += len(new)
        steps.append(Step(seat, command.to_json(), new))
    return Plan(game, players, seed, steps, engine.result(state) is not None)


@dataclass
class Created:
    plan: Plan
    game_id: str
    tokens: list[str]
    version: int
    #: Index of the next step of the plan to post.
    next_step: int = 0


def create(svc: GameService, plan: Plan) -> Created:
    """Create the game through the service's own code path, with the plan's seed."""
    fake = types.SimpleNamespace(token_bytes=lambda _n: plan.seed, token_urlsafe=secrets.token_urlsafe)
    with mock.patch("service.service_layer.commands.secrets", fake):
        answer = svc.create_game(plan.game, [f"bench-{i}" for i in range(plan.players)], {})
    return Created(plan, answer["id"], [s["token"] for s in answer["seats"]], answer["version"])


def advance(store: EventStore, created: Created, steps: int, snapshot: bool = True) -> int:
    """Append the plan's next ``steps`` intents' events directly (one transaction),
    as the command path would have recorded them; returns the new version.
    Much faster than posting them, to get a game deep into its stream."""
    plan = created.plan
    engine = registry.get(plan.game)
    first, last = created.next_step, min(len(plan.steps), created.next_step + steps)
    new: list[NewEvent] = []
    for step in plan.steps[first:last]:
        meta = {"intent_id": str(uuid.uuid4()), "seat": step.seat, "received_at": now_iso(), "intent": step.intent}
        new += [NewEvent(e.type, e.data, meta) for e in step.events]
    if not new:
        return created.version
    head = store.read(created.game_id, after=created.version - 1)[-1]
    if last == len(plan.steps) and plan.finished:
        state = _state_after(plan, last)
        sealed = seal_events(plan.seed, created.game_id, created.version + 1, head.hash, new)
        result = engine.result(state)
        assert result is not None
        new.append(NewEvent(GAME_FINISHED, finished_data(result, plan.seed, sealed[-1].hash), new[-1].meta))
    version = created.version + len(new)
    snap = (version, _state_after(plan, last)) if snapshot else None
    store.append(
        created.game_id,
        created.version,
        seal_events(plan.seed, created.game_id, created.version + 1, head.hash, new),
        None,
        snap,
    )
    created.version, created.next_step = version, last
    return version


def _state_after(plan: Plan, steps: int) -> State:
    engine = registry.get(plan.game)
    state = fold(engine, engine.setup(plan.players, {}, Rng(plan.seed, domain=SETUP_DOMAIN)))
    for step in plan.steps[:steps]:
        for e in step.events:
            state = engine.evolve(state, e)
    return state
