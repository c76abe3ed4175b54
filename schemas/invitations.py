"""HTTP schemas of invitations (docs/API.md "Consent")."""

from __future__ import annotations

from marshmallow import Schema, fields, validate


class InvitationOut(Schema):
    id = fields.String(required=True, metadata={"format": "uuid"})
    kind = fields.String(required=True, validate=validate.OneOf(["game", "tournament"]))
    invited_by = fields.String(required=True, metadata={"description": "The organiser's handle, or `operator`"})
    created_at = fields.String(required=True)
    expires_at = fields.String(required=True, metadata={"description": "After this it can no longer be accepted"})
    game_id = fields.String(metadata={"description": "kind `game`: the game that starts once everyone accepts"})
    game = fields.String(metadata={"description": "kind `game`: its type"})
    players = fields.List(fields.String(), metadata={"description": "kind `game`: its players in seat order"})
    rated = fields.Boolean(metadata={"description": "kind `game`: asked to be rated"})
    tournament_id = fields.String(metadata={"description": "kind `tournament`: the tournament it registers for"})


class InvitationListOut(Schema):
    invitations = fields.List(fields.Nested(InvitationOut), required=True, metadata={"description": "Oldest first"})


class AnswerOut(Schema):
    id = fields.String(required=True, metadata={"format": "uuid"})
    kind = fields.String(required=True, validate=validate.OneOf(["game", "tournament"]))
    status = fields.String(required=True, validate=validate.OneOf(["accepted", "declined"]))
    game_id = fields.String()
    tournament_id = fields.String()


class InvitedOut(Schema):
    id = fields.String(required=True, metadata={"format": "uuid"})
    player = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["pending", "accepted", "declined", "cancelled"]))
