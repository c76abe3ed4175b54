"""The command side: create a game, submit an intent — load, decide (through
``service.core.pipeline``), append, nudge the projections.

The state of a game is kept in an in-process cache at a known stream version.
Before every decision the cache is brought up to the stream's head by reading
only the events after the cached version (usually none), so no intent replays
the whole stream; a cold cache starts from the latest snapshot.
"""

from __future__ import annotations

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
from service.core import canonical, pipeline
from service.core.errors import (
    Conflicting,
    Forbidden,
    Refused,
    Unauthenticated,
    game_not_found,
    version_conflict,
)
from service.core.eventstore import Conflict, DuplicateKey, EventStore
from service.core.records import GameRecord, IdempotentWrite, StoredEvent
from service.core.replay import fold_stream
from service.core.tokens import hash_token, new_token, seat_for_token
from service.games import registry
from service.games.base import Engine, Event, RuleViolation, State
from service.games.rng import commitment

log = logging.getLogger(__name__)

#: How often a command without ``expected_version`` is retried after losing a race.
_RETRIES = 3


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
            self.finished = self.finished or any(e.type == pipeline.GAME_FINISHED for e in events)

    def invalidate(self) -> None:
        self.version, self.last_hash, self.state, self.finished = 0, canonical.GENESIS, None, False


class GameService:
    def __init__(
        self,
        store: EventStore,
        nudge: Callable[[str], None],
        cache_size: int = 2048,
        snapshot_every: int = 200,
        on_conflict: Callable[[], None] | None = None,
    ):
        self.store = store
        #: After each commit: ask the projections to catch the game up.
        self.nudge = nudge
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
            raise Refused("unknown_game", f"No game called {game!r}.", {"games": registry.names()}) from None
        n = len(players)
        if not engine.min_players <= n <= engine.max_players:
            raise Refused(
                "invalid_player_count",
                f"{game} is played by {engine.min_players} to {engine.max_players} players, not {n}.",
            )
        game_id = str(uuid.uuid4())
        seed = secrets.token_bytes(32)
        tokens = [new_token() for _ in players]
        created_at = now_iso()
        meta = {"intent_id": str(uuid.uuid4()), "seat": None, "received_at": created_at, "intent": None}
        try:
            sealed = pipeline.open_game(engine, game_id, players, options, seed, meta)
        except RuleViolation as rv:
            raise Refused(rv.code, rv.message, rv.details) from None
        commit = commitment(seed)
        record = GameRecord(game_id, game, engine.version, list(players), dict(options), commit, created_at)
        self.store.create_game(record, seed, [hash_token(t) for t in tokens], sealed)
        self.nudge(game_id)
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
            raise game_not_found()
        try:
            engine = registry.get(record.game, record.rules_version)
        except registry.RulesVersionUnavailable as exc:
            raise Conflicting("rules_version_unavailable", str(exc)) from None
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
            raise Unauthenticated("token_required", "Send your seat's token as 'Authorization: Bearer <token>'.")
        seat = seat_for_token(token, loaded.token_hashes)
        if seat is None:
            raise Forbidden("invalid_token", "This token does not belong to a seat of this game.")
        if idempotency_key is not None:
            stored = self.store.stored_response(game_id, idempotency_key)
            if stored is not None:
                return self._replayed(stored, seat, request_hash)
        try:
            command = load_intent(loaded.record.game, intent)
        except ValidationError as exc:
            raise Refused(
                "invalid_intent", "The intent does not match this game's schema.", {"fields": exc.messages}
            ) from None
        for attempt in range(_RETRIES):
            with loaded.lock:
                try:
                    return self._decide_and_append(
                        loaded, seat, command, expected_version, idempotency_key, request_hash
                    )
                except Conflict as conflict:
                    loaded.invalidate()
                    self.on_conflict()
                    if expected_version is not None or attempt == _RETRIES - 1:
                        raise version_conflict(expected_version, conflict.actual) from None
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
            raise Refused("idempotency_key_reused", "This Idempotency-Key was already used with a different request.")
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
            raise Refused("game_finished", "The game is over; no more intents are accepted.")
        engine, state = loaded.engine, loaded.state
        assert state is not None
        meta = {
            "intent_id": str(uuid.uuid4()),
            "seat": seat,
            "received_at": now_iso(),
            "intent": command.to_json(),
        }
        game_id = loaded.record.game_id
        try:
            # Folds into the cached state in place: cheaper than a copy; on any
            # failure below the cache is invalidated (see submit), so a
            # half-applied state is never reused.
            decision = pipeline.decide(
                engine,
                state,
                seat,
                command,
                seed=loaded.seed,
                game_id=game_id,
                version=version,
                head_hash=loaded.last_hash,
                meta=meta,
            )
        except RuleViolation as rv:
            # Judged against the cached state, which was not re-read when it
            # stood at the expected version.  If the stream has moved since,
            # the rules spoke of an older state: the answer is the conflict.
            if expected_version is not None and (head := self.store.version(game_id)) != version:
                raise Conflict(expected_version, head) from None
            raise Refused(rv.code, rv.message, rv.details) from None
        sealed = decision.events
        new_version = version + len(sealed)
        response = {
            "version": new_version,
            "events": [{"seq": e.seq, "type": e.type, "data": self._visible(engine, e, seat)} for e in sealed],
        }
        snapshot = None
        if version // self.snapshot_every != new_version // self.snapshot_every:
            snapshot = (new_version, decision.state)
        idem = IdempotentWrite(idempotency_key, seat, request_hash, response) if idempotency_key is not None else None
        self.store.append(game_id, version, sealed, idem, snapshot)
        loaded.state = decision.state
        loaded.version = new_version
        loaded.last_hash = sealed[-1].hash
        loaded.finished = decision.result is not None
        self.nudge(game_id)
        return response

    @staticmethod
    def _visible(engine: Engine, e: StoredEvent, seat: int) -> dict[str, Any]:
        if e.type in pipeline.PLATFORM_EVENTS:
            return e.data
        return engine.redact_event(Event(e.type, e.data), seat).data
