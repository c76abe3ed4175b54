"""A finished game's analysis: each seat's value after every event, and where its own moves lost most.

Everything a seat's column says is computed from that seat's view alone, exactly as the house bots decide:
a position is the seat's view (``engine.view(state, seat)``, through JSON as the API serves it), the states
searched are drawn from it by ``engine.determinize``, and never is the true state's hidden part read.  So the
analysis of a seat is the same whatever the other seats held, as long as the seat saw the same
(``tests/property/test_analysis_hidden_information.py``).

* A seat's **value** after an event is its margin (``position.margin``: its evaluation less the best other
  seat's, in the game's points) averaged over :attr:`Budget.value_samples` determinizations of its view.
* At each of the seat's own **decisions** (the first event of an intent it sent with more than one legal
  choice), the level-3 house bot searches the seat's view within :attr:`Budget.search_cpu_s` of CPU and
  :attr:`Budget.search_iterations` iterations, and both the move played and the bot's preferred move are
  scored one ply deep on the same determinizations.  ``loss`` is how much the played move's mean margin falls
  short of the preferred one's (0 when it is the same move or scores at least as well).
* A **mistake** is a decision whose loss is at least :data:`MISTAKE_POINTS`; each seat's
  :data:`MISTAKES_PER_SEAT` largest are listed.
* A seat's **agreement** is how many of its decisions matched the bot's first choice: a signal, never a
  verdict (a strong player often agrees with a strong bot).

Seeds come from the caller (the game's id) and each position's sequence number and seat, so the same game
and the same budget give the same analysis when the iteration cap ends each search.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from service.bots.ismcts import choose_ismcts
from service.bots.levels import LEVELS
from service.bots.position import after, candidates, intent_key, legal_by_key, margin
from service.games.base import Engine, Event, State, clone_state
from service.games.rng import Rng

#: The analysis' format; a stored analysis of another format is computed again.
FORMAT = 1
#: The level whose preferred move is shown: the strongest house bot.
LEVEL = 3
#: A decision losing at least this many points of margin (one ply deep) is a mistake.
MISTAKE_POINTS = 1.0
#: Mistakes listed per seat at most, the largest losses first.
MISTAKES_PER_SEAT = 10


@dataclass(frozen=True)
class Budget:
    """What one analysis may spend: a bounded search per decision and a few draws per value."""

    #: CPU seconds of the level-3 search at one decision (read from the caller's ``cpu_clock``).
    search_cpu_s: float = 0.05
    #: Iterations of that search at most (alone it decides when there is no clock).
    search_iterations: int = 1000
    #: Determinizations of a seat's view behind each value and each one-ply score.
    value_samples: int = 4


@dataclass(frozen=True)
class Step:
    """One stored event: the engine's event to fold (None for a platform event such as ``GameCreated``),
    and, when it is the first event of an intent a seat sent (not a resignation, a timeout or an
    automatic step), that seat and the intent as recorded."""

    seq: int
    event: Event | None
    seat: int | None = None
    intent: dict[str, Any] | None = None
    #: Whether the event is the last of its decision's (or the setup's) batch: only then is the state
    #: one a seat was shown.  An event inside a batch takes the value of its batch's end.
    batch_end: bool = True


@dataclass(frozen=True)
class Position:
    """A step with the states around it: ``before`` (None before the game's first engine event) and
    ``after``.  The analysis of a seat reads them only through ``engine.view(..., seat)``."""

    step: Step
    before: State | None
    after: State | None


def positions(engine: Engine, steps: Iterable[Step]) -> Iterator[Position]:
    """The game's positions, folding the steps' engine events (each state a new object)."""
    state: State | None = None
    for step in steps:
        before = state
        if step.event is not None:
            state = engine.evolve(None if state is None else clone_state(state), step.event)
        yield Position(step, before, state)


def _rng(seed: bytes, seq: int, seat: int, purpose: str) -> Rng:
    return Rng(hashlib.sha256(seed + f"|{seq}|{seat}|{purpose}".encode()).digest())


def _random(seed: bytes, seq: int, seat: int) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(seed + f"|{seq}|{seat}|search".encode()).digest()[:8], "big"))


def seat_view(engine: Engine, state: State, seat: int) -> dict[str, Any]:
    """``seat``'s view of ``state`` as the API serves it (through JSON): all an analysis of the seat reads."""
    return json.loads(json.dumps(engine.view(state, seat)))


def value(engine: Engine, view: dict[str, Any], seat: int, rng: Rng, samples: int) -> float:
    """``seat``'s mean margin over ``samples`` determinizations of its ``view``."""
    total = 0.0
    for _ in range(samples):
        total += margin(engine.evaluate(engine.determinize(view, seat, rng)), seat)
    return total / samples


def intent_words(intent: dict[str, Any]) -> str:
    """An intent in words for people: its type, then its fields (``place sub: tile 3, colour Y``)."""
    words = str(intent.get("type", "?")).replace("_", " ")
    fields = [(k, v) for k, v in intent.items() if k != "type"]
    if not fields:
        return words
    shown = ", ".join(f"{k.replace('_', ' ')} {_words(v)}" for k, v in fields)
    return f"{words}: {shown}"


def _words(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_words(v) for v in value) + "]" if value else "none"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} {_words(v)}" for k, v in value.items()) + "}"
    if value is None:
        return "none"
    return str(value)


def decision(
    engine: Engine,
    view: dict[str, Any],
    seat: int,
    played: dict[str, Any],
    *,
    seed: bytes,
    seq: int,
    budget: Budget,
    cpu_clock: Callable[[], float] | None,
) -> dict[str, Any] | None:
    """The analysis of one decision of ``seat`` from its ``view``: the level-3 bot's preferred move and the
    played move's loss; None when the seat had no choice."""
    rng = _rng(seed, seq, seat, "decision")
    first = engine.determinize(view, seat, rng)
    intents = candidates([c.to_json() for c in engine.legal(first, seat)])
    if len(intents) < 2:
        return None
    spec = LEVELS[LEVEL]
    assert spec.shape is not None
    if cpu_clock is None:

        def out_of_budget() -> bool:
            return False

    else:
        deadline = cpu_clock() + budget.search_cpu_s

        def out_of_budget() -> bool:
            return cpu_clock() >= deadline

    preferred = choose_ismcts(
        engine,
        seat,
        view,
        intents,
        _random(seed, seq, seat),
        iterations=budget.search_iterations,
        shape=spec.shape,
        out_of_budget=out_of_budget,
    )
    played_key, preferred_key = intent_key(played), intent_key(preferred)
    matched = played_key == preferred_key
    loss = 0.0
    if not matched:
        score = {played_key: 0.0, preferred_key: 0.0}
        for k in range(budget.value_samples):
            state = first if k == 0 else engine.determinize(view, seat, rng)
            commands = legal_by_key(engine, state, seat)
            for key in score:
                command = commands.get(key)
                if command is None:  # the recorded intent is legal in every determinization (conformance)
                    continue
                score[key] += margin(engine.evaluate(after(engine, state, seat, command, rng)), seat)
        loss = max(0.0, (score[preferred_key] - score[played_key]) / budget.value_samples)
    return {
        "seq": seq,
        "seat": seat,
        "played": played,
        "preferred": preferred,
        "preferred_text": intent_words(preferred),
        "matched": matched,
        "loss": round(loss, 3),
    }


def analyse_seat(
    engine: Engine,
    seat: int,
    game: Sequence[Position],
    *,
    seed: bytes,
    budget: Budget = Budget(),
    cpu_clock: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """``seat``'s column: its value after every step (0 before the first engine event: nothing is known
    yet) and the analysis of each of its decisions.  Reads every state only through ``seat``'s view."""
    values: list[float | None] = []
    decisions: list[dict[str, Any]] = []
    for position in game:
        step = position.step
        if step.seat == seat and step.intent is not None and position.before is not None:
            found = decision(
                engine,
                seat_view(engine, position.before, seat),
                seat,
                step.intent,
                seed=seed,
                seq=step.seq,
                budget=budget,
                cpu_clock=cpu_clock,
            )
            if found is not None:
                decisions.append(found)
        if position.after is None:
            values.append(0.0)
        elif not step.batch_end:
            values.append(None)
        else:
            view = seat_view(engine, position.after, seat)
            values.append(
                round(value(engine, view, seat, _rng(seed, step.seq, seat, "value"), budget.value_samples), 3)
            )
    later = 0.0
    for i in range(len(values) - 1, -1, -1):
        found_value = values[i]
        if found_value is None:
            values[i] = later
        else:
            later = found_value
    return {"values": values, "decisions": decisions}


def analyse(
    engine: Engine,
    steps: Sequence[Step],
    players: int,
    *,
    seed: bytes,
    budget: Budget = Budget(),
    cpu_clock: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """The analysis of a finished game (docs/BOTS.md, "Analysis"): per event each seat's value, every
    decision, the mistakes and each seat's agreement with the bot's first choice."""
    game = list(positions(engine, steps))
    columns = [analyse_seat(engine, s, game, seed=seed, budget=budget, cpu_clock=cpu_clock) for s in range(players)]
    decisions = sorted((d for c in columns for d in c["decisions"]), key=lambda d: (d["seq"], d["seat"]))
    mistakes: list[dict[str, Any]] = []
    for column in columns:
        big = [d for d in column["decisions"] if d["loss"] >= MISTAKE_POINTS]
        big.sort(key=lambda d: -d["loss"])
        mistakes.extend(big[:MISTAKES_PER_SEAT])
    mistakes.sort(key=lambda d: (d["seq"], d["seat"]))
    return {
        "format": FORMAT,
        "game": engine.name,
        "level": LEVEL,
        "budget": {
            "search_cpu_ms": round(budget.search_cpu_s * 1000, 3),
            "search_iterations": budget.search_iterations,
            "value_samples": budget.value_samples,
        },
        "events": [
            {"seq": p.step.seq, "values": [columns[s]["values"][i] for s in range(players)]} for i, p in enumerate(game)
        ],
        "decisions": decisions,
        "mistakes": [
            {k: d[k] for k in ("seq", "seat", "loss", "played", "preferred", "preferred_text")} for d in mistakes
        ],
        "agreement": [
            {
                "seat": s,
                "decisions": len(columns[s]["decisions"]),
                "matched": sum(1 for d in columns[s]["decisions"] if d["matched"]),
            }
            for s in range(players)
        ],
    }
