"""docs/API.md "Tables": the lobby.  Open a table, list them, join, leave; the
join that fills the last seat starts the game (``service.service_layer.lobby``)."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from schemas.http import ErrorOut
from schemas.tables import TableIn, TableListArgs, TableListOut, TableOut
from service.http.common import require_account, services
from service.http.errors import ApiError

blp = Blueprint("tables", __name__, url_prefix="/v1/tables", description="The lobby: open tables, join, leave")


def _player():
    caller = require_account()
    if caller.account is None or caller.account.is_organiser:
        raise ApiError(403, "player_key_required", "Only a player's key can sit at a table.")
    return caller.account


@blp.route("", methods=["POST"])
@blp.arguments(TableIn(), example={"game": "nauticus", "seats": 2, "options": {}, "rated": True})
@blp.response(201, TableOut)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="invalid_token")
@blp.alt_response(409, schema=ErrorOut, description="too_many_tables: the account's open tables are at the cap")
@blp.alt_response(422, schema=ErrorOut, description="Unknown game, player count, options, clock, or invalid_join")
def create_table(body: dict[str, Any]) -> dict[str, Any]:
    """Open a table (a player's or an organiser's key).  A player who opens a
    table sits at it; an organiser opens tables for others."""
    account = require_account().account
    assert account is not None
    return services().lobby.open_table(
        account, body["game"], body["seats"], body["options"], body["rated"], body["clock"], body["join"]
    )


@blp.route("", methods=["GET"])
@blp.arguments(TableListArgs(), location="query")
@blp.response(200, TableListOut)
def list_tables(args: dict[str, Any]) -> dict[str, Any]:
    """Tables of one status (default: open), newest first."""
    tables = services().lobby.list(args["status"], args.get("game"), args["limit"], args["offset"], args.get("player"))
    return {"tables": tables, "limit": args["limit"], "offset": args["offset"]}


@blp.route("/<uuid:table_id>", methods=["GET"])
@blp.response(200, TableOut)
@blp.alt_response(404, schema=ErrorOut, description="table_not_found")
def get_table(table_id: Any) -> dict[str, Any]:
    """One table (its ``game_id`` once it has started)."""
    return services().lobby.get(str(table_id))


@blp.route("/<uuid:table_id>/join", methods=["POST"])
@blp.response(200, TableOut)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="invalid_token, player_key_required")
@blp.alt_response(404, schema=ErrorOut, description="table_not_found")
@blp.alt_response(409, schema=ErrorOut, description="table_full, table_closed, already_seated, too_many_tables")
def join_table(table_id: Any) -> dict[str, Any]:
    """Sit at the table (a player's key).  The join that fills the last seat
    starts the game: ``status`` is then ``started`` and ``game_id`` is set."""
    return services().lobby.join(str(table_id), _player())


@blp.route("/<uuid:table_id>/leave", methods=["POST"])
@blp.response(200, TableOut)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="invalid_token, player_key_required")
@blp.alt_response(404, schema=ErrorOut, description="table_not_found")
@blp.alt_response(409, schema=ErrorOut, description="table_started, table_closed, not_at_table")
def leave_table(table_id: Any) -> dict[str, Any]:
    """Stand up from an open table."""
    return services().lobby.leave(str(table_id), _player())
