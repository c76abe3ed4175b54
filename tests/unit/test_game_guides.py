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
