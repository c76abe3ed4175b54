"""HTTP schemas of the house bots (docs/API.md "House bots")."""

from __future__ import annotations

from marshmallow import Schema, fields, validate


class BotSeatIn(Schema):
    level = fields.Integer(
        required=True, strict=True, validate=validate.Range(min=1, max=9), metadata={"description": "The bot's level"}
    )


class BotOut(Schema):
    handle = fields.String(required=True, metadata={"description": "The bot's account, e.g. nauticus-bot-2"})
    game = fields.String(required=True)
    level = fields.Integer(required=True)
    budget_ms = fields.Integer(
        required=True, allow_none=True, metadata={"description": "CPU milliseconds per decision at this level"}
    )
    rating = fields.Float(
        required=True, allow_none=True, metadata={"description": "Its leaderboard rating (null: no rated game yet)"}
    )


class BotListOut(Schema):
    bots = fields.List(fields.Nested(BotOut), required=True)
