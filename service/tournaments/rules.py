"""``decide``: the one place a tournament's events are made (TRN-001).

``decide(state, command, seed=...)`` checks a command against the state and
returns every event it causes, follow-ups included, or refuses it with a
domain error of ``service.domain.errors`` (the HTTP layer maps them to statuses)
and nothing is written.  The follow-ups are automatic, as in a game:

* ``StartTournament`` -> ``TournamentStarted`` (rounds fixed, lot drawn) and
  round 1's ``RoundPaired``;
* the ``FinishTable`` of a round's last table -> the next round's
  ``RoundPaired``, or after the last round ``TournamentFinished`` (the final
  standings and the revealed seed).

Every refusal (TRN-015) comes before anything is made, so a refused command
writes nothing.  The audit re-decides a recorded stream with these same functions
(``audit.py``), so what it recomputes is exactly what the command side did.
"""

from __future__ import annotations

from typing import Any

from service.domain import clocks
from service.domain.errors import Conflicting, Forbidden, NotFound, Refused
from service.domain.identity import HANDLE_RULE, bot_handle, handle_key, valid_handle
from service.games import registry
from service.games.rng import Rng, commitment
from service.tournaments import pairing, standings
from service.tournaments.commands import (
    AbortTournament,
    Command,
    CreateTournament,
    FinishTable,
    RegisterPlayers,
    StartTable,
    StartTournament,
    WithdrawPlayer,
)
from service.tournaments.events import (
    FORMATS,
    MAX_GAME_ID,
    MAX_NAME,
    MAX_PLAYERS,
    MAX_REASON,
    MAX_ROUNDS,
    PAIRING_VERSION,
    ROUND_ROBIN,
    SWISS,
    FinalPlace,
    LatePlayerRegistered,
    MalformedEvent,
    PlayerRegistered,
    PlayerWithdrawn,
    TableFinished,
    TableStarted,
    TournamentAborted,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
    TournamentStarted,
    read_points,
    read_result,
    table_result,
)
from service.tournaments.evolve import (
    ABORTED,
    REGISTERING,
    RUNNING,
    State,
    active,
    bye_bot,
    evolve,
    find_table,
    last_complete_round,
    late_until,
    round_finished,
    withdrawn,
)

#: TRN-003: ``MAX_PLAYERS`` (a Swiss round of 256 pairs in about a second, see
#: docs/TOURNAMENTS.md) and ``MAX_ROUNDS`` are the stream's own bounds (``events``).


def decide(state: State | None, command: Command, *, seed: bytes) -> list[TournamentEvent]:
    """The events ``command`` causes, follow-ups included; ``state`` is not changed."""
    if len(seed) != 32:
        raise ValueError("a tournament's seed is 32 bytes")
    if isinstance(command, CreateTournament):
        if state is not None:
            raise Conflicting("tournament_exists", "This tournament has already been created.")
        return [_create(command, seed)]
    if state is None:
        raise NotFound("tournament_not_found", "No such tournament.")
    if isinstance(command, RegisterPlayers):
        return _register(state, command)
    if isinstance(command, StartTournament):
        return _start(state, command, seed)
    if isinstance(command, StartTable):
        return [_start_table(state, command)]
    if isinstance(command, FinishTable):
        return _finish_table(state, command, seed)
    if isinstance(command, WithdrawPlayer):
        return [_withdraw(state, command)]
    if isinstance(command, AbortTournament):
        return [_abort(state, command, seed)]
    raise TypeError(f"not a tournament command: {command!r}")


def _invalid(message: str, field: str) -> Refused:
    return Refused("invalid_tournament", message, {"field": field})


def _create(cmd: CreateTournament, seed: bytes) -> TournamentCreated:
    if not isinstance(cmd.name, str) or not cmd.name.strip() or len(cmd.name) > MAX_NAME or not cmd.name.isprintable():
        raise _invalid(f"'name' must be 1 to {MAX_NAME} printable characters.", "name")
    try:
        engine = registry.get(cmd.game)
    except (registry.UnknownGame, TypeError):
        raise Refused("unknown_game", f"No game called {cmd.game!r}.", {"games": registry.registered()}) from None
    lo, hi = engine.min_players, engine.max_players
    if type(cmd.table_size) is not int or not lo <= cmd.table_size <= hi:
        raise _invalid(f"'table_size' must be from {lo} to {hi} for {cmd.game}.", "table_size")
    if cmd.table_sizes is None:
        sizes = tuple(range(lo, cmd.table_size + 1))  # TRN-021: never larger than asked
    else:
        given = cmd.table_sizes if isinstance(cmd.table_sizes, list | tuple) else [None]
        sizes = tuple(sorted({s for s in given if type(s) is int}))
        if len(sizes) != len(given) or not all(lo <= s <= hi for s in sizes) or cmd.table_size not in sizes:
            raise _invalid(
                f"'table_sizes' must be sizes from {lo} to {hi} for {cmd.game} and include 'table_size'.",
                "table_sizes",
            )
    if cmd.format not in FORMATS:
        raise _invalid(f"'format' must be one of {', '.join(FORMATS)}.", "format")
    rounds = cmd.rounds
    if rounds is None and cmd.format == SWISS:
        raise _invalid("A Swiss tournament needs 'rounds'.", "rounds")
    if rounds is not None and (type(rounds) is not int or not 1 <= rounds <= MAX_ROUNDS):
        raise _invalid(f"'rounds' must be from 1 to {MAX_ROUNDS}.", "rounds")
    clock = None
    if cmd.clock is not None:
        try:
            clock = clocks.validate(cmd.clock)
        except clocks.InvalidClock as exc:
            raise Refused("invalid_clock", str(exc)) from None
    if type(cmd.rated) is not bool:
        raise _invalid("'rated' must be true or false.", "rated")
    try:
        points = standings.default_points(sizes) if cmd.points is None else read_points(cmd.points, sizes)
    except MalformedEvent as exc:
        raise _invalid(str(exc), "points") from None
    late = cmd.late_until_round
    if late is not None:  # TRN-050: a Swiss only (a round robin's schedule is fixed at the start)
        if cmd.format != SWISS:
            raise _invalid("Late registration ('late_until_round') is for a Swiss tournament.", "late_until_round")
        if type(late) is not int or not 2 <= late <= (rounds or 0):
            raise _invalid("'late_until_round' must be from 2 to 'rounds'.", "late_until_round")
    bot = None
    if cmd.bye_bot is not None:  # TRN-080
        bye_given: dict[str, Any] = cmd.bye_bot if isinstance(cmd.bye_bot, dict) else {}
        level, bot_rated = bye_given.get("level"), bye_given.get("rated", False)
        if set(bye_given) - {"level", "rated"} or type(level) is not int or not 1 <= level <= 9:
            raise _invalid('\'bye_bot\' is {"level": 1 to 9, "rated": true or false}.', "bye_bot")
        if type(bot_rated) is not bool:
            raise _invalid("'bye_bot.rated' must be true or false.", "bye_bot")
        bot = {"handle": bot_handle(cmd.game, level), "level": level, "rated": bot_rated}
    return TournamentCreated(
        name=cmd.name,
        game=cmd.game,
        organiser=cmd.by,
        format=cmd.format,
        table_size=cmd.table_size,
        table_sizes=sizes,
        rounds=rounds,
        clock=clock,
        rated=cmd.rated,
        points=points,
        seed_commitment=commitment(seed),
        pairing=PAIRING_VERSION,
        late_until_round=late,
        bye_bot=bot,
    )


def _organiser_only(state: State, by: str | None) -> None:
    """The operator (``by=None``) or the organiser who created the tournament."""
    if by is not None and by != state["organiser"]:
        raise Forbidden("not_your_tournament", "Only the organiser of this tournament (or the operator) may do this.")


def _late_open(state: State) -> bool:
    """TRN-050: a running Swiss takes late entrants until round ``late_until_round`` is paired."""
    until = late_until(state)
    return state["status"] == RUNNING and until is not None and len(state["history"]) < until


def _register(state: State, cmd: RegisterPlayers) -> list[TournamentEvent]:
    late = _late_open(state)
    if state["status"] != REGISTERING and not late:
        raise Conflicting("registration_closed", f"Registration is closed: the tournament is {state['status']}.")
    handles = tuple(cmd.handles)
    if not handles or len(handles) > MAX_PLAYERS:
        raise Refused("invalid_handle", f"Register 1 to {MAX_PLAYERS} handles at a time.")
    if cmd.by is not None and cmd.by != state["organiser"] and handles != (cmd.by,):
        raise Forbidden("not_your_tournament", "A player may register only itself.")
    bad = [h for h in handles if not valid_handle(h)]
    if bad:
        raise Refused("invalid_handle", f"A handle is {HANDLE_RULE}.", {"handles": bad[:10]})
    robot = bye_bot(state)
    if robot is not None and handle_key(robot) in {handle_key(h) for h in handles}:
        raise Refused("invalid_handle", f"{robot} plays the byes of this tournament; it cannot also be registered.")
    known = {handle_key(p) for p in state["players"]}
    seen: set[str] = set()
    twice = []
    for h in handles:
        if handle_key(h) in known or handle_key(h) in seen:
            twice.append(h)
        seen.add(handle_key(h))
    if twice:
        raise Conflicting("already_registered", "A player may register only once.", {"handles": twice[:10]})
    if len(state["players"]) + len(handles) > MAX_PLAYERS:
        raise Refused("tournament_full", f"A tournament takes at most {MAX_PLAYERS} players.")
    if late:
        return [LatePlayerRegistered(h, len(state["history"]) + 1) for h in handles]
    return [PlayerRegistered(h) for h in handles]


def _start(state: State, cmd: StartTournament, seed: bytes) -> list[TournamentEvent]:
    if state["status"] == ABORTED:
        raise Conflicting("tournament_not_running", f"The tournament is {state['status']}.")
    if state["status"] != REGISTERING:
        raise Conflicting("already_started", "The tournament has already started.")
    _organiser_only(state, cmd.by)
    players = active(state)  # TRN-060: a no-show withdrawn before the start is not seated
    if pairing.table_plan(len(players), state["table_sizes"], state["table_size"]) is None:
        raise Refused(
            "field_too_small",
            f"{len(players)} players cannot fill one table (the smallest allowed is {state['table_sizes'][0]}).",
            {"players": len(players), "smallest_table": state["table_sizes"][0]},
        )
    if state["format"] == ROUND_ROBIN and len(players) > pairing.MAX_ROUND_ROBIN_PLAYERS:
        raise Refused(
            "field_too_large",
            f"A round robin takes at most {pairing.MAX_ROUND_ROBIN_PLAYERS} players; play Swiss.",
            {"players": len(players), "most": pairing.MAX_ROUND_ROBIN_PLAYERS},
        )
    lot = pairing.draw_lot(state["players"], seed)
    rounds = state["rounds"]
    if rounds is None:  # TRN-027: a round robin as long as it takes
        rounds = pairing.round_robin_length({**state, "lot": lot}, seed)
    started = TournamentStarted(cmd.by, rounds, tuple(lot))
    return [started, pairing.pair(evolve(state, started), Rng(seed, pairing.round_domain(1)))]


def _table(state: State, round_: int, table: int) -> dict[str, Any]:
    if state["status"] != RUNNING:
        raise Conflicting("tournament_not_running", f"The tournament is {state['status']}.")
    found = find_table(state, round_, table) if type(round_) is int and type(table) is int else None
    if found is None:
        raise NotFound("round_table_not_found", f"Round {round_!r} has no table {table!r}.")
    return found


def _start_table(state: State, cmd: StartTable) -> TableStarted:
    table = _table(state, cmd.round, cmd.table)
    if cmd.round != len(state["history"]):
        raise Conflicting("round_over", f"Round {cmd.round} is over.")
    if not isinstance(cmd.game_id, str) or not 0 < len(cmd.game_id) <= MAX_GAME_ID:
        raise Refused("invalid_game_id", f"A game id is 1 to {MAX_GAME_ID} characters.")
    if table["game_id"] is not None:
        raise Conflicting("table_already_started", f"Table {cmd.table} of round {cmd.round} has its game.")
    return TableStarted(cmd.round, cmd.table, cmd.game_id)


def _finish_table(state: State, cmd: FinishTable, seed: bytes) -> list[TournamentEvent]:
    table = _table(state, cmd.round, cmd.table)
    if table["game_id"] is None or table["game_id"] != cmd.game_id:
        raise Conflicting("wrong_game", f"Game {cmd.game_id!r} is not the game of this table.")
    if table["result"] is not None:
        raise Conflicting("table_already_finished", f"Table {cmd.table} of round {cmd.round} has its result.")
    try:
        result = read_result(table_result(cmd.result), len(table["players"]))
    except (MalformedEvent, AttributeError) as exc:
        raise Refused("invalid_result", f"Not a game result for this table: {exc}") from None
    finished = TableFinished(cmd.round, cmd.table, cmd.game_id, result)
    out: list[TournamentEvent] = [finished]
    after = evolve(state, finished)
    if round_finished(after["history"][-1]):
        if len(after["history"]) < after["rounds"]:
            out.append(pairing.pair(after, Rng(seed, pairing.round_domain(len(after["history"]) + 1))))
        else:
            final = tuple(FinalPlace(r.rank, r.player) for r in standings.standings(after))
            out.append(TournamentFinished(final, seed.hex()))
    return out


def _reason(reason: str | None, required: bool) -> str | None:
    if reason is None and not required:
        return None
    if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON or not reason.isprintable():
        raise Refused("invalid_reason", f"Give a 'reason' of 1 to {MAX_REASON} printable characters.")
    return reason


def _withdraw(state: State, cmd: WithdrawPlayer) -> PlayerWithdrawn:
    """TRN-060: from the next round's pairing on; games already paired are not touched."""
    if state["status"] not in (REGISTERING, RUNNING):
        raise Conflicting("tournament_not_running", f"The tournament is {state['status']}.")
    wanted = handle_key(cmd.player) if isinstance(cmd.player, str) else None
    player = next((p for p in state["players"] if handle_key(p) == wanted), None)
    # A player names itself whether or not it is registered (404 not_registered if not).
    self_ = cmd.by is not None and handle_key(cmd.by) == wanted
    if cmd.by is not None and cmd.by != state["organiser"] and not self_:
        raise Forbidden("not_your_tournament", "A player may withdraw only itself.")
    if player is None:
        raise NotFound("not_registered", f"{cmd.player!r} is not registered in this tournament.")
    if player in withdrawn(state):
        raise Conflicting("already_withdrawn", f"{player} has withdrawn already.")
    reason = _reason(cmd.reason, required=not self_)
    left = len(active(state)) - 1
    # TRN-062: a round still to pair must seat at least one table.
    more = state["status"] == RUNNING and len(state["history"]) < state["rounds"]
    if more and pairing.table_plan(left, state["table_sizes"], state["table_size"]) is None:
        raise Refused(
            "field_too_small",
            f"Without {player}, {left} players cannot fill one table for the rounds to come.",
            {"players": left, "smallest_table": state["table_sizes"][0]},
        )
    return PlayerWithdrawn(player, cmd.by, reason, len(state["history"]))


def _abort(state: State, cmd: AbortTournament, seed: bytes) -> TournamentAborted:
    """TRN-070: no further round; the standings frozen after the last complete round;
    the seed revealed.  Its running games are aborted by the caller, through the game
    service (``service.service_layer.tournament_rounds``)."""
    if state["status"] not in (REGISTERING, RUNNING):
        raise Conflicting("tournament_not_running", f"The tournament is {state['status']}.")
    _organiser_only(state, cmd.by)
    reason = _reason(cmd.reason, required=True)
    assert reason is not None
    through = last_complete_round(state)
    final = tuple(FinalPlace(r.rank, r.player) for r in standings.standings(state, through))
    return TournamentAborted(cmd.by, reason, through, final, seed.hex())
