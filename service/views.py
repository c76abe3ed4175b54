"""The read side: what the JSON API's handlers and the pages read from the read
models in Redis (cosmicpython's "views").  Handlers and pages call these with the
components' read-side client; no HTTP or page module talks to Redis itself
(tests/unit/test_architecture.py).

The streams' reads (:func:`read_board_fields`, :func:`turns_now`) raise
:class:`ReadModelsUnavailable` when Redis fails them: a stream goes on without
that read (its next announcement or safety re-read reads again); the app
answers 503 ``redis_unavailable`` to one that reaches it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import redis

from projections import game_lists, keys, leaderboards, publish
from projections import tournaments as tournament_view
from service.domain import identity, pipeline
from service.games.base import ADMIN

#: When a player is listed on a leaderboard (docs/LEADERBOARDS.md, "Trust"), for the pages' words.
TRUST = leaderboards.TRUST

#: The fields of a game's read model every viewer's board is made of (besides its view).
BOARD_FIELDS = ("version", "info", "status", "to_act", "result", "auth", "clock", "unrated_reason")


class ReadModelsUnavailable(Exception):
    """Redis failed a read of the read side (``reason``: the error's type)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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


def ratings(r: redis.Redis, players: list[tuple[str, str]]) -> list[float | None]:
    """Each (game type, handle)'s rating, ``None`` for one not rated yet: one round trip."""
    with r.pipeline(transaction=False) as pipe:
        for game, handle in players:
            pipe.hget(leaderboards.stats_key(game), handle)
        raws = pipe.execute()
    return [
        leaderboards.present(handle, orjson.loads(raw))["rating"] if raw else None
        for (_, handle), raw in zip(players, raws, strict=True)
    ]


def game_list(
    r: redis.Redis,
    facets: dict[str, str],
    offset: int,
    limit: int,
    finished_rows: Callable[[list[str]], Any] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """A page of ``GET /v1/games`` (the lists the projection keeps per filter combination)."""
    return game_lists.page(r, facets, offset, limit, finished_rows)


def tournament_field(r: redis.Redis, tournament_id: str, field: str) -> Any:
    """A field of a tournament's read model (``tournament``, ``round:<n>``,
    ``standings:<n>``), if projected."""
    return tournament_view.read(r, tournament_id, field)


def tournament_summary(r: redis.Redis, tournament_id: str) -> dict[str, Any] | None:
    """A tournament's read model (``GET /v1/tournaments/{id}``'s answer), if projected."""
    return tournament_view.read(r, tournament_id, "tournament")


def tournament_body(tournament_id: str, state: Any, version: int, created_at: str | None) -> dict[str, Any]:
    """A tournament's ``GET /v1/tournaments/{id}`` body from its folded state (the answer
    of every command, before its read model is projected)."""
    return tournament_view.summary(tournament_id, state, version, created_at)


def read_board_fields(r: redis.Redis, game_id: str, names: list[str]) -> list[bytes | None]:
    """``names`` of the game's read model, from one ``HMGET`` (the projection writes
    them in one guarded script, ``projections.runner.GUARDED``, so they reflect
    exactly one version); None for a field (or a game) not there."""
    try:
        return r.hmget(keys.game(game_id), names)  # type: ignore[return-value]  # bytes: no decode_responses
    except redis.RedisError as exc:
        raise ReadModelsUnavailable(type(exc).__name__) from exc


#: Games a read of :func:`turns_now` lists at once.
TURNS_PAGE = 100


def turns_now(r: redis.Redis, handle: str, limit: int) -> Iterator[dict[str, Any]]:
    """``your_turn`` for each of the account's active games (the newest ``limit``, read
    :data:`TURNS_PAGE` at a time) where it is to act now, as each is read: a stream
    (re)started misses no turn that came while it was away, and the bot worker's resync
    asks for the house bots' turns that pub/sub may have dropped (``workers/bots.py``)."""
    try:
        mine = identity.handle_key(handle)
        for offset in range(0, limit, TURNS_PAGE):
            size = min(TURNS_PAGE, limit - offset)
            games_now, total = game_lists.page(r, {"player": handle, "status": "active"}, offset, size)
            for summary in games_now:
                gid = summary["id"]
                version, to_act, info = r.hmget(keys.game(gid), ["version", "to_act", "info"])
                if version is None or to_act is None or info is None:
                    continue
                parsed = orjson.loads(info)
                flags = parsed.get("accounts") or []
                for seat in orjson.loads(to_act):
                    player = parsed["players"][seat] if seat < len(parsed["players"]) else None
                    if player and seat < len(flags) and flags[seat] and identity.handle_key(player) == mine:
                        yield {"type": "your_turn", "game_id": gid, "version": int(version)}
            if offset + size >= total:
                return
    except redis.RedisError as exc:
        raise ReadModelsUnavailable(type(exc).__name__) from exc


def ask_for_read_model(catch_up: Callable[[str], None], game_id: str) -> None:
    """``catch_up(game_id)`` (the projection nudge) for a read model a stream found
    gone; Redis away loses only the ask."""
    with contextlib.suppress(redis.RedisError):
        catch_up(game_id)


def view_field(viewer: Any) -> str:
    """The read-model field of ``viewer``'s view (``ADMIN``, a seat, or None: the public)."""
    return "view:admin" if viewer == ADMIN else "view:public" if viewer is None else f"view:{viewer}"


def board_names(viewer: Any) -> list[str]:
    """The read-model fields of ``viewer``'s board (``GET /v1/games/{id}``, every
    board line of its stream, and what a house bot decides on)."""
    return [*BOARD_FIELDS, view_field(viewer)]


def board_body(gid: str, viewer: Any, model: dict[str, Any]) -> dict[str, Any]:
    """``viewer``'s board from one read of :func:`board_names` (before the
    ``GameOut`` schema): what ``GET`` answers, what a stream carries, and what a
    house bot sees."""
    view = model[view_field(viewer)]
    info = json.loads(model["info"])
    return {
        "id": gid,
        "game": info["game"],
        "version": int(model["version"]),
        "status": model["status"].decode(),
        "players": info["players"],
        "to_act": json.loads(model["to_act"]),
        "view": json.loads(view) if view else {},
        "result": pipeline.shown_result(json.loads(model["result"])),
        "seat": viewer if isinstance(viewer, int) else None,
        "created_at": info["created_at"],
        "seed_commitment": info["seed_commitment"],
        "rules_version": info["rules_version"],
        # Games from before accounts are casual (docs/API.md "Rated and casual games"); a game
        # asked to be rated that did not count says why (service/domain/counting.py).
        "rated": bool(info.get("rated", False)) and not model.get("unrated_reason"),
        "unrated_reason": model["unrated_reason"].decode() if model.get("unrated_reason") else None,
        "created_by": info.get("created_by"),
        # As of this version (service/domain/clocks.py); games from before clocks have none.
        "clock": json.loads(model["clock"]) if model.get("clock") else None,
    }
