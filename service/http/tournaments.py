"""docs/API.md "Tournaments": create, register, start; the tournament, its
rounds and standings (from the read model, ``projections/tournaments.py``);
its audit and its export.

Who may do what: an organiser's key (or the operator's ``ADMIN_TOKEN``)
creates a tournament; only the organiser who created it, or the operator,
registers others, starts it, and audits or exports it while it runs.  A
player's key registers itself with ``{}``.  Every refusal of
``service.tournaments.rules`` (TRN-015) comes before anything is written.
"""

from __future__ import annotations

from typing import Any

from flask import Response
from flask_smorest import Blueprint

from schemas import openapi
from schemas.http import ErrorOut
from schemas.tournaments import (
    RegisterIn,
    RoundOut,
    StandingsArgs,
    StandingsOut,
    TournamentAbortIn,
    TournamentAuditOut,
    TournamentIn,
    TournamentOut,
    WithdrawIn,
)
from service import views
from service.audit import tournament_bundle
from service.audit.tournament_audit import audit_tournament
from service.domain import identity
from service.games import registry
from service.http import limits
from service.http.common import principal, require_account, require_admin, services
from service.http.errors import ApiError, unavailable
from service.http.invitations import announce_invitation
from service.http.live.waits import wait_until
from service.service_layer.tournaments import Loaded, not_found
from service.tournaments.commands import (
    AbortTournament,
    CreateTournament,
    RegisterPlayers,
    StartTournament,
    WithdrawPlayer,
)

_NOT_YOURS = "Only the organiser of this tournament (or the operator) may do this."
_ONLY_ITSELF = "A player may withdraw only itself."

blp = Blueprint("tournaments", __name__, url_prefix="/v1/tournaments", description="Tournaments for organisers")


def _answer(loaded: Loaded) -> dict[str, Any]:
    """A command's answer: the tournament as its new events left it (the read
    model follows a few milliseconds later)."""
    created_at = loaded.events[0].meta.get("received_at") if loaded.events else None
    return views.tournament_body(loaded.record.tournament_id, loaded.state, loaded.version, created_at)


def _organiser_or_operator() -> str | None:
    """The caller's handle if an organiser's key, ``None`` for the operator; else a refusal."""
    caller = principal()
    if caller.account is not None:
        if caller.is_organiser:
            return caller.account.handle
        raise ApiError(403, "organiser_key_required", "Only an organiser's key (or the operator) may do this.")
    require_admin()
    return None


def _organises(tournament_id: str) -> bool:
    """The caller has the organiser's rights over this tournament."""
    caller = principal()
    if caller.is_operator:
        return True
    record = services().tournaments.store.record(tournament_id)
    if record is None:
        raise not_found()
    return (
        caller.is_organiser
        and record.organiser is not None
        and identity.handle_key(record.organiser) == identity.handle_key(caller.handle or "")
    )


def _read(tournament_id: str, field: str) -> Any:
    """A field of the read model.  Reads never write: a tournament not projected
    yet (a lost job, a flushed Redis) is asked of the worker, and waited for a
    little; then ``503 read_model_unavailable``."""
    svc = services()
    found = views.tournament_field(svc.redis, tournament_id, field)
    if found is not None:
        return found
    if svc.tournaments.store.record(tournament_id) is None:
        raise not_found()
    svc.tournaments.catch_up(tournament_id)
    found = wait_until(
        None,
        None,
        lambda: views.tournament_field(svc.redis, tournament_id, field),
        lambda got: got is not None,
        svc.settings.max_wait_seconds,
    )
    if found is None:
        raise unavailable("read_model", "the tournament's read model is being built")
    return found


@blp.route("", methods=["POST"])
@openapi.auth("required")
@blp.arguments(TournamentIn(), example={"name": "Winter Cup", "game": "nauticus", "table_size": 4, "rounds": 3})
@blp.response(201, TournamentOut)
@blp.alt_response(401, schema=ErrorOut, description="token_required")
@blp.alt_response(403, schema=ErrorOut, description="organiser_key_required, invalid_token")
@blp.alt_response(422, schema=ErrorOut, description="unknown_game, invalid_tournament, invalid_clock")
def create_tournament(body: dict[str, Any]) -> dict[str, Any]:
    """Create a tournament (an organiser's key, or the operator): its seed is
    committed now and revealed when it finishes."""
    by = _organiser_or_operator()
    svc = services()
    sizes = body["table_sizes"]
    command = CreateTournament(
        name=body["name"],
        game=body["game"],
        table_size=body["table_size"],
        by=by,
        format=body["format"],
        rounds=body["rounds"],
        table_sizes=tuple(sizes) if sizes is not None else None,
        clock=body["clock"],
        rated=body["rated"],
        points=body["points"],
        late_until_round=body["late_until_round"],
        bye_bot=body["bye_bot"],
    )
    # TRN-080: the bye bot must exist (``make bots``); an unknown game is decide's to refuse.
    bot = body["bye_bot"]
    if bot is not None and body["game"] in registry.registered() and not svc.house_bots.of(body["game"], bot["level"]):
        raise ApiError(
            422,
            "invalid_tournament",
            f"'bye_bot': no house bot of level {bot['level']} plays {body['game']} here (GET /v1/bots).",
            {"field": "bye_bot"},
        )
    return _answer(svc.tournaments.create(command))


@blp.route("/<uuid:tournament_id>/players", methods=["POST"])
@openapi.auth("required")
@blp.arguments(RegisterIn(), example={"handles": ["ann", "bob"]})
@blp.response(200, TournamentOut)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="not_your_tournament, player_key_required")
@blp.alt_response(404, schema=ErrorOut, description="tournament_not_found, account_not_found")
@blp.alt_response(409, schema=ErrorOut, description="already_registered, registration_closed")
@blp.alt_response(422, schema=ErrorOut, description="invalid_handle, tournament_full")
def register_players(body: dict[str, Any], tournament_id: Any) -> dict[str, Any]:
    """Register players while it is registering, or late into a running Swiss until
    round ``late_until_round`` is paired: the organiser (or the operator) with
    ``{"handles": [...]}`` (player accounts), a player's key with ``{}``."""
    svc = services()
    tid = str(tournament_id)
    handles = body.get("handles")
    if handles is None:
        caller = require_account()
        if caller.is_organiser or caller.account is None:
            raise ApiError(
                403, "player_key_required", "Only a player's key registers itself; organisers send 'handles'."
            )
        command = RegisterPlayers((caller.account.handle,), by=caller.account.handle)
    else:
        caller = principal()
        if caller.kind == identity.NOBODY:
            raise ApiError(401, "key_required", "Send the organiser's key as 'Authorization: Bearer <key>'.")
        if not _organises(tid):
            raise ApiError(403, "not_your_tournament", _NOT_YOURS)
        # Players by their accounts' own spelling (404 account_not_found names the others).
        accounts = svc.accounts.players(handles)
        return invite_players(
            tid, accounts, caller, RegisterPlayers(tuple(a.handle for a in accounts), by=caller.handle)
        )
    loaded, _ = svc.tournaments.execute(tid, command, by=command.by)
    return _answer(loaded)


def invite_players(tid: str, accounts: list[Any], caller: Any, command: RegisterPlayers) -> dict[str, Any]:
    """An organiser's registration by handles invites (docs/API.md, "Consent"): each
    account is registered when it accepts with its own key.  Refused as the
    registration itself would be (closed, already registered, full); the answer is the
    tournament as it stands, with the invitations made."""
    svc = services()
    loaded = svc.tournaments.check(tid, command)
    made, registered = svc.invitations.invite_to_tournament(
        tid, accounts, caller.handle if caller.is_organiser else "operator"
    )
    for invitation in made:
        announce_invitation(invitation["player"], {"id": invitation["id"], "kind": "tournament", "tournament_id": tid})
    if registered:  # house bots need no invitation: they are registered now
        loaded = svc.tournaments.load(tid)
    return _answer(loaded) | {"invitations": made}


@blp.route("/<uuid:tournament_id>/start", methods=["POST"])
@openapi.auth("required")
@blp.response(200, TournamentOut)
@blp.alt_response(401, schema=ErrorOut, description="token_required")
@blp.alt_response(403, schema=ErrorOut, description="not_your_tournament")
@blp.alt_response(404, schema=ErrorOut, description="tournament_not_found")
@blp.alt_response(409, schema=ErrorOut, description="already_started")
@blp.alt_response(422, schema=ErrorOut, description="field_too_small, field_too_large")
def start_tournament(tournament_id: Any) -> dict[str, Any]:
    """Close registration, draw the lot and pair round 1 (the organiser who
    created it, or the operator).  The worker starts the tables' games; each
    later round pairs and starts itself when the last table of the round ends."""
    tid = str(tournament_id)
    caller = principal()
    if caller.kind == identity.NOBODY:
        raise ApiError(401, "token_required", "Send the organiser's key as 'Authorization: Bearer <key>'.")
    if not _organises(tid):
        raise ApiError(403, "not_your_tournament", _NOT_YOURS)
    loaded, _ = services().tournaments.execute(tid, StartTournament(by=caller.handle), by=caller.handle)
    return _answer(loaded)


@blp.route("/<uuid:tournament_id>/withdraw", methods=["POST"])
@openapi.auth("required")
@blp.arguments(WithdrawIn(), example={"player": "ann", "reason": "No-show at round 1."})
@blp.response(200, TournamentOut)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="not_your_tournament, player_key_required")
@blp.alt_response(404, schema=ErrorOut, description="tournament_not_found, not_registered")
@blp.alt_response(409, schema=ErrorOut, description="already_withdrawn, tournament_not_running")
@blp.alt_response(422, schema=ErrorOut, description="invalid_reason, field_too_small")
def withdraw(body: dict[str, Any], tournament_id: Any) -> dict[str, Any]:
    """Withdraw a player from the next round's pairing on (its games already paired
    go on, and its results stay in the standings, marked withdrawn): a player's key
    with ``{}`` withdraws itself; the organiser (or the operator) withdraws anyone
    with ``{"player": ..., "reason": ...}``."""
    svc = services()
    tid = str(tournament_id)
    player = body.get("player")
    caller = principal()
    if player is not None and caller.account is not None and not caller.is_organiser:
        if identity.handle_key(player) != identity.handle_key(caller.account.handle):
            raise ApiError(403, "not_your_tournament", _ONLY_ITSELF)
        player = None  # a player naming itself: as with {}
    if player is None:
        caller = require_account()
        if caller.is_organiser or caller.account is None:
            raise ApiError(
                403, "player_key_required", "Only a player's key withdraws itself; organisers send 'player'."
            )
        command = WithdrawPlayer(caller.account.handle, by=caller.account.handle, reason=body.get("reason"))
    else:
        if caller.kind == identity.NOBODY:
            raise ApiError(401, "key_required", "Send the organiser's key as 'Authorization: Bearer <key>'.")
        if not _organises(tid):
            raise ApiError(403, "not_your_tournament", _NOT_YOURS)
        command = WithdrawPlayer(player, by=caller.handle, reason=body.get("reason"))
    loaded, _ = svc.tournaments.execute(tid, command, by=command.by)
    return _answer(loaded)


@blp.route("/<uuid:tournament_id>/abort", methods=["POST"])
@openapi.auth("required")
@blp.arguments(TournamentAbortIn(), example={"reason": "The club night was cancelled."})
@blp.response(200, TournamentOut)
@blp.alt_response(401, schema=ErrorOut, description="token_required")
@blp.alt_response(403, schema=ErrorOut, description="not_your_tournament")
@blp.alt_response(404, schema=ErrorOut, description="tournament_not_found")
@blp.alt_response(409, schema=ErrorOut, description="tournament_not_running")
@blp.alt_response(422, schema=ErrorOut, description="invalid_reason")
def abort_tournament(body: dict[str, Any], tournament_id: Any) -> dict[str, Any]:
    """Abort the tournament for good (the organiser who created it, or the operator):
    no further round is paired, the standings freeze after the last complete round,
    the seed is revealed, and the running games of the round are aborted."""
    svc = services()
    tid = str(tournament_id)
    caller = principal()
    if caller.kind == identity.NOBODY:
        raise ApiError(401, "token_required", "Send the organiser's key as 'Authorization: Bearer <key>'.")
    if not _organises(tid):
        raise ApiError(403, "not_your_tournament", _NOT_YOURS)
    command = AbortTournament(body["reason"], by=caller.handle)
    loaded, _ = svc.tournaments.execute(tid, command, by=caller.handle)
    # At most one round's tables (128): each an append.  The worker's advance, which
    # the abort's commit enqueues, aborts any this request does not reach.
    svc.rounds.abort_games(tid, loaded.state)
    return _answer(loaded)


@blp.route("/<uuid:tournament_id>", methods=["GET"])
@blp.response(200, TournamentOut)
@blp.alt_response(404, schema=ErrorOut, description="tournament_not_found")
def get_tournament(tournament_id: Any) -> dict[str, Any]:
    """The tournament: its terms, status, current round and players."""
    return _read(str(tournament_id), "tournament")


@blp.route("/<uuid:tournament_id>/rounds/<int:n>", methods=["GET"])
@blp.response(200, RoundOut)
@blp.alt_response(404, schema=ErrorOut, description="tournament_not_found, round_not_found")
def get_round(tournament_id: Any, n: int) -> dict[str, Any]:
    """One round: its tables in order, each with its game, players in seat
    order, status and result, and its byes."""
    tid = str(tournament_id)
    summary = _read(tid, "tournament")
    found = views.tournament_field(services().redis, tid, f"round:{n}") if 1 <= n <= summary["round"] else None
    if found is None:
        raise ApiError(404, "round_not_found", f"Round {n} has not been paired.", {"rounds_paired": summary["round"]})
    return found


@blp.route("/<uuid:tournament_id>/standings", methods=["GET"])
@blp.arguments(StandingsArgs(), location="query")
@blp.response(200, StandingsOut)
@blp.alt_response(404, schema=ErrorOut, description="tournament_not_found, round_not_found")
def get_standings(args: dict[str, Any], tournament_id: Any) -> dict[str, Any]:
    """The standings after the last round paired (as far as it has been
    played), or after ``?round=n``: points, tie-breaks, games, byes."""
    tid = str(tournament_id)
    latest = _read(tid, "standings")
    n = args.get("round")
    if n is None or n == latest["round"]:
        return latest
    found = views.tournament_field(services().redis, tid, f"standings:{n}") if n >= 1 else None
    if found is None:
        raise ApiError(404, "round_not_found", f"Round {n} has not been paired.", {"rounds_paired": latest["round"]})
    return found


@blp.route("/<uuid:tournament_id>/audit", methods=["GET"])
@openapi.auth("optional")
@blp.response(200, TournamentAuditOut)
@blp.alt_response(404, schema=ErrorOut, description="tournament_not_found")
def audit(tournament_id: Any) -> dict[str, Any]:
    """Re-decide the stream: the seed, every pairing, the standings, every
    table's game (its own audit, its players in seat order, its result).
    Always 200: a failed audit is a result.  While it runs, the pairings are
    re-made only for its organiser (or the operator), with the kept seed."""
    svc = services()
    tid = str(tournament_id)
    with limits.expensive():
        caller = principal()
        return audit_tournament(
            svc.tournaments.store,
            svc.store,
            tid,
            with_seed=caller.kind != identity.NOBODY and _organises(tid),
            kept=svc.kept_audits,
            analyses=svc.analyses,
            caller=(caller.handle if caller.account is not None else None, limits.client_address()),
        )


def _over(tid: str, summary: dict[str, Any]) -> bool:
    """Finished, or aborted with every game of its last round ended: nothing in its
    bundle is hidden any more."""
    if summary["status"] == "finished":
        return True
    if summary["status"] != "aborted" or not summary["round"]:
        return summary["status"] == "aborted"
    rnd = views.tournament_field(services().redis, tid, f"round:{summary['round']}") or {"tables": []}
    started = [t["game_id"] for t in rnd["tables"] if t["game_id"] is not None and t["status"] != "finished"]
    return len(services().tournaments.store.finished_games(started)) == len(started)


@blp.route("/<uuid:tournament_id>/export", methods=["GET"])
@openapi.auth("optional")
@blp.response(200, description="The tournament bundle; `service/audit/verify.py` checks it offline.")
@blp.alt_response(401, schema=ErrorOut, description="Running, and no organiser credential")
@blp.alt_response(403, schema=ErrorOut, description="Running, and not its organiser")
@blp.alt_response(404, schema=ErrorOut, description="tournament_not_found")
def export(tournament_id: Any) -> Response:
    """One JSON file: the tournament's stream, every table's game bundle, and
    a manifest of their hashes.  Anyone once it has finished (or was aborted and
    its games have ended); its organiser (or the operator) while it runs (its
    games' hidden information)."""
    svc = services()
    tid = str(tournament_id)
    if not _over(tid, _read(tid, "tournament")):
        caller = principal()
        if caller.kind == identity.NOBODY:
            raise ApiError(401, "token_required", "While it runs, a tournament's export needs its organiser's key.")
        if not _organises(tid):
            raise ApiError(403, "not_your_tournament", _NOT_YOURS)
    with limits.expensive():
        built = tournament_bundle.build(svc.tournaments.store, svc.store, tid)
    resp = Response(tournament_bundle.dumps(built), mimetype="application/json")
    resp.headers["Content-Disposition"] = f'attachment; filename="tournament-{tid}.json"'
    return resp
