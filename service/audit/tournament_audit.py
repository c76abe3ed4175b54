"""A tournament's audit from the store: its stream re-decided by the pure audit
(``service.tournaments.audit``) with every table's game's own audited facts.

For each game a table played: the game's own audit (``service.audit.checks``:
hash chain, seed, re-decide; a finished game's kept passing report is reused)
must pass, and its facts (players in seat order, the result it ended with)
feed the tournament audit's ``games`` check, which compares them with what
the tournament recorded.
"""

from __future__ import annotations

from typing import Any

from service.adapters.analyses import Analyses
from service.adapters.eventstore import EventStore
from service.adapters.kept_audits import KeptAudits
from service.adapters.tournament_store import TournamentStore
from service.audit.checks import audit_events
from service.bots import analysis
from service.domain.errors import tournament_not_found
from service.domain.pipeline import GAME_CREATED, GAME_FINISHED, shown_result
from service.tournaments import audit as pure_audit

#: Stream events as the pure audit reads them.
Events = list[dict[str, Any]]


def game_ids(events: Events) -> list[str]:
    """Every game a table of the stream played, in the order they started."""
    return [e["data"]["game_id"] for e in events if e["type"] == "TableStarted"]


def game_facts(game_events: list[Any]) -> dict[str, Any]:
    """What the tournament audit compares of one game: its players in seat order,
    its game and the result it ended with (``None`` while it runs)."""
    created = game_events[0].data if game_events and game_events[0].type == GAME_CREATED else {}
    closing = next((e for e in game_events if e.type == GAME_FINISHED), None)
    return {
        "game": created.get("game"),
        "players": list(created.get("players") or []),
        "result": shown_result(closing.data["result"]) if closing is not None else None,
    }


def audit_tournament(
    tstore: TournamentStore,
    store: EventStore,
    tournament_id: str,
    *,
    kept: KeptAudits,
    with_seed: bool = False,
    analyses: Analyses | None = None,
    caller: tuple[str | None, str] | None = None,
) -> dict[str, Any]:
    """The audit report: ``{"ok", "complete", "checks": {"stream", "seed",
    "pairings", "standings", "games"}}``.  ``with_seed``: the organiser's (or
    operator's) audit of a running tournament, re-pairing with the seed the
    store keeps (the report never shows it)."""
    if tstore.record(tournament_id) is None:
        raise tournament_not_found()
    events = [{"type": e.type, "data": e.data} for e in tstore.read(tournament_id)]
    seed = tstore.seed(tournament_id) if with_seed else None
    facts: dict[str, dict[str, Any]] = {}
    own: dict[str, dict[str, Any]] = {}
    for gid in game_ids(events):
        stream = store.read(gid)
        facts[gid] = game_facts(stream)
        report = kept.get(gid, stream[-1].seq) if stream else None
        if report is None:
            report = audit_events(gid, stream, store.secrets(gid)[0] if stream else None, projection=False).to_json()
        own[gid] = report
    report = pure_audit.audit(events, seed, games=facts)
    _add_games_own_audits(report, own)
    if analyses is not None and caller is not None and report.get("status") == "finished":
        report["fair_play"] = pure_audit.fair_play(facts, _agreements(analyses, list(facts), caller))
    return report


def _agreements(
    analyses: Analyses, games: list[str], caller: tuple[str | None, str]
) -> dict[str, list[dict[str, int]] | None]:
    """Each game's agreement from its kept analysis; a game not analysed yet is asked for as
    ``GET /v1/games/{id}/analysis`` would ask (counted in the caller's day), until the caller's
    quota or the queue's cap refuses: the rest wait for a later audit."""
    account, address = caller
    out: dict[str, list[dict[str, int]] | None] = {}
    asking = True
    for gid in games:
        kept = analyses.kept(gid, analysis.FORMAT)
        if kept is None and asking:
            asked = analyses.ask(gid, analysis.FORMAT, account=account, address=address)
            kept = asked.result
            asking = asked.outcome in ("done", "pending")
        out[gid] = None if kept is None else list(kept["agreement"])
    return out


def _add_games_own_audits(report: dict[str, Any], own: dict[str, dict[str, Any]]) -> None:
    """Each table's game must pass its own audit too (its chain, seed and re-decide)."""
    check = report["checks"]["games"]
    failed = sorted(gid for gid, r in own.items() if not r.get("ok"))
    check["games_audited"] = len(own)
    for gid in failed:
        check["ok"] = False
        if len(check["problems"]) < pure_audit.MAX_LISTED:
            check["problems"].append({"game_id": gid, "error": "the game's own audit failed"})
    if failed:
        report["ok"] = False
        report["complete"] = False


def repair_dicts(events: Events, seed: bytes) -> dict[str, Any]:
    """The offline verifier's ``pairings`` check (lent by ``python -m service
    verify``): the pure audit's seed, pairings, standings and stream checks."""
    report = pure_audit.audit(events, seed)
    checks = report["checks"]
    failed = [name for name in ("stream", "seed", "pairings", "standings") if checks[name]["ok"] is False]
    if failed:
        first = next(iter(checks[failed[0]].get("problems") or [{}]))
        return {"ok": False, "summary": f"{', '.join(failed)} failed: {first}", "details": checks}
    rounds = checks["pairings"].get("rounds", 0)
    return {
        "ok": True,
        "summary": f"{rounds} round(s) re-paired from the seed and the standings recomputed: all equal",
        "details": checks,
    }
