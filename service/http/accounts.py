"""docs/API.md "Accounts and keys": register, who am I, rotate a key, organisers."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from schemas.accounts import AccountOut, HandleIn, KeyOut, NewAccountOut
from schemas.http import ErrorOut
from service.domain import identity
from service.http.common import bearer, require_account, require_admin, services

blp = Blueprint("accounts", __name__, url_prefix="/v1", description="Accounts, keys and organisers")


@blp.route("/accounts", methods=["POST"])
@blp.arguments(HandleIn(), example={"handle": "ann"})
@blp.response(201, NewAccountOut)
@blp.alt_response(409, schema=ErrorOut, description="handle_taken: the handle (ignoring case) is taken")
@blp.alt_response(422, schema=ErrorOut, description="invalid_handle")
@blp.alt_response(429, schema=ErrorOut, description="rate_limited")
def register(body: dict[str, Any]) -> dict[str, Any]:
    """Register a player's account; its key is shown once, here."""
    account, key = services().accounts.register(body["handle"], identity.PLAYER)
    return {"handle": account.handle, "kind": account.kind, "key": key}


@blp.route("/account", methods=["GET"])
@blp.response(200, AccountOut)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="invalid_token: not a (current) account key")
def whoami() -> dict[str, Any]:
    """The account of the key sent."""
    account = require_account().account
    assert account is not None
    return {"handle": account.handle, "kind": account.kind}


@blp.route("/account/key", methods=["POST"])
@blp.response(200, KeyOut)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="invalid_token: not a (current) account key")
@blp.alt_response(409, schema=ErrorOut, description="key_rotated: rotated by another request meanwhile")
def rotate_key() -> dict[str, Any]:
    """A new key for the account; the old key stops working at once."""
    account = require_account().account
    assert account is not None
    return {"key": services().accounts.rotate(account, bearer() or "")}


@blp.route("/organisers", methods=["POST"])
@blp.arguments(HandleIn(), example={"handle": "cup-2027"})
@blp.response(201, NewAccountOut)
@blp.alt_response(401, schema=ErrorOut, description="token_required: the operator token")
@blp.alt_response(403, schema=ErrorOut, description="Not the operator token (ADMIN_TOKEN), or it is unset")
@blp.alt_response(409, schema=ErrorOut, description="handle_taken")
@blp.alt_response(422, schema=ErrorOut, description="invalid_handle")
def create_organiser(body: dict[str, Any]) -> dict[str, Any]:
    """An organiser's account (operator token only); its key is shown once."""
    require_admin()
    account, key = services().accounts.register(body["handle"], identity.ORGANISER)
    return {"handle": account.handle, "kind": account.kind, "key": key}
