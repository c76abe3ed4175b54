"""Fold a tournament's events into its state: a plain JSON-compatible dict.

``evolve`` never changes the state it is given (it returns a new one) and never
keeps references to an event's data.  It also refuses an event that cannot
follow the ones before it (:class:`StreamError`): ``rules.decide`` never makes
one, so a refusal here means a stream that was tampered with or is corrupt,
which is what the audit must say instead of folding nonsense.

The state::

    {"name", "game", "organiser", "format", "table_size", "table_sizes", "rounds",
     "clock", "rated", "points", "seed_commitment", "pairing",   # TournamentCreated
     "status": "registering" | "running" | "finished",
     "players": [handles, in registration order],
     "lot": [handles, in the drawn order],          # TournamentStarted
     "started_by": handle | None,
     "history": [{"round": 1, "byes": [...],
                  "tables": [{"table": 1, "players": [...seat order], "game_id": None | str,
                              "result": None | {...}}]}],
     "standings": None | [{"rank", "player"}],      # TournamentFinished, TournamentAborted
     "seed": None | hex,                            # revealed at the end
     "late": [{"player", "round"}],                 # LatePlayerRegistered
     "withdrawals": [{"player", "by", "reason", "round"}],   # PlayerWithdrawn
     "aborted": None | {"by", "reason", "round"}}   # TournamentAborted

``late_until_round`` is in the state only when the terms set it.  A state folded
before late entries, withdrawals and aborts existed lacks their keys: read them
with :func:`withdrawn`, :func:`late_until` and ``state.get("aborted")``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from service.domain.identity import handle_key, reserved_handle
from service.games.base import clone_state
from service.tournaments.events import (
    MAX_PLAYERS,
    LatePlayerRegistered,
    MalformedEvent,
    PlayerRegistered,
    PlayerWithdrawn,
    RoundPaired,
    TableFinished,
    TableStarted,
    TournamentAborted,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
    TournamentStarted,
    read_result,
)

State = dict[str, Any]
REGISTERING, RUNNING, FINISHED, ABORTED = "registering", "running", "finished", "aborted"


class StreamError(ValueError):
    """An event that cannot follow the ones before it."""


def evolve(state: State | None, event: TournamentEvent) -> State:
    """The state after ``event`` (a new dict; ``state`` is left as it was)."""
    if isinstance(event, TournamentCreated):
        if state is not None:
            raise StreamError("TournamentCreated must open the stream, and only once")
        return {
            **event.to_data(),
            "status": REGISTERING,
            "players": [],
            "lot": [],
            "started_by": None,
            "history": [],
            "standings": None,
            "seed": None,
            "late": [],
            "withdrawals": [],
            "aborted": None,
        }
    if state is None:
        raise StreamError(f"{event.TYPE} before TournamentCreated")
    state = clone_state(state)
    handler = _HANDLERS.get(type(event))
    if handler is None:  # pragma: no cover - every event class has a handler
        raise StreamError(f"no fold for {event.TYPE}")
    handler(state, event)
    return state


def fold(events: Iterable[TournamentEvent], state: State | None = None) -> State:
    for event in events:
        state = evolve(state, event)
    if state is None:
        raise StreamError("a tournament stream holds at least TournamentCreated")
    return state


def _need_status(state: State, status: str, what: str) -> None:
    if state["status"] != status:
        raise StreamError(f"{what} while the tournament is {state['status']}")


def withdrawn(state: State, through: int | None = None) -> set[str]:
    """The players who withdrew (TRN-060); with ``through``, only those who did
    before round ``through + 1`` was paired."""
    return {w["player"] for w in state.get("withdrawals", ()) if through is None or w["round"] <= through}


def active(state: State) -> list[str]:
    """The players the next round pairs, in registration order."""
    gone = withdrawn(state)
    return [p for p in state["players"] if p not in gone]


def bye_bot(state: State) -> str | None:
    """TRN-080: the handle of the house bot that plays the byes, if the terms name one."""
    bot = state.get("bye_bot")
    return None if bot is None else bot["handle"]


def is_bot(state: State, handle: str) -> bool:
    """A house bot: the bye bot, or a registered player of the house bots' handle form."""
    return handle == bye_bot(state) or reserved_handle(handle)


def late_until(state: State) -> int | None:
    """TRN-050: the last round a late entrant may be paired in first (``None``: none)."""
    return state.get("late_until_round")


def last_complete_round(state: State) -> int:
    """The last round whose every table has finished (0: none)."""
    history = state["history"]
    if history and round_finished(history[-1]):
        return len(history)
    return max(0, len(history) - 1)


def _late_registered(state: State, event: LatePlayerRegistered) -> None:
    _need_status(state, RUNNING, "a late registration")
    until = late_until(state)
    if until is None or event.round != len(state["history"]) + 1 or event.round > until:
        raise StreamError(f"{event.player} cannot join late for round {event.round}")
    _check_new_player(state, event.player)
    state["players"].append(event.player)
    state["lot"].append(event.player)  # TRN-051: after everyone drawn, in order of joining
    state.setdefault("late", []).append(event.to_data())


def _withdrew(state: State, event: PlayerWithdrawn) -> None:
    if state["status"] not in (REGISTERING, RUNNING):
        raise StreamError(f"a withdrawal while the tournament is {state['status']}")
    if event.player not in state["players"] or event.player in withdrawn(state):
        raise StreamError(f"{event.player} cannot withdraw: not registered, or gone already")
    if event.round != len(state["history"]):
        raise StreamError(f"a withdrawal says round {event.round}, but {len(state['history'])} were paired")
    state.setdefault("withdrawals", []).append(event.to_data())


def _aborted(state: State, event: TournamentAborted) -> None:
    if state["status"] not in (REGISTERING, RUNNING):
        raise StreamError(f"an abort while the tournament is {state['status']}")
    if event.round != last_complete_round(state):
        raise StreamError(f"the standings of an abort are those after round {last_complete_round(state)}")
    state["status"] = ABORTED
    state["standings"] = [p.to_data() for p in event.standings]
    state["seed"] = event.seed
    state["aborted"] = {"by": event.by, "reason": event.reason, "round": event.round}


def _registered(state: State, event: PlayerRegistered) -> None:
    _need_status(state, REGISTERING, "a registration")
    _check_new_player(state, event.player)
    state["players"].append(event.player)


def _check_new_player(state: State, player: str) -> None:
    if handle_key(player) in {handle_key(p) for p in state["players"]}:
        raise StreamError(f"{player} is registered twice")
    if len(state["players"]) >= MAX_PLAYERS:  # TRN-003: what a fold, a pairing or an audit may face
        raise StreamError(f"more than {MAX_PLAYERS} players")


def _started(state: State, event: TournamentStarted) -> None:
    _need_status(state, REGISTERING, "a start")
    if sorted(event.lot) != sorted(state["players"]):
        raise StreamError("the lot must hold every registered player once")
    if state["rounds"] is not None and event.rounds != state["rounds"]:
        raise StreamError("the start must keep the rounds the tournament was created with")
    state["status"] = RUNNING
    state["rounds"] = event.rounds
    state["lot"] = list(event.lot)
    state["started_by"] = event.by


def current_round(state: State) -> dict[str, Any] | None:
    """The last round paired, or ``None`` before round 1."""
    return state["history"][-1] if state["history"] else None


def round_finished(rnd: dict[str, Any]) -> bool:
    return all(t["result"] is not None for t in rnd["tables"])


def _paired(state: State, event: RoundPaired) -> None:
    _need_status(state, RUNNING, "a pairing")
    last = current_round(state)
    if event.round != len(state["history"]) + 1 or event.round > state["rounds"]:
        raise StreamError(f"round {event.round} cannot be paired now")
    if last is not None and not round_finished(last):
        raise StreamError(f"round {event.round} paired before round {last['round']} finished")
    bot = bye_bot(state)
    seated = [p for t in event.tables for p in t.players if p != bot] + list(event.byes)
    bot_seats = sum(p == bot for t in event.tables for p in t.players)
    if bot_seats > 1 or (bot_seats and event.byes):
        raise StreamError(f"round {event.round} seats the bye bot more than once, or with byes left")
    if sorted(seated) != sorted(active(state)):
        raise StreamError(f"round {event.round} must seat or give a bye to every player still in exactly once")
    if not event.tables or any(len(t.players) not in state["table_sizes"] for t in event.tables):
        raise StreamError(f"round {event.round} has a table of a size the tournament does not allow")
    state["history"].append(
        {
            "round": event.round,
            "byes": list(event.byes),
            "tables": [
                {"table": t.table, "players": list(t.players), "game_id": None, "result": None} for t in event.tables
            ],
        }
    )


def find_table(state: State, round_: int, table: int) -> dict[str, Any] | None:
    if not 1 <= round_ <= len(state["history"]):
        return None
    tables = state["history"][round_ - 1]["tables"]
    return tables[table - 1] if 1 <= table <= len(tables) else None


def _table_started(state: State, event: TableStarted) -> None:
    _need_status(state, RUNNING, "a table start")
    table = find_table(state, event.round, event.table)
    if table is None or event.round != len(state["history"]):
        raise StreamError(f"round {event.round} has no table {event.table} to start now")
    if table["game_id"] is not None:
        raise StreamError(f"table {event.table} of round {event.round} started twice")
    table["game_id"] = event.game_id


def _table_finished(state: State, event: TableFinished) -> None:
    _need_status(state, RUNNING, "a table result")
    table = find_table(state, event.round, event.table)
    if table is None or table["game_id"] != event.game_id or table["result"] is not None:
        raise StreamError(f"table {event.table} of round {event.round} cannot finish with game {event.game_id}")
    try:
        table["result"] = read_result(event.result, len(table["players"]))
    except MalformedEvent as exc:
        raise StreamError(f"table {event.table} of round {event.round}: {exc}") from None


def _finished(state: State, event: TournamentFinished) -> None:
    _need_status(state, RUNNING, "the end")
    last = current_round(state)
    if len(state["history"]) != state["rounds"] or last is None or not round_finished(last):
        raise StreamError("the tournament finished before its last round did")
    state["status"] = FINISHED
    state["standings"] = [p.to_data() for p in event.standings]
    state["seed"] = event.seed


_HANDLERS: dict[type, Any] = {
    PlayerRegistered: _registered,
    TournamentStarted: _started,
    RoundPaired: _paired,
    TableStarted: _table_started,
    TableFinished: _table_finished,
    TournamentFinished: _finished,
    LatePlayerRegistered: _late_registered,
    PlayerWithdrawn: _withdrew,
    TournamentAborted: _aborted,
}
