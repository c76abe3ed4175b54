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

from service.games import registry
from service.games.base import Command


@cache
def schemas_for(game: str) -> dict[str, Schema]:
    """The intent schemas of ``game``: ``schemas/intents/<package>.py``, named
    like the engine's package (the registry is the one list of games)."""
    package = registry.package(game).rsplit(".", 1)[-1]
    module = importlib.import_module(f"schemas.intents.{package}")
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
