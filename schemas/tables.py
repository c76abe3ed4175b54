"""HTTP schemas of the lobby's tables (docs/API.md "Tables")."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.http import ClockIn
from service.games import registry

GAMES = registry.registered()
#: A table is open until its last seat is taken (started) or everyone left it (closed).
OPEN = "open"
STATUSES = (OPEN, "started", "closed")


# -- in ---------------------------------------------------------------------
class TableIn(Schema):
    game = fields.String(required=True, validate=validate.OneOf(GAMES))
    seats = fields.Integer(required=True, strict=True, validate=validate.Range(min=1, max=8))
    options = fields.Dict(keys=fields.String(validate=validate.Length(max=64)), load_default=dict)
    rated = fields.Boolean(
        load_default=False, metadata={"description": "Ask for a rated game (every seat is an account that joins)."}
    )
    clock = fields.Nested(
        ClockIn,
        load_default=None,
        allow_none=True,
        metadata={"description": "The game's time control; absent or null: the server's default."},
    )
    join = fields.Boolean(
        load_default=None,
        allow_none=True,
        metadata={"description": "Sit at the table (players: true, the default; organisers: false, the default)."},
    )


class TableListArgs(Schema):
    game = fields.String(validate=validate.OneOf(GAMES))
    status = fields.String(load_default=OPEN, validate=validate.OneOf(STATUSES))
    #: Only the tables this account sits at (a handle, matched ignoring case).
    player = fields.String(validate=validate.Length(min=1, max=24))
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=200))
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=10_000))


# -- out --------------------------------------------------------------------
class TableOut(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    seats = fields.Integer(required=True)
    options = fields.Dict(required=True)
    players = fields.List(fields.String(), required=True, metadata={"description": "Seated handles, in join order"})
    rated = fields.Boolean(required=True)
    clock = fields.Dict(allow_none=True, required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    game_id = fields.String(
        allow_none=True, required=True, metadata={"description": "Set when the last join started the game"}
    )
    created_by = fields.String(required=True)
    created_at = fields.String(required=True)


class TableListOut(Schema):
    tables = fields.List(fields.Nested(TableOut), required=True)
    limit = fields.Integer(required=True)
    offset = fields.Integer(required=True)
