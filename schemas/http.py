"""HTTP request and response schemas.  What comes in and what goes out are
separate schemas; the OpenAPI document at /openapi.json is generated from them."""

from __future__ import annotations

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema

from schemas.invitations import InvitedOut
from schemas.openapi import ref, results, typed, views
from service.domain import clocks, counting
from service.games import registry

#: The statuses of a game of accounts before it starts (service/adapters/invitations.py).
PENDING_STATUSES = ("invited", "declined", "expired")

# \Z, not $: a $ lets a trailing newline through ("ann\n").
HANDLE = validate.Regexp(
    r"^(?:[A-Za-z0-9][A-Za-z0-9_.\-]{0,31}|[A-Za-z0-9_-]{3,24})\Z",
    error="an account handle (3-24 of A-Z a-z 0-9 _ -) or 1-32 letters, digits, '_', '.', '-'",
)
GAMES = registry.registered()


# -- in ---------------------------------------------------------------------
def _seconds(description: str) -> fields.Integer:
    """A whole number of seconds, from 1 to the longest a clock allows."""
    return fields.Integer(
        strict=True, validate=validate.Range(min=1, max=clocks.MAX_SECONDS), metadata={"description": description}
    )


class ClockIn(Schema):
    """A time control (docs/API.md "Clocks, resignation, abort"; ``service/domain/clocks.py``)."""

    type = fields.String(required=True, validate=validate.OneOf(clocks.TYPES))
    base_s = _seconds("fischer: the time bank of each seat")
    increment_s = fields.Integer(
        strict=True,
        validate=validate.Range(min=0, max=clocks.MAX_SECONDS),
        metadata={"description": "fischer: added after each of the seat's intents"},
    )
    per_decision_s = _seconds("deadline: the time for each decision")

    @validates_schema
    def _one_shape(self, data: dict, **_: object) -> None:
        try:
            clocks.validate(data)
        except clocks.InvalidClock as exc:
            raise ValidationError(str(exc)) from None

    @post_load
    def _canonical(self, data: dict, **_: object) -> dict:
        return clocks.validate(data)


class CreateGameIn(Schema):
    game = fields.String(required=True, validate=validate.OneOf(GAMES))
    clock = fields.Nested(
        ClockIn,
        allow_none=True,
        load_default=None,
        metadata={"description": "The time control; absent or null: the server's default (a deadline per decision)"},
    )
    players = fields.List(fields.String(validate=HANDLE), required=True, validate=validate.Length(min=1, max=8))
    options = fields.Dict(keys=fields.String(validate=validate.Length(max=64)), load_default=dict)
    accounts = fields.Boolean(
        load_default=False,
        metadata={"description": "The players are accounts' handles, each acting with its own key (organiser key)."},
    )
    rated = fields.Boolean(
        load_default=False, metadata={"description": "Count on the leaderboards (only with 'accounts': true)."}
    )


class IntentIn(Schema):
    intent = fields.Dict(
        required=True,
        metadata={"description": "One element of GET /legal, posted as is: {'type': ..., ...}", **typed(ref("Intent"))},
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
    rated = fields.Boolean(validate=validate.Equal(True), metadata={"description": "true: rated games only"})
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
    token = fields.String(
        metadata={"description": "Shown once; send as Bearer token.  Absent for an account's seat (its key acts)."}
    )
    account = fields.Boolean(metadata={"description": "True: the seat is an account's; its key acts for it."})


class CreateGameOut(Schema):
    id = fields.String(required=True, metadata={"format": "uuid"})
    game = fields.String(required=True)
    version = fields.Integer(required=True, metadata={"description": "0 while the game waits for its invitations"})
    seed_commitment = fields.String(metadata={"description": "Absent while the game waits for its invitations"})
    rules_version = fields.String(metadata={"description": "Absent while the game waits for its invitations"})
    seats = fields.List(fields.Nested(SeatOut), required=True)
    players = fields.List(fields.String(), metadata={"description": "A game of accounts: its players in seat order"})
    status = fields.String(
        validate=validate.OneOf(list(PENDING_STATUSES)),
        metadata={"description": "A game of accounts: `invited` until every account accepts (docs/API.md, Consent)"},
    )
    invitations = fields.List(
        fields.Nested(InvitedOut), metadata={"description": "A game of accounts: one per account, to accept"}
    )
    expires_at = fields.String(metadata={"description": "A game of accounts: when its invitations expire"})
    rated = fields.Boolean(metadata={"description": "Present for a game of accounts"})
    created_by = fields.String(metadata={"description": "The organiser who created it, if one did"})
    table = fields.String(metadata={"description": "The lobby table that started it"})


class GameOut(Schema):
    id = fields.String(required=True, metadata={"format": "uuid"})
    game = fields.String(required=True)
    version = fields.Integer(required=True)
    status = fields.String(
        required=True,
        validate=validate.OneOf(["active", "finished", *PENDING_STATUSES]),
        metadata={"description": "invited | declined | expired: a game of accounts that has not started (Consent)"},
    )
    players = fields.List(fields.String(), required=True)
    to_act = fields.List(fields.Integer(), required=True)
    view = fields.Dict(required=True, metadata={"description": "The game's `<Game>View`", **typed(views())})
    result = fields.Dict(
        allow_none=True, required=True, metadata={"description": "The game's `<Game>Result`", **typed(results())}
    )
    seat = fields.Integer(allow_none=True, metadata={"description": "The caller's seat, if a seat token was sent"})
    created_at = fields.String()
    seed_commitment = fields.String()
    rules_version = fields.String()
    rated = fields.Boolean(metadata={"description": "Counts on the leaderboards (false: casual, or did not count)"})
    unrated_reason = fields.String(
        allow_none=True,
        validate=validate.OneOf(list(counting.REASONS)),
        metadata={
            "description": "Why a game asked to be rated finished unrated (no_first_decision: a seat left before "
            "its first decision; aborted); null otherwise"
        },
    )
    created_by = fields.String(allow_none=True, metadata={"description": "The organiser who created it, if one did"})
    invitations = fields.List(
        fields.Nested(InvitedOut), metadata={"description": "A game that has not started: each account's answer"}
    )
    expires_at = fields.String(metadata={"description": "A game that has not started: when its invitations expire"})
    clock = fields.Dict(
        allow_none=True,
        metadata={
            "description": "The time control and, as of this version (as_of), each seat's remaining_s and the "
            "deadline of each seat to act; null: no clock"
        },
    )


class AbortIn(Schema):
    reason = fields.String(load_default="", validate=validate.Length(max=500))


class AbortOut(Schema):
    version = fields.Integer(required=True)
    events = fields.List(fields.Dict(), required=True, metadata={"description": "GameAborted and GameFinished"})


class LegalOut(Schema):
    version = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    intents = fields.List(fields.Dict(metadata=typed(ref("Intent"))), required=True)


class EventOut(Schema):
    seq = fields.Integer(required=True)
    type = fields.String(required=True)
    data = fields.Dict(
        required=True,
        metadata={"description": "As the caller's seat may see it; typed per game (`<Game>Event`, by `type`)."},
    )


class IntentOut(Schema):
    version = fields.Integer(required=True)
    events = fields.List(fields.Nested(EventOut), required=True)
    replayed = fields.Boolean(metadata={"description": "True when answered from the Idempotency-Key record"})


class GameSummaryOut(Schema):
    id = fields.String(required=True, metadata={"format": "uuid"})
    game = fields.String(required=True)
    status = fields.String(
        required=True,
        # The same enum as GameOut's (a generated client shares it); lists hold started games only.
        validate=validate.OneOf(["active", "finished", *PENDING_STATUSES]),
    )
    players = fields.List(fields.String(), required=True)
    version = fields.Integer(required=True)
    created_at = fields.String(required=True)
    result = fields.Dict(allow_none=True, metadata=typed(results()))
    rated = fields.Boolean(metadata={"description": "Counts on the leaderboards (false: casual)"})
    guests = fields.List(
        fields.Integer(),
        metadata={"description": "Seats taken by a name, not an account: guests, on no player's page"},
    )


class GameListOut(Schema):
    games = fields.List(fields.Nested(GameSummaryOut), required=True)
    total = fields.Integer(required=True)
    limit = fields.Integer(required=True)
    offset = fields.Integer(required=True)


class HealthOut(Schema):
    status = fields.String(required=True)
    checks = fields.Dict()


# -- analysis of a finished game (docs/API.md "Analysis") -----------------------------------------
class AnalysisEventOut(Schema):
    seq = fields.Integer(required=True)
    values = fields.List(
        fields.Float(),
        required=True,
        metadata={
            "description": "Per seat, its margin over the best other seat in the game's points, estimated from "
            "that seat's own view only (0 before the setup)."
        },
    )


class AnalysisMoveOut(Schema):
    seq = fields.Integer(required=True, metadata={"description": "The first event of the decision's intent."})
    seat = fields.Integer(required=True)
    loss = fields.Float(
        required=True, metadata={"description": "Margin the played move lost against the preferred one (>= 0)."}
    )
    played = fields.Dict(required=True, metadata=typed(ref("Intent")))
    preferred = fields.Dict(required=True, metadata=typed(ref("Intent")))
    preferred_text = fields.String(required=True, metadata={"description": "The preferred move in words."})


class AnalysisDecisionOut(AnalysisMoveOut):
    matched = fields.Boolean(required=True, metadata={"description": "The played move was the bot's first choice."})


class AnalysisAgreementOut(Schema):
    seat = fields.Integer(required=True)
    decisions = fields.Integer(required=True, metadata={"description": "Decisions with more than one choice."})
    matched = fields.Integer(required=True, metadata={"description": "Of them, the bot's first choice."})


class AnalysisBudgetOut(Schema):
    search_cpu_ms = fields.Float(required=True)
    search_iterations = fields.Integer(required=True)
    value_samples = fields.Integer(required=True)


class AnalysisOut(Schema):
    game_id = fields.String(required=True, metadata={"format": "uuid"})
    format = fields.Integer(required=True)
    game = fields.String(required=True)
    level = fields.Integer(required=True, metadata={"description": "The house bot level whose moves are preferred."})
    budget = fields.Nested(AnalysisBudgetOut, required=True)
    cpu_seconds = fields.Float(required=True, metadata={"description": "CPU the analysis took."})
    events = fields.List(fields.Nested(AnalysisEventOut), required=True, metadata={"description": "One per event."})
    decisions = fields.List(fields.Nested(AnalysisDecisionOut), required=True)
    mistakes = fields.List(fields.Nested(AnalysisMoveOut), required=True)
    agreement = fields.List(fields.Nested(AnalysisAgreementOut), required=True)


class AnalysisPendingOut(Schema):
    status = fields.String(required=True, validate=validate.OneOf(["computing"]))
    retry_after_seconds = fields.Integer(required=True)
