"""HTTP request and response schemas.  What comes in and what goes out are
separate schemas; the OpenAPI document at /openapi.json is generated from them."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.games import registry

HANDLE = validate.Regexp(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,31}$", error="1-32 letters, digits, '_', '.', '-'")
GAMES = registry.registered()


# -- in ---------------------------------------------------------------------
class CreateGameIn(Schema):
    game = fields.String(required=True, validate=validate.OneOf(GAMES))
    players = fields.List(fields.String(validate=HANDLE), required=True, validate=validate.Length(min=1, max=8))
    options = fields.Dict(keys=fields.String(validate=validate.Length(max=64)), load_default=dict)


class IntentIn(Schema):
    intent = fields.Dict(
        required=True,
        metadata={"description": "One element of GET /legal, posted as is: {'type': ..., ...}"},
    )
    expected_version = fields.Integer(strict=True, validate=validate.Range(min=0, max=2**31 - 1))


class MinVersionArgs(Schema):
    min_version = fields.Integer(
        validate=validate.Range(min=0, max=2**31 - 1),
        metadata={"description": "Wait (bounded) until the read model reflects this version."},
    )


class ListGamesArgs(Schema):
    game = fields.String(validate=validate.OneOf(GAMES))
    status = fields.String(validate=validate.OneOf(["active", "finished"]))
    player = fields.String(validate=HANDLE)
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=500))
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=10**6))


# -- out --------------------------------------------------------------------
class ErrorBody(Schema):
    code = fields.String(required=True)
    message = fields.String(required=True)
    details = fields.Dict(required=True)


class ErrorOut(Schema):
    error = fields.Nested(ErrorBody, required=True)


class SeatOut(Schema):
    seat = fields.Integer(required=True)
    player = fields.String(required=True)
    token = fields.String(required=True, metadata={"description": "Shown once; send as Bearer token."})


class CreateGameOut(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    version = fields.Integer(required=True)
    seed_commitment = fields.String(required=True)
    rules_version = fields.String(required=True)
    seats = fields.List(fields.Nested(SeatOut), required=True)


class GameOut(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    version = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["active", "finished"]))
    players = fields.List(fields.String(), required=True)
    to_act = fields.List(fields.Integer(), required=True)
    view = fields.Dict(required=True)
    result = fields.Dict(allow_none=True, required=True)
    seat = fields.Integer(allow_none=True, metadata={"description": "The caller's seat, if a seat token was sent"})
    created_at = fields.String()
    seed_commitment = fields.String()
    rules_version = fields.String()


class LegalOut(Schema):
    version = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    intents = fields.List(fields.Dict(), required=True)


class EventOut(Schema):
    seq = fields.Integer(required=True)
    type = fields.String(required=True)
    data = fields.Dict(required=True)


class IntentOut(Schema):
    version = fields.Integer(required=True)
    events = fields.List(fields.Nested(EventOut), required=True)
    replayed = fields.Boolean(metadata={"description": "True when answered from the Idempotency-Key record"})


class GameSummaryOut(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    status = fields.String(required=True)
    players = fields.List(fields.String(), required=True)
    version = fields.Integer(required=True)
    created_at = fields.String(required=True)
    result = fields.Dict(allow_none=True)


class GameListOut(Schema):
    games = fields.List(fields.Nested(GameSummaryOut), required=True)
    total = fields.Integer(required=True)
    limit = fields.Integer(required=True)
    offset = fields.Integer(required=True)


class HealthOut(Schema):
    status = fields.String(required=True)
    checks = fields.Dict()
