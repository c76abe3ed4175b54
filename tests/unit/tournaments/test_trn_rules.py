"""``decide``: the tournament's commands, their refusals and the automatic follow-ups
(TRN-001, TRN-003, TRN-010..TRN-015)."""

from __future__ import annotations

import copy
import hashlib
import random

import pytest
from support.tournament_states import SEED

from service.domain.errors import Conflicting, Forbidden, NotFound, Refused
from service.tournaments import pairing, rules
from service.tournaments.commands import (
    CreateTournament,
    FinishTable,
    RegisterPlayers,
    StartTable,
    StartTournament,
)
from service.tournaments.events import (
    PAIRING_VERSION,
    PlayerRegistered,
    RoundPaired,
    TableFinished,
    TableStarted,
    TournamentCreated,
    TournamentFinished,
    TournamentStarted,
)
from service.tournaments.evolve import fold
from service.tournaments.simulate import random_result

CUP = CreateTournament("Winter Cup", "nauticus", 4, by="org", rounds=2)


def created(command: CreateTournament = CUP) -> dict:
    return fold(rules.decide(None, command, seed=SEED))


def registered(players: int, command: CreateTournament = CUP) -> dict:
    state = created(command)
    handles = tuple(f"pl{i:02d}" for i in range(players))
    return fold(rules.decide(state, RegisterPlayers(handles, by="org"), seed=SEED), state)


def refused(kind: type, code: str, state, command) -> None:
    before = copy.deepcopy(state)
    with pytest.raises(kind) as err:
        rules.decide(state, command, seed=SEED)
    assert err.value.code == code
    assert state == before  # nothing changed, nothing to write


# -- creation ---------------------------------------------------------------------------------


def test_trn_010_created_records_the_terms_and_the_seed_commitment():
    (event,) = rules.decide(None, CUP, seed=SEED)
    assert isinstance(event, TournamentCreated)
    assert event.seed_commitment == hashlib.sha256(SEED).hexdigest()
    assert event.table_sizes == (2, 3, 4)  # TRN-021: the game's sizes up to the one asked
    assert event.points == {"2": [1, 0], "3": [2, 1, 0], "4": [3, 2, 1, 0]}
    assert (event.format, event.rounds, event.organiser, event.pairing) == ("swiss", 2, "org", PAIRING_VERSION)
    assert TournamentCreated.from_data(event.to_data()) == event


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (CreateTournament("X", "chess", 4, rounds=3), "unknown_game"),
        (CreateTournament("X", ["nauticus"], 4, rounds=3), "unknown_game"),  # type: ignore[arg-type]
        (CreateTournament("X", "nauticus", 5, rounds=3), "invalid_tournament"),  # nauticus is 2-4
        (CreateTournament("X", "nauticus", 1, rounds=3), "invalid_tournament"),
        (CreateTournament("X", "nauticus", 4, rounds=3, table_sizes=(3,)), "invalid_tournament"),
        (CreateTournament("X", "nauticus", 4, rounds=3, table_sizes=(4, 4)), "invalid_tournament"),
        (CreateTournament("X", "nauticus", 4, rounds=3, table_sizes=(4, 5)), "invalid_tournament"),
        (CreateTournament("X", "nauticus", 4, rounds=3, table_sizes=[[4]]), "invalid_tournament"),  # type: ignore[list-item]
        (CreateTournament("X", "nauticus", 4), "invalid_tournament"),  # a Swiss needs rounds
        (CreateTournament("X", "nauticus", 4, rounds=0), "invalid_tournament"),
        (CreateTournament("X", "nauticus", 4, rounds=21), "invalid_tournament"),
        (CreateTournament("X", "nauticus", 4, rounds=3, format="knockout"), "invalid_tournament"),
        (CreateTournament("", "nauticus", 4, rounds=3), "invalid_tournament"),
        (CreateTournament("   ", "nauticus", 4, rounds=3), "invalid_tournament"),
        (CreateTournament("x" * 101, "nauticus", 4, rounds=3), "invalid_tournament"),
        (CreateTournament("a\nb", "nauticus", 4, rounds=3), "invalid_tournament"),
        (CreateTournament("X", "nauticus", 4, rounds=3, rated="yes"), "invalid_tournament"),  # type: ignore[arg-type]
        (CreateTournament("X", "nauticus", 4, rounds=3, clock={"type": "sundial"}), "invalid_clock"),
        (CreateTournament("X", "nauticus", 4, rounds=3, points={"4": [3, 2, 1, 0]}), "invalid_tournament"),
        (
            CreateTournament("X", "nauticus", 4, rounds=3, table_sizes=(4,), points={"4": [0, 1, 2, 3]}),
            "invalid_tournament",
        ),
        (
            CreateTournament("X", "nauticus", 4, rounds=3, table_sizes=(4,), points={"4": [3, 2, 1.5, 0]}),
            "invalid_tournament",
        ),
    ],
)
def test_trn_015_bad_terms_are_refused(command, code):
    refused(Refused, code, None, command)


def test_trn_010_custom_terms_are_kept():
    command = CreateTournament(
        "RR",
        "nautilus-industries",
        3,
        by=None,
        format="round_robin",
        table_sizes=(3,),
        clock={"type": "fischer", "base_s": 600, "increment_s": 10},
        rated=False,
        points={"3": [4, 1, 0]},
    )
    (event,) = rules.decide(None, command, seed=SEED)
    assert (event.rounds, event.table_sizes, event.points, event.rated, event.organiser) == (
        None,
        (3,),
        {"3": [4, 1, 0]},
        False,
        None,
    )
    assert event.clock == {"type": "fischer", "base_s": 600, "increment_s": 10}


def test_trn_010_created_only_once():
    refused(Conflicting, "tournament_exists", created(), CUP)


# -- registration -----------------------------------------------------------------------------


def test_trn_015_registering_twice_is_refused_ignoring_case():
    state = registered(3)
    refused(Conflicting, "already_registered", state, RegisterPlayers(("PL01",), by="org"))
    refused(Conflicting, "already_registered", state, RegisterPlayers(("newbie", "NEWBIE"), by="org"))


def test_trn_015_a_player_registers_only_itself_an_organiser_anyone():
    state = created()
    assert rules.decide(state, RegisterPlayers(("ann",), by="ann"), seed=SEED) == [PlayerRegistered("ann")]
    refused(Forbidden, "not_your_tournament", state, RegisterPlayers(("bob",), by="ann"))
    refused(Forbidden, "not_your_tournament", state, RegisterPlayers(("ann", "bob"), by="ann"))
    assert len(rules.decide(state, RegisterPlayers(("ann", "bob"), by=None), seed=SEED)) == 2  # the operator


@pytest.mark.parametrize("handles", [(), ("ab",), ("ann", "b c"), ("x" * 25,), (7,)])
def test_trn_015_bad_handles_are_refused(handles):
    refused(Refused, "invalid_handle", created(), RegisterPlayers(handles, by="org"))


def test_trn_003_a_tournament_takes_at_most_256_players():
    state = registered(250)
    refused(Refused, "tournament_full", state, RegisterPlayers(tuple(f"late{i}" for i in range(7)), by="org"))
    assert len(rules.decide(state, RegisterPlayers(tuple(f"late{i}" for i in range(6)), by="org"), seed=SEED)) == 6


def test_trn_015_registering_after_the_start_is_refused():
    state = registered(8)
    state = fold(rules.decide(state, StartTournament(by="org"), seed=SEED), state)
    refused(Conflicting, "registration_closed", state, RegisterPlayers(("late",), by="org"))
    refused(Conflicting, "registration_closed", state, RegisterPlayers(("late",), by="late"))


# -- the start --------------------------------------------------------------------------------


def test_trn_011_start_fixes_the_rounds_draws_the_lot_and_pairs_round_1():
    state = registered(13)
    started, paired = rules.decide(state, StartTournament(by="org"), seed=SEED)
    assert isinstance(started, TournamentStarted) and isinstance(paired, RoundPaired)
    assert started.rounds == 2
    assert list(started.lot) == pairing.draw_lot(state["players"], SEED)
    assert [len(t.players) for t in paired.tables] == [4, 3, 3, 3]
    assert paired.round == 1 and paired.byes == ()
    after = fold([started, paired], state)
    assert after["status"] == "running"


def test_trn_015_an_organiser_cannot_start_someone_elses_tournament():
    state = registered(8)
    refused(Forbidden, "not_your_tournament", state, StartTournament(by="rival"))
    assert rules.decide(state, StartTournament(by=None), seed=SEED)  # the operator may


def test_trn_015_a_field_too_small_for_one_table_is_refused():
    refused(Refused, "field_too_small", registered(1), StartTournament(by="org"))
    refused(Refused, "field_too_small", created(), StartTournament(by="org"))
    fixed = CreateTournament("Fours", "nauticus", 4, by="org", rounds=1, table_sizes=(4,))
    refused(Refused, "field_too_small", registered(3, fixed), StartTournament(by="org"))


def test_trn_003_a_round_robin_field_is_small():
    rr = CreateTournament("RR", "nauticus", 4, by="org", format="round_robin")
    refused(Refused, "field_too_large", registered(13, rr), StartTournament(by="org"))
    started, _ = rules.decide(registered(12, rr), StartTournament(by="org"), seed=SEED)
    assert 4 <= started.rounds <= pairing.MAX_ROUNDS  # TRN-027: (12 - 1) / (4 - 1) rounds at the least


def test_trn_015_starting_twice_is_refused():
    state = registered(8)
    state = fold(rules.decide(state, StartTournament(by="org"), seed=SEED), state)
    refused(Conflicting, "already_started", state, StartTournament(by="org"))


# -- tables and rounds ------------------------------------------------------------------------


def running(players: int = 8, command: CreateTournament = CUP) -> dict:
    state = registered(players, command)
    return fold(rules.decide(state, StartTournament(by="org"), seed=SEED), state)


def test_trn_012_tables_start_once_in_the_current_round():
    state = running()
    assert rules.decide(state, StartTable(1, 1, "game-a"), seed=SEED) == [TableStarted(1, 1, "game-a")]
    refused(NotFound, "round_table_not_found", state, StartTable(1, 3, "game-a"))
    refused(NotFound, "round_table_not_found", state, StartTable(2, 1, "game-a"))
    refused(Refused, "invalid_game_id", state, StartTable(1, 1, ""))
    state = fold(rules.decide(state, StartTable(1, 1, "game-a"), seed=SEED), state)
    refused(Conflicting, "table_already_started", state, StartTable(1, 1, "game-b"))
    refused(NotFound, "tournament_not_found", None, StartTable(1, 1, "game-b"))
    refused(Conflicting, "tournament_not_running", created(), StartTable(1, 1, "game-b"))


def test_trn_013_results_are_checked_and_recorded_in_seats():
    state = running()
    state = fold(rules.decide(state, StartTable(1, 1, "game-a"), seed=SEED), state)
    refused(Conflicting, "wrong_game", state, FinishTable(1, 1, "game-b", random_result(random.Random(1), 4)))
    refused(Conflicting, "wrong_game", state, FinishTable(1, 2, "game-a", random_result(random.Random(1), 4)))
    bad = random_result(random.Random(1), 4, forfeits=0, aborts=0)
    for broken in (
        {**bad, "ranking": [0, 1, 2, 3, 4]},  # a fifth seat
        {**bad, "ranking": [0, 1, 2]},  # a seat missing
        {**bad, "reason": "bored"},
        {**bad, "scores": {"0": 1.5}},  # no floats
        {k: v for k, v in bad.items() if k != "ranks"},
        "not a result",
    ):
        refused(Refused, "invalid_result", state, FinishTable(1, 1, "game-a", broken))
    # The game's result may carry more (its breakdown): the tournament keeps five keys.
    (event,) = rules.decide(state, FinishTable(1, 1, "game-a", {**bad, "breakdown": {"0": {}}}), seed=SEED)
    assert isinstance(event, TableFinished) and set(event.result) == {
        "reason",
        "forfeited",
        "ranking",
        "ranks",
        "scores",
    }
    state = fold([event], state)
    refused(Conflicting, "table_already_finished", state, FinishTable(1, 1, "game-a", bad))


def test_trn_013_trn_014_the_last_table_pairs_the_next_round_and_the_last_round_ends_it():
    state = running(8)
    chooser = random.Random(4)
    for r in (1, 2):
        for t in (1, 2):
            state = fold(rules.decide(state, StartTable(r, t, f"g{r}{t}"), seed=SEED), state)
        first = rules.decide(state, FinishTable(r, 1, f"g{r}1", random_result(chooser, 4)), seed=SEED)
        assert len(first) == 1  # one table of the round still plays
        state = fold(first, state)
        last = rules.decide(state, FinishTable(r, 2, f"g{r}2", random_result(chooser, 4)), seed=SEED)
        assert [type(e) for e in last] == [TableFinished, RoundPaired if r == 1 else TournamentFinished]
        state = fold(last, state)
    final = last[-1]
    assert final.seed == SEED.hex()
    assert hashlib.sha256(bytes.fromhex(final.seed)).hexdigest() == state["seed_commitment"]
    assert sorted(p.player for p in final.standings) == sorted(state["players"])
    assert state["status"] == "finished"
    refused(Conflicting, "tournament_not_running", state, StartTable(2, 1, "again"))


def test_trn_001_decide_never_changes_the_state_it_is_given():
    state = running(9)
    before = copy.deepcopy(state)
    rules.decide(state, StartTable(1, 1, "g"), seed=SEED)
    state2 = fold(rules.decide(state, StartTable(1, 1, "g"), seed=SEED), state)
    assert state == before
    before2 = copy.deepcopy(state2)
    rules.decide(state2, FinishTable(1, 1, "g", random_result(random.Random(2), 3)), seed=SEED)
    assert state2 == before2


def test_trn_001_the_seed_is_32_bytes():
    with pytest.raises(ValueError):
        rules.decide(None, CUP, seed=b"short")


def test_trn_003_a_stream_holds_at_most_256_players():
    """The fold refuses the 257th registration, so no crafted stream can make a pairing
    or an audit face more."""
    from service.tournaments.evolve import StreamError, evolve

    state = registered(256)
    with pytest.raises(StreamError):
        evolve(state, PlayerRegistered("one-too-many"))
