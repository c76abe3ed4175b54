"""The tournaments' command side: load, fold, decide, append (docs/TOURNAMENTS.md).

The pure core (``service.tournaments``) decides; this module gives it a stream
in PostgreSQL (``service.adapters.tournament_store``).  Each command reads the
whole stream (a tournament holds at most a few thousand events: 256 players,
20 rounds), folds it, asks ``rules.decide`` for the events, seals them into the
same hash chain as a game's (``service.domain.pipeline.seal``, keyed by the
tournament's seed) and appends them at the head it read.  A writer that lost
the race (another command appended first) folds again and decides again, a
few times; a decision refused on the newer state is refused.

No cache: tournament commands are few (a registration, a start, one per
table start and end), and reading a stream that short costs one round trip.
"""

from __future__ import annotations

import random
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.adapters.eventstore import Conflict
from service.adapters.tournament_store import TournamentRecord, TournamentStore
from service.domain import canonical, pipeline
from service.domain.errors import tournament_not_found, version_conflict
from service.domain.records import NewEvent, StoredEvent
from service.games.rng import commitment
from service.service_layer.commands import now_iso
from service.tournaments import events as tevents
from service.tournaments.commands import Command, CreateTournament
from service.tournaments.evolve import State, evolve
from service.tournaments.rules import decide

#: How often a command is decided again after losing the race for the head: a
#: registration may race every other player registering at the same moment.
RETRIES = 12
#: The longest pause before deciding again (seconds); the pause is random, so
#: writers that collided once spread out instead of colliding again.
BACKOFF = 0.02

#: Told after every commit: ``(tournament_id, the events appended)`` (the nudge's
#: ``tournament``, ``service.nudge.ProjectionQueue``).
OnAppend = Callable[[str, list[StoredEvent]], None]


#: No such tournament (the HTTP layer raises it too).
not_found = tournament_not_found


@dataclass(frozen=True, slots=True)
class Loaded:
    """A tournament's stream folded: its state at ``version``."""

    record: TournamentRecord
    events: list[StoredEvent]
    state: State

    @property
    def version(self) -> int:
        return self.events[-1].seq if self.events else 0

    @property
    def head_hash(self) -> str:
        return self.events[-1].hash if self.events else canonical.GENESIS


def fold_stored(events: list[StoredEvent]) -> State:
    """The state after a stored stream (its events parsed strictly)."""
    state: State | None = None
    for e in events:
        state = evolve(state, tevents.parse(e.type, e.data))
    if state is None:
        raise ValueError("a tournament stream opens with TournamentCreated")
    return state


class TournamentService:
    def __init__(self, store: TournamentStore, on_append: OnAppend | None = None, now: Callable[[], str] = now_iso):
        self.store = store
        self.on_append = on_append or (lambda tid, events: None)
        self.now = now

    # -- reading ---------------------------------------------------------------
    def load(self, tournament_id: str) -> Loaded:
        record = self.store.record(tournament_id)
        if record is None:
            raise not_found()
        events = self.store.read(tournament_id)
        return Loaded(record, events, fold_stored(events))

    def check(self, tournament_id: str, command: Command) -> Loaded:
        """Decide ``command`` at the head and write nothing: the same refusals as
        :meth:`execute` (an organiser's invitations are checked so before they are made)."""
        seed = self.store.seed(tournament_id)
        if seed is None:
            raise not_found()
        loaded = self.load(tournament_id)
        decide(loaded.state, command, seed=seed)
        return loaded

    def catch_up(self, tournament_id: str) -> None:
        """Ask the projections for a read model that a read found missing: the
        nudge of a commit that appended nothing."""
        self.on_append(tournament_id, [])

    # -- writing ---------------------------------------------------------------
    def create(self, command: CreateTournament) -> Loaded:
        """A new tournament: its seed drawn now and kept apart, its commitment in
        ``TournamentCreated``.  Refused terms write nothing."""
        seed = secrets.token_bytes(32)
        made = decide(None, command, seed=seed)  # refuses bad terms before anything exists
        tid = str(uuid.uuid4())
        sealed = self._seal(tid, seed, 1, canonical.GENESIS, made, command.by)
        created = made[0]
        assert isinstance(created, tevents.TournamentCreated)
        record = TournamentRecord(tid, created.name, created.game, created.organiser, commitment(seed), self.now())
        self.store.create(record, seed, sealed)
        self.on_append(tid, sealed)
        return Loaded(record, sealed, fold_stored(sealed))

    def execute(self, tournament_id: str, command: Command, by: str | None = None) -> tuple[Loaded, list[StoredEvent]]:
        """Decide ``command`` at the stream's head and append what it causes.
        Returns the tournament after it and the events written.  Domain errors
        from ``decide`` (the refusals of TRN-015) write nothing."""
        seed = self.store.seed(tournament_id)
        if seed is None:
            raise not_found()
        for attempt in range(RETRIES):
            loaded = self.load(tournament_id)
            made = decide(loaded.state, command, seed=seed)
            sealed = self._seal(tournament_id, seed, loaded.version + 1, loaded.head_hash, made, by)
            try:
                self.store.append(tournament_id, loaded.version, sealed)
            except Conflict:
                if attempt == RETRIES - 1:
                    raise version_conflict(loaded.version) from None
                time.sleep(random.uniform(0, BACKOFF * (attempt + 1)))
                continue
            self.on_append(tournament_id, sealed)
            state = loaded.state
            for e in made:
                state = evolve(state, e)
            return Loaded(loaded.record, loaded.events + sealed, state), sealed
        raise AssertionError("unreachable")  # pragma: no cover

    def _seal(self, tid: str, seed: bytes, first: int, prev: str, made: list[Any], by: str | None) -> list[StoredEvent]:
        # One meta per decision, as a game's: who asked (None: the operator or the
        # worker) and when; the follow-ups share their cause's.
        meta = {"by": by, "received_at": self.now()}
        return pipeline.seal(seed, tid, first, prev, [NewEvent(e.TYPE, e.to_data(), meta) for e in made])
