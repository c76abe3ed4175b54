"""The command side: one function per command — load state, decide, append, enqueue.

The state of a game is kept in an in-process cache at a known stream version.
Before every decision the cache is brought up to the stream's head by reading
only the events after the cached version (usually none), so no intent replays
the whole stream; a cold cache starts from the latest snapshot.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from marshmallow import ValidationError

from schemas.intents import load_intent
from service import canonical
from service.errors import ApiError, not_found
from service.eventstore import (
    GAME_CREATED,
    GAME_FINISHED,
    Conflict,
    DuplicateKey,
    EventStore,
    GameRecord,
    IdempotentWrite,
    NewEvent,
    StoredEvent,
    seal_events,
)
from service.games import registry
from service.games.base import Engine, Event, RuleViolation, State
from service.games.rng import Rng, commitment
from service.replay import created_data, finished_data, fold_stream

log = logging.getLogger(__name__)

#: How often a command without ``expected_version`` is retried after losing a race.
_RETRIES = 3


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def seat_for_token(token: str | None, token_hashes: list[bytes]) -> int | None:
    """The seat whose token this is, comparing against every seat in constant time."""
    if not token:
        return None
    presented = hash_token(token)
    found = None
    for seat, h in enumerate(token_hashes):
        if hmac.compare_digest(presented, h):
            found = seat
    return found


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class LoadedGame:
    """A game's command-side state at ``version``, guarded by ``lock``."""

    record: GameRecord
    engine: Engine
    seed: bytes
    token_hashes: list[bytes]
    version: int = 0
    last_hash: str = canonical.GENESIS
    state: State | None = None
    finished: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def apply(self, events: list[StoredEvent]) -> None:
        self.state = fold_stream(self.engine, events, self.state)
        if events:
            self.version = events[-1].seq
            self.last_hash = events[-1].hash
            self.finished = self.finished or any(e.type == GAME_FINISHED for e in events)

    def invalidate(self) -> None:
        self.version, self.last_hash, self.state, self.finished = 0, canonical.GENESIS, None, False


class GameService:
    def __init__(
        self,
        store: EventStore,
        enqueue: Callable[[str], None],
        cache_size: int = 2048,
        snapshot_every: int = 200,
        on_conflict: Callable[[], None] | None = None,
    ):
        self.store = store
        self.enqueue = enqueue
        self.cache_size = cache_size
        self.snapshot_every = snapshot_every
        self.on_conflict = on_conflict or (lambda: None)
        self._cache: OrderedDict[str, LoadedGame] = OrderedDict()
        self._cache_lock = threading.Lock()

    # -- creating ---------------------------------------------------------
    def create_game(self, game: str, players: list[str], options: dict[str, Any]) -> dict[str, Any]:
        try:
            engine = registry.get(game)
        except registry.UnknownGame:
            raise ApiError(422, "unknown_game", f"No game called {game!r}.", {"games": registry.names()}) from None
        n = len(players)
        if not engine.min_players <= n <= engine.max_players:
            raise ApiError(
                422,
                "invalid_player_count",
                f"{game} is played by {engine.min_players} to {engine.max_players} players, not {n}.",
            )
        game_id = str(uuid.uuid4())
        seed = secrets.token_bytes(32)
        tokens = [secrets.token_urlsafe(32) for _ in players]
        commit = commitment(seed)
        created_at = now_iso()
        try:
            setup = engine.setup(n, options, Rng(seed, domain=1))
        except RuleViolation as rv:
            raise ApiError(422, rv.code, rv.message, rv.details) from None
        meta = {"intent_id": str(uuid.uuid4()), "seat": None, "received_at": created_at, "intent": None}
        opening = [NewEvent(GAME_CREATED, created_data(players, game, engine.version, options, commit), meta)]
        opening += [NewEvent(e.type, e.data, meta) for e in setup]
        record = GameRecord(game_id, game, engine.version, list(players), dict(options), commit, created_at)
        sealed = self.store.create_game(record, seed, [hash_token(t) for t in tokens], opening)
        self.enqueue(game_id)
        return {
            "id": game_id,
            "game": game,
            "version": sealed[-1].seq,
            "seed_commitment": commit,
            "rules_version": engine.version,
            "seats": [
                {"seat": i, "player": p, "token": t} for i, (p, t) in enumerate(zip(players, tokens, strict=True))
            ],
        }

    # -- loading ----------------------------------------------------------
    def load(self, game_id: str) -> LoadedGame:
        """The cached game (not yet brought up to date), loading its identity
        and secrets on first use."""
        with self._cache_lock:
            loaded = self._cache.get(game_id)
            if loaded is not None:
                self._cache.move_to_end(game_id)
                return loaded
        record = self.store.game(game_id)
        if record is None:
            raise not_found()
        try:
            engine = registry.get(record.game, record.rules_version)
        except registry.RulesVersionUnavailable as exc:
            raise ApiError(409, "rules_version_unavailable", str(exc)) from None
        seed, token_hashes = self.store.secrets(game_id)
        loaded = LoadedGame(record, engine, seed, token_hashes)
        with self._cache_lock:
            loaded = self._cache.setdefault(game_id, loaded)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return loaded

    def refresh(self, loaded: LoadedGame) -> None:
        """Bring the cached state to the stream's head: read only what is new."""
        if loaded.state is None:
            snap = self.store.latest_snapshot(loaded.record.game_id)
            if snap is not None:
                version, state = snap
                head = self.store.read(loaded.record.game_id, after=version - 1, upto=version)
                loaded.state, loaded.version = state, version
                loaded.last_hash = head[0].hash
        loaded.apply(self.store.read(loaded.record.game_id, after=loaded.version))

    # -- deciding ---------------------------------------------------------
    def submit(
        self,
        game_id: str,
        token: str | None,
        intent: Any,
        expected_version: int | None,
        idempotency_key: str | None,
        request_hash: str,
    ) -> dict[str, Any]:
        loaded = self.load(game_id)
        if not token:
            raise ApiError(401, "token_required", "Send your seat's token as 'Authorization: Bearer <token>'.")
        seat = seat_for_token(token, loaded.token_hashes)
        if seat is None:
            raise ApiError(403, "invalid_token", "This token does not belong to a seat of this game.")
        if idempotency_key is not None:
            stored = self.store.stored_response(game_id, idempotency_key)
            if stored is not None:
                return self._replayed(stored, seat, request_hash)
        try:
            command = load_intent(loaded.record.game, intent)
        except ValidationError as exc:
            raise ApiError(
                422, "invalid_intent", "The intent does not match this game's schema.", {"fields": exc.messages}
            ) from None
        for attempt in range(_RETRIES):
            with loaded.lock:
                try:
                    return self._decide_and_append(
                        loaded, seat, command, expected_version, idempotency_key, request_hash
                    )
                except Conflict:
                    loaded.invalidate()
                    self.on_conflict()
                    if expected_version is not None or attempt == _RETRIES - 1:
                        raise ApiError(
                            409,
                            "version_conflict",
                            "Another intent was recorded first; fetch the game and try again.",
                            {"expected_version": expected_version},
                        ) from None
                except DuplicateKey:
                    loaded.invalidate()
                    stored = self.store.stored_response(game_id, idempotency_key or "")
                    if stored is None:  # pragma: no cover - the key row committed, so it exists
                        raise
                    return self._replayed(stored, seat, request_hash)
                except BaseException:
                    # The cached state may have been advanced in place before
                    # the append failed: never trust it again.
                    loaded.invalidate()
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _replayed(stored: tuple[int, str, dict[str, Any]], seat: int, request_hash: str) -> dict[str, Any]:
        stored_seat, stored_hash, response = stored
        if stored_seat != seat or not hmac.compare_digest(stored_hash, request_hash):
            raise ApiError(
                422,
                "idempotency_key_reused",
                "This Idempotency-Key was already used with a different request.",
            )
        return response | {"replayed": True}

    def _decide_and_append(
        self,
        loaded: LoadedGame,
        seat: int,
        command: Any,
        expected_version: int | None,
        idempotency_key: str | None,
        request_hash: str,
    ) -> dict[str, Any]:
        # The append is guarded by the stream's head.  When the client names the
        # version it expects and the cache is at exactly that version, reading
        # the stream first could only confirm what the append checks anyway
        # (a stream that moved is a 409 either way): skip the round trip.
        if expected_version is None or loaded.state is None or loaded.version != expected_version:
            self.refresh(loaded)
        version = loaded.version
        if expected_version is not None and expected_version != version:
            raise Conflict(expected_version, version)
        if loaded.finished:
            raise ApiError(422, "game_finished", "The game is over; no more intents are accepted.")
        engine, state = loaded.engine, loaded.state
        assert state is not None
        try:
            events = engine.decide(state, seat, command, Rng(loaded.seed, domain=version))
        except RuleViolation as rv:
            raise ApiError(422, rv.code, rv.message, rv.details) from None
        meta = {
            "intent_id": str(uuid.uuid4()),
            "seat": seat,
            "received_at": now_iso(),
            "intent": command.to_json(),
        }
        new = [NewEvent(e.type, e.data, meta) for e in events]
        # Fold in place: cheaper than a copy; on any failure below the cache
        # is invalidated (see submit), so a half-applied state is never reused.
        for e in events:
            state = engine.evolve(state, e)
        result = engine.result(state)
        if result is not None:
            # The closing event's head hash is the hash the last engine event
            # will get; sealing is deterministic, so compute it the same way.
            sealed = seal_events(loaded.seed, loaded.record.game_id, version + 1, loaded.last_hash, new)
            new.append(NewEvent(GAME_FINISHED, finished_data(result, loaded.seed, sealed[-1].hash), meta))
        new_version = version + len(new)
        response = {
            "version": new_version,
            "events": [
                {"seq": version + 1 + i, "type": e.type, "data": self._visible(engine, e, seat)}
                for i, e in enumerate(new)
            ],
        }
        snapshot = None
        if version // self.snapshot_every != new_version // self.snapshot_every:
            snapshot = (new_version, state)
        idem = IdempotentWrite(idempotency_key, seat, request_hash, response) if idempotency_key is not None else None
        sealed = self.store.append(loaded.record.game_id, version, loaded.last_hash, loaded.seed, new, idem, snapshot)
        loaded.state = state
        loaded.version = new_version
        loaded.last_hash = sealed[-1].hash
        loaded.finished = result is not None
        self.enqueue(loaded.record.game_id)
        return response

    @staticmethod
    def _visible(engine: Engine, e: NewEvent, seat: int) -> dict[str, Any]:
        if e.type in (GAME_CREATED, GAME_FINISHED):
            return e.data
        return engine.redact_event(Event(e.type, e.data), seat).data
