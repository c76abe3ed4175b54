"""The shared conformance suite: one set of checks for every registered engine.

Modelled on OpenSpiel's random simulation test.  For every engine in
``service.games.registry.names()`` and every allowed player count (plus the
option sets of ``EXTRA_CASES``), seeded random playouts are played to the end and
checked at every step:

* the game ends within ``MAX_STEPS`` intents;
* ``check_invariants`` holds; ``result`` is None exactly while ``to_act`` is
  non-empty; every seat in ``to_act`` has a non-empty ``legal`` and every other
  seat an empty one; the acting seat is in ``to_act``;
* every legal command round-trips through ``schemas.intents.load_intent``;
* ``decide`` never mutates the state, and refuses with ``RuleViolation`` (state
  unchanged) commands that are not legal: mutated fields of legal commands, a
  legal command sent by a seat not to act, other command types with plausible
  field values; garbage intents are refused by the schema (``ValidationError``)
  or, if they load, by ``decide``;
* events and states round-trip through JSON; event data is never changed after
  it was emitted (``evolve`` must not alias it);
* at the end: folding every event from scratch gives the same state, re-deciding
  the recorded intents with the same seed gives byte-identical events (canonical
  JSON), and ``result`` has scores, ranks and ranking for every seat;
* ``view`` and ``redact_event`` work for every seat, a spectator and the admin.

A third set (``test_determinize_agrees_with_the_view``) checks what a bot's search
needs of each engine (docs/BOTS.md): at seeded random positions, for every seat,
``determinize(view(s, seat))`` is a full state whose view for the seat is that
view again, which satisfies the invariants and gives the seat the same legal
intents, and ``evaluate`` gives one finite number per seat.

A second set of playouts (the end of this file) goes through the platform's
pipeline with a clock, and makes random seats resign or time out at random
moments: forfeited seats never act again, the game goes on while two remain,
the result ranks them last, and the audit's re-decide reproduces the stream.

Size: ``PLAYOUTS`` sets the seeded playouts per case (engine × player count ×
options) and the environment variable ``QD_PLAYOUTS`` scales them (a factor,
default 1; ``QD_PLAYOUTS=0.1`` for a smoke run).  The default plays 2,400
games (about 930,000 checked intents), about 5 minutes on an idle 2-core machine.  The terminal summary says
how many games, intents and illegal probes were played.

A failure names the game, player count, options, seed and step; reproduce one
playout with ``QD_REPRO='<game>|<players>|<options json>|<seed hex>' pytest
tests/property/test_conformance.py -k repro``.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import marshal
import math
import os
import random
import time
from typing import Any, NoReturn

import pytest
from marshmallow import ValidationError

from schemas.intents import load_intent
from service.games import registry
from service.games.base import ADMIN, Command, Event, RuleViolation, clone_state, fold
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, Step, decision_domain, replay

#: Option sets played besides ``{}`` (with every allowed player count): (players, options).
EXTRA_CASES: dict[str, list[tuple[int, dict[str, Any]]]] = {
    "waters-of-nereus": [(2, {"neutral": True})],
}
#: Seeded playouts per case (engine × player count × options) at QD_PLAYOUTS=1, by how long
#: a random game of that engine is: Nautilus Industries random games run ~700–2500 intents,
#: the others a few hundred.  Engines not listed get DEFAULT_PLAYOUTS.
PLAYOUTS: dict[str, int] = {"nautilus-industries": 60, "nauticus": 300, "waters-of-nereus": 300}
DEFAULT_PLAYOUTS = 30
#: QD_PLAYOUTS scales every count (e.g. 0.1 for a smoke run, 10 for a long soak).
SCALE = float(os.environ.get("QD_PLAYOUTS", "1"))
#: Playouts per pytest test (a failing batch names its seeds).
BATCH = 6
#: Upper bound on intents in one game (random play included).
MAX_STEPS = 30_000
#: Probability of probing decide with an illegal command at a step.
PROBE_RATE = 0.3
#: Every this many steps: view for every viewer, JSON round trip of the state.
VIEW_EVERY = 40

_TOTALS = {"games": 0, "intents": 0, "probes": 0, "seconds": 0.0}


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def engine_names() -> list[str]:
    """Every registered engine; one that fails to import fails the suite."""
    return registry.names()


def _cases() -> list[tuple[str, int, dict[str, Any]]]:
    out = []
    for name in engine_names():
        engine = registry.get(name)
        for n in range(engine.min_players, engine.max_players + 1):
            out.append((name, n, {}))
        for n, options in EXTRA_CASES.get(name, []):
            out.append((name, n, options))
    return out


def _batches() -> list[Any]:
    params = []
    for name, n, options in _cases():
        total = max(1, round(PLAYOUTS.get(name, DEFAULT_PLAYOUTS) * SCALE))
        for start in range(0, total, BATCH):
            count = min(BATCH, total - start)
            label = f"{name}-{n}p-{canonical(options)}-{start}"
            params.append(pytest.param(name, n, options, start, count, id=label))
    return params


def seed_for(name: str, n: int, options: dict[str, Any], index: int) -> bytes:
    return hashlib.sha256(f"conformance|{name}|{n}|{canonical(options)}|{index}".encode()).digest()


@pytest.fixture(scope="module", autouse=True)
def _summary(request: pytest.FixtureRequest):
    yield
    line = (
        f"conformance: {_TOTALS['games']} games, {_TOTALS['intents']} intents, "
        f"{_TOTALS['probes']} illegal probes in {_TOTALS['seconds']:.1f}s"
    )
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # shown even without -s
            reporter.write_line("")
            reporter.write_line(line)
    else:
        print(line)


class Failure(AssertionError):
    pass


class Checker:
    """One playout with every check; ``where`` names the seed and step on failure."""

    def __init__(self, name: str, n: int, options: dict[str, Any], seed: bytes):
        self.name = name
        self.engine = registry.get(name)
        self.n = n
        self.options = options
        self.seed = seed
        self.chooser = random.Random(seed)
        self.step = -1
        #: values seen per (command class, field), to build plausible probes
        self.pool: dict[tuple[type, str], list[Any]] = {}
        self.roundtripped: set[Any] = set()
        self.seen_ids: dict[int, Command] = {}
        self.probes = 0

    # -- reporting -------------------------------------------------------------------------------

    def where(self) -> str:
        return (
            f"[{self.name} players={self.n} options={canonical(self.options)} seed={self.seed.hex()} "
            f"step={self.step}] reproduce: QD_REPRO='{self.name}|{self.n}|{canonical(self.options)}|"
            f"{self.seed.hex()}' pytest tests/property/test_conformance.py -k repro"
        )

    def check(self, ok: bool, message: str) -> None:
        if not ok:
            self.fail(message)

    def fail(self, message: str) -> NoReturn:
        raise Failure(f"{message} {self.where()}")

    # -- the playout -----------------------------------------------------------------------------

    def run(self) -> int:
        engine = self.engine
        events = engine.setup(self.n, self.options, Rng(self.seed, domain=SETUP_DOMAIN))
        # marshal snapshots of each decision's event data, taken when emitted: if evolve kept a
        # reference to event data and later changed the state in place, they would differ.
        emitted = [marshal.dumps([e.data for e in events], 2)]
        state = fold(engine, events)
        steps: list[Step] = []
        viewers: list[Any] = [*range(self.n), None, ADMIN]
        self.step = 0
        while True:
            try:
                engine.check_invariants(state)
            except AssertionError as exc:
                raise Failure(f"invariant broken: {exc} {self.where()}") from exc
            seats = engine.to_act(state)
            result = engine.result(state)
            if (result is None) != bool(seats):
                self.fail(f"result {result!r} but to_act {seats}")
            if not seats:
                break
            self.check(self.step < MAX_STEPS, f"game did not end within {MAX_STEPS} intents")
            legal_by_seat = {}
            for seat in range(self.n):
                cmds = engine.legal(state, seat)
                if seat in seats:
                    self.check(bool(cmds), f"seat {seat} is to act but legal is empty")
                    legal_by_seat[seat] = cmds
                else:
                    if cmds != []:
                        self.fail(f"seat {seat} is not to act but legal is {cmds[:3]}...")
            for cmds in legal_by_seat.values():
                self._roundtrip(cmds)
            seat = seats[self.chooser.randrange(len(seats))]
            self.check(seat in engine.to_act(state), "acting seat not in to_act")
            cmds = legal_by_seat[seat]
            command = cmds[self.chooser.randrange(len(cmds))]
            if self.chooser.random() < PROBE_RATE:
                self._probe(state, seat, seats, legal_by_seat)
            before = marshal.dumps(state, 2)
            domain = decision_domain(len(events))
            try:
                new = engine.decide(state, seat, command, Rng(self.seed, domain=domain))
            except RuleViolation as exc:
                raise Failure(f"legal command {command!r} refused: {exc.code} {exc.message} {self.where()}") from exc
            if marshal.dumps(state, 2) != before:
                self.fail(f"decide mutated the state ({command!r})")
            if not new:
                self.fail(f"decide returned no events for {command!r}")
            for event in new:
                if not isinstance(event, Event):
                    self.fail(f"decide returned {event!r}, not an Event")
            emitted.append(marshal.dumps([e.data for e in new], 2))
            for event in new:
                state = engine.evolve(state, event)
                for viewer in viewers:
                    engine.redact_event(event, viewer)
            events.extend(new)
            steps.append(Step(seat, command, domain))
            self.step += 1
            if self.step % VIEW_EVERY == 0:
                self._views_and_json(state, viewers)
        self._at_end(state, events, emitted, steps, viewers)
        return self.step

    def _roundtrip(self, cmds: list[Command]) -> None:
        seen_ids = self.seen_ids
        for cmd in cmds:
            if id(cmd) in seen_ids:  # the very object checked before (engines may cache commands)
                continue
            try:
                key: Any = cmd
                if key in self.roundtripped:
                    continue
            except TypeError:  # unhashable fields (lists): key on the JSON instead
                key = canonical(cmd.to_json())
                if key in self.roundtripped:
                    continue
            wire = json.loads(json.dumps(cmd.to_json()))
            try:
                back = load_intent(self.name, wire)
            except ValidationError as exc:
                raise Failure(f"legal command {wire} refused by the schema: {exc.messages} {self.where()}") from exc
            self.check(back == cmd, f"schema round trip changed {cmd!r} into {back!r}")
            self.check(type(cmd).type in self.engine.commands, f"{type(cmd).__name__} not in engine.commands")
            self.roundtripped.add(key)
            seen_ids[id(cmd)] = cmd  # keeps the object alive, so its id is never reused
            for f in dataclasses.fields(cmd):
                values = self.pool.setdefault((type(cmd), f.name), [])
                value = getattr(cmd, f.name)
                if len(values) < 40 and value not in values:
                    values.append(value)

    # -- illegal probes --------------------------------------------------------------------------

    def _plausible(self, cls: type, field: dataclasses.Field) -> Any:
        seen = self.pool.get((cls, field.name))
        r = self.chooser
        if seen and r.random() < 0.6:
            value = r.choice(seen)
            if type(value) is int:
                return value + r.choice((-1, 1, 2, 7))
            return value
        annotation = str(field.type)
        if "int" in annotation and "list" not in annotation:
            return r.randint(-2, 12)
        if "bool" in annotation:
            return r.random() < 0.5
        if "str" in annotation and "list" not in annotation:
            return r.choice(("", "x", "Z", "none", "0"))
        if "list" in annotation:
            return r.choice(([], [0], ["x"], [0, 0]))
        if "dict" in annotation:
            return r.choice(({}, {"x": 1}))
        return None

    def _mutate(self, cmd: Command) -> Command | None:
        flds = dataclasses.fields(cmd)
        if not flds:
            return None
        f = self.chooser.choice(flds)
        return dataclasses.replace(cmd, **{f.name: self._plausible(type(cmd), f)})

    def _expect_refusal(self, state: dict, seat: int, cmd: Command, why: str) -> None:
        before = marshal.dumps(state, 2)
        try:
            events = self.engine.decide(state, seat, cmd, Rng(self.seed, domain=999_999))
        except RuleViolation as exc:
            self.check(isinstance(exc.code, str) and exc.code != "", "RuleViolation without a code")
            if marshal.dumps(state, 2) != before:
                self.fail(f"refused {cmd!r} but mutated the state")
            self.probes += 1
            return
        except Exception as exc:  # anything but RuleViolation is a bug
            raise Failure(f"{why}: {cmd!r} by seat {seat} raised {type(exc).__name__}: {exc} {self.where()}") from exc
        raise Failure(f"{why}: {cmd!r} by seat {seat} was accepted ({len(events)} events) {self.where()}")

    def _probe(self, state: dict, seat: int, seats: list[int], legal_by_seat: dict) -> None:
        r = self.chooser
        cmds = legal_by_seat[seat]
        kind = r.randrange(4)
        if kind == 0:  # a legal command with one field mutated
            mutated = self._mutate(r.choice(cmds))
            if mutated is not None and mutated not in cmds:
                self._expect_refusal(state, seat, mutated, "mutated legal command")
        elif kind == 1:  # a legal command sent by a seat that is not to act
            others = [s for s in range(self.n) if s not in seats]
            if others:
                self._expect_refusal(state, r.choice(others), r.choice(cmds), "command of another seat")
        elif kind == 2:  # another command type with plausible field values
            cls = r.choice(list(self.engine.commands.values()))
            try:
                cmd = cls(**{f.name: self._plausible(cls, f) for f in dataclasses.fields(cls)})
            except TypeError:
                return
            if cmd not in cmds:
                self._expect_refusal(state, seat, cmd, "command of another type")
        else:  # garbage through the schema
            wire = r.choice(cmds).to_json()
            garbage = self._garbage(wire)
            try:
                cmd = load_intent(self.name, garbage)
            except ValidationError:
                self.probes += 1
                return
            except Exception as exc:
                raise Failure(f"schema crashed on {garbage!r}: {type(exc).__name__}: {exc} {self.where()}") from exc
            if cmd not in cmds:
                self._expect_refusal(state, seat, cmd, f"garbage intent {garbage!r} that the schema loaded")

    def _garbage(self, wire: dict[str, Any]) -> Any:
        r = self.chooser
        g = dict(wire)
        choice = r.randrange(6)
        if choice == 0:
            return {"type": "no_such_intent_" + str(r.randrange(100))}
        if choice == 1:
            g["unexpected_field"] = 1
            return g
        if choice == 2:
            return r.choice(([], "sell", 7, None))
        keys = [k for k in g if k != "type"]
        if not keys:
            g["type"] = r.choice((3, None, ""))
            return g
        key = r.choice(keys)
        if choice == 3:
            del g[key]
        elif choice == 4:
            g[key] = r.choice(({"a": 1}, [[1]], 1.5, "🐙", True, None))
        else:
            g[key] = r.choice((-1, 10**9, "", "y"))
        return g

    # -- occasional and final checks -------------------------------------------------------------

    def _views_and_json(self, state: dict, viewers: list[Any]) -> None:
        self.check(json.loads(json.dumps(state)) == state, "state does not round-trip through JSON")
        before = copy.deepcopy(state)
        for viewer in viewers:
            view = self.engine.view(state, viewer)
            self.check(isinstance(view, dict), f"view for {viewer!r} is not a dict")
            json.dumps(view)
        # A view may share values with the state (Engine.view), but making it changes nothing.
        self.check(state == before, "a view changed the state")

    def _at_end(
        self,
        state: dict,
        events: list[Event],
        emitted: list[bytes],
        steps: list[Step],
        viewers: list[Any],
    ) -> None:
        engine = self.engine
        self._views_and_json(state, viewers)
        # event data unchanged since it was emitted (setup events first, then one entry per step)
        position = 0
        for k, snapshot in enumerate(emitted):
            count = len(marshal.loads(snapshot))
            now = marshal.dumps([e.data for e in events[position : position + count]], 2)
            if now != snapshot:
                self.step = k - 1
                self.fail("event data changed after it was emitted (does evolve alias event data?)")
            position += count
        # events round-trip through JSON; folding them from scratch gives the same state
        wire = canonical([e.to_json() for e in events])
        loaded = json.loads(wire)
        self.check(loaded == [e.to_json() for e in events], "events do not round-trip through JSON")
        refolded = fold(engine, [Event.from_json(obj) for obj in loaded])
        self.check(canonical(refolded) == canonical(state), "folding the events from scratch differs")
        # same seed, same intents: byte-identical events (canonical JSON) and the same state
        again, state2 = replay(engine, self.n, self.options, self.seed, steps)
        self.check(canonical([e.to_json() for e in again]) == wire, "re-deciding gave other events")
        self.check(canonical(state2) == canonical(state), "re-deciding gave another state")
        result = engine.result(state)
        self.check(result is not None, "game ended without a result")
        json.dumps(result)
        every = {str(s) for s in range(self.n)}
        for key in ("scores", "ranks"):
            self.check(set(result.get(key, {})) == every, f"result[{key!r}] must name every seat")
        self.check(sorted(result.get("ranking", [])) == list(range(self.n)), "ranking must list every seat")
        self.check("breakdown" in result, "result without a breakdown")
        ranks = result["ranks"]
        self.check(ranks[str(result["ranking"][0])] == 1, "the first of the ranking must have rank 1")


def _play(name: str, n: int, options: dict[str, Any], seed: bytes) -> int:
    checker = Checker(name, n, options, seed)
    intents = checker.run()
    _TOTALS["probes"] += checker.probes
    return intents


def test_registry_has_engines() -> None:
    assert engine_names(), "no engine imports: nothing to check"


@pytest.mark.parametrize(("name", "players", "options", "start", "count"), _batches())
def test_random_playouts(name: str, players: int, options: dict[str, Any], start: int, count: int) -> None:
    started = time.perf_counter()
    for index in range(start, start + count):
        intents = _play(name, players, options, seed_for(name, players, options, index))
        _TOTALS["games"] += 1
        _TOTALS["intents"] += intents
    _TOTALS["seconds"] += time.perf_counter() - started


def test_setup_refuses_bad_player_counts() -> None:
    for name in engine_names():
        engine = registry.get(name)
        for n in (engine.min_players - 1, engine.max_players + 1):
            with pytest.raises(RuleViolation) as info:
                engine.setup(n, {}, Rng(bytes(32)))
            assert info.value.code == "invalid_player_count", name


# -- what a search needs: determinize and evaluate (base.py's contract) ---------------------

#: Seeded positions per case at QD_PLAYOUTS=1 (each checked for every seat, with two determinizations).
DETERMINIZE_POSITIONS: dict[str, int] = {"nautilus-industries": 60, "nauticus": 120, "waters-of-nereus": 200}
#: Games without hidden information (NAU-005, NIN-007).
OPEN_GAMES = ("nauticus", "nautilus-industries")


def _positions(name: str, n: int, options: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """``count`` states of seeded random games, taken at random steps (the end included)."""
    engine = registry.get(name)
    out = []
    for index in range(count):
        seed = hashlib.sha256(f"determinize|{name}|{n}|{canonical(options)}|{index}".encode()).digest()
        chooser = random.Random(seed)
        state = fold(engine, engine.setup(n, options, Rng(seed, domain=SETUP_DOMAIN)))
        stop = chooser.randrange(MAX_STEPS) if index % 10 == 9 else chooser.randrange(400)
        for step in range(stop):
            seats = engine.to_act(state)
            if not seats:
                break
            seat = chooser.choice(seats)
            legal = engine.legal(state, seat)
            new = engine.decide(state, seat, chooser.choice(legal), Rng(seed, domain=decision_domain(step)))
            state = fold(engine, new, state)
        out.append(state)
    return out


@pytest.mark.parametrize(
    ("name", "players", "options"), [pytest.param(*c, id=f"{c[0]}-{c[1]}p-{canonical(c[2])}") for c in _cases()]
)
def test_determinize_agrees_with_the_view(name: str, players: int, options: dict[str, Any]) -> None:
    engine = registry.get(name)
    count = max(1, round(DETERMINIZE_POSITIONS.get(name, DEFAULT_PLAYOUTS) * SCALE))
    differed = 0
    for index, state in enumerate(_positions(name, players, options, count)):
        where = f"{name} {players}p {canonical(options)} position {index}"
        for seat in range(players):
            view = json.loads(json.dumps(engine.view(state, seat)))  # as the API serves it
            before = canonical(view)
            drawn = []
            for k in range(2):
                full = engine.determinize(view, seat, Rng(bytes(32), domain=1000 * index + 10 * seat + k))
                assert canonical(view) == before, f"{where}: determinize changed the view it was given"
                assert json.loads(json.dumps(engine.view(full, seat))) == view, f"{where} seat {seat}: view differs"
                engine.check_invariants(full)
                legal = [c.to_json() for c in engine.legal(full, seat)]
                assert legal == [c.to_json() for c in engine.legal(state, seat)], f"{where} seat {seat}: legal"
                values = engine.evaluate(full)
                assert len(values) == players and all(isinstance(v, float) and math.isfinite(v) for v in values), (
                    f"{where} seat {seat}: evaluate gave {values!r}"
                )
                drawn.append(canonical(full))
            differed += drawn[0] != drawn[1]
            if name in OPEN_GAMES:  # nothing hidden: the view gives the state itself
                assert drawn[0] == canonical(state), f"{where} seat {seat}: determinize is not the state"
    if name == "waters-of-nereus":  # hidden information: two draws of the same view are not always one state
        assert differed > 0, f"{name} {players}p: determinize never drew different hidden parts"


@pytest.mark.parametrize(
    ("name", "players", "options"), [pytest.param(*c, id=f"{c[0]}-{c[1]}p-{canonical(c[2])}") for c in _cases()]
)
def test_play_is_decide_then_evolve(name: str, players: int, options: dict[str, Any]) -> None:
    """``play`` (a search's fast path) gives exactly the state ``decide``'s events fold into, for every
    legal command of a seat to act (up to eight a position), chance draws included."""
    engine = registry.get(name)
    count = max(1, round(DETERMINIZE_POSITIONS.get(name, DEFAULT_PLAYOUTS) * SCALE))
    for index, state in enumerate(_positions(name, players, options, count)):
        for seat in engine.to_act(state):
            for k, command in enumerate(engine.legal(state, seat)[:8]):
                where = f"{name} {players}p {canonical(options)} position {index} seat {seat} {command!r}"
                before = canonical(state)
                expected = fold(
                    engine, engine.decide(state, seat, command, Rng(bytes(32), domain=k)), clone_state(state)
                )
                played = engine.play(clone_state(state), seat, command, Rng(bytes(32), domain=k))
                assert canonical(state) == before, f"{where}: decide changed the state"
                assert canonical(played) == canonical(expected), f"{where}: play differs from decide + evolve"


if os.environ.get("QD_REPRO"):
    # Collected only when asked for: QD_REPRO='<game>|<players>|<options json>|<seed hex>'.
    def test_repro() -> None:
        name, n, options, seed = os.environ["QD_REPRO"].split("|")
        _play(name, int(n), json.loads(options), bytes.fromhex(seed))


# -- resignations and timeouts at random moments ---------------------------------------------------
#
# The same engines and player counts, played through the platform's pipeline
# (``service/domain/pipeline.py``) with a clock and an injected time: at random moments a random
# seat still playing resigns, or the seat to act runs out of time (``SeatTimedOut`` at its
# deadline), and the game goes on while two seats remain.  At every step: the invariants, no
# forfeited seat in ``to_act`` or with a legal intent, a forfeited seat's intent refused and
# nothing changed, every recorded clock non-negative with a deadline exactly for the seats to
# act.  At the end: the platform's result (forfeited seats last, in reverse order of forfeit),
# a fold from scratch equal to the state, and the audit's re-decide reproducing every event,
# timeouts and resignations included, byte for byte.

#: Seeded playouts per case at QD_PLAYOUTS=1.
FORFEIT_PLAYOUTS: dict[str, int] = {"nautilus-industries": 8, "nauticus": 16, "waters-of-nereus": 16}
FORFEIT_GAME = "00000000-0000-4000-8000-00000000f0f0"
_CLOCKS = [
    {"type": "fischer", "base_s": 30, "increment_s": 2},
    {"type": "deadline", "per_decision_s": 20},
    {"type": "fischer", "base_s": 5, "increment_s": 0},
    None,
]


def _forfeit_batches() -> list[Any]:
    params = []
    for name, n, options in _cases():
        total = max(1, round(FORFEIT_PLAYOUTS.get(name, 4) * SCALE))
        label = f"{name}-{n}p-{canonical(options)}"
        params.append(pytest.param(name, n, options, total, id=label))
    return params


def _forfeit_playout(name: str, n: int, options: dict[str, Any], index: int) -> tuple[int, int, int]:
    """One playout with resignations and timeouts; returns (intents, forfeits, timeouts).  The
    clock and the rate of forfeits go round with ``index``; an even playout (a Fischer clock)
    also times the seat to act out at a random early step, an odd one makes a seat resign, so
    that even a smoke run of one playout per case times a seat out."""
    from service.audit.checks import redecide
    from service.domain import clocks, pipeline
    from service.domain.replay import fold_stream
    from service.games.base import forfeited

    engine = registry.get(name)
    seed = hashlib.sha256(f"forfeits|{name}|{n}|{canonical(options)}|{index}".encode()).digest()
    chooser = random.Random(seed)
    spec = _CLOCKS[index % len(_CLOCKS)]
    rate = (0.01, 0.08, 0.003)[index % 3]
    forced = chooser.randrange(0, 60)
    where = f"[{name} players={n} options={canonical(options)} seed={seed.hex()} clock={spec} rate={rate}]"
    t = clocks.to_us("2026-01-01T00:00:00.000000Z")
    meta = {"intent_id": "open", "seat": None, "received_at": clocks.to_iso(t), "intent": None}
    terms = {} if spec is None else {"clock": spec}
    events = pipeline.open_game(engine, FORFEIT_GAME, [f"p{i}" for i in range(n)], options, seed, meta, **terms)
    state = fold_stream(engine, events)
    order: list[int] = []
    result = None
    intents = 0

    def act(seat: int | None, command: Command, when: int) -> None:
        nonlocal state, result, intents
        raw = command.to_json()
        m = {"intent_id": f"i{len(events)}", "seat": seat, "received_at": clocks.to_iso(when), "intent": raw}
        clock = clocks.Clock(spec, n, events[-1].meta.get("clock")) if clocks.runs(spec) else None
        decision = pipeline.act(
            engine,
            state,
            seat,
            command,
            pipeline.Head(FORFEIT_GAME, seed, len(events), events[-1].hash, m, clock),
        )
        state, result = decision.state, decision.result
        events.extend(decision.events)
        intents += 1

    while result is None:
        assert intents < MAX_STEPS, f"game did not end {where}"
        engine.check_invariants(state)
        out = forfeited(state)
        assert out == order, f"forfeited {out} != {order} {where}"
        seats = engine.to_act(state)
        assert seats and not set(seats) & set(out), f"to_act {seats} forfeited {out} {where}"
        for seat in out:
            assert engine.legal(state, seat) == [], where
        clock = events[-1].meta.get("clock")
        if clocks.runs(spec):
            assert all(us >= 0 for us in clock["remaining_us"].values()), where
            assert sorted(int(s) for s in clock["deadline"]) == sorted(seats), f"deadlines {clock} {where}"
        active = [s for s in range(n) if s not in out]
        step = chooser.randrange(0, 600_000)  # up to 0.6 s between intents
        due = clocks.due(clock, clocks.to_iso(t + step)) if clocks.runs(spec) else []
        if out and chooser.random() < 0.05:  # a forfeited seat's intent: refused, nothing written
            before, head = marshal.dumps(state, 2), len(events)
            try:
                act(chooser.choice(out), pipeline.Resign(), t)
                raise AssertionError(f"a forfeited seat resigned again {where}")
            except RuleViolation as exc:
                assert exc.code in ("seat_forfeited", "clock_expired"), where
            assert marshal.dumps(state, 2) == before and len(events) == head, where
        waiting = index % 2 == 0 and intents < forced  # the forced timeout comes first
        if (chooser.random() < rate and not waiting) or intents == forced:
            seat = chooser.choice(seats if index % 2 == 0 and intents == forced else active)
            if clocks.runs(spec) and seat in seats and (chooser.random() < 0.5 or intents == forced):
                # Its time runs out right now: the scheduler writes the timeout at the deadline.
                deadline = clock["deadline"][str(seat)]
                t = max(t, clocks.to_us(deadline))
                act(seat, pipeline.TimeOut(), clocks.to_us(deadline))
                timed_out = next(e for e in reversed(events) if e.type == "SeatTimedOut")
                assert timed_out.data == {"seat": seat, "deadline": deadline}, where
            else:
                act(seat, pipeline.Resign(), t)
            order.append(seat)
            if len(active) == 2:
                assert result is not None and result["reason"] == "forfeit", where
            continue
        if due and chooser.random() < 0.5:
            deadline, seat = due[0]  # a clock ran out before anyone moved: written at its deadline
            t = max(t, clocks.to_us(deadline))
            act(seat, pipeline.TimeOut(), clocks.to_us(deadline))
            order.append(seat)
            continue
        t += step
        in_time = [s for s in seats if not clocks.expired(clock, s, clocks.to_iso(t))]
        if not in_time:
            continue  # every seat to act is out of time: the next round writes a timeout
        seat = chooser.choice(in_time)
        act(seat, chooser.choice(engine.legal(state, seat)), t)

    assert result["forfeited"] == order, where
    ranking = result["ranking"]
    if result["reason"] == "forfeit" or order:
        assert ranking[len(ranking) - len(order) :] == order[::-1], f"forfeited not last {result} {where}"
    assert sorted(ranking) == list(range(n)) and set(result["ranks"]) == {str(s) for s in range(n)}, where
    assert result["ranks"][str(ranking[0])] == 1, where
    assert events[-1].type == "GameFinished", where
    refolded = fold_stream(engine, events)
    assert canonical(refolded) == canonical(state), f"folding from scratch differs {where}"
    check = redecide(FORFEIT_GAME, events, seed)
    assert check.ok, f"{check.summary} {where}"
    timeouts = sum(1 for e in events if e.type == pipeline.SEAT_TIMED_OUT)
    return intents, len(order), timeouts


@pytest.mark.parametrize(("name", "players", "options", "count"), _forfeit_batches())
def test_random_playouts_with_resignations_and_timeouts(
    name: str, players: int, options: dict[str, Any], count: int
) -> None:
    started = time.perf_counter()
    forfeits = timeouts = 0
    for index in range(count):
        intents, n, out = _forfeit_playout(name, players, options, index)
        forfeits += n
        timeouts += out
        _TOTALS["games"] += 1
        _TOTALS["intents"] += intents
    _TOTALS["seconds"] += time.perf_counter() - started
    assert timeouts > 0, "no seat timed out: the test would not test timeouts"
    assert count < 2 or forfeits > timeouts, "no seat resigned: the test would not test resignations"
