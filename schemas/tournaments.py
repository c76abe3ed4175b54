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
from service.tournaments.events import FORMATS, MAX_NAME, MAX_PLAYERS, MAX_REASON, MAX_TABLE_SIZE, SWISS

STATUSES = ("registering", "running", "finished", "aborted")
TABLE_STATUSES = ("waiting", "playing", "finished")


# -- in ---------------------------------------------------------------------------
class ByeBotIn(Schema):
    level = fields.Integer(required=True, strict=True, validate=validate.Range(min=1, max=9))
    rated = fields.Boolean(load_default=False, metadata={"description": "Whether the games against it are rated"})


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
    late_until_round = fields.Integer(
        load_default=None,
        allow_none=True,
        strict=True,
        metadata={"description": "Swiss: players may still register until this round is paired (2 to rounds)"},
    )
    bye_bot = fields.Nested(
        ByeBotIn,
        load_default=None,
        allow_none=True,
        metadata={"description": "An odd field's bye is played against the game's house bot of this level instead"},
    )


class RegisterIn(Schema):
    handles = fields.List(
        fields.String(validate=validate.Length(min=1, max=64)),
        validate=validate.Length(min=1, max=MAX_PLAYERS),
        metadata={"description": "Organiser: the handles to register; a player sends {} to register itself"},
    )


class WithdrawIn(Schema):
    player = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={"description": "Organiser: the player to withdraw; a player sends {} to withdraw itself"},
    )
    reason = fields.String(
        validate=validate.Length(min=1, max=MAX_REASON),
        metadata={"description": "Why (required when the organiser withdraws a player)"},
    )


class TournamentAbortIn(Schema):
    reason = fields.String(required=True, validate=validate.Length(min=1, max=MAX_REASON))


# -- out --------------------------------------------------------------------------
class LateOut(Schema):
    player = fields.String(required=True)
    round = fields.Integer(required=True, metadata={"description": "The first round it is paired in"})


class WithdrawalOut(Schema):
    player = fields.String(required=True)
    by = fields.String(required=True, allow_none=True, metadata={"description": "null: the operator"})
    reason = fields.String(required=True, allow_none=True)
    round = fields.Integer(
        required=True, metadata={"description": "Rounds paired when it withdrew: it is paired no more after it"}
    )


class AbortedOut(Schema):
    by = fields.String(required=True, allow_none=True, metadata={"description": "null: the operator"})
    reason = fields.String(required=True)
    round = fields.Integer(required=True, metadata={"description": "The standings are frozen after this round"})


class ByeBotOut(Schema):
    handle = fields.String(required=True)
    level = fields.Integer(required=True)
    rated = fields.Boolean(required=True)


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
    late_until_round = fields.Integer(
        required=True, allow_none=True, metadata={"description": "null: no late registration"}
    )
    late = fields.List(
        fields.Nested(LateOut), required=True, metadata={"description": "Late entrants, and the round each joined in"}
    )
    withdrawals = fields.List(fields.Nested(WithdrawalOut), required=True)
    aborted = fields.Nested(AbortedOut, required=True, allow_none=True)
    bye_bot = fields.Nested(ByeBotOut, required=True, allow_none=True)
    invitations = fields.List(
        fields.Nested(InvitedOut),
        metadata={"description": "A registration by handles: the invitations it made (each registers on accept)"},
    )


class TournamentTableOut(Schema):
    table = fields.Integer(required=True)
    game_id = fields.String(required=True, allow_none=True)
    players = fields.List(fields.String(), required=True, metadata={"description": "Seat order"})
    bots = fields.List(fields.Integer(), required=True, metadata={"description": "The seats of house bots"})
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
    withdrawn = fields.Boolean(required=True, metadata={"description": "Withdrew by then: its results stay"})
    bot_games = fields.Integer(required=True, metadata={"description": "Games against a house bot"})
    bot = fields.Boolean(required=True, metadata={"description": "A house bot registered like a player"})


class StandingsOut(Schema):
    round = fields.Integer(required=True)
    standings = fields.List(fields.Nested(StandingOut), required=True)


class StandingsArgs(Schema):
    round = fields.Integer(validate=validate.Range(min=0, max=20), metadata={"description": "After this round"})


class TournamentAuditOut(Schema):
    ok = fields.Boolean(required=True)
    complete = fields.Boolean(required=True)
    status = fields.String(required=True, allow_none=True, validate=validate.OneOf(STATUSES))
    aborted = fields.Nested(AbortedOut, required=True, allow_none=True)
    withdrawals = fields.List(fields.Nested(WithdrawalOut), required=True)
    late = fields.List(fields.Nested(LateOut), required=True)
    checks = fields.Dict(required=True)
    fair_play = fields.Dict(
        metadata={
            "description": "A finished tournament's only: `note`, `games_analysed`, `games_pending` and per "
            "player `player`, `games`, `decisions`, `matched`, `rate` (how often the player's moves were the "
            'level-3 house bot\'s first choice). A signal, not a verdict (docs/API.md, "Analysis").'
        }
    )
