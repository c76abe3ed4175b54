"""The JSON API, called in-process on behalf of a page's viewer.

Pages are built only from what the JSON API shows the same viewer (docs/API.md,
"Pages, for people"), so they do not read Redis or PostgreSQL themselves: each
function here runs the very handler of a ``/v1`` endpoint (the function under
flask-smorest's decorators) in the page's own request, so the caller is
decided exactly as it is for ``/v1`` (the ``Authorization`` header: a seat
token, the operator token, or none), the query is loaded by the endpoint's
own argument schema, and the answer goes out through the endpoint's own
response schema.  Errors are the API's errors (``ApiError`` and domain
errors); the pages blueprint turns them into HTML.
"""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import Callable
from typing import Any

from flask import Response, current_app, request
from werkzeug.exceptions import UnprocessableEntity

from schemas.tournaments import TournamentOut
from service import views
from service.http import accounts, audit, bots, games, invitations, leaderboards, tables, tournaments
from service.http.common import services
from service.http.errors import ApiError


def _call(endpoint: Callable[..., Any], query: dict[str, Any] | None, *path: Any) -> Any:
    """Run ``endpoint`` (a flask-smorest view) as ``GET`` with ``query`` and the path values.

    The view runs whole, decorators and all, in a request of its own that carries the
    page's headers (the same caller): its argument schema loads the query, its
    response schema dumps the answer, exactly as for ``/v1``."""
    args = {k: v for k, v in (query or {}).items() if v is not None}
    with current_app.test_request_context(request.path, query_string=args, headers=list(request.headers.items())):
        # Path values by name, as Flask's routing passes them (the parsed query comes first).
        names = list(inspect.signature(inspect.unwrap(endpoint)).parameters)[-len(path) :] if path else []
        try:
            answer = endpoint(**dict(zip(names, path, strict=True)))
        except UnprocessableEntity as exc:
            messages = (getattr(exc, "data", None) or {}).get("messages", {})
            raise ApiError(
                422,
                "validation_error",
                "The request does not match its schema.",
                {"fields": messages.get("query", messages)},
            ) from None
    if isinstance(answer, Response) and answer.is_json:
        return answer.get_json()
    return answer


def game(game_id: str, min_version: int | None = None) -> dict[str, Any]:
    """``GET /v1/games/{id}``: the game as the caller may see it."""
    return _call(games.get_game, {"min_version": min_version}, game_id)


def legal(game_id: str, min_version: int | None = None) -> dict[str, Any]:
    """``GET /v1/games/{id}/legal``: the caller's seat's legal intents, with their version."""
    return _call(games.get_legal, {"min_version": min_version}, game_id)


def game_list(**query: Any) -> dict[str, Any]:
    """``GET /v1/games?game=&status=&player=&limit=&offset=``."""
    return _call(games.list_games, query)


def bot_list() -> list[dict[str, Any]]:
    """``GET /v1/bots``: the house bots."""
    return _call(bots.list_bots, None)["bots"]


def table_list(**query: Any) -> dict[str, Any]:
    """``GET /v1/tables?status=&game=&limit=&offset=``: the lobby."""
    return _call(tables.list_tables, query)


def account() -> dict[str, Any]:
    """``GET /v1/account``: who the caller's key is (``401``/``403`` without a valid key)."""
    return _call(accounts.whoami, None)


def invitation_list() -> list[dict[str, Any]]:
    """``GET /v1/account/invitations``: the caller's pending invitations, oldest first."""
    return _call(invitations.list_invitations, None)["invitations"]


def events(game_id: str, after: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
    """``GET /v1/games/{id}/events?after=N&limit=L``: one page of feed lines, redacted for the caller."""
    return _feed_page(game_id, after, limit)[0]


def events_page(game_id: str, after: int, limit: int | None) -> tuple[list[dict[str, Any]], int | None]:
    """One page of ``GET /v1/games/{id}/events?after=N&limit=L`` (its caps: at most
    ``QD_FEED_PAGE_MAX`` lines) and where the next page starts (``X-Next-After``), if any."""
    return _feed_page(game_id, after, limit)


def _feed_page(game_id: str, after: int, limit: int | None) -> tuple[list[dict[str, Any]], int | None]:
    resp = _call(audit.events_feed, {"after": after, "limit": limit}, game_id)
    lines = [json.loads(line) for line in resp.get_data(as_text=True).splitlines() if line.strip()]
    following = resp.headers.get("X-Next-After")
    return lines, int(following) if following and following.isdigit() else None


def state(game_id: str, version: int | None = None, seat: int | None = None) -> dict[str, Any]:
    """``GET /v1/games/{id}/state?version=N&seat=S``: time travel.

    The answer's ``state`` (the whole engine state) is dropped: pages draw a
    position from its ``view`` (the seat's, or the spectator's), as a player
    or spectator would see it then, never from the raw state."""
    answer = _call(audit.state_at, {"version": version, "seat": seat}, game_id)
    answer.pop("state", None)
    return answer


def audit_report(game_id: str) -> dict[str, Any]:
    """``GET /v1/games/{id}/audit``: the four checks."""
    return _call(audit.audit_game, None, game_id)


def leaderboard_list() -> dict[str, Any]:
    """``GET /v1/leaderboards``."""
    return _call(leaderboards.list_leaderboards, None)


def leaderboard(game_type: str, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    """``GET /v1/leaderboards/{game}?limit=&offset=``."""
    return _call(leaderboards.get_leaderboard, {"limit": limit, "offset": offset}, game_type)


def player(handle: str) -> dict[str, Any]:
    """``GET /v1/players/{handle}``."""
    return _call(leaderboards.get_player, None, handle)


def tournament(tournament_id: str) -> dict[str, Any]:
    """``GET /v1/tournaments/{id}``: its terms, status, current round and players."""
    return _call(tournaments.get_tournament, None, uuid.UUID(tournament_id))


def tournament_round(tournament_id: str, n: int) -> dict[str, Any]:
    """``GET /v1/tournaments/{id}/rounds/{n}``: the tables in order, players in seat order."""
    return _call(tournaments.get_round, None, uuid.UUID(tournament_id), n)


def standings(tournament_id: str, n: int | None = None) -> dict[str, Any]:
    """``GET /v1/tournaments/{id}/standings?round=n``: after the last round paired, or after round ``n``."""
    return _call(tournaments.get_standings, {"round": n}, uuid.UUID(tournament_id))


def tournament_list(limit: int) -> list[dict[str, Any]]:
    """The running tournaments and the newest ones (at most ``2 * limit``), each as
    ``GET /v1/tournaments/{id}`` answers it.

    There is no list endpoint: the ids come from two bounded store queries (the
    sweep's ``unfinished``, and ``recent`` on the ``created_at`` index); each
    summary is the read model's field that ``get_tournament`` answers, dumped
    through its response schema.  A tournament whose read model is missing is
    left out (and asked of the worker) rather than waited for: the home page
    never waits on one tournament."""
    svc = services()
    store = svc.tournaments.store
    out = []
    for tid in dict.fromkeys([*store.unfinished(limit), *store.recent(limit)]):
        found = views.tournament_summary(svc.redis, tid)
        if found is None:
            svc.tournaments.catch_up(tid)
            continue
        out.append(TournamentOut().dump(found))
    return out
