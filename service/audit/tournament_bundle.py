"""The tournament export: one JSON file holding the tournament's stream, every
table's game bundle (``service.audit.bundle``) and a manifest of their hashes
(format: docs/TOURNAMENTS.md "Export"); ``service/audit/verify.py`` checks it
offline, pairings included when Quarterdeck lends it the re-decider.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from service.adapters.eventstore import EventStore
from service.adapters.tournament_store import TournamentStore
from service.audit import bundle as game_bundle
from service.audit.verify import TOURNAMENT_FORMAT, TOURNAMENT_FORMAT_VERSION, manifest_entry
from service.domain.errors import game_not_found, tournament_not_found


def build(tstore: TournamentStore, store: EventStore, tournament_id: str) -> dict[str, Any]:
    """The bundle.  ``seed`` is the one the stream revealed (``None`` while it
    runs): the secret seed never leaves otherwise."""
    record = tstore.record(tournament_id)
    if record is None:
        raise tournament_not_found()
    events = [e.to_json() for e in tstore.read(tournament_id)]
    games = []
    for e in events:
        if e["type"] != "TableStarted":
            continue
        gid = e["data"]["game_id"]
        game = store.game(gid)
        if game is None:  # pragma: no cover - the link is written with the game
            raise game_not_found()
        games.append(game_bundle.build(game, store.read(gid)))
    closing = next((e for e in events if e["type"] in ("TournamentFinished", "TournamentAborted")), None)
    aborted = closing is not None and closing["type"] == "TournamentAborted"
    return {
        "format": TOURNAMENT_FORMAT,
        "format_version": TOURNAMENT_FORMAT_VERSION,
        "exported_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "tournament": {
            "id": record.tournament_id,
            "name": record.name,
            "game": record.game,
            "organiser": record.organiser,
            "seed_commitment": record.seed_commitment,
            "created_at": record.created_at,
        },
        "status": "aborted" if aborted else "finished" if closing is not None else "running",
        # TRN-070: who aborted it, why, and the round its standings froze after.
        "aborted": {k: closing["data"][k] for k in ("by", "reason", "round")} if aborted and closing else None,
        "version": events[-1]["seq"] if events else 0,
        "head_hash": events[-1]["hash"] if events else None,
        "seed": closing["data"]["seed"] if closing is not None else None,
        "manifest": {
            "tournament": manifest_entry(record.tournament_id, events),
            "games": [manifest_entry(g["game"]["id"], g["events"]) for g in games],
        },
        "events": events,
        "games": games,
    }


def dumps(bundle: dict[str, Any]) -> str:
    """JSON text: the header first, one event per line, each game as its own bundle prints."""
    head = {k: v for k, v in bundle.items() if k not in ("events", "games")}
    body = json.dumps(head, ensure_ascii=False, indent=1)[:-2]
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in bundle["events"]]
    games = [game_bundle.dumps(g).rstrip("\n") for g in bundle["games"]]
    return body + ',\n "events": [\n' + ",\n".join(lines) + '\n ],\n "games": [\n' + ",\n".join(games) + "\n ]\n}\n"


def write(path: str, bundle: dict[str, Any]) -> str:
    """Write atomically (temp file + rename); returns ``path``."""
    return game_bundle.write_text(path, dumps(bundle))
