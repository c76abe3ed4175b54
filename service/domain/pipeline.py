"""The decide pipeline: the one way a game's events come to be.

Every event of a stream is made here, and sealed (numbered, salted, digested
and hash-chained) here only:

* :func:`open_game` — ``GameCreated`` (the platform's opening, with the seed
  commitment) and the engine's setup events;
* :func:`decide` — one command of one seat: the engine's events, folded into
  the state, and ``GameFinished`` (result and revealed seed) when they end the
  game;
* :func:`forfeit` — a seat leaves the game: ``SeatResigned`` (its own intent
  ``{"type": "resign"}``) or ``SeatTimedOut`` (its clock ran out; written at
  the deadline, with no client), then the engine's ``forfeit`` events, and
  ``GameFinished`` when fewer than two seats remain (:func:`final_result`);
* :func:`abort` — ``GameAborted`` and ``GameFinished``: the game ends unrated;
* :func:`unattended` — after a forfeit that leaves house bots alone in a game that
  had people in it, ``GameFinished`` at once (``"reason": "forfeit"``);
* :func:`act` — any of these for a command, game or platform (:func:`platform_command`).

Each decision also moves the game's clock (``service/domain/clocks.py``) and
records it in its events' ``meta.clock``, and refuses an intent that comes
after its seat's deadline (``clock_expired``).

The command path (``service.service_layer.commands``) writes what these return; the
audit (``service.audit.checks.redecide``) calls the very same functions on the
recorded intents and compares byte for byte, so the audit checks the code that
writes, not a copy of it.  Pure: no I/O, no clock; randomness only from the
seed (``docs/RNG.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from service.domain import canonical, clocks
from service.domain.records import NewEvent, StoredEvent
from service.games.base import Command, Engine, RuleViolation, State, fold, forfeited, seat_count, seat_forfeited
from service.games.rng import Rng, commitment

#: Events the platform writes around the engine's own.
GAME_CREATED = "GameCreated"
GAME_FINISHED = "GameFinished"
SEAT_RESIGNED = "SeatResigned"
SEAT_TIMED_OUT = "SeatTimedOut"
GAME_ABORTED = "GameAborted"
PLATFORM_EVENTS = frozenset({GAME_CREATED, GAME_FINISHED, SEAT_RESIGNED, SEAT_TIMED_OUT, GAME_ABORTED})

#: The Rng domain of ``engine.setup``: the stream version after ``GameCreated``.
#: A decision's domain is the stream version before it (see :func:`decide`).
SETUP_DOMAIN = 1


def seal(seed: bytes, game_id: str, first_seq: int, prev_hash: str, events: Sequence[NewEvent]) -> list[StoredEvent]:
    """Number and hash-chain ``events`` from ``first_seq`` after ``prev_hash``."""
    out = []
    meta, meta_text = None, b""
    for i, ev in enumerate(events):
        seq = first_seq + i
        if ev.meta is not meta:  # a decision's events share one meta: serialised once
            meta, meta_text = ev.meta, canonical.canonical(ev.meta)
        dd, md, h = canonical.seal_text(seed, game_id, seq, ev.type, ev.schema_version, ev.data, meta_text, prev_hash)
        out.append(StoredEvent(game_id, seq, ev.type, ev.schema_version, ev.data, ev.meta, dd, md, prev_hash, h))
        prev_hash = h
    return out


def created_data(
    players: list[str], game: str, rules_version: str, options: dict[str, Any], seed_commitment: str, **terms: Any
) -> dict[str, Any]:
    """The opening event's data: everything public about the game's identity,
    and the terms it was created on (``rated``, ``accounts``, ``created_by``,
    ``table``, ``joined``, ``clock``, ...; those given as ``None`` are left
    out, so the opening of a game without them has the same data, and the same
    hash, as one recorded before those terms existed)."""
    data = {
        "game": game,
        "rules_version": rules_version,
        "players": list(players),
        "options": dict(options),
        "seed_commitment": seed_commitment,
    }
    data.update({k: v for k, v in terms.items() if v is not None})
    return data


#: The keys of ``GameCreated`` data that are not terms (see :func:`opening_terms`).
_IDENTITY = frozenset({"game", "rules_version", "players", "options", "seed_commitment"})

#: The Rng domain of the lobby's seat draw: above any stream version, so it
#: shares no draw with the setup or a decision (docs/RNG.md).
SEATING_DOMAIN = 2**64 - 1


def draw_seats(seed: bytes, joined: list[str]) -> list[str]:
    """The seat order of a table's game: the players in join order,
    shuffled with the game's own committed seed (Fisher-Yates, domain
    :data:`SEATING_DOMAIN`), so anyone can re-derive it once the seed is
    revealed."""
    return Rng(seed, domain=SEATING_DOMAIN).shuffled(joined)


def opening_terms(created: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """From a recorded ``GameCreated`` data, the ``players`` and ``terms`` to
    pass to :func:`open_game` to make it again: what the audit's redecide
    does.  A table's game passes its join order (``joined``) to be drawn again."""
    terms = {k: v for k, v in created.items() if k not in _IDENTITY}
    if "joined" in terms:
        return list(terms.pop("joined")), terms | {"draw": True}
    return list(created["players"]), terms


def finished_data(result: dict[str, Any], seed: bytes, head_hash: str) -> dict[str, Any]:
    """The closing event's data: the result, the revealed seed, and the hash
    of the event before it (the head of the chain it closes)."""
    return {"result": result, "seed": seed.hex(), "head_hash": head_hash}


def open_game(
    engine: Engine,
    game_id: str,
    players: list[str],
    options: dict[str, Any],
    seed: bytes,
    meta: dict[str, Any],
    *,
    draw: bool = False,
    **terms: Any,
) -> list[StoredEvent]:
    """The sealed opening of a game: ``GameCreated`` and the engine's setup
    events.  Raises the engine's ``RuleViolation`` for a game that cannot be
    set up (player count, options).

    ``draw``: ``players`` is a table's join order; the seats are drawn from
    the seed (:func:`draw_seats`) and the join order is recorded as ``joined``.
    ``terms`` are recorded in ``GameCreated`` (:func:`created_data`)."""
    if draw:
        terms["joined"] = list(players)
        players = draw_seats(seed, list(players))
    created = created_data(players, engine.name, engine.version, options, commitment(seed), **terms)
    setup = engine.setup(len(players), options, Rng(seed, domain=SETUP_DOMAIN))
    meta = {k: v for k, v in meta.items() if k != "clock"}
    if clocks.runs(created.get("clock")):
        # The clocks of the seats to act start when the game opens.
        to_act = engine.to_act(fold(engine, setup))
        meta["clock"] = clocks.start(created["clock"], len(players), meta["received_at"], to_act)
    opening = [NewEvent(GAME_CREATED, created, meta)] + [NewEvent(e.type, e.data, meta) for e in setup]
    return seal(seed, game_id, 1, canonical.GENESIS, opening)


@dataclass(frozen=True, slots=True)
class Decision:
    """What one command did: its sealed events, the state after them (the
    same object that was passed in, evolved in place) and the result if the
    game ended."""

    events: list[StoredEvent]
    state: State
    result: dict[str, Any] | None


@dataclass(frozen=True)
class Head:
    """Where a decision is made: the game (``game_id``, ``seed``), the stream's
    head (``version`` events, the last of which hashes to ``hash``), the
    intent's ``meta`` (``received_at`` is the decision's time) and the game's
    ``clock`` as the last event recorded it (``None``: no clock)."""

    game_id: str
    seed: bytes
    version: int
    hash: str
    meta: dict[str, Any]
    clock: clocks.Clock | None = None

    def after(self, events: Sequence[StoredEvent]) -> Head:
        """The head once ``events`` (sealed on this one) are appended."""
        return replace(self, version=self.version + len(events), hash=events[-1].hash)


def decide(engine: Engine, state: State, seat: int, command: Command, at: Head) -> Decision:
    """Decide ``command`` of ``seat`` at the stream's head ``at`` and seal what
    it causes.

    ``state`` is evolved IN PLACE (a copy per intent cost more than the rest
    of the decision); a caller that may not keep it (the append then fails)
    must drop it.  Raises the engine's ``RuleViolation`` before touching it,
    and ``clock_expired`` for an intent after its seat's deadline."""
    _may_act(state, seat, at)
    events = engine.decide(state, seat, command, Rng(at.seed, domain=at.version))
    evolve = engine.evolve
    for e in events:
        state = evolve(state, e)
    batch = [(e.type, e.data) for e in events]
    return _close(engine, state, batch, at, seat)


def _close(
    engine: Engine,
    state: State,
    events: list[tuple[str, dict[str, Any]]],
    at: Head,
    mover: int | None,
    timed_out: int | None = None,
    result: dict[str, Any] | None = None,
) -> Decision:
    """Seal a decision's events (``state``: after them), its clock in their meta, and
    ``GameFinished`` if the game ends (``result``, else :func:`final_result`)."""
    if result is None:
        result = final_result(engine, state)
    meta = {k: v for k, v in at.meta.items() if k != "clock"}
    clock = at.clock
    if clock is not None and clocks.runs(clock.spec):
        before = clock.state or clocks.start(clock.spec, clock.players, meta["received_at"], [])
        to_act = [] if result is not None else engine.to_act(state)
        meta["clock"] = clocks.advance(
            clock.spec, before, at=meta["received_at"], mover=mover, to_act=to_act, timed_out=timed_out
        )
    new = [NewEvent(t, d, meta) for t, d in events]
    sealed = seal(at.seed, at.game_id, at.version + 1, at.hash, new)
    if result is not None:
        head = sealed[-1].hash if sealed else at.hash
        closing = NewEvent(GAME_FINISHED, finished_data(result, at.seed, head), meta)
        sealed += seal(at.seed, at.game_id, at.version + 1 + len(sealed), head, [closing])
    return Decision(sealed, state, result)


def _may_act(state: State, seat: int | None, at: Head) -> None:
    """A seat that has left the game, or whose time has run out, may do nothing more."""
    if seat is None:
        return
    clock = at.clock
    deadline = clocks.deadline_of(clock.state if clock else None, seat)
    if seat in forfeited(state):
        if clock is not None and clock.state is not None and seat in clock.state.get("timed_out", []):
            raise RuleViolation("clock_expired", f"Seat {seat}'s time ran out; it has left the game.")
        raise seat_forfeited(seat)
    if clock is not None and clocks.expired(clock.state, seat, at.meta["received_at"]):
        message = f"Seat {seat}'s time ran out at {deadline}; it may not act any more."
        raise RuleViolation("clock_expired", message, {"deadline": deadline})


def final_result(engine: Engine, state: State) -> dict[str, Any] | None:
    """The platform's result of a game, or ``None`` while it goes on.

    A game goes on while the engine has no result and at least two seats still play.  A
    forfeited seat ranks last, in reverse order of forfeit (the last to leave ranks best of
    them); the seats still playing keep the engine's order and ties.  ``reason`` is
    ``completed`` when the rules ended the game, ``forfeit`` when fewer than two seats were
    left; ``forfeited`` lists the seats that left, in order.

    A game in which nobody left records the engine's result as it is, as streams recorded
    without forfeits did, so that every stream recorded earlier re-decides byte for byte; readers
    show it with ``"reason": "completed", "forfeited": []`` (:func:`shown_result`)."""
    out = forfeited(state)
    result = engine.result(state)
    if result is None:
        active = [s for s in range(seat_count(state)) if s not in out]
        if len(active) >= 2 or not out:
            return None
        ranking = active + out[::-1]
        return {
            "reason": "forfeit",
            "forfeited": list(out),
            "ranking": ranking,
            "ranks": {str(s): i + 1 for i, s in enumerate(ranking)},
            "scores": {},
            "breakdown": {},
            "tiebreak": None,
        }
    if not out:
        return result
    ranks = result["ranks"]
    stayed = [s for s in result["ranking"] if s not in out]
    new_ranks = {str(s): 1 + sum(1 for o in stayed if ranks[str(o)] < ranks[str(s)]) for s in stayed}
    for i, s in enumerate(out[::-1]):
        new_ranks[str(s)] = len(stayed) + 1 + i
    return result | {
        "ranking": stayed + out[::-1],
        "ranks": new_ranks,
        "reason": "completed",
        "forfeited": list(out),
    }


def shown_result(result: Any) -> Any:
    """A recorded result as readers show it: one that does not say why the game ended is a
    game completed by its rules with no forfeit (see :func:`final_result`)."""
    if isinstance(result, dict) and "reason" not in result:
        return {**result, "reason": "completed", "forfeited": []}
    return result


# -- the platform's own intents and decisions -----------------------------------------------------


@dataclass(frozen=True)
class Resign(Command):
    """``{"type": "resign"}``: a seat leaves the game; legal for every seat still playing, at
    any time, in every game (not listed by ``/legal``: see docs/API.md)."""

    type: ClassVar[str] = "resign"


@dataclass(frozen=True)
class TimeOut(Command):
    """The platform's intent when a seat's deadline passes (``meta.received_at`` is the
    deadline; ``meta.seat`` the seat).  Never sent by a client."""

    type: ClassVar[str] = "timeout"


@dataclass(frozen=True)
class Abort(Command):
    """The platform's intent ending a game unrated (``POST /v1/games/{id}/abort``; ``by``:
    who asked).  Never sent to ``/intents``."""

    reason: str
    by: str
    type: ClassVar[str] = "abort"


PLATFORM_COMMANDS: dict[str, type[Command]] = {"resign": Resign, "timeout": TimeOut, "abort": Abort}


def platform_command(raw: Any) -> Command | None:
    """The platform command a recorded or posted intent names, ``None`` for a game's own intent;
    raises ``RuleViolation('invalid_intent')`` for a platform intent of the wrong shape."""
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str) or raw["type"] not in PLATFORM_COMMANDS:
        return None
    kind = raw["type"]
    if kind == "abort":
        if set(raw) == {"type", "reason", "by"} and all(isinstance(raw[k], str) for k in ("reason", "by")):
            return Abort(raw["reason"], raw["by"])
    elif set(raw) == {"type"}:
        return PLATFORM_COMMANDS[kind]()
    raise RuleViolation("invalid_intent", f"A '{kind}' intent has no other fields.", {"intent": kind})


def forfeit(
    engine: Engine,
    state: State,
    seat: int,
    at: Head,
    *,
    timed_out: bool,
    house_bots: frozenset[int] | None = None,
) -> Decision:
    """``seat`` leaves the game: it resigned, or (``timed_out``) its deadline is
    ``meta["received_at"]``.  The engine's ``forfeit`` says what becomes of its components and
    turns; the game ends when fewer than two seats remain, or when only house bots do
    (:func:`unattended`; ``house_bots``: their seats).  A timeout that is not due (the seat
    is not to act, or its deadline is another time) is refused ``timeout_not_due``."""
    when = at.meta["received_at"]
    if timed_out:
        if clocks.deadline_of(at.clock.state if at.clock else None, seat) != when or seat in forfeited(state):
            raise RuleViolation("timeout_not_due", f"Seat {seat}'s time does not run out at {when}.")
        first = (SEAT_TIMED_OUT, {"seat": seat, "deadline": when})
    else:
        _may_act(state, seat, at)
        first = (SEAT_RESIGNED, {"seat": seat})
    events = engine.forfeit(state, seat, Rng(at.seed, domain=at.version))
    evolve = engine.evolve
    for e in events:
        state = evolve(state, e)
    batch = [first, *((e.type, e.data) for e in events)]
    result = final_result(engine, state) or unattended(state, house_bots)
    return _close(engine, state, batch, at, None, seat if timed_out else None, result=result)


def abort(
    engine: Engine,
    state: State,
    reason: str,
    by: str,
    at: Head,
) -> Decision:
    """End the game unrated: ``GameAborted`` (``reason``, ``by``) and ``GameFinished`` with
    ``"reason": "aborted"`` and no ranking (leaderboards pass it over)."""
    result: dict[str, Any] = {
        "reason": "aborted",
        "forfeited": list(forfeited(state)),
        "ranking": [],
        "ranks": {},
        "scores": {},
        "breakdown": {},
        "tiebreak": None,
    }
    batch = [(GAME_ABORTED, {"reason": reason, "by": by})]
    return _close(engine, state, batch, at, None, result=result)


def act(
    engine: Engine,
    state: State,
    seat: int | None,
    command: Command,
    at: Head,
    *,
    max_events: int | None = None,
    house_bots: frozenset[int] | None = None,
) -> Decision:
    """:func:`decide`, :func:`forfeit` or :func:`abort`, as ``command`` says: the one entry
    of the command path and of the audit's re-decide.

    ``max_events``: the game's length cap (its ``GameCreated`` term ``max_events``): a
    decision that brings the stream to it without ending the game is followed, in the same
    batch, by an abort (:func:`cap_length`).  ``house_bots``: the seats house bots hold
    (:func:`bot_seats` of its ``GameCreated``): a forfeit that leaves only them ends the
    game (:func:`unattended`)."""
    if isinstance(command, Abort):
        return abort(engine, state, command.reason, command.by, at)
    if seat is None:
        raise RuleViolation("invalid_intent", "Only an abort has no seat.")
    if isinstance(command, Resign | TimeOut):
        decision = forfeit(engine, state, seat, at, timed_out=isinstance(command, TimeOut), house_bots=house_bots)
    else:
        decision = decide(engine, state, seat, command, at)
    return cap_length(engine, decision, max_events, at)


def bot_seats(created: dict[str, Any]) -> frozenset[int] | None:
    """The seats of a game's ``GameCreated`` that house bots hold (its term ``house_bots``:
    their handles), ``None`` for a game created without the term (no house bot, or a game
    from before the rule, which must re-decide as it was recorded)."""
    handles = created.get("house_bots")
    if not isinstance(handles, list):
        return None
    names = {str(h).lower() for h in handles}
    return frozenset(s for s, p in enumerate(created.get("players") or ()) if str(p).lower() in names)


def unattended(state: State, house_bots: frozenset[int] | None) -> dict[str, Any] | None:
    """The result of a game that people played with house bots once every seat still
    playing is a house bot (every other seat resigned or ran out of time), else ``None``:
    the forfeit that leaves them alone closes the game with ``GameFinished``
    (``"reason": "forfeit"``, as when fewer than two seats are left).  The bots still
    playing share first place; the seats that left rank after them, in reverse order of
    forfeit (the last to leave best), as in :func:`final_result`.  A game of house bots
    only (an organiser's) is not ended."""
    if not house_bots:
        return None
    seats = range(seat_count(state))
    if all(s in house_bots for s in seats):
        return None
    out = forfeited(state)
    active = [s for s in seats if s not in out]
    if not active or any(s not in house_bots for s in active):
        return None
    return {
        "reason": "forfeit",
        "forfeited": list(out),
        "ranking": active + out[::-1],
        "ranks": {str(s): 1 for s in active} | {str(s): len(active) + 1 + i for i, s in enumerate(out[::-1])},
        "scores": {},
        "breakdown": {},
        "tiebreak": None,
    }


#: ``GameAborted.data.reason`` when a game reaches its length cap.
LENGTH_CAP = "max_events"


def cap_length(
    engine: Engine,
    decision: Decision,
    max_events: int | None,
    at: Head,
) -> Decision:
    """A game may not grow without bound (a Nautilus Industries game can go on for ever if
    nobody moves the stock): once a decision brings its stream to ``max_events`` events
    and the game goes on, it is aborted, unrated, by the platform, in the same batch as
    that decision (:func:`abort`, ``reason`` :data:`LENGTH_CAP`)."""
    if not max_events or decision.result is not None:
        return decision
    if at.version + len(decision.events) < max_events or not decision.events:
        return decision
    # The abort follows the decision in its batch, at its time, with no clock to move.
    ended = abort(engine, decision.state, LENGTH_CAP, "platform", replace(at.after(decision.events), clock=None))
    return Decision(decision.events + ended.events, ended.state, ended.result)
