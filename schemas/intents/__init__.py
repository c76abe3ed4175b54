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

from service.domain import pipeline
from service.domain.errors import Refused
from service.games import registry
from service.games.base import Command, RuleViolation


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


def parse_intent(game: str, data: Any) -> Command:
    """An intent's JSON as the command the service layer decides: the platform's
    ``resign`` or one of ``game``'s commands; ``Refused("invalid_intent")`` (422)
    with the schema's messages otherwise.  The edges (HTTP, the house bots) parse;
    the service layer takes commands."""
    try:
        command = pipeline.platform_command(data)
    except RuleViolation as rv:
        raise Refused(rv.code, rv.message, rv.details) from None
    if command is not None and not isinstance(command, pipeline.Resign):
        raise Refused("invalid_intent", "Of the platform's intents only 'resign' may be posted.")
    try:
        return command or load_intent(game, data)
    except ValidationError as exc:
        raise Refused(
            "invalid_intent", "The intent does not match this game's schema.", {"fields": exc.messages}
        ) from None
