"""docs/API.md "Analysis": a finished game's analysis, computed by the analysis worker on request.

The first request for a finished game's analysis enqueues its job (counted in the caller's daily quota:
its account's, or its address's without one) and answers ``202`` with ``Retry-After``; asking again while
it is computed answers the same and costs nothing; once kept, ``200`` with the analysis.  A game still
running is refused (``409 game_running``): no help during play.  The bounds are in
``service/adapters/analyses.py``.
"""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify
from flask_smorest import Blueprint

from schemas import openapi
from schemas.http import AnalysisOut, AnalysisPendingOut, ErrorOut
from service.audit import reading
from service.bots import analysis
from service.http import limits
from service.http.common import principal, services
from service.http.errors import ApiError, not_found

blp = Blueprint("analysis", __name__, url_prefix="/v1/games", description="Analysis of finished games")


@blp.route("/<uuid:game_id>/analysis", methods=["GET"])
@openapi.auth("optional")
@openapi.statuses(409, 429, 503)
@blp.response(200, AnalysisOut)
@blp.alt_response(
    202,
    schema=AnalysisPendingOut,
    description="Being computed: ask again after `Retry-After` seconds",
    headers={"Retry-After": {"description": "Seconds to wait before asking again.", "schema": {"type": "integer"}}},
)
@blp.alt_response(404, schema=ErrorOut, description="No such game")
@blp.alt_response(409, schema=ErrorOut, description="The game is still running (`game_running`)")
@blp.alt_response(429, schema=ErrorOut, description="The caller's analyses of the day are spent (`analysis_quota`)")
def get_analysis(game_id: Any) -> Any:
    """The analysis of a finished game: each seat's value after every event (from that seat's view only),
    every decision with the level-3 house bot's preferred move, the mistakes, and each seat's agreement."""
    gid = str(game_id)
    store = services().store
    if store.game(gid) is None:
        raise not_found()
    if not reading.stream_finished(store, gid):
        raise ApiError(409, "game_running", "The game is still running: its analysis comes once it has finished.")
    caller = principal()
    asked = services().analyses.ask(
        gid,
        analysis.FORMAT,
        account=caller.handle if caller.account is not None else None,
        address=limits.client_address(),
    )
    if asked.outcome == "done":
        assert asked.result is not None
        return {"game_id": gid, **asked.result}
    if asked.outcome == "quota":
        settings = services().settings
        return _with_retry(
            ApiError(
                429,
                "analysis_quota",
                f"At most {settings.analysis_per_day} new analyses a day per account "
                f"({settings.analysis_per_day_address} per address without one); retry after {asked.retry_after} s.",
                {"retry_after_seconds": asked.retry_after},
            ),
            asked.retry_after,
        )
    if asked.outcome == "busy":
        return _with_retry(
            ApiError(
                503,
                "busy",
                "The server is busy with other audits, exports or analyses; try again shortly.",
                {"retry_after_seconds": asked.retry_after},
            ),
            asked.retry_after,
        )
    resp = jsonify(AnalysisPendingOut().dump({"status": "computing", "retry_after_seconds": asked.retry_after}))
    resp.status_code = 202
    resp.headers["Retry-After"] = str(asked.retry_after)
    return resp


def _with_retry(err: ApiError, seconds: int) -> Response:
    resp = jsonify(err.to_json())
    resp.status_code = err.status
    resp.headers["Retry-After"] = str(seconds)
    return resp
