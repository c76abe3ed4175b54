"""API.md "Games": create, read, legal intents, post an intent, list."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from flask import g, request
from flask_smorest import Blueprint

from projections import keys
from projections.runner import project_game
from schemas.http import (
    CreateGameIn,
    CreateGameOut,
    ErrorOut,
    GameListOut,
    GameOut,
    IntentIn,
    IntentOut,
    LegalOut,
    ListGamesArgs,
    MinVersionArgs,
)
from service import metrics
from service.api.common import bearer, services, viewer_for
from service.errors import ApiError, not_found
from service.games.base import ADMIN

blp = Blueprint("games", __name__, url_prefix="/v1/games", description="Create and play games")

_FIELDS = ("version", "info", "status", "to_act", "result", "auth")


def _read_model(game_id: str, extra: list[str], min_version: int | None) -> dict[str, Any]:
    """The game's read model from Redis, waiting (bounded) for ``min_version``.

    A game that exists in the event store but has no read model yet (its
    first job still queued, or Redis was flushed) is projected on the spot."""
    svc = services()
    r = svc.redis
    key = keys.game(game_id)
    names = [*_FIELDS, *extra]

    def fetch() -> list[Any]:
        # The hash can vanish at any read, mid-wait included (Redis flushed or
        # restarted empty): project it again rather than fail.
        values = r.hmget(key, names)
        if values[0] is None:
            if svc.store.game(game_id) is None:
                raise not_found()
            project_game(r, svc.store, game_id)
            values = r.hmget(key, names)
            if values[0] is None:
                raise not_found()
        return values

    values = fetch()
    if min_version is not None and int(values[0]) < min_version:
        deadline = time.monotonic() + svc.settings.max_wait_seconds
        pause = 0.002
        while int(values[0]) < min_version and time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(pause * 1.5, 0.05)
            values = fetch()
    return dict(zip(names, values, strict=True))


def _viewer(model: dict[str, Any]) -> Any:
    auth = json.loads(model["auth"]) if model.get("auth") else []
    return viewer_for(bearer(), auth)


@blp.route("", methods=["POST"])
@blp.arguments(CreateGameIn())
@blp.response(201, CreateGameOut)
@blp.alt_response(422, schema=ErrorOut, description="Unknown game, player count or options")
def create_game(body: dict[str, Any]) -> dict[str, Any]:
    """Create a game; each seat's token is shown once, here."""
    if len(set(body["players"])) != len(body["players"]):
        raise ApiError(422, "duplicate_players", "Each player handle may sit at a table only once.")
    return services().games.create_game(body["game"], body["players"], body["options"])


@blp.route("", methods=["GET"])
@blp.arguments(ListGamesArgs(), location="query")
@blp.response(200, GameListOut)
def list_games(args: dict[str, Any]) -> dict[str, Any]:
    """Games, newest first, filtered by game, status and player."""
    r = services().redis
    facets = [keys.games_by(f, args[f]) for f in ("game", "status", "player") if args.get(f)]
    start, stop = args["offset"], args["offset"] + args["limit"] - 1
    if not facets:
        source, total = keys.GAMES_ALL, r.zcard(keys.GAMES_ALL)
        ids = r.zrevrange(source, start, stop)
    elif len(facets) == 1:
        total = r.zcard(facets[0])
        ids = r.zrevrange(facets[0], start, stop)
    else:
        # Intersect the facets in Redis; the result is kept for a moment only.
        tmp = "games:tmp:" + hashlib.sha256("|".join(sorted(facets)).encode()).hexdigest()[:16]
        with r.pipeline() as pipe:
            pipe.zinterstore(tmp, facets, aggregate="MAX")
            pipe.expire(tmp, 5)
            pipe.zrevrange(tmp, start, stop)
            pipe.zcard(tmp)
            _, _, ids, total = pipe.execute()
    games = []
    with r.pipeline() as pipe:
        for gid in ids:
            pipe.hmget(keys.game(gid.decode()), "info", "status", "version", "result")
        rows = pipe.execute()
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
                "result": json.loads(row[3]) if row[3] else None,
            }
        )
    return {"games": games, "total": total, "limit": args["limit"], "offset": args["offset"]}


@blp.route("/<uuid:game_id>", methods=["GET"])
@blp.arguments(MinVersionArgs(), location="query")
@blp.response(200, GameOut)
@blp.alt_response(404, schema=ErrorOut, description="No such game")
@blp.alt_response(403, schema=ErrorOut, description="A token that belongs to no seat of this game")
def get_game(args: dict[str, Any], game_id: Any) -> dict[str, Any]:
    """The game as the caller may see it: a seat token shows that seat's view,
    the organiser token everything, no token the public view."""
    gid = str(game_id)
    model = _read_model(gid, [], args.get("min_version"))
    viewer = _viewer(model)
    field = "view:admin" if viewer == ADMIN else "view:public" if viewer is None else f"view:{viewer}"
    view = services().redis.hget(keys.game(gid), field)
    info = json.loads(model["info"])
    return {
        "id": gid,
        "game": info["game"],
        "version": int(model["version"]),
        "status": model["status"].decode(),
        "players": info["players"],
        "to_act": json.loads(model["to_act"]),
        "view": json.loads(view) if view else {},
        "result": json.loads(model["result"]),
        "seat": viewer if isinstance(viewer, int) else None,
        "created_at": info["created_at"],
        "seed_commitment": info["seed_commitment"],
        "rules_version": info["rules_version"],
    }


@blp.route("/<uuid:game_id>/legal", methods=["GET"])
@blp.arguments(MinVersionArgs(), location="query")
@blp.response(200, LegalOut)
@blp.alt_response(401, schema=ErrorOut, description="No token")
@blp.alt_response(403, schema=ErrorOut, description="Not a seat token of this game")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
def get_legal(args: dict[str, Any], game_id: Any) -> dict[str, Any]:
    """Every intent the caller's seat may post now, each postable as is."""
    gid = str(game_id)
    model = _read_model(gid, [], args.get("min_version"))
    if bearer() is None:
        raise ApiError(401, "token_required", "Send your seat's token as 'Authorization: Bearer <token>'.")
    viewer = _viewer(model)
    if not isinstance(viewer, int) or viewer == ADMIN:
        raise ApiError(403, "seat_token_required", "Legal intents belong to a seat: send a seat's token.")
    # Re-read version and legal together so they always match.
    version, legal = services().redis.hmget(keys.game(gid), "version", f"legal:{viewer}")
    if version is None:  # flushed since the read above: read (and so project) again
        _read_model(gid, [], None)
        version, legal = services().redis.hmget(keys.game(gid), "version", f"legal:{viewer}")
    return {"version": int(version), "seat": viewer, "intents": json.loads(legal or b"[]")}


@blp.route("/<uuid:game_id>/intents", methods=["POST"])
# Schema instances, not classes: given a class, webargs builds a new schema on
# every request (a profile of the intent path showed it).
@blp.arguments(IntentIn())
@blp.response(201, IntentOut)
@blp.alt_response(401, schema=ErrorOut, description="No token")
@blp.alt_response(403, schema=ErrorOut, description="Not a seat token of this game")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
@blp.alt_response(409, schema=ErrorOut, description="Version conflict: someone else moved first")
@blp.alt_response(422, schema=ErrorOut, description="Illegal intent; the code says which rule")
@blp.alt_response(503, schema=ErrorOut, description="PostgreSQL unreachable; nothing was written")
def post_intent(body: dict[str, Any], game_id: Any) -> dict[str, Any]:
    """Submit one intent for the caller's seat.  Send ``Idempotency-Key`` to
    make a retry safe: the same key and body return the first answer."""
    key = request.headers.get("Idempotency-Key")
    if key is not None and not (1 <= len(key) <= 200 and key.isprintable()):
        raise ApiError(400, "invalid_idempotency_key", "Idempotency-Key must be 1-200 printable characters.")
    request_hash = hashlib.sha256(request.get_data(cache=True)).hexdigest()
    try:
        answer = services().games.submit(
            str(game_id), bearer(), g.body.get("intent"), body.get("expected_version"), key, request_hash
        )
    except ApiError as err:
        metrics.INTENTS.labels("refused", err.code).inc()
        raise
    metrics.INTENTS.labels("accepted", "ok").inc()
    return answer
