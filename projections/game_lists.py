"""Game lists: sorted sets of game ids, newest first, by game type, status
and player.  Written by the board projection in the same atomic write as a game's
read model (``projections.runner``), read by ``GET /v1/games``."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import redis

from projections import boards, keys
from projections.boards import info_of
from service.core.pipeline import shown_result

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _created_us(info: dict[str, Any]) -> int:
    """Creation time in whole microseconds (exact in a sorted-set score, a
    double, until the year 2255).  Milliseconds (``created_ms``) let games
    created in the same millisecond on different API workers list in id
    order instead of newest first."""
    created = info.get("created_at") or ""
    if not created:
        return int(info.get("created_ms") or 0) * 1000
    return (datetime.fromisoformat(created.replace("Z", "+00:00")) - _EPOCH) // timedelta(microseconds=1)


def index_game(pipe: Any, info: dict[str, Any], fields: dict[str, str], finished_now: bool) -> None:
    """Game lists: newest first, by game type, status and player."""
    gid, score = info["id"], _created_us(info)
    pipe.zadd(keys.GAMES_ALL, {gid: score})
    pipe.zadd(keys.games_by("game", info["game"]), {gid: score})
    for player in info["players"]:
        pipe.zadd(keys.games_by("player", player), {gid: score})
    if info.get("rated") and "unrated_reason" not in fields:
        # Rated games (``?rated=true``); every other game is casual.
        pipe.zadd(keys.games_by("rated", "true"), {gid: score})
    elif info.get("rated"):
        # Asked to be rated, finished unrated (service/core/counting.py).
        pipe.zrem(keys.games_by("rated", "true"), gid)
    status = fields["status"]
    other = "active" if status == "finished" else "finished"
    pipe.zrem(keys.games_by("status", other), gid)
    pipe.zadd(keys.games_by("status", status), {gid: score})


def page(
    r: redis.Redis,
    facets: dict[str, str],
    offset: int,
    limit: int,
    finished: Callable[[list[str]], dict[str, tuple[dict[str, Any], str | None, int, Any]]] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """One page of games matching every facet (``{"game": ..., "status": ...,
    "player": ...}``), newest first, and how many match in all.

    ``finished``: what the event store says of games whose hash is gone
    (``EventStore.finished_rows``): a finished game's read model leaves Redis
    after its retention (``projections/runner.py``) but stays in the lists,
    and its row is made from its stream exactly as from its hash.  A game
    not (yet) projected is left out, as before."""
    sets = [keys.games_by(f, v) for f, v in facets.items()]
    start, stop = offset, offset + limit - 1
    if not sets:
        total = r.zcard(keys.GAMES_ALL)
        ids = r.zrevrange(keys.GAMES_ALL, start, stop)
    elif len(sets) == 1:
        total = r.zcard(sets[0])
        ids = r.zrevrange(sets[0], start, stop)
    else:
        # Intersect the facets in Redis; the result is kept for a moment only.
        tmp = "games:tmp:" + hashlib.sha256("|".join(sorted(sets)).encode()).hexdigest()[:16]
        with r.pipeline() as pipe:
            pipe.zinterstore(tmp, sets, aggregate="MAX")
            pipe.expire(tmp, 5)
            pipe.zrevrange(tmp, start, stop)
            pipe.zcard(tmp)
            _, _, ids, total = pipe.execute()
    with r.pipeline() as pipe:
        for gid in ids:
            pipe.hmget(keys.game(gid.decode()), "info", "status", "version", "result", "unrated_reason")
        rows = pipe.execute()
    gone = [gid.decode() for gid, row in zip(ids, rows, strict=True) if row[0] is None]
    if gone and finished is not None:
        found = finished(gone)
        for i, gid in enumerate(ids):
            if rows[i][0] is None and gid.decode() in found:
                created, received_at, version, result = found[gid.decode()]
                info = info_of(gid.decode(), created, received_at)
                rows[i] = [boards.dumps(info), b"finished", str(version).encode(), boards.dumps(result), None]
    games = []
    for row in rows:
        if row[0] is None:
            continue
        info = json.loads(row[0])
        games.append(
            {
                "id": info["id"],
                "game": info["game"],
                "players": info["players"],
                "created_at": info["created_at"],
                "status": row[1].decode(),
                "version": int(row[2]),
                "result": shown_result(json.loads(row[3])) if row[3] else None,
                "rated": bool(info.get("rated", False)) and row[4] is None,
            }
        )
    return games, total
