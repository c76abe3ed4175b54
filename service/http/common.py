"""Request plumbing shared by the blueprints: the app's services, body
limits, who is calling."""

from __future__ import annotations

import codecs
import hmac
import json
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from flask import current_app, g, request
from webargs.core import missing

from service import bootstrap
from service.bootstrap import Components
from service.config import Settings
from service.domain import identity
from service.domain.identity import GameAccess, Principal
from service.domain.tokens import hash_token
from service.games.base import ADMIN
from service.http.body_time import TimeLimitExceeded, time_limit
from service.http.errors import ApiError
from service.service_layer.commands import GameService
from service.service_layer.invitations import InvitationService
from service.service_layer.lobby import LobbyService
from service.service_layer.tournament_rounds import RoundRunner
from service.service_layer.tournaments import TournamentService
from service.tournaments.commands import RegisterPlayers

if TYPE_CHECKING:
    from service.adapters.accounts import AccountStore
    from service.adapters.analyses import Analyses
    from service.adapters.eventstore import EventStore
    from service.adapters.house_bots import HouseBots
    from service.adapters.kept_audits import KeptAudits


@dataclass
class Services:
    """What a request handler reaches: the components of the composition
    root (``service.bootstrap``) and the command side built over them."""

    components: Components
    games: GameService

    @property
    def settings(self) -> Settings:
        return self.components.settings

    @property
    def store(self) -> EventStore:
        return self.components.store

    @property
    def redis(self) -> Any:
        """The read side's client, for ``service.views`` and the streams."""
        return self.components.redis

    def catch_up(self, game_id: str) -> None:
        """Ask the projections to bring a game's read model up to date."""
        self.games.catch_up(game_id)

    @cached_property
    def accounts(self) -> AccountStore:
        return bootstrap.accounts(self.components)

    @cached_property
    def analyses(self) -> Analyses:
        """Analyses of finished games: kept results, quotas and their jobs."""
        return bootstrap.analyses(self.components)

    @cached_property
    def house_bots(self) -> HouseBots:
        return bootstrap.house_bots(self.components)

    @cached_property
    def kept_audits(self) -> KeptAudits:
        return bootstrap.kept_audits(self.components)

    @cached_property
    def tournaments(self) -> TournamentService:
        """The tournaments' command side; each commit enqueues its projection
        (and, after a pairing, the worker's advance)."""
        return bootstrap.tournament_service(self.components)

    @cached_property
    def rounds(self) -> RoundRunner:
        """The tournaments' rounds (what the worker advances; a request aborts their games)."""
        return bootstrap.round_runner(self.components, self.tournaments, self.games)

    @cached_property
    def invitations(self) -> InvitationService:
        """Organisers invite, players accept (docs/API.md, "Consent"); an accepted
        tournament invitation registers the account as its own key would."""

        def register(tournament_id: str, handle: str) -> None:
            self.tournaments.execute(tournament_id, RegisterPlayers((handle,), by=handle), by=handle)

        return bootstrap.invitation_service(self.components, self.games, register)

    @cached_property
    def lobby(self) -> LobbyService:
        return bootstrap.lobby_service(self.components, self.games)


def services() -> Services:
    return current_app.extensions["quarterdeck"]


def bearer() -> str | None:
    header = request.headers.get("Authorization", "")
    if header[:7].lower() == "bearer ":
        token = header[7:].strip()
        return token or None
    return None


def is_admin(token: str | None) -> bool:
    admin = services().settings.admin_token
    return bool(admin and token and hmac.compare_digest(token.encode(), admin.encode()))


def require_admin() -> None:
    if not services().settings.admin_token:
        raise ApiError(403, "organiser_disabled", "Operator endpoints are disabled: ADMIN_TOKEN is not set.")
    token = bearer()
    if not token:
        raise ApiError(401, "token_required", "This endpoint needs the operator token.")
    if not is_admin(token):
        raise ApiError(403, "invalid_token", "This is not the operator token.")


def principal(token: str | None = None) -> Principal:
    """Who the bearer credential (or ``token``) is, before any game: the
    operator, an account (its key looked up again on every request, so a
    rotated key stops at once), some other token (maybe a seat's), or nobody.
    Kept for the rest of the request only."""
    token = bearer() if token is None else token
    cache = g.setdefault("qd_principals", {})
    if token in cache:
        return cache[token]
    if not token:
        found = Principal(identity.NOBODY)
    elif is_admin(token):
        found = Principal(identity.OPERATOR)
    elif identity.looks_like_key(token) and (account := services().accounts.by_key(token)) is not None:
        found = Principal(identity.ACCOUNT, account)
    else:
        found = Principal(identity.TOKEN, token=token)
    cache[token] = found
    return found


def require_account() -> Principal:
    """An account's key, or a clear refusal."""
    caller = principal()
    if caller.account is not None:
        return caller
    if caller.kind == identity.NOBODY:
        raise ApiError(401, "key_required", "Send your account's key as 'Authorization: Bearer <key>'.")
    raise ApiError(403, "invalid_token", "This is not an account's key (a rotated key stops at once).")


def game_access(game_id: str) -> GameAccess:
    """Who sits where and who organises a game (the command side's, read once per game)."""
    return services().games.access_of(game_id)


def require_organiser(access: GameAccess) -> Principal:
    """Organiser rights over this game: the operator token, or the key of
    the organiser who created it."""
    caller = principal()
    if caller.account is not None:
        if identity.organises(caller, access):
            return caller
        if caller.is_organiser:
            raise ApiError(403, "not_your_game", "An organiser's key has rights only over the games it created.")
        raise ApiError(403, "organiser_key_required", "This needs the organiser of this game (or the operator).")
    require_admin()
    return caller


def viewer_for(token: str | None, token_hashes_hex: list[str], access: GameAccess | None = None) -> Any:
    """``ADMIN``, a seat index, or ``None`` (spectator) for the presented token.
    A token that is neither is refused rather than silently downgraded.

    An account's key is its seat where the account sits (``access``: who sits
    where), ``ADMIN`` for the organiser who created the game, and a spectator
    elsewhere; without ``access`` it is a spectator (never more)."""
    if token is None:
        return None
    if is_admin(token):
        return ADMIN
    caller = principal(token)
    if caller.account is not None:
        if access is None:
            return None
        if identity.organises(caller, access):
            return ADMIN
        return identity.account_seat(caller, access)
    presented = hash_token(token).hex()
    seat = None
    for i, h in enumerate(token_hashes_hex):
        if hmac.compare_digest(presented, h):
            seat = i
    if seat is None:
        raise ApiError(403, "invalid_token", "This token does not belong to a seat of this game.")
    return seat


def _depth_ok(raw: bytes, limit: int) -> bool:
    """Nesting depth of a JSON text, counted without parsing (and so without
    recursion): brackets outside strings."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return True  # cannot nest deeper than it has brackets (most bodies)
    depth = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return False
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return True


def check_body() -> None:
    """before_request: bound and parse JSON bodies once, with clear refusals."""
    if request.method not in ("POST", "PUT", "PATCH"):
        return
    settings = services().settings
    length = request.content_length
    if length is not None and length > settings.max_body_bytes:
        raise ApiError(413, "body_too_large", f"Request bodies are limited to {settings.max_body_bytes} bytes.")
    try:
        # Under gevent a slow body costs a socket, not a worker; still, it must
        # arrive in time (gunicorn bounds the headers: service/http/gunicorn_conf.py).
        with time_limit(settings.body_read_seconds):
            raw = request.get_data(cache=True)
    except TimeLimitExceeded:
        raise ApiError(
            408, "request_timeout", f"The request body did not arrive within {settings.body_read_seconds:g} s."
        ) from None
    if len(raw) > settings.max_body_bytes:
        raise ApiError(413, "body_too_large", f"Request bodies are limited to {settings.max_body_bytes} bytes.")
    if not raw:
        # A POST that carries nothing (join a table, rotate a key), whatever its
        # Content-Type says: an empty object.
        g.body = {}
        return
    if request.mimetype != "application/json":
        raise ApiError(415, "unsupported_media_type", "Send the body as application/json.")
    # RFC 8259 lets a parser ignore a UTF-8 byte order mark; some clients send one.
    raw = raw.removeprefix(codecs.BOM_UTF8)
    if not _depth_ok(raw, settings.max_json_depth):
        raise ApiError(400, "json_too_deep", f"JSON nesting is limited to {settings.max_json_depth} levels.")
    try:
        g.body = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, "malformed_json", "The body is not valid JSON.", {"reason": str(exc)[:200]}) from None
    if not isinstance(g.body, dict):
        raise ApiError(400, "malformed_json", "The body must be a JSON object.")


def json_body(req: Any, schema: Any) -> Any:
    """The JSON body as :func:`check_body` parsed it, for the endpoints' schemas (webargs'
    ``json`` location): parsed once, and read the same way everywhere."""
    return g.body if "body" in g else missing
