"""Game lists: sorted sets of game ids, newest first, one for every combination
of the filters ``GET /v1/games`` offers (game type, status, player, rated;
``keys.games_list``).  ``player`` is an account's handle: a name in a casual
game is a guest's and lists the game under no one.  Written by the board projection with a game's read model
(``projections.runner``): a list with any filters is then one sorted set read
by rank, never an intersection, which costs the same at any size and keeps
every command on one key (a Redis Cluster refuses commands across slots).

The price is in the writes and the memory: a game is a member of every
combination of its facets (``2^k - 1`` sets for k facets, with each player
a facet of its own: 19 sets for a casual two-player game, 39 for a rated
four-player one), written at the game's first write and again at its finish,
the only writes that change them."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import redis

from projections import boards, keys
from projections.boards import info_of
from service.domain.pipeline import shown_result

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


def account_seats(info: dict[str, Any]) -> list[str]:
    """The handles of a game's seats that are accounts.  A name in a casual game is a
    guest's: anyone may type any name, so it is never listed under an account's handle
    (nor under a player of that name, who would be an account in all but name)."""
    flags = info.get("accounts") or []
    return [p for i, p in enumerate(info["players"]) if i < len(flags) and flags[i]]


def guest_seats(info: dict[str, Any]) -> list[int]:
    """The seats of a game taken by names rather than accounts (guests)."""
    flags = info.get("accounts") or []
    return [i for i in range(len(info["players"])) if not (i < len(flags) and flags[i])]


def combinations(info: dict[str, Any], status: str, rated: bool | None = None) -> list[dict[str, str]]:
    """Every combination of filters a game with ``info`` and ``status`` matches
    (the empty one, all games, first); ``rated``: whether it lists as rated
    (default: whether it was asked to be)."""
    fixed = [("game", info["game"]), ("status", status)]
    if info.get("rated") if rated is None else rated:
        # Rated games (``?rated=true``); every other game is casual.
        fixed.append(("rated", "true"))
    players: list[str | None] = [None, *dict.fromkeys(account_seats(info))]
    out = []
    for player in players:
        for n in range(len(fixed) + 1):
            for chosen in itertools.combinations(fixed, n):
                facets = dict(chosen)
                if player is not None:
                    facets["player"] = player
                out.append(facets)
    return out


def index_game(pipe: Any, info: dict[str, Any], fields: dict[str, str], finished_now: bool) -> None:
    """Game lists: newest first, in every combination of filters (one key a command)."""
    gid, score = info["id"], _created_us(info)
    status = fields["status"]
    other = "active" if status == "finished" else "finished"
    for facets in combinations(info, other):
        if "status" in facets:
            pipe.zrem(keys.games_list(facets), gid)
    counted = bool(info.get("rated")) and "unrated_reason" not in fields
    if info.get("rated") and not counted:
        # Asked to be rated, finished unrated (service/domain/counting.py): out of every rated list.
        for facets in combinations(info, status, rated=True):
            if "rated" in facets:
                pipe.zrem(keys.games_list(facets), gid)
    for facets in combinations(info, status, rated=counted):
        pipe.zadd(keys.games_list(facets), {gid: score})


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
    not (yet) projected is left out."""
    key = keys.games_list(facets)
    with r.pipeline(transaction=False) as pipe:
        pipe.zcard(key)
        pipe.zrevrange(key, offset, offset + limit - 1)
        total, ids = pipe.execute()
    with r.pipeline(transaction=False) as pipe:
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
                "guests": guest_seats(info),
            }
        )
    return games, total
