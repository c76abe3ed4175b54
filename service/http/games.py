"""docs/API.md "Games": create, read, legal intents, post an intent, list."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from flask import g, request
from flask_smorest import Blueprint

from projections import game_lists, keys
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
from service.core.errors import DomainError
from service.games.base import ADMIN
from service.http.common import bearer, services, viewer_for
from service.http.errors import ApiError, not_found

blp = Blueprint("games", __name__, url_prefix="/v1/games", description="Create and play games")

_FIELDS = ("version", "info", "status", "to_act", "result", "auth")
#: How long a read waits, at most, for a read model that is not there yet
#: (its first projection still queued, or Redis flushed): it asks for a
#: catch-up and waits; it never projects inside a request.
MISSING_WAIT_SECONDS = 5.0


def _read(game_id: str, names: list[str], min_version: int | None = None) -> dict[str, Any]:
    """``names`` of the game's read model, all from ONE ``HMGET`` (the
    projection writes them in one MULTI, so they reflect exactly one version),
    waiting (bounded) for ``min_version``.

    A game that exists in the event store but has no read model yet asks the
    projections to catch it up and waits for it, bounded; ``version`` is
    always read (first of ``names``)."""
    svc = services()
    r = svc.redis
    key = keys.game(game_id)
    names = ["version", *(n for n in names if n != "version")]
    values = r.hmget(key, names)
    if values[0] is None:
        if svc.store.game(game_id) is None:
            raise not_found()
        svc.catch_up(game_id)
    wait = svc.settings.max_wait_seconds if min_version is not None else 0.0
    if values[0] is None:
        wait = max(wait, MISSING_WAIT_SECONDS)
    deadline = time.monotonic() + wait
    pause = 0.002
    asked = values[0] is None
    while values[0] is None or (min_version is not None and int(values[0]) < min_version):
        if time.monotonic() >= deadline:
            break
        time.sleep(pause)
        pause = min(pause * 1.5, 0.05)
        values = r.hmget(key, names)
        if values[0] is None and not asked:
            # Vanished mid-wait (Redis flushed or restarted empty): ask again.
            svc.catch_up(game_id)
        asked = values[0] is None
    if values[0] is None:
        raise ApiError(
            503,
            "read_model_unavailable",
            "The game's read model is being built; try again shortly.",
            {"retry_after_seconds": 1},
        )
    return dict(zip(names, values, strict=True))


def _viewer(game_id: str) -> Any:
    """Who is calling, from the seats' token hashes (they never change for a
    game, so reading them apart from the board cannot mix two versions)."""
    auth = _read(game_id, ["auth"])["auth"]
    return viewer_for(bearer(), json.loads(auth) if auth else [])


def _view_field(viewer: Any) -> str:
    return "view:admin" if viewer == ADMIN else "view:public" if viewer is None else f"view:{viewer}"


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
    facets = {f: args[f] for f in ("game", "status", "player") if args.get(f)}
    games, total = game_lists.page(services().redis, facets, args["offset"], args["limit"])
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
    viewer = _viewer(gid)
    field = _view_field(viewer)
    model = _read(gid, [*_FIELDS, field], args.get("min_version"))
    view = model[field]
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
    if bearer() is None:
        if services().store.game(gid) is None:
            raise not_found()
        raise ApiError(401, "token_required", "Send your seat's token as 'Authorization: Bearer <token>'.")
    viewer = _viewer(gid)
    if not isinstance(viewer, int) or viewer == ADMIN:
        raise ApiError(403, "seat_token_required", "Legal intents belong to a seat: send a seat's token.")
    # Version and legal list in one read, so they always match.
    model = _read(gid, [f"legal:{viewer}"], args.get("min_version"))
    return {"version": int(model["version"]), "seat": viewer, "intents": json.loads(model[f"legal:{viewer}"] or b"[]")}


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
    except (ApiError, DomainError) as err:
        metrics.INTENTS.labels("refused", err.code).inc()
        raise
    metrics.INTENTS.labels("accepted", "ok").inc()
    return answer
