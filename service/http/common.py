"""Request plumbing shared by the blueprints: the app's services, body
limits, who is calling."""

from __future__ import annotations

import hmac
import json
from dataclasses import dataclass
from typing import Any

import redis
from flask import current_app, g, request

from service.bootstrap import Components
from service.config import Settings
from service.core.commands import GameService
from service.core.eventstore import EventStore
from service.core.tokens import hash_token
from service.games.base import ADMIN
from service.http.errors import ApiError


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
    def redis(self) -> redis.Redis:
        return self.components.redis

    def catch_up(self, game_id: str) -> None:
        """Ask the projections to bring a game's read model up to date."""
        self.components.nudge(game_id)


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
        raise ApiError(403, "organiser_disabled", "Organiser endpoints are disabled: ADMIN_TOKEN is not set.")
    token = bearer()
    if not token:
        raise ApiError(401, "token_required", "This endpoint needs the organiser token.")
    if not is_admin(token):
        raise ApiError(403, "invalid_token", "This is not the organiser token.")


def viewer_for(token: str | None, token_hashes_hex: list[str]) -> Any:
    """``ADMIN``, a seat index, or ``None`` (spectator) for the presented token.
    A token that is neither is refused rather than silently downgraded."""
    if token is None:
        return None
    if is_admin(token):
        return ADMIN
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
    raw = request.get_data(cache=True)
    if len(raw) > settings.max_body_bytes:
        raise ApiError(413, "body_too_large", f"Request bodies are limited to {settings.max_body_bytes} bytes.")
    if request.mimetype != "application/json":
        raise ApiError(415, "unsupported_media_type", "Send the body as application/json.")
    if not _depth_ok(raw, settings.max_json_depth):
        raise ApiError(400, "json_too_deep", f"JSON nesting is limited to {settings.max_json_depth} levels.")
    try:
        g.body = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, "malformed_json", "The body is not valid JSON.", {"reason": str(exc)[:200]}) from None
    if not isinstance(g.body, dict):
        raise ApiError(400, "malformed_json", "The body must be a JSON object.")
