"""What a client reads of each game, as marshmallow schemas: every event's
``data``, the view (``GET /v1/games/{id}`` ``view``) and the result.

One module per game (``schemas/games/<package>.py``, named like the engine's
package) exposes:

* ``EVENTS``: event type -> schema of its ``data``, as any viewer may receive
  it (fields hidden from some viewers are nullable or optional, and say so);
* ``VIEW``: the schema of the view, for a seat, a spectator or the organiser
  (fields only some viewers get are optional, and say who);
* ``RESULT``: the schema of the result once the game has finished.

These schemas are the typed part of the contract: ``schemas/openapi.py`` puts
them in ``/openapi.json`` as components, and the property suite loads every
event, view and result of random games with them, so the published types
cannot drift from what the engines produce (``tests/property/test_contract_schemas.py``).
Unknown fields are refused (marshmallow's default), which publishes
``additionalProperties: false``.

The platform's own events, ``GameCreated`` and ``GameFinished``, are the same
for every game and live here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import Any

from marshmallow import INCLUDE, Schema, fields, validate

from service.games import registry

#: Seats are small non-negative integers (at most 8 players a game).
SEAT_RANGE = validate.Range(min=0, max=7)
#: Keys of per-seat maps in results: the seat number as a string ("0", "1", ...).
SEAT_KEY = fields.String(validate=validate.Regexp(r"^[0-7]$"))


def seat(required: bool = True, allow_none: bool = False, description: str = "A seat (0-based).") -> fields.Integer:
    meta = {"description": description}
    return fields.Integer(required=required, allow_none=allow_none, strict=True, validate=SEAT_RANGE, metadata=meta)


def integer(description: str = "", required: bool = True, allow_none: bool = False, **kw: Any) -> fields.Integer:
    meta = {"description": description} if description else {}
    return fields.Integer(required=required, allow_none=allow_none, strict=True, metadata=meta, **kw)


def boolean(description: str = "", required: bool = True) -> fields.Boolean:
    # truthy=falsy=empty sets: a JSON boolean only (not "yes", 1...), as the engines write them.
    return fields.Boolean(
        required=required, truthy=set(), falsy=set(), metadata={"description": description} if description else {}
    )


def string(
    choices: Any = None, description: str = "", required: bool = True, allow_none: bool = False
) -> fields.String:
    meta = {"description": description} if description else {}
    check = validate.OneOf(list(choices)) if choices is not None else None
    return fields.String(required=required, allow_none=allow_none, validate=check, metadata=meta)


def listing(inner: fields.Field, description: str = "", required: bool = True, **kw: Any) -> fields.List:
    meta = {"description": description} if description else {}
    return fields.List(inner, required=required, metadata=meta, **kw)


def counts(keys: Any, description: str = "", required: bool = True) -> fields.Dict:
    """A map from a known key (a colour, an item) to a count."""
    meta = {"description": description} if description else {}
    return fields.Dict(
        keys=fields.String(validate=validate.OneOf(list(keys))),
        values=fields.Integer(strict=True),
        required=required,
        metadata=meta,
    )


def per_seat(values: fields.Field, description: str = "", required: bool = True) -> fields.Dict:
    """A map from a seat number (as a string: JSON object keys are strings) to a value."""
    meta = {"description": description} if description else {}
    return fields.Dict(keys=SEAT_KEY, values=values, required=required, metadata=meta)


def nested(schema: type[Schema], description: str = "", required: bool = True, allow_none: bool = False) -> Any:
    meta = {"description": description} if description else {}
    return fields.Nested(schema, required=required, allow_none=allow_none, metadata=meta)


def schema(name: str, doc: str, **declared: fields.Field) -> type[Schema]:
    """A schema class named ``name`` (its component name in ``/openapi.json``)
    with the fields ``declared``, in that order, and ``doc`` as its description."""
    cls = Schema.from_dict(declared, name=name)
    cls.__doc__ = doc
    return cls


def result_fields(breakdown: type[Schema], tiebreak: fields.Field) -> dict[str, fields.Field]:
    """The fields every game's result has (``service/games/base.py``, ``Engine.result``)."""
    return {
        "scores": per_seat(fields.Integer(strict=True), "Final score by seat."),
        "ranks": per_seat(
            fields.Integer(strict=True, validate=validate.Range(min=1)), "Rank by seat: 1 is best; tied seats share."
        ),
        "ranking": listing(fields.Integer(strict=True, validate=SEAT_RANGE), "Seats, best first."),
        "breakdown": per_seat(fields.Nested(breakdown), "Each scoring category of the rulebook, by seat."),
        "tiebreak": tiebreak,
        # Planned (docs/API.md "Clocks, resignation, abort"): a result may say
        # why the game ended and which seats were forfeited.
        "reason": string(
            ["completed", "forfeit", "aborted"], "Why the game ended (absent: completed).", required=False
        ),
        "forfeited": listing(
            fields.Integer(strict=True, validate=SEAT_RANGE), "Seats forfeited, in order of forfeit.", required=False
        ),
    }


def forfeited_field() -> fields.List:
    """``forfeited`` in a view: the seats that left the game (resigned or out of time), in order."""
    return listing(
        fields.Integer(strict=True, validate=SEAT_RANGE),
        "Seats that left the game (resigned or ran out of time), in order; absent if none.",
        required=False,
    )


# -- the platform's events (service/domain/pipeline.py) ---------------------------
class _Open(Schema):
    class Meta:
        # The platform adds terms of creation here over time (rated play,
        # clocks, who created it): a client must accept fields it does not know.
        unknown = INCLUDE


class GameCreatedData(_Open):
    """The first event of every game (seq 1): what is public about its identity."""

    game = fields.String(required=True, metadata={"description": "The game type (API name)."})
    rules_version = fields.String(required=True)
    players = fields.List(fields.String(), required=True, metadata={"description": "Handles, in seat order."})
    options = fields.Dict(required=True)
    seed_commitment = fields.String(
        required=True, metadata={"description": "sha256 of the secret seed, revealed by GameFinished (docs/AUDIT.md)."}
    )


class GameFinishedData(_Open):
    """The last event of every game: the result and the revealed seed."""

    result = fields.Dict(required=True, metadata={"description": "The game's result (its `<Game>Result` schema)."})
    seed = fields.String(required=True, metadata={"description": "The secret seed, in hex: sha256(seed) = commitment."})
    head_hash = fields.String(required=True, metadata={"description": "Chain hash of the event before this one."})


class SeatResignedData(_Open):
    """A seat left the game by its own intent (`{"type": "resign"}`); the game's own `SeatForfeited` follows."""

    seat = seat()


class SeatTimedOutData(_Open):
    """A seat's clock ran out: it left the game at its deadline; the game's own `SeatForfeited` follows."""

    seat = seat()
    deadline = fields.String(required=True, metadata={"description": "When its time ran out (UTC)."})


class GameAbortedData(_Open):
    """The game was ended unrated by its organiser or the operator; `GameFinished` follows."""

    reason = fields.String(required=True)
    by = fields.String(required=True, metadata={"description": "Who aborted it."})


PLATFORM_EVENTS: dict[str, type[Schema]] = {
    "GameCreated": GameCreatedData,
    "GameFinished": GameFinishedData,
    "SeatResigned": SeatResignedData,
    "SeatTimedOut": SeatTimedOutData,
    "GameAborted": GameAbortedData,
}


@dataclass(frozen=True)
class GameContract:
    """The typed contract of one game: what a client reads of it."""

    game: str
    #: Component-name prefix: "nautilus-industries" -> "NautilusIndustries".
    prefix: str
    events: dict[str, type[Schema]]
    view: type[Schema]
    result: type[Schema]

    def event_schema(self, event_type: str) -> type[Schema]:
        return PLATFORM_EVENTS.get(event_type) or self.events[event_type]


def prefix(game: str) -> str:
    """The component-name prefix of a game: its API name in CamelCase."""
    return "".join(part.capitalize() for part in game.split("-"))


@cache
def contract(game: str) -> GameContract:
    """The contract of ``game``: ``schemas/games/<package>.py``."""
    package = registry.package(game).rsplit(".", 1)[-1]
    module = importlib.import_module(f"schemas.games.{package}")
    return GameContract(game, prefix(game), dict(module.EVENTS), module.VIEW, module.RESULT)
