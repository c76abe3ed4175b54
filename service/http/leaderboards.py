"""docs/API.md "Leaderboards": ratings per game type, and a player's page.

Answered from Redis only (``projections.leaderboards``); the numbers there are
folded from finished games in the event store's global commit order.
"""

from __future__ import annotations

import re
from typing import Any

from flask_smorest import Blueprint

from schemas.http import ErrorOut
from schemas.leaderboards import LeaderboardListOut, LeaderboardOut, PageArgs, PlayerOut
from service import views
from service.games import registry
from service.http.common import services
from service.http.errors import ApiError

blp = Blueprint("leaderboards", __name__, url_prefix="/v1", description="Leaderboards and player pages")

# \Z, not $: a $ lets a trailing newline through ("ann\n").
_HANDLE = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9_.\-]{0,31}|[A-Za-z0-9_-]{3,24})\Z")


def _games() -> list[str]:
    return sorted(registry.names())


@blp.route("/leaderboards", methods=["GET"])
@blp.response(200, LeaderboardListOut)
def list_leaderboards() -> dict[str, Any]:
    """Every registered game type with the size of its leaderboard."""
    return {"games": views.leaderboard_summary(services().redis, _games())}


@blp.route("/leaderboards/<game>", methods=["GET"])
@blp.arguments(PageArgs(), location="query")
@blp.response(200, LeaderboardOut)
@blp.alt_response(404, schema=ErrorOut, description="No such game type")
def get_leaderboard(args: dict[str, Any], game: str) -> dict[str, Any]:
    """Players of one game type, best rating first, paged with ``limit``/``offset``."""
    if game not in _games():
        raise ApiError(404, "game_type_not_found", f"No game type called {game!r}.", {"games": _games()})
    return views.leaderboard(services().redis, game, args["offset"], args["limit"])


@blp.route("/players/<handle>", methods=["GET"])
@blp.response(200, PlayerOut)
@blp.alt_response(404, schema=ErrorOut, description="No game has this player")
def get_player(handle: str) -> dict[str, Any]:
    """A player's rating per game type, and recent finished games (newest first)."""
    if not _HANDLE.match(handle):
        raise ApiError(404, "player_not_found", "No such player.")
    page = views.player(services().redis, handle, _games())
    if page is None:
        raise ApiError(404, "player_not_found", "No such player.")
    return page
