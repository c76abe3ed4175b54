"""Clock arithmetic from the stream (``service/domain/clocks.py``) and the platform's decisions
around it (``service/domain/pipeline.py``: clock_expired, resign, timeout, abort, the result
with forfeits), with an injected time: nothing here sleeps or reads the machine's clock."""

from __future__ import annotations

import random

import pytest

from service.audit.checks import redecide
from service.domain import clocks, pipeline
from service.domain.replay import fold_stream
from service.games import registry
from service.games.base import RuleViolation

T0 = clocks.to_us("2026-03-01T12:00:00.000000Z")
FISCHER = {"type": "fischer", "base_s": 10, "increment_s": 2}
DEADLINE = {"type": "deadline", "per_decision_s": 60}


def at(seconds: float) -> str:
    return clocks.to_iso(T0 + round(seconds * 1_000_000))


# -- the time control ------------------------------------------------------------------------


def test_times_round_trip_in_whole_microseconds():
    iso = "2026-03-01T12:00:00.123456Z"
    assert clocks.to_iso(clocks.to_us(iso)) == iso
    assert clocks.to_us(at(1.5)) - clocks.to_us(at(0)) == 1_500_000


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "none"},
        {"type": "fischer", "base_s": 600, "increment_s": 10},
        {"type": "fischer", "base_s": 3, "increment_s": 0},
        {"type": "deadline", "per_decision_s": 86400},
    ],
)
def test_the_three_time_controls_are_accepted_as_they_are(raw):
    assert clocks.validate(raw) == raw


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "fischer",
        {"type": "blitz"},
        {"type": "fischer", "base_s": 600},  # no increment
        {"type": "fischer", "base_s": 0, "increment_s": 0},  # an empty bank
        {"type": "fischer", "base_s": 1.5, "increment_s": 0},  # no floats in the stream
        {"type": "fischer", "base_s": True, "increment_s": 0},
        {"type": "fischer", "base_s": 60, "increment_s": -1},
        {"type": "deadline", "per_decision_s": clocks.MAX_SECONDS + 1},
        {"type": "deadline", "per_decision_s": 60, "base_s": 1},  # a field of another type
        {"type": "none", "per_decision_s": 60},
    ],
)
def test_anything_else_is_refused_with_a_reason(raw):
    with pytest.raises(clocks.InvalidClock):
        clocks.validate(raw)


def test_absent_or_null_gets_the_configured_default_deadline_or_none():
    assert clocks.resolve(None, 259200) == {"type": "deadline", "per_decision_s": 259200}
    assert clocks.resolve(None, None) == {"type": "none"}
    assert clocks.resolve({"type": "none"}, 259200) == {"type": "none"}
    assert clocks.runs({"type": "deadline", "per_decision_s": 1}) and not clocks.runs({"type": "none"})
    assert not clocks.runs(None)  # a game from before clocks


# -- Fischer ---------------------------------------------------------------------------------


def test_fischer_runs_only_for_the_seats_to_act_and_adds_the_increment():
    c = clocks.start(FISCHER, 2, at(0), [0])
    assert c["remaining_us"] == {"0": 10_000_000, "1": 10_000_000}
    assert c["deadline"] == {"0": at(10)}
    # Seat 0 moves after 4 s: 6 s left + 2 s increment; seat 1's clock starts now.
    c = clocks.advance(FISCHER, c, at=at(4), mover=0, to_act=[1])
    assert c["remaining_us"] == {"0": 8_000_000, "1": 10_000_000}
    assert c["deadline"] == {"1": at(14)}
    # Seat 1 moves after 3 s; seat 0's bank did not run meanwhile.
    c = clocks.advance(FISCHER, c, at=at(7), mover=1, to_act=[0])
    assert c["remaining_us"] == {"0": 8_000_000, "1": 9_000_000}
    assert c["deadline"] == {"0": at(15)}


def test_a_seat_that_acts_and_stays_to_act_gets_a_new_deadline_a_waiting_seat_keeps_its_own():
    """Simultaneous choices run several clocks; one seat's intent does not move another's."""
    c = clocks.start(FISCHER, 3, at(0), [0, 1, 2])
    c = clocks.advance(FISCHER, c, at=at(5), mover=1, to_act=[0, 2])
    assert c["deadline"] == {"0": at(10), "2": at(10)}
    assert c["remaining_us"]["1"] == 7_000_000  # 5 s left + 2
    c = clocks.advance(FISCHER, c, at=at(6), mover=0, to_act=[0, 2])  # 0 acts and goes on acting
    assert c["deadline"] == {"0": at(6 + 4 + 2), "2": at(10)}


def test_a_batch_earlier_than_the_one_before_counts_as_the_same_instant():
    """Two API hosts' clocks may disagree by a hair: time never runs backwards."""
    c = clocks.start(FISCHER, 2, at(10), [0])
    c = clocks.advance(FISCHER, c, at=at(9), mover=0, to_act=[1])
    assert c["at"] == at(10)
    assert c["remaining_us"]["0"] == 12_000_000


def test_a_timed_out_seat_has_no_time_left_and_is_recorded():
    c = clocks.start(FISCHER, 2, at(0), [0])
    c = clocks.advance(FISCHER, c, at=at(10), mover=None, to_act=[1], timed_out=0)
    assert c["remaining_us"]["0"] == 0 and c["timed_out"] == [0]
    assert c["deadline"] == {"1": at(20)}


# -- per-decision deadline --------------------------------------------------------------------


def test_deadline_gives_each_decision_its_own_time():
    c = clocks.start(DEADLINE, 2, at(0), [1])
    assert c["deadline"] == {"1": at(60)}
    c = clocks.advance(DEADLINE, c, at=at(50), mover=1, to_act=[1])  # acted, still to act: afresh
    assert c["deadline"] == {"1": at(110)} and c["remaining_us"]["1"] == 60_000_000
    c = clocks.advance(DEADLINE, c, at=at(70), mover=1, to_act=[0])
    assert c["deadline"] == {"0": at(130)}
    assert c["remaining_us"] == {"0": 60_000_000, "1": 60_000_000}


def test_deadline_of_a_waiting_seat_does_not_move_when_another_acts():
    c = clocks.start(DEADLINE, 3, at(0), [0, 1, 2])
    c = clocks.advance(DEADLINE, c, at=at(30), mover=2, to_act=[0, 1])
    assert c["deadline"] == {"0": at(60), "1": at(60)}
    assert c["remaining_us"]["0"] == 30_000_000


# -- when a deadline counts --------------------------------------------------------------------


def test_at_the_deadline_an_intent_is_still_in_time_and_the_timeout_is_due():
    c = clocks.start(FISCHER, 2, at(0), [0])
    assert not clocks.expired(c, 0, at(10))
    assert clocks.expired(c, 0, clocks.to_iso(clocks.to_us(at(10)) + 1))
    assert not clocks.expired(c, 1, at(500))  # seat 1's clock does not run
    assert clocks.due(c, clocks.to_iso(clocks.to_us(at(10)) - 1)) == []
    assert clocks.due(c, at(10)) == [(at(10), 0)]
    assert clocks.earliest(c) == at(10)


def test_due_lists_every_seat_out_of_time_earliest_first():
    c = clocks.start(FISCHER, 3, at(0), [0, 1, 2])
    c = clocks.advance(FISCHER, c, at=at(2), mover=1, to_act=[0, 1, 2])
    assert clocks.due(c, at(11)) == [(at(10), 0), (at(10), 2)]
    assert clocks.due(c, at(30)) == [(at(10), 0), (at(10), 2), (at(12), 1)]


def test_the_public_clock_is_the_clock_as_of_its_version():
    c = clocks.start(FISCHER, 2, at(0), [0])
    c = clocks.advance(FISCHER, c, at=at(2.5), mover=0, to_act=[1])
    shown = clocks.public(FISCHER, c)
    assert shown == {
        "type": "fischer",
        "base_s": 10,
        "increment_s": 2,
        "as_of": at(2.5),
        "remaining_s": {"0": 9.5, "1": 10.0},
        "deadline": {"1": at(12.5)},
        "timed_out": [],
    }
    assert clocks.public({"type": "none"}, None) is None
    assert clocks.public(None, c) is None


# -- through the pipeline ----------------------------------------------------------------------

GID = "00000000-0000-4000-8000-0000000000c1"
SEED = bytes(range(32))


class Game:
    """A game driven through the pipeline with an injected time, the way the command side
    drives it (the clock recorded with the last event goes into the next decision)."""

    def __init__(self, name: str, players: int, spec: dict | None, options: dict | None = None):
        self.engine = registry.get(name)
        self.players = players
        self.spec = spec
        meta = {"intent_id": "open", "seat": None, "received_at": at(0), "intent": None}
        terms = {"clock": spec} if spec is not None else {}
        names = [f"p{i}" for i in range(players)]
        self.events = pipeline.open_game(self.engine, GID, names, options or {}, SEED, meta, **terms)
        self.state = fold_stream(self.engine, self.events)
        self.result = None
        self.n = 0

    @property
    def clock(self) -> clocks.Clock | None:
        if not clocks.runs(self.spec):
            return None
        return clocks.Clock(self.spec, self.players, self.events[-1].meta.get("clock"))

    def act(self, seat, command, when: float, **meta):
        self.n += 1
        raw = command.to_json()
        m = {"intent_id": f"i{self.n}", "seat": seat, "received_at": at(when), "intent": raw} | meta
        decision = pipeline.act(
            self.engine,
            self.state,
            seat,
            command,
            pipeline.Head(GID, SEED, len(self.events), self.events[-1].hash, m, self.clock),
        )
        self.state = decision.state
        self.events += decision.events
        self.result = decision.result
        return decision

    def time_out(self, now: float):
        deadline, seat = clocks.due(self.events[-1].meta["clock"], at(now))[0]
        return self.act_at(seat, pipeline.TimeOut(), deadline)

    def act_at(self, seat, command, iso: str):
        return self.act(seat, command, (clocks.to_us(iso) - T0) / 1_000_000, auto=True)

    def first_legal(self, seat):
        return self.engine.legal(self.state, seat)[0]


def test_an_intent_after_its_seat_deadline_is_refused_clock_expired_even_before_the_timeout():
    g = Game("nautilus-industries", 2, {"type": "fischer", "base_s": 3, "increment_s": 0})
    seat = g.engine.to_act(g.state)[0]
    before = len(g.events)
    with pytest.raises(RuleViolation) as err:
        g.act(seat, g.first_legal(seat), 3.000001)
    assert err.value.code == "clock_expired" and err.value.details["deadline"] == at(3)
    assert len(g.events) == before
    g.act(seat, g.first_legal(seat), 3.0)  # at the deadline exactly: in time


def test_a_timeout_is_recorded_at_the_deadline_and_ends_a_two_player_game_by_forfeit():
    """The issue's "done when", without servers: the other player first, reason forfeit."""
    g = Game("nautilus-industries", 2, {"type": "fischer", "base_s": 3, "increment_s": 0})
    seat = g.engine.to_act(g.state)[0]
    decision = g.time_out(now=7.5)  # written late (a worker was away): recorded at the deadline
    first = decision.events[0]
    assert first.type == pipeline.SEAT_TIMED_OUT and first.data == {"seat": seat, "deadline": at(3)}
    assert first.meta["received_at"] == at(3) and first.meta["intent"] == {"type": "timeout"}
    assert decision.events[1].type == "SeatForfeited"
    assert decision.events[-1].type == pipeline.GAME_FINISHED
    result = decision.result
    assert result["reason"] == "forfeit" and result["forfeited"] == [seat]
    assert result["ranking"] == [1 - seat, seat] and result["ranks"] == {str(1 - seat): 1, str(seat): 2}
    assert decision.events[-1].meta["clock"]["remaining_us"][str(seat)] == 0
    assert decision.events[-1].meta["clock"]["deadline"] == {}
    assert redecide(GID, g.events, SEED).ok


def test_a_late_intent_of_a_timed_out_seat_is_clock_expired_and_a_resigned_seat_is_forfeited():
    g = Game("waters-of-nereus", 3, FISCHER)
    first = g.engine.to_act(g.state)[0]
    g.time_out(now=10)
    with pytest.raises(RuleViolation) as err:
        g.act(first, pipeline.Resign(), 11)
    assert err.value.code == "clock_expired"
    other = g.engine.to_act(g.state)[0]
    g.act(other, pipeline.Resign(), 12)
    assert g.result is not None and g.result["forfeited"] == [first, other]
    with pytest.raises(RuleViolation) as err:
        g.act(other, pipeline.Resign(), 12)
    assert err.value.code == "seat_forfeited"


def test_a_timeout_that_is_not_due_is_refused():
    """The seat moved in time, or the recorded time is not its deadline: nothing to write."""
    g = Game("nauticus", 2, FISCHER)
    seat = g.engine.to_act(g.state)[0]
    with pytest.raises(RuleViolation) as err:
        g.act_at(seat, pipeline.TimeOut(), at(9))
    assert err.value.code == "timeout_not_due"
    with pytest.raises(RuleViolation):
        g.act_at(1 - seat, pipeline.TimeOut(), at(10))  # not to act: no deadline


def test_resign_is_legal_for_every_seat_at_any_time_and_the_game_goes_on_while_two_remain():
    g = Game("nauticus", 4, None)
    waiting = [s for s in range(4) if s not in g.engine.to_act(g.state)]
    d = g.act(waiting[0], pipeline.Resign(), 1)
    assert [e.type for e in d.events[:2]] == [pipeline.SEAT_RESIGNED, "SeatForfeited"]
    assert d.result is None and "clock" not in d.events[0].meta  # a game with no clock records none
    g.act(waiting[1], pipeline.Resign(), 2)
    assert g.result is None
    last = [s for s in range(4) if s not in g.state["forfeited"]]
    g.act(g.engine.to_act(g.state)[0], pipeline.Resign(), 3)
    survivor = next(s for s in last if s not in g.state["forfeited"])
    assert g.result["reason"] == "forfeit"
    # Forfeited seats rank last, in reverse order of forfeit.
    assert g.result["ranking"] == [survivor, *reversed(g.state["forfeited"])]
    assert [g.result["ranks"][str(s)] for s in g.result["ranking"]] == [1, 2, 3, 4]
    assert redecide(GID, g.events, SEED).ok


def test_a_completed_game_with_a_forfeit_keeps_the_engine_order_for_the_others():
    result = {"scores": {"0": 5, "1": 9, "2": 9}, "ranks": {"0": 3, "1": 1, "2": 1}, "ranking": [1, 2, 0]}

    class Fake:
        def result(self, state):
            return dict(result)

    out = pipeline.final_result(Fake(), {"players": 3, "forfeited": [1]})  # type: ignore[arg-type]
    assert out["ranking"] == [2, 0, 1] and out["ranks"] == {"2": 1, "0": 2, "1": 3}
    assert out["reason"] == "completed" and out["forfeited"] == [1] and out["scores"] == result["scores"]
    # Nobody left: the engine's result as recorded before forfeits existed; readers add the reason.
    plain = pipeline.final_result(Fake(), {"players": 3})  # type: ignore[arg-type]
    assert plain == result and pipeline.shown_result(plain) == result | {"reason": "completed", "forfeited": []}


def test_an_abort_ends_the_game_unrated_with_no_ranking():
    g = Game("waters-of-nereus", 2, DEADLINE)
    d = g.act(None, pipeline.Abort("table broke", "operator"), 5)
    assert [e.type for e in d.events] == [pipeline.GAME_ABORTED, pipeline.GAME_FINISHED]
    assert d.events[0].data == {"reason": "table broke", "by": "operator"}
    assert d.result == {
        "reason": "aborted",
        "forfeited": [],
        "ranking": [],
        "ranks": {},
        "scores": {},
        "breakdown": {},
        "tiebreak": None,
    }
    assert redecide(GID, g.events, SEED).ok


def test_platform_intents_have_one_shape():
    assert isinstance(pipeline.platform_command({"type": "resign"}), pipeline.Resign)
    assert pipeline.platform_command({"type": "place_sub", "tile": 0, "colour": "B"}) is None
    for other in ({"type": {"resign": 1}}, {"type": ["resign"]}, [], None, "resign"):
        assert pipeline.platform_command(other) is None  # the game's schema refuses it
    for bad in ({"type": "resign", "seat": 1}, {"type": "abort", "reason": 3, "by": "x"}, {"type": "timeout", "x": 1}):
        with pytest.raises(RuleViolation) as err:
            pipeline.platform_command(bad)
        assert err.value.code == "invalid_intent"


def test_redecide_recomputes_the_clock_and_catches_a_tampered_one():
    g = Game("nauticus", 2, FISCHER)
    r = random.Random(3)
    t = 0.0
    for _ in range(12):
        seat = g.engine.to_act(g.state)[0]
        t += r.uniform(0.1, 1.5)
        g.act(seat, r.choice(g.engine.legal(g.state, seat)), t)
    assert redecide(GID, g.events, SEED).ok
    from service.domain.records import StoredEvent

    k = len(g.events) - 1
    e = g.events[k]
    forged = dict(e.meta, clock=dict(e.meta["clock"], remaining_us={"0": 10**9, "1": 10**9}))
    tampered = [*g.events[:k], StoredEvent(**{**_fields(e), "meta": forged})]
    check = redecide(GID, tampered, SEED)
    assert not check.ok and check.details["first_divergence"]["what"] == "meta"


def _fields(e) -> dict:
    return {f: getattr(e, f) for f in e.__slots__}


def test_the_offline_verifier_accepts_timeouts_resignations_and_aborts_and_catches_a_moved_deadline():
    import copy
    import json

    from service.audit import bundle, verify
    from service.audit.checks import redecide_dicts
    from service.domain.records import GameRecord
    from service.games.rng import commitment

    g = Game("nauticus", 3, FISCHER)
    g.act(g.engine.to_act(g.state)[0], pipeline.Resign(), 1)
    g.time_out(now=30)
    assert g.result is not None
    types = {e.type for e in g.events}
    assert {pipeline.SEAT_RESIGNED, pipeline.SEAT_TIMED_OUT, "SeatForfeited", pipeline.GAME_FINISHED} <= types
    record = GameRecord(GID, "nauticus", g.engine.version, ["p0", "p1", "p2"], {}, commitment(SEED), at(0))
    honest = json.loads(bundle.dumps(bundle.build(record, g.events)))
    assert verify.verify_bundle(honest)["ok"] is True  # this file alone: chain and seed
    assert verify.verify_bundle(honest, redecide=redecide_dicts)["ok"] is True
    forged = copy.deepcopy(honest)
    timed_out = next(e for e in forged["events"] if e["type"] == pipeline.SEAT_TIMED_OUT)
    timed_out["data"]["deadline"] = at(25)
    report = verify.verify_bundle(forged)
    assert not report["checks"]["hash_chain"]["ok"]
    assert report["checks"]["hash_chain"]["details"]["first_broken_seq"] == timed_out["seq"]

    aborted = Game("waters-of-nereus", 2, None)
    aborted.act(None, pipeline.Abort("no show", "organiser:cup"), 2)
    record = GameRecord(GID, "waters-of-nereus", aborted.engine.version, ["p0", "p1"], {}, commitment(SEED), at(0))
    b = json.loads(bundle.dumps(bundle.build(record, aborted.events)))
    assert verify.verify_bundle(b, redecide=redecide_dicts)["ok"] is True
