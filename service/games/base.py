"""The one engine interface every Quarterdeck game implements.

A rules engine is pure Python: no Flask, psycopg, redis or rq, no clock and no
global random.  Randomness comes only from the :class:`~service.games.rng.Rng`
the platform passes to ``setup`` and ``decide``, and every random outcome is
written into the event it caused, so ``evolve`` never draws.

Vocabulary
----------
* A **command** is what a seat asks for: a frozen dataclass named in the
  imperative (``PlaceSub``), with a wire name in ``type`` (``"place_sub"``).
  On the wire it is the JSON object ``{"type": "place_sub", ...fields}``.
* An **event** is what happened: :class:`Event` with a past-tense ``type``
  (``"SubPlaced"``) and JSON-compatible ``data``.
* The **state** is a plain JSON-compatible dict (str keys, lists, ints, strs,
  bools, None; no tuples, no floats).  That makes it cheap to copy and
  trivially serialisable for snapshots and time travel.

Contract (checked for every engine by ``tests/property/test_conformance.py``)
---------------------------------------------------------------------------
* ``fold(setup(...))`` gives the opening state; ``evolve`` applies one event.
  ``evolve`` MAY update the state in place and MUST return it; it must never
  keep references to the event's data (copy lists/dicts it stores).
* ``decide`` never mutates the state it is given.  It returns every event the
  command causes, including automatic follow-ups (forfeited actions, market
  resolution, upkeep draws...), so that after the events are folded either the
  game is over or every seat in ``to_act`` has at least one legal command.
* ``decide`` accepts exactly the commands ``legal`` lists for that seat and
  refuses anything else with :class:`RuleViolation`.
* ``forfeit(state, seat, rng)`` returns the events of a seat leaving the game
  (it resigned or its clock ran out; the platform decides when, see
  ``service/domain/pipeline.py``): first ``SeatForfeited`` with ``{"seat": seat,
  ...}``, whose fold appends the seat to ``state["forfeited"]`` (a NEW list:
  callers copy states shallowly), then every automatic follow-up, with the same
  promise as ``decide``.  From then on ``to_act`` never lists the seat, its
  ``legal`` is empty, and the game's own rules (its rules reference, "forfeit")
  say what becomes of its components and turns.  The final ranking of a game
  with forfeits is the platform's (:func:`forfeited` seats last).
* ``determinize(view(state, seat), seat, rng)`` returns a full state whose
  ``view`` for ``seat`` is that view again: what the view hides (other
  seats' hands, decks, face-down choices) is drawn with ``rng`` from what the
  view proves is left, and the state satisfies the invariants.  It is what a
  bot searches in (``service/bots/``), since a bot never gets the real state.
* ``evaluate(state)`` returns one finite number per seat, higher is better:
  the rules' own final scoring as if the game ended now, plus the game's
  estimate of unfinished work.  Cheap: searches call it at every leaf.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import marshal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from service.games.rng import Rng

#: The operator's viewer sentinel (``ADMIN_TOKEN``, or an organiser's key on its own game): sees everything.
ADMIN = "admin"

#: A viewer is a seat index, ``None`` for a spectator, or :data:`ADMIN`.
Viewer = int | str | None

State = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened in a game.  ``data`` is JSON-compatible and
    must be treated as immutable once the event exists."""

    type: str
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "data": self.data}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Event:
        return cls(obj["type"], obj["data"])


@dataclass(frozen=True)
class Command:
    """Base of every command.  Subclasses are frozen dataclasses whose fields
    are JSON scalars, lists of scalars or dicts of scalars, and set ``type``."""

    type: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        # A class is hashable; mypy reads a dataclass's instances' ``__hash__`` as the class's.
        for name in _field_names(type(self)):  # type: ignore[arg-type]
            out[name] = getattr(self, name)
        return out


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    """A command class's field names, in order.  ``dataclasses.fields`` builds
    them anew on every call, and every legal list of every projection calls
    ``to_json`` on each legal command (docs/PERFORMANCE.md, "Only what can change is written")."""
    return tuple(f.name for f in dataclasses.fields(cls))


class RuleViolation(Exception):
    """A command the rules refuse.  ``code`` is stable and machine-readable
    (``not_your_turn``, ``insufficient_funds``...); ``message`` is a sentence
    a player understands, naming the rule and why."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}


class Engine(Protocol):
    """What the platform needs from a game.  One instance per rules version."""

    #: API name, e.g. ``"nautilus-industries"``.
    name: str
    #: Rules-engine version recorded in every game created with it.
    version: str
    min_players: int
    max_players: int
    #: wire name -> command class, for every command this game knows.
    commands: dict[str, type[Command]]

    def setup(self, players: int, options: dict[str, Any], rng: Rng) -> list[Event]:
        """Opening events.  The first one creates the state from ``None``.
        Raises :class:`RuleViolation` (``invalid_options``,
        ``invalid_player_count``) for a game that cannot be set up."""
        ...

    def evolve(self, state: State | None, event: Event) -> State: ...

    def legal(self, state: State, seat: int) -> list[Command]:
        """Every command ``seat`` may send now; ``[]`` if it is not to act."""
        ...

    def decide(self, state: State, seat: int, command: Command, rng: Rng) -> list[Event]: ...

    def play(self, state: State, seat: int, command: Command, rng: Rng) -> State:
        """The state after ``decide``'s events, for a search: the same as folding them into ``state``
        (the conformance suite checks it), but ``state`` may be changed or left as it is, so only the
        returned state counts.  A game whose ``decide`` already folds its events into a copy returns
        that copy instead of folding them twice (``rules.play``; else :func:`decide_then_evolve`)."""
        ...

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        """What ``viewer`` may see.  Hidden information never appears.  The view may
        share values with ``state`` (a deep copy per viewer and commit was a sixth of
        a projection's CPU): callers read or serialise it, never change it."""
        ...

    def redact_event(self, event: Event, viewer: Viewer) -> Event:
        """The event as ``viewer`` may see it while the game runs (the events
        feed and the intent answer).  Return ``event`` itself when nothing in
        it is hidden from ``viewer``."""
        ...

    def to_act(self, state: State) -> list[int]: ...

    def result(self, state: State) -> dict[str, Any] | None:
        """``None`` while the game runs; at the end::

        {"scores": {"0": 57, ...},          # seat (as str) -> final score
         "ranks": {"0": 1, ...},            # 1 = best; tied seats share a rank
         "ranking": [0, 2, 1],              # seats, best first
         "breakdown": {"0": {...}, ...},    # each scoring category of the rulebook
         "tiebreak": "..."}                 # which rulebook tie-break decided, if any
        """
        ...

    def check_invariants(self, state: State) -> None:
        """Raise ``AssertionError`` if a game invariant is broken: components
        conserved, no negative money or counts, and so on."""
        ...

    def forfeit(self, state: State, seat: int, rng: Rng) -> list[Event]:
        """The events of ``seat`` leaving the game (see the module's contract).
        Never mutates ``state``; refuses a seat already forfeited or a game over."""
        ...

    def determinize(self, view: dict[str, Any], seat: int, rng: Rng) -> State:
        """A full state consistent with ``seat``'s ``view``, hidden parts drawn with ``rng``."""
        ...

    def evaluate(self, state: State) -> list[float]:
        """One finite number per seat, higher is better (see the module's contract)."""
        ...


class GameEngine:
    """The one engine class: every game package has the same modules, and its
    ``ENGINE`` is this class built from them (``service/games/<game>/__init__.py``).

    The interface's functions are bound straight to the package's module
    functions, so a call costs no forwarding frame on the hot path.  Module by
    module (the same names in every game):

    * ``data``: ``NAME``, ``VERSION``, ``MIN_PLAYERS``, ``MAX_PLAYERS`` and the
      component tables;
    * ``commands``: ``COMMANDS`` (wire name -> command class);
    * ``setup``: ``setup(players, options, rng)``;
    * ``evolve``: ``evolve(state, event)``;
    * ``legal``: ``legal(state, seat)`` and ``to_act(state)``;
    * ``rules``: ``decide(state, seat, command, rng)`` and ``forfeit(state, seat, rng)``;
    * ``views``: ``view(state, viewer)`` and ``redact_event(event, viewer)``;
    * ``invariants``: ``check(state)``;
    * ``scoring``: ``result(state)`` (the stored result or ``None``);
    * ``refusals``: the texts of every :class:`RuleViolation` the game raises;
    * ``search``: ``determinize(view, seat, rng)`` and ``evaluate(state)``.
    """

    def __init__(
        self,
        *,
        data: Any,
        commands: Any,
        setup: Any,
        evolve: Any,
        legal: Any,
        rules: Any,
        views: Any,
        invariants: Any,
        scoring: Any,
        search: Any,
    ) -> None:
        self.name: str = data.NAME
        self.version: str = data.VERSION
        self.min_players: int = data.MIN_PLAYERS
        self.max_players: int = data.MAX_PLAYERS
        self.commands: dict[str, type[Command]] = commands.COMMANDS
        self.setup = setup.setup
        self.evolve = evolve.evolve
        self.legal = legal.legal
        self.to_act = legal.to_act
        self.decide = rules.decide
        own_play = getattr(rules, "play", None)
        self.play = (
            own_play if own_play is not None else functools.partial(decide_then_evolve, rules.decide, evolve.evolve)
        )
        self.forfeit = rules.forfeit
        self.view = views.view
        self.redact_event = views.redact_event
        self.check_invariants = invariants.check
        self._result = scoring.result
        self.determinize = search.determinize
        self.evaluate = search.evaluate

    #: The modules every game package has, by these names.
    SHAPE = (
        "data",
        "commands",
        "setup",
        "evolve",
        "legal",
        "rules",
        "views",
        "invariants",
        "scoring",
        "refusals",
        "search",
    )

    @classmethod
    def assemble(cls, package: str) -> GameEngine:
        """The engine of ``package`` (``service.games.<game>``), built from its
        modules of the one shape; a package missing one fails here, loudly."""
        modules = {name: importlib.import_module(f"{package}.{name}") for name in cls.SHAPE}
        del modules["refusals"]  # part of the shape, used by the rules, not by the interface
        return cls(**modules)

    def result(self, state: State) -> dict[str, Any] | None:
        """A fresh copy of the result every time: callers may keep or change it."""
        found = self._result(state)
        return None if found is None else clone_state(found)

    def __repr__(self) -> str:
        return f"<GameEngine {self.name} {self.version}>"


def decide_then_evolve(
    decide: Callable[[State, int, Command, Rng], list[Event]],
    evolve: Callable[[State | None, Event], State],
    state: State,
    seat: int,
    command: Command,
    rng: Rng,
) -> State:
    """``Engine.play`` of a game without a faster one: ``decide``'s events folded into ``state``."""
    for event in decide(state, seat, command, rng):
        state = evolve(state, event)
    return state


#: The engine event of a seat leaving the game (every engine's ``forfeit``).
SEAT_FORFEITED = "SeatForfeited"


def forfeited(state: State) -> list[int]:
    """The seats that have left the game, in the order they left (none: ``[]``).
    A state that never saw a forfeit has no such key, so old states and
    snapshots read the same.  Do not change the list returned."""
    return state.get("forfeited") or []


def with_forfeited(state: State, seat: int) -> None:
    """Record ``seat`` as forfeited (for the engines' ``evolve``): a new list,
    never an append, since ``decide`` works on shallow copies of a state."""
    state["forfeited"] = [*forfeited(state), seat]


def check_forfeit(state: State, seat: Any, players: int, over: bool) -> None:
    """The engines' common refusals of a forfeit: a game over, no such seat, a
    seat that has already left."""
    if over:
        raise RuleViolation("game_over", "The game is over.")
    if type(seat) is not int or not 0 <= seat < players:
        raise RuleViolation("no_such_seat", f"There is no seat {seat!r} in this game.")
    if seat in forfeited(state):
        raise seat_forfeited(seat)


def seat_count(state: State) -> int:
    """How many seats a game has: every engine's state records it, as ``n`` or ``players``."""
    n = state.get("n")
    return n if isinstance(n, int) else int(state["players"])


def seat_forfeited(seat: int) -> RuleViolation:
    """The refusal of anything from a seat that has left the game."""
    return RuleViolation("seat_forfeited", f"Seat {seat} has left the game (it resigned or ran out of time).")


def fold(engine: Engine, events: list[Event], state: State | None = None) -> State:
    """Apply ``events`` in order, starting from ``state`` (or from nothing)."""
    for event in events:
        state = engine.evolve(state, event)
    assert state is not None, "fold of no events"
    return state


def clone_state(state: State) -> State:
    """A deep copy of a JSON-compatible state.  ``marshal`` is several times
    faster than ``copy.deepcopy`` or a JSON round trip for plain data."""
    return marshal.loads(marshal.dumps(state))


def ranks_from_scores(keys: dict[int, tuple[Any, ...]]) -> tuple[list[int], dict[str, int]]:
    """Competition ranking (1, 1, 3...) from per-seat sort keys, higher is
    better.  Seats with equal keys share a rank."""
    order = sorted(keys, key=lambda s: (tuple(-k for k in keys[s]), s))
    ranks: dict[str, int] = {}
    for i, seat in enumerate(order):
        if i and keys[seat] == keys[order[i - 1]]:
            ranks[str(seat)] = ranks[str(order[i - 1])]
        else:
            ranks[str(seat)] = i + 1
    return order, ranks
