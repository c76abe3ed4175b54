"""The decide pipeline: the one way a game's events come to be.

Every event of a stream is made here, and sealed (numbered, salted, digested
and hash-chained) here only:

* :func:`open_game` — ``GameCreated`` (the platform's opening, with the seed
  commitment) and the engine's setup events;
* :func:`decide` — one command of one seat: the engine's events, folded into
  the state, and ``GameFinished`` (result and revealed seed) when they end the
  game.

The command path (``service.core.commands``) writes what these return; the
audit (``service.audit.checks.redecide``) calls the very same functions on the
recorded intents and compares byte for byte, so the audit checks the code that
writes, not a copy of it.  Pure: no I/O, no clock; randomness only from the
seed (``docs/RNG.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from service.core import canonical
from service.core.records import NewEvent, StoredEvent
from service.games.base import Command, Engine, State
from service.games.rng import Rng, commitment

#: Events the platform writes around the engine's own.
GAME_CREATED = "GameCreated"
GAME_FINISHED = "GameFinished"
PLATFORM_EVENTS = frozenset({GAME_CREATED, GAME_FINISHED})

#: The Rng domain of ``engine.setup``: the stream version after ``GameCreated``.
#: A decision's domain is the stream version before it (see :func:`decide`).
SETUP_DOMAIN = 1


def seal(seed: bytes, game_id: str, first_seq: int, prev_hash: str, events: Sequence[NewEvent]) -> list[StoredEvent]:
    """Number and hash-chain ``events`` from ``first_seq`` after ``prev_hash``."""
    out = []
    for i, ev in enumerate(events):
        seq = first_seq + i
        dd, md, h = canonical.seal(seed, game_id, seq, ev.type, ev.schema_version, ev.data, ev.meta, prev_hash)
        out.append(StoredEvent(game_id, seq, ev.type, ev.schema_version, ev.data, ev.meta, dd, md, prev_hash, h))
        prev_hash = h
    return out


def created_data(
    players: list[str], game: str, rules_version: str, options: dict[str, Any], seed_commitment: str
) -> dict[str, Any]:
    """The opening event's data: everything public about the game's identity."""
    return {
        "game": game,
        "rules_version": rules_version,
        "players": list(players),
        "options": dict(options),
        "seed_commitment": seed_commitment,
    }


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
) -> list[StoredEvent]:
    """The sealed opening of a game: ``GameCreated`` and the engine's setup
    events.  Raises the engine's ``RuleViolation`` for a game that cannot be
    set up (player count, options)."""
    created = created_data(players, engine.name, engine.version, options, commitment(seed))
    setup = engine.setup(len(players), options, Rng(seed, domain=SETUP_DOMAIN))
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


def decide(
    engine: Engine,
    state: State,
    seat: int,
    command: Command,
    *,
    seed: bytes,
    game_id: str,
    version: int,
    head_hash: str,
    meta: dict[str, Any],
) -> Decision:
    """Decide ``command`` of ``seat`` at stream ``version`` (whose last event
    hashes to ``head_hash``) and seal what it causes.

    ``state`` is evolved IN PLACE (a copy per intent cost more than the rest
    of the decision); a caller that may not keep it (the append then fails)
    must drop it.  Raises the engine's ``RuleViolation`` before touching it."""
    events = engine.decide(state, seat, command, Rng(seed, domain=version))
    new = [NewEvent(e.type, e.data, meta) for e in events]
    evolve = engine.evolve
    for e in events:
        state = evolve(state, e)
    result = engine.result(state)
    sealed = seal(seed, game_id, version + 1, head_hash, new)
    if result is not None:
        head = sealed[-1].hash if sealed else head_hash
        closing = NewEvent(GAME_FINISHED, finished_data(result, seed, head), meta)
        sealed += seal(seed, game_id, version + 1 + len(sealed), head, [closing])
    return Decision(sealed, state, result)
