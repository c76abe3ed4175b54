"""The export bundle: one JSON file holding a game's whole stream, the seed
reveal and the rules version (format: docs/AUDIT.md "The bundle").

The file is plain JSON, written with one event per line so that it can be
read, grepped and diffed by a person; ``service/audit/verify.py`` checks it offline.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from service.audit.verify import BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION
from service.domain.pipeline import GAME_FINISHED
from service.domain.records import GameRecord, StoredEvent


def build(record: GameRecord, events: Sequence[StoredEvent]) -> dict[str, Any]:
    """The bundle of a game.  ``seed`` is the one *revealed in the stream*
    (``None`` while the game runs): the secret seed never leaves otherwise."""
    closing = next((e for e in events if e.type == GAME_FINISHED), None)
    return {
        "format": BUNDLE_FORMAT,
        "format_version": BUNDLE_FORMAT_VERSION,
        "exported_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "game": {
            "id": record.game_id,
            "game": record.game,
            "rules_version": record.rules_version,
            "players": list(record.players),
            "options": dict(record.options),
            "seed_commitment": record.seed_commitment,
            "created_at": record.created_at,
        },
        "status": "finished" if closing is not None else "active",
        "version": events[-1].seq if events else 0,
        "head_hash": events[-1].hash if events else None,
        "seed": closing.data.get("seed") if closing is not None else None,
        "events": [e.to_json() for e in events],
    }


def dumps(bundle: dict[str, Any]) -> str:
    """JSON text with the header first and one event per line."""
    head = {k: v for k, v in bundle.items() if k != "events"}
    body = json.dumps(head, ensure_ascii=False, indent=1)[:-2]  # drop the closing "\n}"
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in bundle["events"]]
    return body + ',\n "events": [\n' + ",\n".join(lines) + "\n ]\n}\n"


def write(path: str, bundle: dict[str, Any]) -> str:
    """Write atomically (temp file + rename); returns ``path``."""
    return write_text(path, dumps(bundle))


def write_text(path: str, text: str) -> str:
    """Write ``text`` to ``path`` atomically (temp file + rename); returns ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return path


def from_bundle_events(game_id: str, events: Sequence[dict[str, Any]]) -> list[StoredEvent]:
    """Bundle (or feed) lines back into :class:`StoredEvent` for re-deciding."""
    return [
        StoredEvent(
            game_id,
            e["seq"],
            e["type"],
            e.get("schema_version", 1),
            e["data"],
            e["meta"],
            e["data_digest"],
            e["meta_digest"],
            e["prev_hash"],
            e["hash"],
        )
        for e in events
    ]
