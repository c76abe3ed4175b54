"""The read side: what the JSON API's handlers and the pages read from the read
models in Redis (cosmicpython's "views").  Handlers and pages call these with the
components' read-side client; no HTTP or page module talks to Redis itself
(tests/unit/test_architecture.py).
"""

from __future__ import annotations

import contextlib
from typing import Any

import redis

from projections import keys, leaderboards, publish
from projections import tournaments as tournament_view


def leaderboard_summary(r: redis.Redis, games: list[str]) -> list[dict[str, Any]]:
    """Every game type with the size of its leaderboard."""
    return leaderboards.summary(r, games)


def leaderboard(r: redis.Redis, game: str, offset: int, limit: int) -> dict[str, Any]:
    """One game type's players, best rating first."""
    return leaderboards.board(r, game, offset, limit)


def player(r: redis.Redis, handle: str, games: list[str]) -> dict[str, Any] | None:
    """A player's ratings, recent finished games and active games; ``None`` when no
    game has this player."""
    page = leaderboards.player(r, handle, games)
    active = int(r.zcard(keys.games_list({"player": handle, "status": "active"})))
    if not page["ratings"] and not page["recent"] and not r.exists(keys.games_by("player", handle)):
        return None
    return page | {"active_games": active}


def announce_to_account(r: redis.Redis, handle: str, line: dict[str, Any]) -> None:
    """One line on the account's stream; Redis away loses only the announcement."""
    with contextlib.suppress(redis.RedisError):
        publish.account_event(r, handle, line)


def tournament_summary(r: redis.Redis, tournament_id: str) -> dict[str, Any] | None:
    """A tournament's read model (``GET /v1/tournaments/{id}``'s answer), if projected."""
    return tournament_view.read(r, tournament_id, "tournament")
