"""Properties of the clocks (``service/domain/clocks.py``) and of the timeouts written through
the pipeline, with hypothesis choosing the times, the moves and the schedulers' ticks.

* Remaining time is never negative, whatever the order and spacing of the recorded times.
* A seat that stays to act without acting keeps its deadline; a deadline is listed as due
  exactly when it has passed.
* A deadline fires exactly once: several schedulers ticking at random moments, racing each
  other and the seats' own intents under optimistic concurrency (an append at a version that
  is no longer the head loses), record each seat's timeout at most once, at the deadline the
  clock recorded, and never let an intent in after its seat's deadline.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from service.audit.checks import redecide
from service.domain import clocks, pipeline
from service.domain.replay import fold_stream
from service.games import registry
from service.games.base import RuleViolation, forfeited

T0 = clocks.to_us("2026-06-01T00:00:00.000000Z")
SPECS = st.one_of(
    st.builds(
        lambda b, i: {"type": "fischer", "base_s": b, "increment_s": i},
        st.integers(1, 20),
        st.integers(0, 5),
    ),
    st.builds(lambda d: {"type": "deadline", "per_decision_s": d}, st.integers(1, 20)),
)


@settings(max_examples=200, deadline=None)
@given(
    spec=SPECS,
    players=st.integers(2, 4),
    steps=st.lists(
        st.tuples(
            st.integers(-2_000_000, 8_000_000),  # time since the last batch, µs (may go back)
            st.integers(0, 3),  # the mover, if it was running
            st.sets(st.integers(0, 3), min_size=1),  # to_act after
        ),
        max_size=40,
    ),
)
def test_remaining_time_is_never_negative_and_deadlines_carry(spec, players, steps):
    seats = set(range(players))
    clock = clocks.start(spec, players, clocks.to_iso(T0), [0])
    t = T0
    for dt, mover, after in steps:
        t += dt
        running = {int(s) for s in clock["deadline"]}
        to_act = sorted((after & seats) or {0})
        m = mover if mover in running else None
        before = dict(clock["deadline"])
        clock = clocks.advance(spec, clock, at=clocks.to_iso(t), mover=m, to_act=to_act)
        assert all(us >= 0 for us in clock["remaining_us"].values())
        assert sorted(int(s) for s in clock["deadline"]) == to_act
        assert clocks.to_us(clock["at"]) >= clocks.to_us(clocks.to_iso(T0))
        for s in to_act:
            if s in running and s != m:
                assert clock["deadline"][str(s)] == before[str(s)]  # the same decision: the same deadline
        now = clocks.to_iso(t + dt)
        due = {seat for _, seat in clocks.due(clock, now)}
        assert due == {s for s in to_act if clocks.to_us(clock["deadline"][str(s)]) <= t + dt}


GID = "00000000-0000-4000-8000-00000000c10c"
SEED = bytes(32)


class Race:
    """A game written under optimistic concurrency by its seats and by several schedulers."""

    def __init__(self, name: str, players: int, spec: dict):
        self.engine = registry.get(name)
        self.spec, self.players = spec, players
        meta = {"intent_id": "o", "seat": None, "received_at": clocks.to_iso(T0), "intent": None}
        names = [f"p{i}" for i in range(players)]
        self.events = pipeline.open_game(self.engine, GID, names, {}, SEED, meta, clock=spec)
        self.state = fold_stream(self.engine, self.events)
        self.finished = False

    def snapshot(self):
        """What a writer sees when it reads the stream: the version, a state, the clock."""
        return len(self.events), fold_stream(self.engine, self.events), self.events[-1].meta["clock"]

    def append(self, seen, seat, command, when: int) -> bool:
        """Decide on what was seen and append if the stream is still there (else: a conflict)."""
        version, state, clock = seen
        if self.finished or version != len(self.events):
            return False
        raw = command.to_json()
        meta = {"intent_id": f"i{version}", "seat": seat, "received_at": clocks.to_iso(when), "intent": raw}
        decision = pipeline.act(
            self.engine,
            state,
            seat,
            command,
            pipeline.Head(GID, SEED, version, self.events[-1].hash, meta, clocks.Clock(self.spec, self.players, clock)),
        )
        self.events += decision.events
        self.state = decision.state
        self.finished = decision.result is not None
        return True


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["waters-of-nereus", "nauticus", "nautilus-industries"]),
    players=st.integers(2, 4),
    base=st.integers(1, 4),
    script=st.lists(
        st.tuples(
            st.sampled_from(["intent", "tick", "stale-tick"]),
            st.integers(0, 3_000_000),  # µs since the previous step
            st.integers(0, 10**6),  # which seat / which command
        ),
        min_size=5,
        max_size=80,
    ),
)
def test_a_deadline_fires_exactly_once_and_no_intent_gets_in_after_it(name, players, base, script):
    spec = {"type": "fischer", "base_s": base, "increment_s": 0}
    race = Race(name, players, spec)
    t = T0
    stale = race.snapshot()
    for kind, dt, pick in script:
        if race.finished:
            break
        t += dt
        seen = race.snapshot()
        version, state, clock = seen
        if kind == "intent":
            to_act = race.engine.to_act(state)
            seat = to_act[pick % len(to_act)]
            legal = race.engine.legal(state, seat)
            command = legal[pick % len(legal)]
            try:
                race.append(seen, seat, command, t)
            except RuleViolation as rv:
                assert rv.code == "clock_expired"
                assert clocks.expired(clock, seat, clocks.to_iso(t))
                continue
            assert not clocks.expired(clock, seat, clocks.to_iso(t))
        else:
            # A scheduler, maybe working from what it read a while ago (a slow worker).
            seen = stale if kind == "stale-tick" else seen
            due = clocks.due(seen[2], clocks.to_iso(t))
            if due:
                deadline, seat = due[0]
                race.append(seen, seat, pipeline.TimeOut(), clocks.to_us(deadline))
        stale = seen
    timed_out = [e for e in race.events if e.type == pipeline.SEAT_TIMED_OUT]
    seats = [e.data["seat"] for e in timed_out]
    assert len(seats) == len(set(seats)), "a seat timed out twice"
    assert seats == [s for s in forfeited(race.state) if s in seats]
    for e in timed_out:
        k = e.seq - 1  # the event before it recorded the deadline
        assert race.events[k - 1].meta["clock"]["deadline"][str(e.data["seat"])] == e.data["deadline"]
        assert e.meta["received_at"] == e.data["deadline"]
    for e in race.events:
        assert all(us >= 0 for us in e.meta["clock"]["remaining_us"].values())
    assert [e.seq for e in race.events] == list(range(1, len(race.events) + 1))
    assert redecide(GID, race.events, SEED).ok
