"""The tournament's events: frozen, past tense, JSON without floats, and a strict parser
that names what is wrong (TRN-001)."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from support.tournament_states import SEED

from service.tournaments import events as ev
from service.tournaments.commands import AbortTournament, CreateTournament, RegisterPlayers, WithdrawPlayer
from service.tournaments.events import MalformedEvent, from_json, parse, to_json
from service.tournaments.simulate import random_result, run


def stream():
    """Two streams: one finished, with a withdrawal and a late entrant; one aborted."""
    r = random.Random(2)
    created, state = run(
        CreateTournament("Cup", "nauticus", 4, by="org", rounds=2, late_until_round=2),
        [f"pl{i:02d}" for i in range(9)],
        SEED,
        lambda rnd, t, seated: random_result(r, len(seated)),
        commands={1: [WithdrawPlayer("pl03", by="pl03"), RegisterPlayers(("late",), by="late")]},
    )
    aborted, _ = run(
        CreateTournament("Cup", "nauticus", 4, by="org", rounds=2),
        [f"pl{i:02d}" for i in range(9)],
        SEED,
        lambda rnd, t, seated: random_result(r, len(seated)),
        commands={2: [AbortTournament("the hall closed", by="org")]},
    )
    return created + aborted


def test_trn_001_every_event_round_trips_through_json():
    events = stream()
    assert {type(e) for e in events} == set(ev.EVENTS.values())
    for event in events:
        obj = json.loads(json.dumps(to_json(event)))
        assert from_json(obj) == event
        assert from_json({**obj, "seq": 3, "meta": {}}) == event  # a stored row's other keys
        assert event.TYPE.endswith(("ed", "Withdrawn"))  # past tense


def test_trn_001_events_are_frozen_and_hold_no_floats():
    for event in stream():
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(event, dataclasses.fields(event)[0].name, 9)

    def floats(x):
        if isinstance(x, float):
            return True
        if isinstance(x, dict):
            return any(floats(v) for v in x.values())
        if isinstance(x, list):
            return any(floats(v) for v in x)
        return False

    assert not any(floats(to_json(e)) for e in stream())


def test_trn_001_an_event_does_not_alias_the_data_it_was_read_from():
    data = next(to_json(e)["data"] for e in stream() if isinstance(e, ev.TableFinished))
    event = parse("TableFinished", data)
    data["result"]["ranking"].append(99)
    assert 99 not in event.result["ranking"]


GOOD_PAIRED = {"round": 1, "tables": [{"table": 1, "players": ["ann", "bob"]}], "byes": []}


@pytest.mark.parametrize(
    ("type_", "data", "says"),
    [
        ("Nope", {}, "not a tournament event"),
        (None, {}, "not a tournament event"),
        ("RoundPaired", [], "must be an object"),
        ("RoundPaired", {**GOOD_PAIRED, "extra": 1}, "unexpected"),
        ("RoundPaired", {"round": 1, "tables": []}, "missing"),
        ("RoundPaired", {**GOOD_PAIRED, "round": 0}, "'round'"),
        ("RoundPaired", {**GOOD_PAIRED, "round": True}, "'round'"),
        ("RoundPaired", {**GOOD_PAIRED, "tables": [{"table": 2, "players": ["ann", "bob"]}]}, "numbered"),
        ("RoundPaired", {**GOOD_PAIRED, "tables": [{"table": 1, "players": ["ann"]}]}, "seats 2 to"),
        ("RoundPaired", {**GOOD_PAIRED, "tables": [{"table": 1, "players": ["ann", "ann"]}]}, "twice"),
        ("RoundPaired", {**GOOD_PAIRED, "byes": [""]}, "'byes'"),
        ("PlayerRegistered", {"player": "x" * 65}, "'player'"),
        ("TableStarted", {"round": 1, "table": 1, "game_id": 5}, "'game_id'"),
        (
            "TableFinished",
            {
                "round": 1,
                "table": 1,
                "game_id": "g",
                "result": {"reason": "completed", "forfeited": [], "ranking": [0, 0], "ranks": {}, "scores": {}},
            },
            "twice",
        ),
        (
            "TableFinished",
            {
                "round": 1,
                "table": 1,
                "game_id": "g",
                "result": {"reason": "completed", "forfeited": [], "ranking": [0], "ranks": {"00": 1}, "scores": {}},
            },
            "not a seat",
        ),
        ("TournamentFinished", {"standings": [], "seed": "AB" * 32}, "hex"),
        ("TournamentStarted", {"by": None, "rounds": 2, "lot": "ann"}, "'lot'"),
    ],
)
def test_trn_001_the_parser_names_what_is_wrong(type_, data, says):
    with pytest.raises(MalformedEvent, match=says):
        parse(type_, data)


def test_trn_030_points_schemes_are_read_strictly():
    assert ev.read_points({"2": [1, 0], "3": [3, 3, 0]}, (2, 3)) == {"2": [1, 0], "3": [3, 3, 0]}
    for bad in (
        {"2": [1, 0]},
        {"2": [1, 0], "3": [0, 1, 2]},
        {"2": [1], "3": [2, 1, 0]},
        {"2": [1, -1], "3": [2, 1, 0]},
    ):
        with pytest.raises(MalformedEvent):
            ev.read_points(bad, (2, 3))
