"""The tournament audit (TRN-040): a whole simulated tournament re-decided from its
events and seed, and tampering of every kind found."""

from __future__ import annotations

import copy
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.tournament_states import SEED

from service.tournaments import standings
from service.tournaments.audit import audit
from service.tournaments.commands import CreateTournament, RegisterPlayers, StartTournament
from service.tournaments.events import to_json
from service.tournaments.evolve import fold
from service.tournaments.rules import decide
from service.tournaments.simulate import random_result, run


def simulated(players: int = 13, rounds: int = 4, fmt: str = "swiss", chooser: int = 3):
    """A tournament with random results (ties, forfeits, aborts), its stream as JSON,
    and the games' facts as each game's own stream would tell them."""
    r = random.Random(chooser)
    games: dict[str, dict] = {}

    def result_of(round_: int, table: int, seated: list[str]) -> dict:
        res = random_result(r, len(seated), forfeits=0.15, aborts=0.05)
        games[f"r{round_}t{table}"] = {"game": "nauticus", "players": seated, "result": {**res, "breakdown": {}}}
        return res

    command = CreateTournament("Audit Cup", "nauticus", 4, by="org", format=fmt, rounds=rounds)
    events, state = run(command, [f"pl{i:02d}" for i in range(players)], SEED, result_of)
    stream = json.loads(json.dumps([to_json(e) for e in events]))  # as stored: plain JSON
    return stream, state, games


def published(state: dict) -> dict[int, dict]:
    return {s["round"]: s for s in standings.by_round(state)}


def find(stream: list[dict], type_: str, **data) -> dict:
    return next(e for e in stream if e["type"] == type_ and all(e["data"].get(k) == v for k, v in data.items()))


@pytest.mark.parametrize(("players", "rounds", "fmt"), [(13, 4, "swiss"), (12, 3, "swiss"), (9, None, "round_robin")])
def test_trn_040_a_simulated_tournament_audits_clean(players, rounds, fmt):
    stream, state, games = simulated(players, rounds, fmt)
    report = audit(stream, published=published(state), games=games)
    assert report["ok"] and report["complete"], json.dumps(report["checks"], indent=1)[:2000]
    checks = report["checks"]
    assert checks["pairings"]["rounds"] == state["rounds"]
    assert checks["standings"]["rounds"] == state["rounds"]
    assert checks["games"]["tables"] == sum(len(r["tables"]) for r in state["history"])
    assert checks["stream"]["events"] == len(stream)


def test_trn_040_a_tampered_pairing_is_found():
    stream, state, games = simulated()
    tampered = copy.deepcopy(stream)
    tables = find(tampered, "RoundPaired", round=3)["data"]["tables"]
    tables[0]["players"][1], tables[1]["players"][1] = tables[1]["players"][1], tables[0]["players"][1]
    report = audit(tampered, published=published(state), games=games)
    assert not report["ok"]
    problems = report["checks"]["pairings"]["problems"]
    # Round 3 as recorded is not what the pairing gives; the rounds after it were paired
    # from a history that the tampered stream no longer holds, so they differ too.
    assert problems[0]["round"] == 3 and all(p["round"] >= 3 for p in problems)
    assert problems[0]["expected"] == find(stream, "RoundPaired", round=3)["data"]
    assert report["checks"]["stream"]["ok"]  # the stream itself still folds


def test_trn_040_a_tampered_seat_order_is_found():
    stream, _, _ = simulated()
    tampered = copy.deepcopy(stream)
    seats = find(tampered, "RoundPaired", round=2)["data"]["tables"][0]["players"]
    seats[0], seats[1] = seats[1], seats[0]
    assert audit(tampered)["checks"]["pairings"]["problems"][0]["round"] == 2


def test_trn_040_a_tampered_lot_is_found():
    stream, _, _ = simulated()
    tampered = copy.deepcopy(stream)
    lot = find(tampered, "TournamentStarted")["data"]["lot"]
    lot[0], lot[-1] = lot[-1], lot[0]
    report = audit(tampered)
    assert not report["ok"]
    assert report["checks"]["pairings"]["problems"][0]["type"] == "TournamentStarted"


def test_trn_040_a_tampered_result_is_found_by_the_games_check():
    stream, state, games = simulated()
    tampered = copy.deepcopy(stream)
    finished = find(tampered, "TableFinished", round=4, table=1)["data"]["result"]
    finished["forfeited"] = [] if finished["forfeited"] else [0]
    if finished["reason"] == "completed" and finished["forfeited"] == [0]:
        finished["ranking"] = [*(s for s in finished["ranking"] if s != 0), 0]
    report = audit(tampered, games=games)
    assert not report["ok"]
    assert not report["checks"]["games"]["ok"]
    assert report["checks"]["games"]["problems"][0]["game_id"] == "r4t1"


def test_trn_040_published_standings_that_differ_are_found():
    stream, state, _ = simulated()
    shown = published(state)
    shown[2] = copy.deepcopy(shown[2])
    shown[2]["standings"][0], shown[2]["standings"][1] = shown[2]["standings"][1], shown[2]["standings"][0]
    report = audit(stream, published=shown)
    assert not report["ok"]
    assert [p["round"] for p in report["checks"]["standings"]["problems"]] == [2]
    # The list alone (the read model's "standings") is accepted too.
    assert audit(stream, published={r: s["standings"] for r, s in published(state).items()})["ok"]
    assert not audit(stream, published={9: []})["ok"]  # a round that never was


def test_trn_040_tampered_final_standings_are_found():
    stream, _, _ = simulated()
    tampered = copy.deepcopy(stream)
    final = tampered[-1]["data"]["standings"]
    final[0]["player"], final[1]["player"] = final[1]["player"], final[0]["player"]
    report = audit(tampered)
    assert not report["ok"]
    assert report["checks"]["standings"]["problems"][0]["round"] == "final"


def test_trn_040_the_seed_must_match_its_commitment():
    stream, _, _ = simulated()
    wrong = copy.deepcopy(stream)
    wrong[-1]["data"]["seed"] = "ab" * 32
    report = audit(wrong)
    assert not report["ok"] and report["checks"]["seed"]["ok"] is False
    assert report["checks"]["pairings"]["ok"] is None  # nothing to re-pair with
    assert audit(stream, seed=bytes(32))["checks"]["seed"]["ok"] is False  # not the revealed one
    assert audit(stream, seed=SEED)["ok"]


def test_trn_040_a_running_tournament_audits_with_the_seed_or_says_it_could_not():
    command = CreateTournament("Live", "nauticus", 4, by="org", rounds=3)
    state = fold(decide(None, command, seed=SEED))
    events = decide(None, command, seed=SEED)
    for batch in (
        RegisterPlayers(tuple(f"pl{i:02d}" for i in range(10)), by="org"),
        StartTournament(by="org"),
    ):
        new = decide(state, batch, seed=SEED)
        state = fold(new, state)
        events += new
    stream = [to_json(e) for e in events]
    blind = audit(stream)
    assert blind["ok"] and not blind["complete"]
    assert blind["checks"]["pairings"]["ok"] is None and blind["checks"]["seed"]["ok"] is None
    seen = audit(stream, seed=SEED)
    assert seen["checks"]["pairings"] == {"ok": True, "rounds": 1, "problems": []}
    assert not audit(stream, seed=bytes(32))["ok"]


def test_trn_040_a_missing_pairing_and_an_extra_one_are_found():
    stream, _, _ = simulated()
    i = stream.index(find(stream, "RoundPaired", round=2))
    missing = stream[:i] + stream[i + 1 :]
    report = audit(missing)
    assert not report["ok"]
    assert report["checks"]["pairings"]["problems"][0]["recorded"] is None
    extra = [*stream[: i + 1], stream[i], *stream[i + 1 :]]
    assert not audit(extra)["checks"]["stream"]["ok"]


def test_trn_040_malformed_streams_are_reported_not_raised():
    stream, _, _ = simulated(players=8, rounds=1)
    for broken in (
        [],
        [{"type": "Nonsense", "data": {}}],
        [{"type": "PlayerRegistered", "data": {"player": "x"}}],  # before the opening
        [stream[0], {"type": "RoundPaired", "data": {"round": 1.0, "tables": [], "byes": []}}],
        [stream[0], "not an object"],
        [{**stream[0], "data": {**stream[0]["data"], "seed_commitment": "zz"}}],
    ):
        report = audit(broken)
        assert report["ok"] is False and not report["complete"], broken


def test_trn_040_a_registration_that_should_have_been_refused_is_found():
    stream, _, _ = simulated(players=8, rounds=1)
    tampered = copy.deepcopy(stream)
    start = tampered.index(find(tampered, "TournamentStarted"))
    tampered.insert(start, {"type": "PlayerRegistered", "data": {"player": "a b"}})  # not a handle
    assert not audit(tampered)["ok"]


def test_trn_002_a_stream_paired_by_another_version_is_not_re_paired_with_this_one():
    stream, _, _ = simulated(players=8, rounds=1)
    other = copy.deepcopy(stream)
    other[0]["data"]["pairing"] = "qd-pairing-v0"
    report = audit(other)
    assert not report["ok"]
    assert "qd-pairing-v0" in report["checks"]["pairings"]["problems"][0]["error"]


def _leaves(x, path=()):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _leaves(v, (*path, i))
    else:
        yield path


_FUZZ_STREAM, _FUZZ_STATE, _FUZZ_GAMES = simulated(players=9, rounds=3, chooser=5)
_VALUES = [0, 1, -1, 2, 99, None, True, "", "xyz", "pl00", "pl01", [], {}, 1.5, "r1t1", "aborted", "completed"]


@settings(max_examples=150, deadline=None)
@given(
    index=st.integers(0, len(_FUZZ_STREAM) - 1),
    leaf=st.integers(0, 10**6),
    value=st.sampled_from(_VALUES),
    drop=st.booleans(),
)
def test_trn_040_any_change_to_a_recorded_event_is_found_and_nothing_crashes(index, leaf, value, drop):
    """Change one value anywhere (or drop one event): the audit answers, and unless the
    change is to the organiser's own terms (``TournamentCreated``: the store's hash
    chain guards those) or says the operator started it, it fails."""
    tampered = copy.deepcopy(_FUZZ_STREAM)
    event = tampered[index]
    if drop:
        del tampered[index]
    else:
        paths = list(_leaves(event["data"]))
        path = paths[leaf % len(paths)]
        target = event["data"]
        for key in path[:-1]:
            target = target[key]
        if target[path[-1]] == value or (event["type"] == "TournamentStarted" and path == ("by",)):
            return
        target[path[-1]] = copy.deepcopy(value)
    report = audit(tampered, published=published(_FUZZ_STATE), games=_FUZZ_GAMES)
    json.dumps(report)
    if event["type"] != "TournamentCreated":
        assert report["ok"] is False, (event["type"], report["checks"])
