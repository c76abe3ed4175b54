"""HTTP schemas of the leaderboards and player pages (docs/API.md "Leaderboards")."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.domain import counting


# -- in ---------------------------------------------------------------------
class PageArgs(Schema):
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=500))
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=10**6))


# -- out --------------------------------------------------------------------
class RatingFields(Schema):
    player = fields.String(required=True)
    rating = fields.Float(
        required=True,
        metadata={"description": "openskill Plackett-Luce ordinal, mu - 3 sigma (6 decimals); higher is better"},
    )
    mu = fields.Float(required=True, metadata={"description": "Estimated skill"})
    sigma = fields.Float(required=True, metadata={"description": "Uncertainty of mu"})
    games = fields.Integer(required=True, metadata={"description": "Counted rated games of this type"})
    wins = fields.Integer(required=True, metadata={"description": "Games finished at rank 1 (shared firsts count)"})
    average_score = fields.Float(allow_none=True, required=True)
    best_score = fields.Raw(allow_none=True, required=True)
    provisional = fields.Boolean(
        required=True,
        metadata={"description": "Fewer counted games than the leaderboard lists (docs/LEADERBOARDS.md)"},
    )


class LeaderboardEntryOut(RatingFields):
    position = fields.Integer(required=True, metadata={"description": "1 = best; equal ratings ordered by handle"})


class LeaderboardOut(Schema):
    game = fields.String(required=True)
    entries = fields.List(fields.Nested(LeaderboardEntryOut), required=True)
    total = fields.Integer(required=True, metadata={"description": "Players on this leaderboard"})
    finished_games = fields.Integer(required=True, metadata={"description": "Finished games folded in so far"})
    limit = fields.Integer(required=True)
    offset = fields.Integer(required=True)


class LeaderboardSummaryOut(Schema):
    game = fields.String(required=True)
    players = fields.Integer(required=True)
    finished_games = fields.Integer(required=True)


class LeaderboardListOut(Schema):
    games = fields.List(fields.Nested(LeaderboardSummaryOut), required=True)


class PlayerRatingOut(RatingFields):
    game = fields.String(required=True)
    position = fields.Integer(
        allow_none=True, required=True, metadata={"description": "Place on that leaderboard (null: provisional)"}
    )


class SeatResultOut(Schema):
    player = fields.String(required=True)
    rank = fields.Integer(required=True)
    score = fields.Raw(allow_none=True, required=True)


class RecentGameOut(Schema):
    game_id = fields.String(required=True)
    game = fields.String(required=True)
    finished_at = fields.String(required=True)
    seat = fields.Integer(required=True)
    rank = fields.Integer(required=True, metadata={"description": "1 = best; tied seats share a rank"})
    score = fields.Raw(allow_none=True, required=True)
    players = fields.List(fields.Nested(SeatResultOut), required=True)
    rating_after = fields.Float(
        required=True, allow_none=True, metadata={"description": "This player's rating after the game (null: casual)"}
    )
    rated = fields.Boolean(metadata={"description": "False: a casual game, or one that did not count"})
    unrated_reason = fields.String(
        validate=validate.OneOf(list(counting.REASONS)),
        metadata={"description": "Why a game asked to be rated did not count (absent: casual, or counted)"},
    )


class PlayerOut(Schema):
    player = fields.String(required=True)
    ratings = fields.List(fields.Nested(PlayerRatingOut), required=True)
    recent = fields.List(fields.Nested(RecentGameOut), required=True, metadata={"description": "Newest first"})
    active_games = fields.Integer(required=True, metadata={"description": "Games of this player still running"})
