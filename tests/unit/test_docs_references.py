"""The docs name only what exists, and their runnable examples run (docs/DEVELOPING.md,
"House rules": each fact documented in one place, and true).

Every page of docs/ and the README is read: a ``make`` target named in code must be a
target of the Makefile; a repository path in code or a link to a file must exist, and a
link's ``#anchor`` must be a heading of the page it points to; a ``QD_*`` variable must be
one the code reads; an error code given with its status (``403 not_your_game``), or listed
in docs/API.md's error table, must be in ``schemas/error_codes.py``; and every intent
example of the game guides (docs/games/*.md) must be accepted by the game's intent schema.
"""

from __future__ import annotations

import dataclasses
import json
import re
from functools import cache
from pathlib import Path

import pytest
from marshmallow import ValidationError
from support.markdown import code_spans, headings_anchors, links

from schemas.error_codes import CODES, RULE_CODES
from schemas.intents import load_intent, schemas_for
from service.config import Settings, env_name
from service.games import registry

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
#: What a path in a page may start with to be taken for a repository path.
TOP = ("service/", "workers/", "projections/", "schemas/", "scripts/", "devtools/", "tests/", "docs/", "clients/")
TOP_FILES = {"Makefile", "Dockerfile", "compose.yaml", "pyproject.toml"}
#: Characters that make a path a pattern or a placeholder, not one file.
PATTERN = re.compile(r"[<>*{}…]|\.\.\.")


def _rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


@cache
def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"^([a-zA-Z][\w-]*):", text, re.M)}


@cache
def _settings_read() -> set[str]:
    """Every QD_* variable the code reads: the settings' names, and any literal in code."""
    names = {env_name(f.name) for f in dataclasses.fields(Settings)}
    sources = [*ROOT.glob("*/**/*.py"), ROOT / "Makefile", ROOT / "compose.yaml", ROOT / "Dockerfile"]
    sources += [ROOT / ".ci" / "run"]
    for path in sources:
        if path.is_file() and ".venv" not in path.parts and path.name != Path(__file__).name:
            names |= set(re.findall(r"QD_[A-Z0-9_]+", path.read_text(encoding="utf-8", errors="replace")))
    return names


@cache
def _error_codes() -> set[str]:
    """The registry's codes, each game's rule codes, and the rule codes every game
    shares (raised as ``RuleViolation("<code>", ...)`` by the platform's pipeline)."""
    codes = {code for table in CODES.values() for code in table}
    codes |= {code for rules in RULE_CODES.values() for code in rules}
    for path in (ROOT / "service").rglob("*.py"):
        codes |= set(re.findall(r"RuleViolation\(\s*\"([a-z_]+)\"", path.read_text(encoding="utf-8")))
    return codes


def _code_of(page: Path) -> list[str]:
    return code_spans(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_make_targets_named_in_a_page_exist(page):
    targets = _make_targets()
    named = {m for span in _code_of(page) for m in re.findall(r"(?:^|[\s;&|(`])make ([a-z][\w-]*)", span)}
    assert not named - targets, f"{_rel(page)} names make targets the Makefile lacks: {sorted(named - targets)}"


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_repository_paths_named_in_a_page_exist(page):
    missing = []
    for span in _code_of(page):
        for token in re.split(r"[\s`'\"(),;=]+", span):
            path = token.rstrip(".:")
            path = re.sub(r"(\.py)(:\S*)$", r"\1", path)  # scripts/x.py:func
            if PATTERN.search(path) or not (path.startswith(TOP) or path in TOP_FILES):
                continue
            if not (ROOT / path).exists():
                missing.append(path)
    assert not missing, f"{_rel(page)} names paths that do not exist: {sorted(set(missing))}"


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_links_to_files_and_their_headings_exist(page):
    broken = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists() or (
            anchor and dest.suffix == ".md" and anchor not in headings_anchors(dest.read_text(encoding="utf-8"))
        ):
            broken.append(target)
    assert not broken, f"{_rel(page)} links to files or headings that do not exist: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_settings_named_in_a_page_are_read_by_the_code(page):
    read = _settings_read()
    unknown = []
    for name in set(re.findall(r"QD_[A-Z0-9_]*[A-Z0-9]_?", page.read_text(encoding="utf-8"))):
        if name.endswith("_"):  # a family: QD_LIMIT_<BUDGET>
            if not any(known.startswith(name) for known in read):
                unknown.append(name)
        elif name not in read:
            unknown.append(name)
    assert not unknown, f"{_rel(page)} names settings nothing reads: {sorted(unknown)}"


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_error_codes_named_with_their_status_exist(page):
    codes = _error_codes()
    named = set()
    for span in _code_of(page):
        named |= set(re.findall(r"^[1-5]\d\d ([a-z][a-z0-9_]*[a-z0-9])$", span.strip()))
    assert not named - codes, f"{_rel(page)} names error codes the service never answers: {sorted(named - codes)}"


def test_the_error_table_of_the_api_lists_only_codes_the_service_answers():
    rows = (ROOT / "docs" / "API.md").read_text(encoding="utf-8").splitlines()
    named = set()
    for row in rows:
        m = re.match(r"\|\s*([1-5]\d\d)\s*\|(.*)\|\s*$", row)
        if m:
            cells = m.group(2)
            while re.search(r"\([^()]*\)", cells):  # asides name fields and pages, not codes
                cells = re.sub(r"\([^()]*\)", "", cells)
            named |= set(re.findall(r"`([a-z][a-z0-9_]*)`", cells))
    assert named, "docs/API.md has no error table"
    assert not named - _error_codes(), sorted(named - _error_codes())


GUIDES = sorted((ROOT / "docs" / "games").glob("*.md"))


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.stem)
def test_every_intent_example_of_a_game_guide_is_accepted(guide):
    game = guide.stem
    assert game in registry.names(), f"{guide.name} is named after no game"
    kinds = set(schemas_for(game))
    examples = []
    for span in _code_of(guide):
        try:
            value = json.loads(span)
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("type") in kinds:
            examples.append(value)
    assert {e["type"] for e in examples} == kinds, (
        f"intents without an example: {sorted(kinds - {e['type'] for e in examples})}"
    )
    refused = []
    for example in examples:
        try:
            load_intent(game, example)
        except ValidationError as exc:
            refused.append((example, exc.messages))
    assert not refused, f"{guide.name}: examples the intent schema refuses: {refused}"
