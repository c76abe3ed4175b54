"""How a meta is stored (``service/domain/records.py``: ``compact_meta`` / ``full_meta``,
docs/SCALING.md "Storage per event"): what the store leaves out of a decision's meta
comes back exactly, key order included, for every clock the clocks module writes; the
stored form is only storage (the digests cover the full meta)."""

from __future__ import annotations

import copy
import json

import pytest

from service.domain import canonical, clocks
from service.domain.records import compact_meta, full_meta

T0 = "2026-03-01T12:00:00.000000Z"
SPECS = [
    {"type": "deadline", "per_decision_s": 60},
    {"type": "fischer", "base_s": 10, "increment_s": 2},
]


def _metas() -> list[dict]:
    """Metas as the pipeline writes them: a clock started, advanced on time, advanced
    with a time-out, and one whose time is later than the intent's arrival (a clock
    never goes back: ``clocks.advance``)."""
    out = [{"intent_id": "i0", "seat": None, "received_at": T0, "intent": None}]  # no clock
    for spec in SPECS:
        start = clocks.start(spec, 3, T0, [0])
        out.append({"intent_id": "i1", "seat": None, "received_at": T0, "intent": None, "clock": start})
        t1 = clocks.to_iso(clocks.to_us(T0) + 1_500_000)
        moved = clocks.advance(spec, start, at=t1, mover=0, to_act=[1])
        out.append({"intent_id": "i2", "seat": 0, "received_at": t1, "intent": {"type": "x"}, "clock": moved})
        forfeit = clocks.advance(spec, moved, at=t1, mover=None, to_act=[2], timed_out=1)
        assert forfeit["timed_out"] == [1]
        out.append({"intent_id": "i3", "seat": None, "received_at": t1, "intent": None, "clock": forfeit})
        earlier = clocks.to_iso(clocks.to_us(T0) + 1_000_000)  # arrived "before" the clock's time
        late = clocks.advance(spec, moved, at=earlier, mover=1, to_act=[2])
        assert late["at"] != earlier
        out.append({"intent_id": "i4", "seat": 1, "received_at": earlier, "intent": {"type": "y"}, "clock": late})
    return out


@pytest.mark.parametrize("meta", _metas(), ids=lambda m: f"{m['intent_id']}-{'clock' in m}")
def test_a_stored_meta_reads_back_exactly_as_sealed(meta):
    before = copy.deepcopy(meta)
    stored = json.loads(json.dumps(compact_meta(meta)))  # through the json column's text
    assert meta == before, "compacting never changes the caller's meta"
    back = full_meta(stored)
    assert back == meta
    assert json.dumps(back) == json.dumps(meta), "key order too"
    assert canonical.canonical(back) == canonical.canonical(meta)


def test_what_is_left_out_is_the_clock_time_the_derivable_deadlines_and_an_empty_timed_out():
    start = clocks.start(SPECS[0], 2, T0, [0])
    meta = {"intent_id": "i", "seat": None, "received_at": T0, "intent": None, "clock": start}
    stored = compact_meta(meta)
    assert stored["clock"] == {"remaining_us": start["remaining_us"], "deadline": {"0": None}}
    saved = len(json.dumps(meta, separators=(",", ":"))) - len(json.dumps(stored, separators=(",", ":")))
    deadline = start["deadline"]["0"]
    assert saved == len(f',"at":"{T0}"') + len(',"timed_out":[]') + len(f'"{deadline}"') - len("null")


def test_a_deadline_already_passed_is_kept_as_it_is():
    """A seat that stays to act keeps its deadline; once the clock's time is past it, its
    remaining time is 0 and the deadline is not ``at`` plus it: stored as written."""
    start = clocks.start(SPECS[0], 2, T0, [0])
    later = clocks.to_iso(clocks.to_us(T0) + 120_000_000)  # past the 60 s decision
    clock = clocks.advance(SPECS[0], start, at=later, mover=None, to_act=[0])
    assert clock["remaining_us"]["0"] == 0 and clock["deadline"]["0"] == start["deadline"]["0"]
    meta = {"intent_id": "i", "seat": None, "received_at": later, "intent": None, "clock": clock}
    stored = compact_meta(meta)
    assert stored["clock"]["deadline"] == clock["deadline"]
    assert full_meta(json.loads(json.dumps(stored))) == meta


def test_a_clock_without_its_time_is_refused_rather_than_stored_ambiguously():
    clock = clocks.start(SPECS[0], 2, T0, [0])
    for missing in ("at", "timed_out"):
        bad = {k: v for k, v in clock.items() if k != missing}
        with pytest.raises(ValueError, match="clock must carry"):
            compact_meta({"received_at": T0, "clock": bad})
