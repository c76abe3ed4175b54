"""The typed contract (``schemas/games/``) against what the engines really
produce: in seeded random games of every game, player count and option set,
every event (as stored, and as every seat and a spectator receive it while the
game runs), the views (each seat's, the spectator's, the organiser's) at the
first and last step and at a random tenth of the others, and the result load
with their published schemas.  The schemas refuse
unknown fields, so a field an engine adds or renames fails here before it can
reach a client as an untyped surprise.

``QD_PLAYOUTS`` scales the number of games (as in the conformance suite).
"""

from __future__ import annotations

import hashlib
import os
import random
from typing import Any

import pytest
from marshmallow import ValidationError

from schemas.games import PLATFORM_EVENTS, contract
from service.domain import pipeline
from service.games import registry
from service.games.base import ADMIN, Event, fold
from service.games.rng import Rng, commitment
from service.games.simulate import SETUP_DOMAIN, decision_domain

SCALE = float(os.environ.get("QD_PLAYOUTS", "1"))
#: Games per (game, player count, options).
GAMES = max(1, round(2 * SCALE))
#: Views are checked at the first and last step and at this share of the others
#: (chosen at random: a view costs far more to check than to make).
VIEW_SHARE = 0.1
CASES = [
    (game, players, options)
    for game in registry.names()
    for players in range(registry.get(game).min_players, registry.get(game).max_players + 1)
    for options in ([{}, {"neutral": True}] if game == "waters-of-nereus" and players == 2 else [{}])
]


def _load(schema: Any, data: Any, where: str) -> None:
    try:
        schema().load(data)
    except ValidationError as exc:
        pytest.fail(f"{where}: {exc.messages}\n{data}")


@pytest.mark.parametrize(("game", "players", "options"), CASES, ids=lambda v: str(v))
def test_every_event_view_and_result_matches_its_published_schema(game: str, players: int, options: dict) -> None:
    engine = registry.get(game)
    typed = contract(game)
    viewers: list[Any] = [ADMIN, None, *range(players)]
    for n in range(GAMES):
        seed = hashlib.sha256(f"{game}|{players}|{options}|{n}".encode()).digest()
        chooser = random.Random(f"{game}-{players}-{n}")
        created = pipeline.created_data([f"p{i}" for i in range(players)], game, engine.version, options, "")
        created["seed_commitment"] = commitment(seed)
        _load(PLATFORM_EVENTS["GameCreated"], created, f"{game} GameCreated")
        events = engine.setup(players, options, Rng(seed, domain=SETUP_DOMAIN))
        state = fold(engine, events)
        seen: list[Event] = list(events)
        step = 0
        while True:
            seats = engine.to_act(state)
            if step == 0 or not seats or chooser.random() < VIEW_SHARE:
                for viewer in viewers:
                    _load(typed.view, engine.view(state, viewer), f"{game} view for {viewer!r} at step {step}")
            if not seats:
                break
            seat = chooser.choice(seats)
            command = chooser.choice(engine.legal(state, seat))
            new = engine.decide(state, seat, command, Rng(seed, domain=decision_domain(len(seen))))
            for e in new:
                state = engine.evolve(state, e)
            seen += new
            step += 1
        for e in seen:
            assert e.type in typed.events, f"{game}: event {e.type} has no published schema"
            for viewer in viewers:
                shown = engine.redact_event(e, viewer)
                _load(typed.event_schema(e.type), shown.data, f"{game} {e.type} for {viewer!r}")
        result = engine.result(state)
        _load(typed.result, result, f"{game} result")
        finished = pipeline.finished_data(result, seed, "0" * 64)
        _load(PLATFORM_EVENTS["GameFinished"], finished, f"{game} GameFinished")


def test_every_event_type_an_engine_folds_has_a_schema() -> None:
    """The published event list is the engines' own: each type ``evolve``
    handles is published, and nothing else is."""
    import importlib

    for game in registry.names():
        module = importlib.import_module(registry.package(game) + ".evolve")
        # Each evolve dispatches on one table: event type -> handler.
        handled = next(v for k, v in vars(module).items() if k.strip("_") in ("HANDLERS", "APPLY"))
        published = set(contract(game).events)
        assert set(handled) <= published, (game, set(handled) - published)
        # An engine may fold its opening event (GameStarted) outside the table.
        assert published - set(handled) <= {"GameStarted"}, (game, published - set(handled))
