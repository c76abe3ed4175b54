"""Rounds run themselves: :meth:`RoundRunner.advance` (docs/TOURNAMENTS.md "The worker").

``advance(tournament_id)`` does whatever the tournament's current round is
waiting for, and again, until nothing is left to do:

* a table without its game: create the game (the table's players in its seat
  order, no draw, every seat an account, the tournament's clock and rating,
  created by its organiser) and record ``TableStarted``;
* a table whose game has ended (``GameFinished`` in its stream, whatever the
  reason: completed, forfeit, timeout, resignation, abort): record
  ``FinishTable`` with the game's result; the round's last one makes
  ``decide`` pair the next round (whose tables the next pass starts) or finish
  the tournament.

An aborted tournament (TRN-070) pairs no more: ``abort_games`` aborts, through
the game service, every game of its last round that has not ended, the games
``AbortTournament``'s caller did not reach included (one a worker created while
the abort was being recorded).

It is idempotent and safe to run twice at once.  A table's game id is derived
from ``(tournament, round, table)`` (:func:`table_game_id`), and the game is
created in one transaction with its row in ``tournament_games``: of two
workers creating it, one fails on the primary key and records nothing (one
unit of work: the game's projection is nudged only once it commits).  Each
tournament event is appended at the head it was decided on, so of two workers
recording one table, the second is refused by ``decide``
(``table_already_started``, ``table_already_finished``) after folding the
first's event, and writes nothing.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

import psycopg

from service.adapters.tournament_store import TournamentStore
from service.domain import pipeline
from service.domain.errors import Conflicting, DomainError
from service.service_layer.commands import GameService
from service.service_layer.tournaments import TournamentService
from service.service_layer.unit_of_work import UnitOfWork
from service.tournaments.commands import FinishTable, StartTable
from service.tournaments.evolve import ABORTED, RUNNING, State

log = logging.getLogger(__name__)

#: Passes of one ``advance`` at most: a pass starts a round's tables or records
#: its results; a round needs two, and a few more cover a race lost to another worker.
MAX_PASSES = 8


def table_game_id(tournament_id: str, round_: int, table: int) -> str:
    """The game id of a table: the same for every worker, so a game is created once."""
    return str(uuid.uuid5(uuid.UUID(tournament_id), f"round {round_} table {table}"))


def _rated(state: State, players: list[str]) -> bool:
    """TRN-080: a game against the bye bot is rated only when the organiser asked."""
    bot = state.get("bye_bot")
    if bot is not None and bot["handle"] in players:
        return bool(state["rated"] and bot["rated"])
    return bool(state["rated"])


class RoundRunner:
    def __init__(self, tournaments: TournamentService, games: GameService, uow: Callable[[], UnitOfWork]):
        self.tournaments = tournaments
        self.games = games
        self.uow = uow

    @property
    def store(self) -> TournamentStore:
        return self.tournaments.store

    def advance(self, tournament_id: str) -> int:
        """Start the current round's tables and record its finished games, until
        nothing changes.  Returns the number of commands recorded."""
        recorded = 0
        for _ in range(MAX_PASSES):
            state = self.tournaments.load(tournament_id).state
            if state["status"] == ABORTED:
                self.abort_games(tournament_id, state)
                break
            if state["status"] != RUNNING or not state["history"]:
                break
            done = self._pass(tournament_id, state)
            if not done:
                break
            recorded += done
        return recorded

    def _pass(self, tid: str, state: State) -> int:
        rnd = state["history"][-1]
        n = rnd["round"]
        done = 0
        for table in rnd["tables"]:
            if table["game_id"] is None:
                game_id = table_game_id(tid, n, table["table"])
                self._create_game(tid, state, n, table, game_id)
                done += self._record(tid, StartTable(n, table["table"], game_id))
        playing = {t["game_id"]: t for t in rnd["tables"] if t["game_id"] is not None and t["result"] is None}
        for game_id, data in self.store.finished_games(list(playing)).items():
            table = playing[game_id]
            result = pipeline.shown_result(data["result"])
            done += self._record(tid, FinishTable(n, table["table"], game_id, result))
        return done

    def abort_games(self, tid: str, state: State) -> list[str]:
        """TRN-070: abort every game of an aborted tournament's last round that has
        not ended (``GameAborted`` by the tournament's aborter, with its reason);
        returns the ids aborted.  A table's game id is derived, so a game created
        but not yet recorded by ``TableStarted`` is found too."""
        aborted = state.get("aborted")
        if aborted is None or not state["history"]:
            return []
        rnd = state["history"][-1]
        ids = [table_game_id(tid, rnd["round"], t["table"]) for t in rnd["tables"] if t["result"] is None]
        ended = self.store.finished_games(ids)
        done = []
        by = "operator" if aborted["by"] is None else f"organiser:{aborted['by']}"  # as POST /v1/games/{id}/abort
        for game_id in ids:
            if game_id in ended:
                continue
            try:
                self.games.abort(game_id, f"tournament aborted: {aborted['reason']}", by)
            except DomainError as exc:  # not created (never will be now), or ended meanwhile
                log.info("tournament %s: game %s not aborted (%s)", tid, game_id, exc.code)
                continue
            done.append(game_id)
        return done

    def _record(self, tid: str, command: StartTable | FinishTable) -> int:
        try:
            self.tournaments.execute(tid, command)
        except Conflicting as exc:
            # Another worker recorded it first (or the round moved on, or it was aborted:
            # the next pass aborts the game just created): nothing to do.
            log.info("tournament %s: %s not recorded (%s)", tid, type(command).__name__, exc.code)
            return 1 if exc.code == "tournament_not_running" else 0
        return 1

    def _create_game(self, tid: str, state: State, round_: int, table: dict[str, Any], game_id: str) -> None:
        players = list(table["players"])
        try:
            with self.uow() as uow:
                self.games.create_game(
                    state["game"],
                    players,
                    {},
                    clock=state["clock"],
                    uow=uow,
                    game_id=game_id,
                    accounts=[True] * len(players),
                    rated=_rated(state, players),
                    created_by=state["organiser"],
                    tournament={"id": tid, "round": round_, "table": table["table"]},
                )
                self.store.link_game(uow.conn, game_id, tid, round_, table["table"])
                uow.commit()
        except psycopg.errors.UniqueViolation:
            return  # created already (by another worker, or by a pass that stopped before TableStarted)
