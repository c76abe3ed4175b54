"""Helpers for the leaderboard and game-list tests: unique handles, a game service
that enqueues nothing, and a game fast-forwarded to its last intent."""

from __future__ import annotations

import random
import uuid
from typing import Any

from service.domain.pipeline import seal
from service.domain.records import NewEvent
from service.games.base import clone_state
from service.games.rng import Rng
from service.service_layer.commands import GameService, now_iso


def handles(*names: str) -> list[str]:
    """Player handles unique to this test run (the session's Redis and
    database are shared by every test)."""
    tag = uuid.uuid4().hex[:6]
    return [f"{n}-{tag}" for n in names]


def fast_forward(svc: GameService, created: dict[str, Any], chooser: random.Random) -> dict[str, Any]:
    """Play ``created`` with random legal intents up to the one that would
    finish it, and return that intent unsent: ``{"seat", "token", "player",
    "intent", "version"}`` (``token`` is ``None`` for an account's seat).

    The intents are decided exactly as ``GameService.submit`` decides them
    (the engine, the game's seed, ``Rng`` domain = stream version before the
    decision, one meta per intent) but appended in one transaction: a
    2-player nautilus-industries game is ~800 intents, and one commit per
    intent would take most of a minute."""
    gid = created["id"]
    # A seat of an account has no token: its account acts for it (``"player"`` names it).
    tokens = {s["seat"]: s.get("token") for s in created["seats"]}
    names = {s["seat"]: s.get("player") for s in created["seats"]}
    loaded = svc.load(gid)
    engine = loaded.engine
    with loaded.lock:
        svc.refresh(loaded)
        assert loaded.state is not None
        state, first, seed, head = clone_state(loaded.state), loaded.version, loaded.seed, loaded.last_hash
        loaded.invalidate()
    version = first
    new: list[NewEvent] = []
    while True:
        assert engine.result(state) is None
        seat = chooser.choice(engine.to_act(state))
        command = chooser.choice(engine.legal(state, seat))
        events = engine.decide(state, seat, command, Rng(seed, domain=version))
        trial = clone_state(state)
        for event in events:
            trial = engine.evolve(trial, event)
        if engine.result(trial) is not None:
            break
        meta = {"intent_id": str(uuid.uuid4()), "seat": seat, "received_at": now_iso(), "intent": command.to_json()}
        new += [NewEvent(e.type, e.data, meta) for e in events]
        state, version = trial, version + len(events)
    if new:
        svc.store.append(gid, first, seal(seed, gid, first + 1, head, new))
    return {"seat": seat, "token": tokens[seat], "player": names[seat], "intent": command.to_json(), "version": version}


def quiet_service(store) -> GameService:
    """A command service that enqueues nothing (fast-forwarding needs no read model).

    Games that should count on the leaderboards are created ``rated=True``
    (only rated games count): over HTTP only games of accounts can be rated,
    here the seat tokens stand in for the accounts' keys."""
    return GameService(store, lambda _gid: None, snapshot_every=10_000)
