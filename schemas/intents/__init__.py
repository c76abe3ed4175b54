"""Intent schemas, one module per game.

Each game module exposes ``SCHEMAS: dict[str, type[Schema]]`` mapping an
intent's wire ``type`` to a schema whose ``load`` returns the engine's
command object.  Unknown fields are refused (marshmallow's RAISE default).
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from marshmallow import Schema, ValidationError

from service.games.base import Command

_MODULES = {
    "nautilus-industries": "schemas.intents.nautilus_industries",
    "nauticus": "schemas.intents.nauticus",
    "waters-of-nereus": "schemas.intents.waters_of_nereus",
}


@cache
def schemas_for(game: str) -> dict[str, Schema]:
    module = importlib.import_module(_MODULES[game])
    return {name: cls() for name, cls in module.SCHEMAS.items()}


def load_intent(game: str, data: Any) -> Command:
    """Validate one intent's JSON and build its command, or raise
    ``ValidationError`` with a message per offending field."""
    if not isinstance(data, dict):
        raise ValidationError({"intent": ["must be a JSON object"]})
    kind = data.get("type")
    table = schemas_for(game)
    if not isinstance(kind, str) or kind not in table:
        raise ValidationError({"type": [f"unknown intent type; this game knows: {', '.join(sorted(table))}"]})
    body = {k: v for k, v in data.items() if k != "type"}
    return table[kind].load(body)
