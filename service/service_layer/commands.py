"""The command side: create a game, submit an intent — load, decide (through
``service.domain.pipeline``), append, nudge the projections.

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

from service.adapters.eventstore import Conflict, DuplicateKey, EventStore, StoreUnavailable
from service.domain import canonical, clocks, counting, identity, pipeline
from service.domain.errors import (
    Conflicting,
    Forbidden,
    Refused,
    Unauthenticated,
    game_not_found,
    version_conflict,
)
from service.domain.identity import GameAccess, Principal, account_seat
from service.domain.records import GameRecord, IdempotentWrite, StoredEvent
from service.domain.replay import fold_stream
from service.domain.tokens import hash_token, new_token, seat_for_token
from service.games import registry
from service.games.base import Command, Engine, Event, RuleViolation, State
from service.games.rng import Rng, commitment
from service.service_layer.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

#: How often a command is tried at least when it loses races (one with ``expected_version``
#: only while it commutes with what won: :meth:`GameService.commutes`).  A game gives each
#: command one try more than its seats (:meth:`GameService.tries`): in a simultaneous
#: phase each other seat's decision can win one race against it, and nothing else may
#: come between a command that commutes and the head.
_RETRIES = 3
#: Events appended since an intent's ``expected_version`` beyond which it is not examined
#: for commuting (a 409 at once): what one conflict may make the service read and fold.
COMMUTE_HORIZON = 64


class NotCommuting(Conflict):
    """The stream moved past the intent's ``expected_version`` in a way that may change
    what the intent means: the answer is the conflict, without retrying."""


#: An intent the edge parses once the service knows the game's kind: called with it after
#: the caller's seat and an idempotent replay are settled, so the refusals keep their order
#: (401/403 before 422 ``invalid_intent``: a caller without a seat learns nothing of the
#: intent).  It returns the command, or raises the domain's ``Refused``.
Parse = Callable[[str], Command]


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
    #: The stream's opening (``GameCreated``; ``None``: none), once ``opening_read``.
    opening: StoredEvent | None = None
    opening_read: bool = False
    #: Who sits where (from ``GameCreated``), read on the first account key.
    access: GameAccess | None = None
    #: The clock as the event at ``version`` recorded it (``service.domain.clocks``).
    clock: dict[str, Any] | None = None

    def apply(self, events: list[StoredEvent]) -> None:
        self.state = fold_stream(self.engine, events, self.state)
        if events:
            self.version = events[-1].seq
            self.last_hash = events[-1].hash
            self.finished = self.finished or any(e.type == pipeline.GAME_FINISHED for e in events)
            self.clock = events[-1].meta.get("clock")

    def invalidate(self) -> None:
        self.version, self.last_hash, self.state, self.finished = 0, canonical.GENESIS, None, False
        self.clock = None


class GameService:
    def __init__(
        self,
        store: EventStore,
        nudge: Callable[[str], None],
        cache_size: int = 2048,
        snapshot_every: int = 200,
        on_conflict: Callable[[], None] | None = None,
        default_deadline_s: int | None = None,
        now: Callable[[], str] = now_iso,
        max_game_events: int = 0,
    ):
        self.store = store
        #: The length cap written into each new game (``Settings.max_game_events``; 0: none).
        self.max_game_events = max_game_events
        #: The clock of a game created without one (``Settings.default_deadline_s``; None: no clock).
        self.default_deadline_s = default_deadline_s
        #: "Now" for the intents' ``received_at`` and the timeouts (injected by tests).
        self.now = now
        #: After each commit: ask the projections to catch the game up.
        self.nudge = nudge
        self.cache_size = cache_size
        self.snapshot_every = snapshot_every
        self.on_conflict = on_conflict or (lambda: None)
        self._cache: OrderedDict[str, LoadedGame] = OrderedDict()
        self._cache_lock = threading.Lock()

    # -- creating ---------------------------------------------------------
    def create_game(
        self,
        game: str,
        players: list[str],
        options: dict[str, Any],
        *,
        clock: dict[str, Any] | None = None,
        uow: UnitOfWork | None = None,
        game_id: str | None = None,
        **terms: Any,
    ) -> dict[str, Any]:
        """Create a game.  ``terms`` are recorded in its ``GameCreated``
        (``pipeline.created_data``): ``rated``, ``accounts`` (per seat: an
        account's key acts for it; such seats get no token), ``created_by``
        (the organiser), ``table``; ``draw=True`` draws the seat order of
        ``players`` (a table's join order) from the game's seed.  ``uow``: the
        unit of work whose transaction the game joins (a table's last join, an
        invitation's last accept, a tournament's table); its projection is then
        nudged once that commits.  ``game_id``: the id to create it under (a tournament table's, derived
        from the table so that creating it twice fails; default: a new one)."""
        engine, terms["clock"] = self.check_terms(game, len(players), clock)
        n = len(players)
        game_id = game_id or str(uuid.uuid4())
        seed = secrets.token_bytes(32)
        tokens = [new_token() for _ in players]
        created_at = self.now()
        meta = {"intent_id": str(uuid.uuid4()), "seat": None, "received_at": created_at, "intent": None}
        if self.max_game_events:
            # The cap that applies to this game for ever (pipeline.cap_length).
            terms.setdefault("max_events", self.max_game_events)
        flags = terms.get("accounts") or [False] * n
        bots = [p for p, account in zip(players, flags, strict=False) if account and identity.reserved_handle(p)]
        if bots:
            # Who the house bots are, for ever: once only they play, the game ends (pipeline.unattended).
            terms.setdefault("house_bots", bots)
        try:
            sealed = pipeline.open_game(engine, game_id, players, options, seed, meta, **terms)
        except RuleViolation as rv:
            raise Refused(rv.code, rv.message, rv.details) from None
        # The seats as drawn (a table's game) or as given.
        players = list(sealed[0].data["players"])
        accounts = sealed[0].data.get("accounts") or [False] * n
        commit = commitment(seed)
        record = GameRecord(game_id, game, engine.version, list(players), dict(options), commit, created_at)
        # An account's seat has a token too (every seat has one), but it is
        # never shown: nobody holds it, and the account's key acts instead.
        hashes = [hash_token(t) for t in tokens]
        if uow is None:
            self.store.create_game(record, seed, hashes, sealed)
            self.nudge(game_id)
        else:
            self.store.create_game(record, seed, hashes, sealed, conn=uow.conn)
            # Projected only once it commits: its first projection tells the players'
            # account streams (projections/publish.py) of a game that must exist.
            uow.on_committed(lambda: self.nudge(game_id))
        seats: list[dict[str, Any]] = []
        for i, (p, t) in enumerate(zip(players, tokens, strict=True)):
            seats.append({"seat": i, "player": p} | ({"account": True} if accounts[i] else {"token": t}))
        answer = {
            "id": game_id,
            "game": game,
            "version": sealed[-1].seq,
            "seed_commitment": commit,
            "rules_version": engine.version,
            "seats": seats,
        }
        for name in ("rated", "created_by", "table"):
            if name in sealed[0].data:
                answer[name] = sealed[0].data[name]
        return answer

    def check_terms(
        self, game: str, players: int, clock: dict[str, Any] | None, options: dict[str, Any] | None = None
    ) -> tuple[Engine, dict[str, Any] | None]:
        """The game's engine and its clock as resolved, for a game of ``game`` with
        ``players`` seats, or ``Refused`` (``unknown_game``, ``invalid_player_count``,
        ``invalid_clock``; with ``options``, whatever the rules refuse of them, set up
        on a throwaway seed: a game created later is refused nothing now accepted)."""
        try:
            engine = registry.get(game)
        except registry.UnknownGame:
            raise Refused("unknown_game", f"No game called {game!r}.", {"games": registry.names()}) from None
        if not engine.min_players <= players <= engine.max_players:
            raise Refused(
                "invalid_player_count",
                f"{game} is played by {engine.min_players} to {engine.max_players} players, not {players}.",
            )
        try:
            resolved = clocks.resolve(clock, self.default_deadline_s)
        except clocks.InvalidClock as exc:
            raise Refused("invalid_clock", str(exc)) from None
        if options is not None:
            try:
                engine.setup(players, options, Rng(secrets.token_bytes(32), domain=pipeline.SETUP_DOMAIN))
            except RuleViolation as rv:
                raise Refused(rv.code, rv.message, rv.details) from None
        return engine, resolved

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

    def catch_up(self, game_id: str) -> None:
        """Ask the projections for a game's read model that a read found missing or
        behind: the nudge a commit of the game sends."""
        self.nudge(game_id)

    def game_of(self, game_id: str) -> str:
        """The kind of game ``game_id`` is (what its intents are parsed as)."""
        return self.load(game_id).record.game

    def opening(self, loaded: LoadedGame) -> StoredEvent | None:
        """The game's opening event (``GameCreated``): it never changes, so it is read
        once per cached game (its cap, its clock and its seats all come from it)."""
        if not loaded.opening_read:
            head = self.store.read(loaded.record.game_id, after=0, upto=1)
            loaded.opening, loaded.opening_read = (head[0] if head else None), True
        return loaded.opening

    def _created(self, loaded: LoadedGame) -> dict[str, Any]:
        opening = self.opening(loaded)
        return opening.data if opening is not None else {}

    def max_events(self, loaded: LoadedGame) -> int | None:
        """The game's length cap, as its opening recorded it (``None``: a game from
        before the cap, which has none)."""
        cap = self._created(loaded).get("max_events")
        return int(cap) if cap is not None else None

    def house_bots(self, loaded: LoadedGame) -> frozenset[int] | None:
        """The seats house bots hold, as the game's opening recorded them (``None``: none,
        or a game from before the rule)."""
        return pipeline.bot_seats(self._created(loaded))

    def access(self, loaded: LoadedGame) -> GameAccess:
        """Who sits where and who organises, from the game's opening event."""
        if loaded.access is None:
            loaded.access = GameAccess.from_created(self._created(loaded))
        return loaded.access

    def access_of(self, game_id: str) -> GameAccess:
        """Who sits where in ``game_id`` and who organises it (``game_not_found`` for
        no such game), from its opening event: the cached game's, else read (without
        loading the game: a game whose rules this server lacks has seats too)."""
        with self._cache_lock:
            loaded = self._cache.get(game_id)
        if loaded is not None:
            return self.access(loaded)
        opening = self.store.read(game_id, after=0, upto=1)
        if not opening:
            raise game_not_found()
        return GameAccess.from_created(opening[0].data)

    def refresh(self, loaded: LoadedGame) -> None:
        """Bring the cached state to the stream's head: read only what is new."""
        if loaded.state is None:
            snap = self.store.latest_snapshot(loaded.record.game_id)
            if snap is not None:
                version, state = snap
                head = self.store.read(loaded.record.game_id, after=version - 1, upto=version)
                loaded.state, loaded.version = state, version
                loaded.last_hash = head[0].hash
                loaded.clock = head[0].meta.get("clock")
        loaded.apply(self.store.read(loaded.record.game_id, after=loaded.version))

    def clock(self, loaded: LoadedGame) -> clocks.Clock | None:
        """The game's clock at the cached version, ``None`` if it has none (its time control is
        read from ``GameCreated``, which is read once per cached game)."""
        spec = self._created(loaded).get("clock")
        if not clocks.runs(spec):
            return None
        assert isinstance(spec, dict)
        return clocks.Clock(spec, len(loaded.record.players), loaded.clock)

    # -- deciding ---------------------------------------------------------
    def submit(
        self,
        game_id: str,
        token: str | None,
        command: Command | Parse,
        expected_version: int | None,
        idempotency_key: str | None,
        request_hash: str,
        *,
        principal: Principal | None = None,
    ) -> dict[str, Any]:
        """Decide ``command`` (an engine's command, or the platform's ``Resign``, parsed
        by the edge with ``schemas.intents.parse_intent``; or a :data:`Parse` that the
        edge hands in to parse it once the caller's seat is known) for the caller's seat.
        ``principal``: the caller when it sent an account key (resolved by the HTTP
        layer); the key acts for the seat its account sits in."""
        loaded = self.load(game_id)
        if principal is not None and principal.account is not None:
            seat = account_seat(principal, self.access(loaded))
            if seat is None:
                raise Forbidden("not_seated", "This account has no seat in this game.")
        else:
            if not token:
                raise Unauthenticated("token_required", "Send your seat's token as 'Authorization: Bearer <token>'.")
            seat = seat_for_token(token, loaded.token_hashes)
            if seat is None:
                raise Forbidden("invalid_token", "This token does not belong to a seat of this game.")
        if idempotency_key is not None:
            # A key is the caller's own: scoped to this game and this seat.
            stored = self.store.stored_response(game_id, idempotency_key, seat)
            if stored is not None:
                return self._replayed(stored, seat, request_hash)
        if callable(command):
            command = command(loaded.record.game)
        tries = self.tries(loaded)
        for attempt in range(tries):
            with loaded.lock:
                try:
                    return self._decide_and_append(
                        loaded, seat, command, expected_version, idempotency_key, request_hash
                    )
                except Conflict as conflict:
                    loaded.invalidate()
                    self.on_conflict()
                    # A lost race is decided again at the new head: at once without an
                    # expected_version, else if it commutes with what won (NotCommuting if not).
                    if isinstance(conflict, NotCommuting) or attempt == tries - 1:
                        raise self._conflict(loaded, expected_version, conflict.actual) from None
                except DuplicateKey:
                    loaded.invalidate()
                    stored = self.store.stored_response(game_id, idempotency_key or "", seat)
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
    def tries(loaded: LoadedGame) -> int:
        """How many times an intent is decided before a lost race is its answer (409): the
        game's seats plus one, at least :data:`_RETRIES` (four seats choosing crews at once
        through four API processes: the last of them to append has lost three races)."""
        return max(_RETRIES, len(loaded.record.players) + 1)

    def commutes(self, loaded: LoadedGame, seat: int, expected: int) -> bool:
        """Whether an intent of ``seat`` that expected version ``expected`` may be decided at
        the head (``loaded``, refreshed) as if nothing had come between (docs/API.md, "Version
        conflicts"): it commutes with the events appended since when

        * they are at most :data:`COMMUTE_HORIZON` events, every one of them caused by a
          decision of another seat (no platform event: no resignation, timeout or abort);
        * at ``expected`` the seats to act were several, ``seat`` among them (a simultaneous
          phase), and ``seat`` is still to act at the head;
        * ``seat``'s legal intents at the head are exactly those at ``expected``.

        The intent is then decided against the head's state (its own events may differ:
        the last seat to choose ends the phase), and appended at the head, which the store
        still guards.  Called with ``loaded.lock`` held."""
        head = loaded.version
        if not 0 < expected < head or head - expected > COMMUTE_HORIZON or loaded.state is None:
            return False
        gid = loaded.record.game_id
        between = self.store.read(gid, after=expected, upto=head)
        if len(between) != head - expected:
            return False
        for e in between:
            by = counting.is_decision(e.meta)
            if e.type in pipeline.PLATFORM_EVENTS or by is None or by == seat:
                return False
        # The state at ``expected``: from the latest snapshot at or before it (at most
        # snapshot_every events to fold), else from the start.
        snap = self.store.latest_snapshot(gid, upto=expected)
        base, state = (snap[0], snap[1]) if snap is not None else (0, None)
        old = fold_stream(loaded.engine, self.store.read(gid, after=base, upto=expected), state)
        if old is None:
            return False
        engine = loaded.engine
        before = engine.to_act(old)
        if len(before) < 2 or seat not in before or seat not in engine.to_act(loaded.state):
            return False
        legal_then = [c.to_json() for c in engine.legal(old, seat)]
        return legal_then == [c.to_json() for c in engine.legal(loaded.state, seat)]

    def _conflict(self, loaded: LoadedGame, expected: int | None, actual: int | None) -> Conflicting:
        """The 409 of a lost race, with what a client needs to resync in one
        step: the stream's version now and the seats to act at it (docs/BOTS.md).
        Called with ``loaded.lock`` held, after the cache was invalidated."""
        err = version_conflict(expected, actual)
        try:
            self.refresh(loaded)
        except StoreUnavailable:
            loaded.invalidate()  # the conflict stands; the details are a courtesy
            return err
        assert loaded.state is not None
        err.details["current_version"] = loaded.version
        err.details["to_act"] = [] if loaded.finished else list(loaded.engine.to_act(loaded.state))
        return err

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
        if (
            expected_version is not None
            and expected_version != version
            and (loaded.finished or not self.commutes(loaded, seat, expected_version))
        ):
            raise NotCommuting(expected_version, version)
        if loaded.finished:
            raise Refused("game_finished", "The game is over; no more intents are accepted.")
        engine, state = loaded.engine, loaded.state
        assert state is not None
        meta = {
            "intent_id": str(uuid.uuid4()),
            "seat": seat,
            "received_at": self.now(),
            "intent": command.to_json(),
        }
        game_id = loaded.record.game_id
        try:
            # Folds into the cached state in place: cheaper than a copy; on any
            # failure below the cache is invalidated (see submit), so a
            # half-applied state is never reused.  A resignation is the
            # platform's (pipeline.act); an intent after the seat's deadline
            # is refused there (clock_expired).
            decision = pipeline.act(
                engine,
                state,
                seat,
                command,
                pipeline.Head(game_id, loaded.seed, version, loaded.last_hash, meta, self.clock(loaded)),
                max_events=self.max_events(loaded),
                house_bots=self.house_bots(loaded),
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
        loaded.clock = sealed[-1].meta.get("clock")
        self.nudge(game_id)
        return response

    # -- the platform's own decisions: timeouts, aborts ---------------------
    def _platform(self, loaded: LoadedGame, seat: int | None, command: Any, received_at: str) -> dict[str, Any]:
        """Decide and append one platform command at the stream's head (under ``loaded.lock``);
        the answer has every event as the organiser sees it.  Raises ``Conflict`` if the
        stream moved meanwhile, ``RuleViolation`` if the command does not apply."""
        state = loaded.state
        assert state is not None
        version = loaded.version
        meta = {
            "intent_id": str(uuid.uuid4()),
            "seat": seat,
            "received_at": received_at,
            "intent": command.to_json(),
            "auto": True,
        }
        decision = pipeline.act(
            loaded.engine,
            state,
            seat,
            command,
            pipeline.Head(loaded.record.game_id, loaded.seed, version, loaded.last_hash, meta, self.clock(loaded)),
            max_events=self.max_events(loaded),
            house_bots=self.house_bots(loaded),
        )
        sealed = decision.events
        new_version = version + len(sealed)
        snapshot = None
        if version // self.snapshot_every != new_version // self.snapshot_every:
            snapshot = (new_version, decision.state)
        self.store.append(loaded.record.game_id, version, sealed, None, snapshot)
        loaded.state, loaded.version, loaded.last_hash = decision.state, new_version, sealed[-1].hash
        loaded.finished = decision.result is not None
        loaded.clock = sealed[-1].meta.get("clock")
        self.nudge(loaded.record.game_id)
        return {"version": new_version, "events": [{"seq": e.seq, "type": e.type, "data": e.data} for e in sealed]}

    def time_out(self, game_id: str, now: str | None = None) -> int:
        """Write ``SeatTimedOut`` for every seat of the game whose deadline has passed by
        ``now`` (default: :attr:`now`), earliest first, each recorded at its deadline, through
        the pipeline and at the stream's head (optimistic concurrency): if the seat moved in
        time, or another worker wrote the timeout first, nothing is written.  Returns how many
        timeouts were written.  Called by the scheduler (``workers/timeouts.py``)."""
        loaded = self.load(game_id)
        now = now or self.now()
        written = 0
        with loaded.lock:
            try:
                while True:
                    self.refresh(loaded)
                    if loaded.finished or self.clock(loaded) is None:
                        return written
                    due = clocks.due(loaded.clock, now)
                    if not due:
                        return written
                    deadline, seat = due[0]
                    self._platform(loaded, seat, pipeline.TimeOut(), deadline)
                    written += 1
            except Conflict:
                # Someone else wrote first (the seat's own intent, or another worker's timeout):
                # the next round looks again.
                loaded.invalidate()
                return written
            except BaseException:
                loaded.invalidate()
                raise

    def abort(self, game_id: str, reason: str, by: str) -> dict[str, Any]:
        """End the game unrated (``GameAborted``, then ``GameFinished`` with ``"reason":
        "aborted"``); ``by`` names who asked (``service.domain.identity.may_abort`` decides who
        may).  Refuses a finished game (``game_finished``)."""
        loaded = self.load(game_id)
        for attempt in range(_RETRIES):
            with loaded.lock:
                try:
                    self.refresh(loaded)
                    if loaded.finished:
                        raise Refused("game_finished", "The game is over; it can no longer be aborted.")
                    return self._platform(loaded, None, pipeline.Abort(reason, by), self.now())
                except Conflict as conflict:
                    loaded.invalidate()
                    if attempt == _RETRIES - 1:
                        raise version_conflict(None, conflict.actual) from None
                except BaseException:
                    loaded.invalidate()
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _visible(engine: Engine, e: StoredEvent, seat: int) -> dict[str, Any]:
        if e.type in pipeline.PLATFORM_EVENTS:
            return e.data
        return engine.redact_event(Event(e.type, e.data), seat).data
