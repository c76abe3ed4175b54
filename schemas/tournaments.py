"""HTTP schemas of tournaments (docs/API.md "Tournaments").

The shapes only: bounds and rules (a known game, table sizes the game
allows, a points scheme, rounds, registration) are ``service.tournaments.rules``'
to check, so each refusal has its own stable code (``unknown_game``,
``invalid_tournament``, ...) rather than a generic schema error.
"""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.http import ClockIn
from schemas.invitations import InvitedOut
from service.tournaments.events import FORMATS, MAX_NAME, MAX_PLAYERS, MAX_TABLE_SIZE, SWISS

STATUSES = ("registering", "running", "finished")
TABLE_STATUSES = ("waiting", "playing", "finished")


# -- in ---------------------------------------------------------------------------
class TournamentIn(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=MAX_NAME))
    game = fields.String(required=True, validate=validate.Length(min=1, max=64))
    table_size = fields.Integer(required=True, strict=True)
    table_sizes = fields.List(
        fields.Integer(strict=True),
        load_default=None,
        allow_none=True,
        validate=validate.Length(max=MAX_TABLE_SIZE),
        metadata={
            "description": "Table sizes allowed when the field does not divide (default: the game's, up to table_size)"
        },
    )
    format = fields.String(load_default=SWISS, validate=validate.OneOf(FORMATS))
    rounds = fields.Integer(
        load_default=None,
        allow_none=True,
        strict=True,
        metadata={"description": "null: a round robin until all have met"},
    )
    clock = fields.Nested(
        ClockIn,
        load_default=None,
        allow_none=True,
        metadata={"description": "Every game's time control; null: the default"},
    )
    rated = fields.Boolean(load_default=True)
    points = fields.Dict(
        keys=fields.String(validate=validate.Length(max=2)),
        values=fields.List(fields.Integer(strict=True), validate=validate.Length(max=MAX_TABLE_SIZE)),
        load_default=None,
        allow_none=True,
        metadata={"description": 'Points by place for each table size, e.g. {"4": [5, 3, 1, 0]}; default n-1 .. 0'},
    )


class RegisterIn(Schema):
    handles = fields.List(
        fields.String(validate=validate.Length(min=1, max=64)),
        validate=validate.Length(min=1, max=MAX_PLAYERS),
        metadata={"description": "Organiser: the handles to register; a player sends {} to register itself"},
    )


# -- out --------------------------------------------------------------------------
class TournamentOut(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    game = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    format = fields.String(required=True, validate=validate.OneOf(FORMATS))
    round = fields.Integer(required=True, metadata={"description": "The last round paired (0 before the start)"})
    rounds = fields.Integer(required=True, allow_none=True)
    table_size = fields.Integer(required=True)
    table_sizes = fields.List(fields.Integer(), required=True)
    clock = fields.Dict(required=True, allow_none=True)
    rated = fields.Boolean(required=True)
    points = fields.Dict(required=True)
    organiser = fields.String(required=True, allow_none=True, metadata={"description": "null: the operator"})
    players = fields.List(fields.String(), required=True, metadata={"description": "In registration order"})
    lot = fields.List(fields.String(), required=True, metadata={"description": "The drawn order (at the start)"})
    seed_commitment = fields.String(required=True)
    seed = fields.String(required=True, allow_none=True, metadata={"description": "Revealed when it finishes"})
    pairing = fields.String(required=True)
    created_at = fields.String(required=True, allow_none=True)
    version = fields.Integer(required=True, metadata={"description": "Events in the tournament's stream"})
    invitations = fields.List(
        fields.Nested(InvitedOut),
        metadata={"description": "A registration by handles: the invitations it made (each registers on accept)"},
    )


class TournamentTableOut(Schema):
    table = fields.Integer(required=True)
    game_id = fields.String(required=True, allow_none=True)
    players = fields.List(fields.String(), required=True, metadata={"description": "Seat order"})
    status = fields.String(required=True, validate=validate.OneOf(TABLE_STATUSES))
    result = fields.Dict(required=True, allow_none=True)


class RoundOut(Schema):
    round = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(("playing", "finished")))
    tables = fields.List(fields.Nested(TournamentTableOut), required=True)
    byes = fields.List(fields.String(), required=True)


class TiebreaksOut(Schema):
    opponents_points = fields.Raw(required=True, metadata={"type": "number"})
    game_score = fields.Integer(required=True)
    head_to_head = fields.Integer(required=True)


class StandingOut(Schema):
    rank = fields.Integer(required=True)
    player = fields.String(required=True)
    points = fields.Raw(required=True, metadata={"type": "number", "description": "Whole numbers as integers"})
    tiebreaks = fields.Nested(TiebreaksOut, required=True)
    games = fields.Integer(required=True)
    byes = fields.Integer(required=True)


class StandingsOut(Schema):
    round = fields.Integer(required=True)
    standings = fields.List(fields.Nested(StandingOut), required=True)


class StandingsArgs(Schema):
    round = fields.Integer(validate=validate.Range(min=0, max=20), metadata={"description": "After this round"})


class TournamentAuditOut(Schema):
    ok = fields.Boolean(required=True)
    complete = fields.Boolean(required=True)
    checks = fields.Dict(required=True)
