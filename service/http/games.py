"""docs/API.md "Games": create, read, legal intents, post an intent, list."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import Response, g, jsonify, request
from flask_smorest import Blueprint

from schemas import openapi
from schemas.http import (
    AbortIn,
    AbortOut,
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
from schemas.intents import parse_intent
from service import metrics, views
from service.adapters.eventstore import StoreUnavailable
from service.domain import identity
from service.domain.errors import DomainError
from service.domain.identity import GameAccess
from service.games.base import ADMIN
from service.http import common, live
from service.http.common import bearer, principal, services, viewer_for
from service.http.errors import ApiError, not_found
from service.http.invitations import announce_invitation
from service.http.live.waits import wait_until

blp = Blueprint("games", __name__, url_prefix="/v1/games", description="Create and play games")

#: How long a read waits, at most, for a read model that is not there yet
#: (its first projection still queued, or Redis flushed): it asks for a
#: catch-up and waits; it never projects inside a request.
MISSING_WAIT_SECONDS = 5.0


def read_game(game_id: str, names: list[str], min_version: int | None = None) -> dict[str, Any]:
    """``names`` of the game's read model, all from ONE ``HMGET`` (the
    projection writes them in one guarded script, so they reflect exactly one version),
    waiting (bounded) for ``min_version``.

    A game that exists in the event store but has no read model yet asks the
    projections to catch it up and waits for it, bounded; ``version`` is
    always read (first of ``names``)."""
    svc = services()
    r = svc.redis
    names = ["version", *(n for n in names if n != "version")]
    values = views.read_board_fields(r, game_id, names)
    if values[0] is None:
        if svc.store.game(game_id) is None:
            raise not_found()
        svc.catch_up(game_id)
    wait = svc.settings.max_wait_seconds if min_version is not None else 0.0
    if values[0] is None:
        wait = max(wait, MISSING_WAIT_SECONDS)
    elif min_version is not None and int(values[0]) < min_version and _past_head(game_id, min_version):
        wait = 0.0  # a version the stream does not have cannot come from waiting: answer now

    def behind(v: list[Any]) -> bool:
        return v[0] is None or (min_version is not None and int(v[0]) < min_version)

    if wait > 0 and behind(values):
        asked = [values[0] is None]

        def vanished(v: list[Any]) -> None:
            if v[0] is None and not asked[0]:
                # Vanished mid-wait (Redis flushed or restarted empty): ask again.
                svc.catch_up(game_id)
            asked[0] = v[0] is None

        # Woken by the projection's announcement (service/http/live/hub.py), not by polling.
        values = wait_until(
            live.current_hub(),
            game_id,
            lambda: views.read_board_fields(r, game_id, names),
            lambda v: not behind(v),
            wait,
            vanished,
        )
    if values[0] is None:
        raise ApiError(
            503,
            "read_model_unavailable",
            "The game's read model is being built; try again shortly.",
            {"retry_after_seconds": 1},
        )
    return dict(zip(names, values, strict=True))


def _past_head(game_id: str, version: int) -> bool:
    """``version`` is beyond the game's stream head in PostgreSQL (one
    indexed query; if PostgreSQL is away, assume not and wait as asked)."""
    try:
        return version > services().store.version(game_id)
    except StoreUnavailable:
        return False


def viewer_of(game_id: str) -> Any:
    """Who is calling, from the seats' token hashes and who sits where (they
    never change for a game, so reading them apart from the board cannot mix
    two versions)."""
    model = read_game(game_id, ["auth", "info"])
    auth, info = model["auth"], model["info"]
    access = GameAccess.from_created(json.loads(info)) if info else None
    return viewer_for(bearer(), json.loads(auth) if auth else [], access)


@blp.route("", methods=["POST"])
@blp.arguments(CreateGameIn(), examples=openapi.create_examples())
@blp.response(201, CreateGameOut)
@blp.alt_response(422, schema=ErrorOut, description="Unknown game, player count or options")
def create_game(body: dict[str, Any]) -> dict[str, Any]:
    """Create a game; each seat's token is shown once, here.

    By names (anyone): a casual game.  With ``"accounts": true`` (an
    organiser's key or the operator token): the players are accounts, each
    acting with its own key (no seat tokens), and ``"rated": true`` makes the
    game count on the leaderboards."""
    svc = services()
    players = body["players"]
    repeated = identity.same_name(players)
    if repeated:
        raise ApiError(
            422,
            "duplicate_players",
            "Each player may sit at a table only once (names are compared ignoring case).",
            {"repeated": repeated},
        )
    caller = principal()
    terms: dict[str, Any] = {}
    if caller.kind == identity.TOKEN and identity.looks_like_key(caller.token):
        raise ApiError(403, "invalid_token", "This is not an account's key (a rotated key stops at once).")
    if body.get("accounts"):
        if not (caller.is_operator or caller.is_organiser):
            if caller.kind == identity.NOBODY:
                raise ApiError(401, "key_required", "Seating accounts needs an organiser's key.")
            raise ApiError(403, "organiser_key_required", "Only an organiser's key (or the operator) seats accounts.")
        return invite(body, svc.accounts.players(players), caller)
    elif body.get("rated"):
        raise ApiError(422, "rated_needs_accounts", "Only a game of accounts can be rated: send 'accounts': true.")
    else:
        _no_house_bot_names(players)
    if caller.is_organiser:
        # The organiser's own game: its key has the organiser's rights over it.
        terms["created_by"] = caller.handle
    return svc.games.create_game(body["game"], players, body["options"], clock=body.get("clock"), **terms)


def _no_house_bot_names(names: list[str]) -> None:
    """A casual seat never takes a house bot's name: a seat so named is the bot
    (pages mark it so, docs/BOTS.md "House bots")."""
    reserved = [name for name in names if identity.reserved_handle(name)]
    if reserved:
        raise ApiError(
            422,
            "reserved_name",
            "Names of the form '<game>-bot-<level>' are the house bots'; a casual seat cannot take one.",
            {"names": reserved},
        )


def invite(body: dict[str, Any], accounts: list[Any], caller: Any) -> dict[str, Any]:
    """An organiser's game of accounts waits for every account to accept
    (docs/API.md, "Consent"): the answer is the pending game, ``"status": "invited"``."""
    svc = services()
    pending, made = svc.invitations.invite_to_game(
        body["game"],
        accounts,
        body["options"],
        rated=bool(body.get("rated")),
        clock=body.get("clock"),
        created_by=caller.handle if caller.is_organiser else None,
        inviter=caller.handle if caller.is_organiser else "operator",
    )
    for invitation in made:
        announce_invitation(invitation["player"], {"id": invitation["id"], "kind": "game", "game_id": pending["id"]})
    seats = [{"seat": i, "player": p, "account": True} for i, p in enumerate(pending["players"])]
    return pending | {"seats": seats}


@blp.route("", methods=["GET"])
@blp.arguments(ListGamesArgs(), location="query")
@blp.response(200, GameListOut)
def list_games(args: dict[str, Any]) -> dict[str, Any]:
    """Games, newest first, filtered by game, status and player."""
    facets = {f: args[f] for f in ("game", "status", "player") if args.get(f)}
    if args.get("rated"):
        facets["rated"] = "true"
    svc = services()
    games, total = views.game_list(svc.redis, facets, args["offset"], args["limit"], svc.store.finished_rows)
    return {"games": games, "total": total, "limit": args["limit"], "offset": args["offset"]}


@blp.route("/<uuid:game_id>", methods=["GET"])
@blp.arguments(MinVersionArgs(), location="query")
@blp.response(200, GameOut)
@blp.alt_response(404, schema=ErrorOut, description="No such game")
@blp.alt_response(403, schema=ErrorOut, description="A token that belongs to no seat of this game")
def get_game(args: dict[str, Any], game_id: Any) -> dict[str, Any]:
    """The game as the caller may see it: a seat token shows that seat's view,
    the operator token everything, no token the public view."""
    gid = str(game_id)
    try:
        viewer = viewer_of(gid)
        model = read_game(gid, views.board_names(viewer), args.get("min_version"))
    except ApiError as err:
        # A game of accounts that waits for its invitations (docs/API.md, "Consent").
        if err.status == 404 and (pending := services().invitations.pending_game(gid)) is not None:
            return pending
        raise
    return views.board_body(gid, viewer, model)


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
    viewer = viewer_of(gid)
    if not isinstance(viewer, int) or viewer == ADMIN:
        raise ApiError(403, "seat_token_required", "Legal intents belong to a seat: send a seat's token.")
    # Version and legal list in one read, so they always match.
    model = read_game(gid, [f"legal:{viewer}"], args.get("min_version"))
    return {"version": int(model["version"]), "seat": viewer, "intents": json.loads(model[f"legal:{viewer}"] or b"[]")}


def _request_hash(body: Any) -> str:
    """What an Idempotency-Key is bound to: the request's meaning, its JSON in
    canonical form (sorted keys, no insignificant whitespace), so the same
    request sent with other spacing or key order is the same request."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


#: The intent body's and answer's schemas as instances, not classes: given a class,
#: webargs builds a new schema on every request.
_INTENT_IN = IntentIn()
_INTENT_OUT = IntentOut()


@blp.route("/<uuid:game_id>/intents", methods=["POST"])
@openapi.idempotent()
@blp.arguments(_INTENT_IN, examples=openapi.intent_examples())
@blp.response(201, _INTENT_OUT)
@blp.alt_response(401, schema=ErrorOut, description="No token")
@blp.alt_response(403, schema=ErrorOut, description="Not a seat token of this game")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
@blp.alt_response(409, schema=ErrorOut, description="Version conflict: someone else moved first")
@blp.alt_response(422, schema=ErrorOut, description="Illegal intent; the code says which rule")
@blp.alt_response(503, schema=ErrorOut, description="PostgreSQL unreachable; nothing was written")
def post_intent(body: dict[str, Any], game_id: Any) -> Response:
    """Submit one intent for the caller's seat.  Send ``Idempotency-Key`` to
    make a retry safe: the same key and body return the first answer."""
    key = request.headers.get("Idempotency-Key")
    if key is not None and not (1 <= len(key) <= 200 and key.isprintable()):
        raise ApiError(400, "invalid_idempotency_key", "Idempotency-Key must be 1-200 printable characters.")
    # The hash binds a key to its request; without a key nothing reads it
    # (a canonical serialisation and a SHA-256 of the body saved per intent).
    request_hash = _request_hash(g.body) if key is not None else ""
    try:
        caller = principal()
        raw = g.body.get("intent")
        answer = services().games.submit(
            str(game_id),
            bearer(),
            # Parsed here, at the edge, once the service knows the game's kind and the seat.
            lambda game: parse_intent(game, raw),
            body.get("expected_version"),
            key,
            request_hash,
            principal=caller if caller.account is not None else None,
        )
    except (ApiError, DomainError) as err:
        metrics.INTENTS.labels("refused", err.code).inc()
        raise
    metrics.INTENTS.labels("accepted", "ok").inc()
    # The answer is built in IntentOut's shape (GameService._decide_and_append, or
    # its stored copy on a replay), so it goes out as it is: flask-smorest passes a
    # Response through, where it would dump the answer through the schema again.
    sent = jsonify(answer)
    sent.status_code = 201
    return sent


@blp.route("/<uuid:game_id>/abort", methods=["POST"])
@blp.arguments(AbortIn(), example={"reason": "A player was disqualified."})
@blp.response(200, AbortOut)
@blp.alt_response(401, schema=ErrorOut, description="No credential")
@blp.alt_response(403, schema=ErrorOut, description="Neither the operator nor the organiser of this game")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
@blp.alt_response(422, schema=ErrorOut, description="The game is already over (game_finished)")
def abort_game(body: dict[str, Any], game_id: Any) -> dict[str, Any]:
    """End a running game, unrated: ``GameAborted`` and ``GameFinished`` (``"reason":
    "aborted"``) are recorded in its stream.  The operator, or the organiser who created the
    game (``service.domain.identity.may_abort`` decides)."""
    gid = str(game_id)
    access = common.game_access(gid)
    caller = common.require_organiser(access)
    if not identity.may_abort(caller, access):  # pragma: no cover - require_organiser admits the same callers
        raise ApiError(403, "not_your_game", "Only the operator or this game's organiser may abort it.")
    by = "operator" if caller.is_operator else f"organiser:{caller.handle}"
    return services().games.abort(gid, body["reason"], by)
