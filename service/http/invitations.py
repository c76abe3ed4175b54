"""docs/API.md "Consent": an account's pending invitations, and its answers
(``service.service_layer.invitations``)."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from schemas import openapi
from schemas.http import ErrorOut
from schemas.invitations import AnswerOut, InvitationListOut
from service import views
from service.http.common import require_account, services
from service.http.errors import ApiError

blp = Blueprint("invitations", __name__, url_prefix="/v1", description="Invitations: organisers invite, players accept")


def _player() -> Any:
    caller = require_account()
    if caller.account is None or caller.account.is_organiser:
        raise ApiError(403, "player_key_required", "Only a player's key answers its invitations.")
    return caller.account


def announce_invitation(handle: str, invitation: dict[str, Any]) -> None:
    """Tell the account's stream (``GET /v1/account/stream``) of a new invitation:
    ``{"type": "invitation", "invitation_id", "kind", "game_id" | "tournament_id"}``.
    A stream opened later lists it at its start; a lost announcement loses nothing."""
    line = {"type": "invitation", "invitation_id": invitation["id"], "kind": invitation["kind"]}
    line |= {k: invitation[k] for k in ("game_id", "tournament_id") if k in invitation}
    # Redis away: the invitation stands, listed by GET and at a stream's start.
    views.announce_to_account(services().redis, handle, line)


@blp.route("/account/invitations", methods=["GET"])
@openapi.auth("required")
@blp.response(200, InvitationListOut)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="player_key_required")
def list_invitations() -> dict[str, Any]:
    """The account's pending invitations that have not expired (at most 100, oldest first)."""
    return {"invitations": services().invitations.pending_for(_player())}


@blp.route("/invitations/<uuid:invitation_id>/accept", methods=["POST"])
@openapi.auth("required")
@blp.response(200, AnswerOut)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="player_key_required")
@blp.alt_response(404, schema=ErrorOut, description="invitation_not_found")
@blp.alt_response(409, schema=ErrorOut, description="invitation_answered, invitation_expired, registration_closed")
def accept_invitation(invitation_id: Any) -> dict[str, Any]:
    """Accept: a game starts once every invited account accepted; a tournament
    invitation registers the account."""
    return services().invitations.answer(str(invitation_id), _player(), accept=True)


@blp.route("/invitations/<uuid:invitation_id>/decline", methods=["POST"])
@openapi.auth("required")
@blp.response(200, AnswerOut)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="player_key_required")
@blp.alt_response(404, schema=ErrorOut, description="invitation_not_found")
@blp.alt_response(409, schema=ErrorOut, description="invitation_answered, invitation_expired")
def decline_invitation(invitation_id: Any) -> dict[str, Any]:
    """Decline: a game's other invitations are cancelled and it never starts."""
    return services().invitations.answer(str(invitation_id), _player(), accept=False)
