"""Withdrawals, late entrants and aborts (docs/TOURNAMENTS.md "Withdrawals, late
entrants and aborts": TRN-050, TRN-051, TRN-060, TRN-061, TRN-062, TRN-070): decided,
folded, paired around, counted in the tie-breaks, re-decided by the audit and
checked by the offline verifier."""

from __future__ import annotations

import copy
import json
import random
from fractions import Fraction as F

import pytest
from support.tournament_states import SEED, result, state_of

from service.audit import verify
from service.domain.errors import Conflicting, Forbidden, NotFound, Refused
from service.tournaments import rules, standings
from service.tournaments.audit import audit
from service.tournaments.commands import (
    AbortTournament,
    CreateTournament,
    FinishTable,
    RegisterPlayers,
    StartTable,
    StartTournament,
    WithdrawPlayer,
)
from service.tournaments.events import (
    LatePlayerRegistered,
    PairedTable,
    PlayerWithdrawn,
    RoundPaired,
    TableFinished,
    TableStarted,
    TournamentAborted,
    to_json,
)
from service.tournaments.evolve import ABORTED, StreamError, evolve, fold
from service.tournaments.simulate import random_result, run

CUP = CreateTournament("Club Night", "nauticus", 4, by="org", rounds=3, late_until_round=2)
PLAYERS = [f"pl{i:02d}" for i in range(12)]


def decided(state, command):
    return fold(rules.decide(state, command, seed=SEED), state)


def refused(kind: type, code: str, state, command) -> None:
    before = copy.deepcopy(state)
    with pytest.raises(kind) as err:
        rules.decide(state, command, seed=SEED)
    assert err.value.code == code
    assert state == before


def registered(command: CreateTournament = CUP, players: list[str] = PLAYERS) -> dict:
    state = fold(rules.decide(None, command, seed=SEED))
    return decided(state, RegisterPlayers(tuple(players), by="org"))


def simulated(commands, command: CreateTournament = CUP, players: list[str] = PLAYERS, chooser: int = 5):
    """A whole tournament through ``decide`` with random results, ``commands`` decided
    after each round's pairing (``simulate.run``); its stream as stored JSON."""
    r = random.Random(chooser)
    games: dict[str, dict] = {}

    def result_of(round_: int, table: int, seated: list[str]) -> dict:
        res = random_result(r, len(seated), forfeits=0.1, aborts=0.0)
        games[f"r{round_}t{table}"] = {"game": "nauticus", "players": seated, "result": res}
        return res

    events, state = run(command, players, SEED, result_of, commands=commands)
    return json.loads(json.dumps([to_json(e) for e in events])), state, games


# -- TRN-060: withdrawals ---------------------------------------------------------------------


def test_trn_060_a_player_withdraws_itself_the_organiser_anyone_with_a_reason():
    state = decided(registered(), StartTournament(by="org"))
    made = rules.decide(state, WithdrawPlayer("PL03", by="pl03"), seed=SEED)  # its handle, any case
    assert made == [PlayerWithdrawn("pl03", "pl03", None, 1)]
    refused(Forbidden, "not_your_tournament", state, WithdrawPlayer("pl03", by="pl04"))
    refused(Refused, "invalid_reason", state, WithdrawPlayer("pl03", by="org"))
    refused(Refused, "invalid_reason", state, WithdrawPlayer("pl03", by=None, reason=" "))
    refused(NotFound, "not_registered", state, WithdrawPlayer("nobody", by="org", reason="no-show"))
    assert rules.decide(state, WithdrawPlayer("pl03", by=None, reason="no-show"), seed=SEED) == [
        PlayerWithdrawn("pl03", None, "no-show", 1)
    ]
    gone = decided(state, WithdrawPlayer("pl03", by="org", reason="no-show"))
    refused(Conflicting, "already_withdrawn", gone, WithdrawPlayer("pl03", by="pl03"))


def test_trn_060_a_no_show_withdrawn_before_the_start_is_never_seated():
    state = decided(registered(), WithdrawPlayer("pl05", by="org", reason="no-show"))
    state = decided(state, StartTournament(by="org"))
    seated = [p for t in state["history"][0]["tables"] for p in t["players"]] + state["history"][0]["byes"]
    assert "pl05" not in seated and sorted(seated) == sorted(set(PLAYERS) - {"pl05"})
    assert "pl05" in state["lot"]  # the lot holds everyone registered; it only breaks ties


def test_trn_060_pairing_skips_a_withdrawn_player_from_the_next_round_and_keeps_its_game():
    events, state, _ = simulated({1: [WithdrawPlayer("pl07", by="pl07")]})
    first, *later = state["history"]
    # Its round-1 game was paired before it left: played and counted.
    table = next(t for t in first["tables"] if "pl07" in t["players"])
    assert table["result"] is not None
    for rnd in later:
        seated = [p for t in rnd["tables"] for p in t["players"]] + rnd["byes"]
        assert "pl07" not in seated and len(seated) == 11
    rows = {r.player: r for r in standings.standings(state)}
    assert rows["pl07"].withdrawn and rows["pl07"].games == 1
    assert not any(r.withdrawn for p, r in rows.items() if p != "pl07")
    assert state["status"] == "finished"
    assert "pl07" in [p["player"] for p in state["standings"]]  # the final standings keep it


def test_trn_060_the_fold_refuses_a_round_that_seats_a_withdrawn_player():
    state = state_of(["A", "B", "C", "D"], [[(["A", "B"], result([1, 2])), (["C", "D"], result([1, 2]))]], sizes=(2,))
    state = {**state, "rounds": 2}
    state = evolve(state, PlayerWithdrawn("D", None, "ill", 1))
    with pytest.raises(StreamError):
        evolve(state, RoundPaired(2, (PairedTable(1, ("A", "C")), PairedTable(2, ("B", "D"))), ()))
    assert evolve(state, RoundPaired(2, (PairedTable(1, ("A", "C")),), ("B",)))["history"][1]["byes"] == ["B"]
    with pytest.raises(StreamError):  # the round it says is not the rounds paired
        evolve(state, PlayerWithdrawn("C", None, "ill", 2))


def test_trn_060_a_round_robin_gives_the_withdrawn_players_opponent_a_bye():
    command = CreateTournament("RR", "nauticus", 2, by="org", format="round_robin", rounds=None)
    _, state, _ = simulated({1: [WithdrawPlayer("pl02", by="pl02")]}, command=command, players=PLAYERS[:6])
    for rnd in state["history"][1:]:
        assert "pl02" not in [p for t in rnd["tables"] for p in t["players"]] + rnd["byes"]
        assert len(rnd["byes"]) == 1  # its scheduled opponent of the round


def test_trn_062_a_withdrawal_that_leaves_no_table_for_the_rounds_to_come_is_refused():
    command = CreateTournament("Small", "nauticus", 2, by="org", rounds=3, table_sizes=(2,))
    state = decided(registered(command, ["ann", "bob", "cat"]), StartTournament(by="org"))
    state = decided(state, WithdrawPlayer("ann", by="ann"))
    refused(Refused, "field_too_small", state, WithdrawPlayer("bob", by="bob"))


# -- TRN-061: tie-breaks with withdrawn opponents and late entrants ----------------------------


def test_trn_061_an_opponents_unplayed_rounds_count_as_drawn_ones():
    """docs/TOURNAMENTS.md TRN-061 (FIDE C.07 art. 16): at tables of two (1 point a win),
    F withdraws after round 1 and G joins for round 2; each round either did not play
    counts, for its opponents, as the average place (1/2)."""
    players = ["A", "B", "C", "D", "E", "F"]
    state = state_of(
        players,
        [[(["A", "B"], result([1, 2])), (["C", "D"], result([1, 2])), (["E", "F"], result([1, 2]))]],
        sizes=(2,),
    )
    state = {**state, "rounds": 2, "late_until_round": 2}
    state = evolve(state, PlayerWithdrawn("F", "org", "left", 1))
    state = evolve(state, LatePlayerRegistered("G", 2))
    tables = (PairedTable(1, ("A", "D")), PairedTable(2, ("C", "E")), PairedTable(3, ("B", "G")))
    state = evolve(state, RoundPaired(2, tables, ()))
    for i in range(1, len(tables) + 1):
        state = evolve(state, TableStarted(2, i, f"h{i}"))
        state = evolve(state, TableFinished(2, i, f"h{i}", result([1, 2])))
    rows = {r.player: r for r in standings.standings(state)}
    assert {p: r.points for p, r in rows.items()} == {"A": 2, "B": 1, "C": 2, "D": 0, "E": 1, "F": 0, "G": 0}
    # E met F (0 points + 1 unplayed round = 1/2) and C (2); B met A (2) and G (0 + 1/2).
    assert rows["E"].opponents_points == F(5, 2)
    assert rows["B"].opponents_points == F(5, 2)
    # D met C (2) and A (2), who played every round: nothing added.
    assert rows["D"].opponents_points == F(4)
    assert rows["F"].withdrawn and not rows["G"].withdrawn
    assert (rows["G"].games, rows["G"].byes) == (1, 0)
    # After round 1 only F's withdrawal is marked (it left once round 1 was paired).
    after_1 = {r.player: r for r in standings.standings(state, 1)}
    assert after_1["F"].withdrawn and after_1["G"].points == 0


# -- TRN-050, TRN-051: late registration -------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        CreateTournament("X", "nauticus", 4, rounds=3, late_until_round=4),
        CreateTournament("X", "nauticus", 4, rounds=3, late_until_round=1),
        CreateTournament("X", "nauticus", 4, format="round_robin", rounds=3, late_until_round=2),
    ],
)
def test_trn_050_late_until_round_is_a_round_of_a_swiss_after_the_first(command):
    with pytest.raises(Refused) as err:
        rules.decide(None, command, seed=SEED)
    assert err.value.code == "invalid_tournament" and err.value.details == {"field": "late_until_round"}


def test_trn_050_a_late_entrant_joins_until_its_round_is_paired():
    state = decided(registered(), StartTournament(by="org"))
    assert rules.decide(state, RegisterPlayers(("late1",), by="late1"), seed=SEED) == [LatePlayerRegistered("late1", 2)]
    refused(Forbidden, "not_your_tournament", state, RegisterPlayers(("late1",), by="late2"))
    refused(Conflicting, "already_registered", state, RegisterPlayers(("PL01",), by="org"))
    no_late = decided(registered(CreateTournament("X", "nauticus", 4, by="org", rounds=3)), StartTournament(by="org"))
    refused(Conflicting, "registration_closed", no_late, RegisterPlayers(("late1",), by="late1"))


def test_trn_051_a_late_entrant_has_no_points_for_the_rounds_it_missed_and_is_paired_after():
    events, state, _ = simulated({1: [RegisterPlayers(("late1",), by="late1")]})
    assert [e["type"] for e in events].count("LatePlayerRegistered") == 1
    assert state["lot"][-1] == "late1" and state["players"][-1] == "late1"
    first, second, _ = state["history"]
    assert "late1" not in [p for t in first["tables"] for p in t["players"]] + first["byes"]
    assert "late1" in [p for t in second["tables"] for p in t["players"]] + second["byes"]
    after_1 = {r.player: r for r in standings.standings(state, 1)}
    assert (after_1["late1"].points, after_1["late1"].games, after_1["late1"].byes) == (0, 0, 0)


def test_trn_050_registering_late_after_the_window_is_refused():
    seen: list[dict] = []
    r = random.Random(1)
    run(CUP, PLAYERS, SEED, lambda n, t, seated: random_result(r, len(seated)), after_round=seen.append)
    assert rules.decide(seen[0], RegisterPlayers(("late1",), by="late1"), seed=SEED)  # round 1 being played
    for state in seen[1:]:  # round 2 (late_until_round) paired: too late
        refused(Conflicting, "registration_closed", state, RegisterPlayers(("late1",), by="late1"))


# -- TRN-070: abort ----------------------------------------------------------------------------


def test_trn_070_an_abort_freezes_the_standings_after_the_last_complete_round_and_reveals_the_seed():
    events, state, _ = simulated({2: [AbortTournament("the hall closed", by="org")]})
    assert state["status"] == ABORTED
    assert state["aborted"] == {"by": "org", "reason": "the hall closed", "round": 1}
    assert state["seed"] == SEED.hex()
    assert state["standings"] == [{"rank": r.rank, "player": r.player} for r in standings.standings(state, 1)]
    assert len(state["history"]) == 2 and all(t["result"] is None for t in state["history"][1]["tables"])
    refused(Conflicting, "tournament_not_running", state, StartTable(2, 1, "g"))
    refused(Conflicting, "tournament_not_running", state, FinishTable(2, 1, "g", result([1, 2, 3, 4])))
    refused(Conflicting, "tournament_not_running", state, AbortTournament("again", by="org"))
    refused(Conflicting, "tournament_not_running", state, WithdrawPlayer("pl01", by="pl01"))


def test_trn_070_only_the_organiser_or_the_operator_aborts_with_a_reason():
    state = decided(registered(), StartTournament(by="org"))
    refused(Forbidden, "not_your_tournament", state, AbortTournament("mine now", by="pl01"))
    refused(Refused, "invalid_reason", state, AbortTournament("", by="org"))
    made = rules.decide(state, AbortTournament("power cut", by=None), seed=SEED)
    assert made == [TournamentAborted(None, "power cut", 0, made[0].standings, SEED.hex())]
    # Before any round: nobody has played; everyone shares the standings, in lot order.
    assert [p.player for p in made[0].standings] == state["lot"]


# -- the audit and the offline verifier --------------------------------------------------------


def test_trn_040_the_audit_re_decides_withdrawals_late_entries_and_the_abort():
    commands = {
        0: [WithdrawPlayer("pl11", by="org", reason="no-show")],
        1: [WithdrawPlayer("pl04", by="pl04"), RegisterPlayers(("late1",), by="late1")],
        2: [AbortTournament("the hall closed", by="org")],
    }
    stream, state, games = simulated(commands)
    report = audit(stream, games=games)
    assert report["ok"] and report["complete"], report["checks"]
    assert report["status"] == "aborted" and report["aborted"]["by"] == "org"
    assert [w["player"] for w in report["withdrawals"]] == ["pl11", "pl04"]
    assert report["late"] == [{"player": "late1", "round": 2}]

    # A withdrawal moved to before round 1 changes every pairing after it.
    tampered = copy.deepcopy(stream)
    gone = next(e for e in tampered if e["type"] == "PlayerWithdrawn" and e["data"]["player"] == "pl04")
    gone["data"]["by"] = "pl05"  # someone else withdrew pl04
    assert audit(tampered)["checks"]["stream"]["ok"] is False
    # The frozen standings must be those after the last complete round.
    tampered = copy.deepcopy(stream)
    closing = tampered[-1]
    closing["data"]["standings"][0], closing["data"]["standings"][1] = (
        closing["data"]["standings"][1],
        closing["data"]["standings"][0],
    )
    assert audit(tampered)["checks"]["standings"]["ok"] is False


def test_trn_060_the_offline_verifier_finds_a_withdrawn_player_paired_again():
    stream, _, _ = simulated({1: [WithdrawPlayer("pl04", by="pl04")], 2: [AbortTournament("rain", by="org")]})
    ok = verify.check_record(stream)
    assert ok["ok"] and ok["details"]["withdrawals"] == {"pl04": 1}, ok
    assert ok["details"]["aborted"] == {"by": "org", "reason": "rain", "round": 1}
    assert "aborted by org after round 1" in ok["summary"]
    forged = copy.deepcopy(stream)
    paired = next(e for e in forged if e["type"] == "RoundPaired" and e["data"]["round"] == 2)
    paired["data"]["tables"][0]["players"][0] = "pl04"
    bad = verify.check_record(forged)
    assert not bad["ok"] and "pl04" in bad["summary"]
    forged.append(copy.deepcopy(forged[-2]))  # anything after the abort
    assert "follows the abort" in " ".join(verify.check_record(forged)["details"]["problems"])
