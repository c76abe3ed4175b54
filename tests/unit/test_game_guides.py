"""The client guides (``docs/games/<game>.md``) are for client authors and
cannot drift: their generated sections (intents, events and what other seats
see of them, view, result, a worked start) are what ``devtools/guides.py``
makes from the published schemas and real games, and they name no engine
internals (modules, tests)."""

from __future__ import annotations

import re

import pytest

from devtools import guides
from service.games import registry


@pytest.mark.parametrize("game", registry.registered())
def test_the_generated_sections_are_current(game):
    text = guides.guide_path(game).read_text()
    assert guides.render(text, guides.sections(game)) == text, "run: python -m devtools.guides --write"


@pytest.mark.parametrize("game", registry.registered())
def test_a_guide_speaks_to_client_authors(game):
    text = guides.guide_path(game).read_text()
    assert f"](../rules/{game}.md)" in text, "link the rules reference"
    assert "](../BOTS.md)" in text
    internals = re.findall(r"(?<![\w/])(?:service|tests|projections|workers|schemas)/\w|\b\w+\.py\b", text)
    assert internals == [], f"engine internals in the client guide: {internals}"
    for intent in registry.get(game).commands:
        assert f"| `{intent}` |" in text, f"intent {intent} is not documented"


@pytest.mark.parametrize("game", registry.registered())
def test_every_example_body_in_a_guide_is_accepted_by_its_schema(game):
    """A guide's intents table gives a body a client can post as it is:
    docs/games/waters-of-nereus.md's ``discard_science`` and
    ``exchange_treasures`` examples lacked their required fields (422)."""
    import json

    from marshmallow import ValidationError

    from schemas.intents import load_intent
    from schemas.openapi import platform_intents

    text = guides.guide_path(game).read_text()
    examples = re.findall(r"^\| `(\w+)` \|.*\| `(\{.*\})` \|$", text, re.MULTILINE)
    assert {wire for wire, _ in examples} >= set(registry.get(game).commands)
    refused = {}
    for wire, body in examples:
        if wire in platform_intents():
            continue
        try:
            load_intent(game, json.loads(body))
        except ValidationError as exc:
            refused[wire] = exc.messages
    assert refused == {}
