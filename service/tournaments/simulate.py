"""Run a whole tournament through ``rules.decide`` with results from the caller
(pure: the caller supplies any randomness).

Used by the tests (a full simulated tournament checked by the audit, the
pairing properties) and meant for demos and benchmarks: it is the worker's loop
without the games, so what it records is what the platform would record for
the same results.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from service.tournaments.commands import (
    Command,
    CreateTournament,
    FinishTable,
    RegisterPlayers,
    StartTable,
    StartTournament,
)
from service.tournaments.events import ABORTED, COMPLETED, FORFEIT, TournamentEvent
from service.tournaments.evolve import RUNNING, State, evolve
from service.tournaments.rules import decide

#: ``(round, table, players in seat order) -> the game's result`` (in seats).
ResultOf = Callable[[int, int, list[str]], dict[str, Any]]


class Chooser(Protocol):
    """What :func:`random_result` needs of a ``random.Random``."""

    def random(self) -> float: ...

    def randrange(self, stop: int) -> int: ...


def game_id(round_: int, table: int) -> str:
    return f"r{round_}t{table}"


def run(
    create: CreateTournament,
    players: Sequence[str],
    seed: bytes,
    result_of: ResultOf,
    *,
    after_round: Callable[[State], None] | None = None,
    commands: Mapping[int, Sequence[Command]] | None = None,
) -> tuple[list[TournamentEvent], State]:
    """Create, register ``players``, start, then play every round: start each
    table, then finish them in order with ``result_of``.  Returns every event
    and the final state; ``after_round`` sees the state after each round's pairing
    (before its games).  ``commands[r]`` are decided once round ``r`` is paired,
    before its games (``commands[0]``: before the start): withdrawals, late
    registrations, an abort, which stops the run."""
    extra = commands or {}
    events: list[TournamentEvent] = []
    state: State | None = None

    def apply(batch: list[TournamentEvent]) -> State:
        nonlocal state
        for event in batch:
            state = evolve(state, event)
        events.extend(batch)
        assert state is not None
        return state

    apply(decide(None, create, seed=seed))
    apply(decide(state, RegisterPlayers(tuple(players), by=create.by), seed=seed))
    for command in extra.get(0, ()):
        apply(decide(state, command, seed=seed))
    current = apply(decide(state, StartTournament(by=create.by), seed=seed))
    while current["status"] == RUNNING:
        r = current["history"][-1]["round"]
        for command in extra.get(r, ()):
            current = apply(decide(current, command, seed=seed))
        if current["status"] != RUNNING:
            break
        if after_round is not None:
            after_round(current)
        rnd = current["history"][-1]
        for table in rnd["tables"]:
            current = apply(decide(current, StartTable(r, table["table"], game_id(r, table["table"])), seed=seed))
        for table in list(current["history"][-1]["tables"]):
            result = result_of(r, table["table"], list(table["players"]))
            finish = FinishTable(r, table["table"], game_id(r, table["table"]), result)
            current = apply(decide(current, finish, seed=seed))
    return events, current


def random_result(chooser: Chooser, size: int, *, forfeits: float = 0.1, aborts: float = 0.03) -> dict[str, Any]:
    """A plausible game result for ``size`` seats, in the platform's shape
    (``service.domain.pipeline.final_result``): scores from 0 to 9 (so ties happen),
    some seats forfeited, now and then a game that ended by forfeit or was aborted."""
    left = [s for s in range(size) if chooser.random() < forfeits]
    roll = chooser.random()
    if roll < aborts:
        return {"reason": ABORTED, "forfeited": left, "ranking": [], "ranks": {}, "scores": {}}
    stayed = [s for s in range(size) if s not in left]
    if len(stayed) < 2:  # the game ended because fewer than two were left
        ranking = stayed + left[::-1]
        return {
            "reason": FORFEIT,
            "forfeited": left,
            "ranking": ranking,
            "ranks": {str(s): i + 1 for i, s in enumerate(ranking)},
            "scores": {},
        }
    scores = {s: chooser.randrange(10) for s in range(size)}
    order = sorted(stayed, key=lambda s: (-scores[s], s))
    ranks = {str(s): 1 + sum(1 for o in stayed if scores[o] > scores[s]) for s in stayed}
    for i, s in enumerate(left[::-1]):
        ranks[str(s)] = len(stayed) + 1 + i
    return {
        "reason": COMPLETED,
        "forfeited": left,
        "ranking": order + left[::-1],
        "ranks": ranks,
        "scores": {str(s): v for s, v in scores.items()},
    }
