"""docs/API.md "House bots": the house bots, and seating one at a table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask_smorest import Blueprint

from schemas.bots import BotListOut, BotSeatIn
from schemas.http import ErrorOut
from schemas.tables import TableOut
from service import views
from service.bots import LEVELS
from service.http.common import require_account, services
from service.http.errors import ApiError

if TYPE_CHECKING:
    from service.adapters.house_bots import HouseBot

blp = Blueprint("bots", __name__, url_prefix="/v1", description="House bots: accounts that play every game")


def budget_ms(level: int) -> int | None:
    """A level's CPU budget per decision, from the bot package (``None``: a level it no longer has)."""
    found = LEVELS.get(level)
    return round(found.budget_s * 1000) if found is not None else None


def present(bots: list[HouseBot]) -> list[dict[str, Any]]:
    """The bots as ``GET /v1/bots`` lists them, each with its rating (one read of the leaderboards)."""
    ratings = views.ratings(services().redis, [(bot.game, bot.handle) for bot in bots])
    return [
        {
            "handle": bot.handle,
            "game": bot.game,
            "level": bot.level,
            "budget_ms": budget_ms(bot.level),
            "rating": rating,
        }
        for bot, rating in zip(bots, ratings, strict=True)
    ]


@blp.route("/bots", methods=["GET"])
@blp.response(200, BotListOut)
def list_bots() -> dict[str, Any]:
    """The house bots: the first of each game and level, each with its CPU budget and rating."""
    return {"bots": present(services().house_bots.listed())}


@blp.route("/tables/<uuid:table_id>/bots", methods=["POST"])
@blp.arguments(BotSeatIn(), example={"level": 2})
@blp.response(200, TableOut)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="invalid_token, not_your_table")
@blp.alt_response(404, schema=ErrorOut, description="table_not_found, bot_not_found")
@blp.alt_response(409, schema=ErrorOut, description="table_full, table_closed, already_seated, too_many_bot_games")
def seat_bot(body: dict[str, Any], table_id: Any) -> dict[str, Any]:
    """Seat a house bot of ``level`` at the table (the table's owner or its
    organiser): the first of that level's bots not yet at it, so a table can be
    filled with bots.  The seat that fills the table starts the game: ``status``
    is then ``started`` and ``game_id`` is set."""
    account = require_account().account
    assert account is not None
    svc = services()
    table = svc.lobby.get(str(table_id))
    bots = svc.house_bots.every(table["game"], body["level"])
    if not bots:
        raise ApiError(
            404,
            "bot_not_found",
            "No house bot of this level for this game (GET /v1/bots lists them).",
            {"game": table["game"], "level": body["level"]},
        )
    return svc.lobby.seat_bot(str(table_id), account, [bot.account for bot in bots])
