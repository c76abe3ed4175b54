"""Every checklist ID of §1 of each game's clarifications is named by some test.

For each engine in ``service.games.registry.names()``, the IDs of §1 ("Rule
checklist") of ``shared/rules/<api name>.clarifications.md`` must each appear in at
least one file under ``tests/`` other than this one (in a test name or docstring).
A missing clarifications file is a failure, never a skip.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from service.games import registry

REPO = Path(__file__).resolve().parents[2]
RULES = REPO.parent / "shared" / "rules"
TESTS = REPO / "tests"
THIS = Path(__file__).resolve()

#: A checklist item: a list line starting with an ID such as ``NIN-033`` or ``WON-130``.
ITEM = re.compile(r"^\s*[-*]\s+\**([A-Z]{2,4}-\d{3})\b")
SECTION_1 = re.compile(r"^##\s+1\.")
NEXT_SECTION = re.compile(r"^##\s+\d+\.")


def engine_names() -> list[str]:
    """Every registered engine; one that fails to import fails the suite."""
    return registry.names()


def checklist_ids(path: Path) -> list[str]:
    """The IDs of §1 of a clarifications file, in order."""
    ids: list[str] = []
    inside = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if SECTION_1.match(line):
            inside = True
            continue
        if inside and NEXT_SECTION.match(line):
            break
        if inside:
            m = ITEM.match(line)
            if m:
                ids.append(m.group(1))
    return ids


def _test_corpus() -> str:
    parts = []
    for path in sorted(TESTS.rglob("*")):
        if path.is_file() and path.resolve() != THIS and path.suffix in (".py", ".md", ".txt", ".json"):
            parts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


def test_registry_is_not_empty() -> None:
    assert engine_names(), "no engine is registered and importable"


@pytest.mark.parametrize("game", engine_names())
def test_every_checklist_id_is_tested(game: str) -> None:
    path = RULES / f"{game}.clarifications.md"
    assert path.is_file(), f"clarifications for {game} not found at {path}; the checklist cannot be verified"
    ids = checklist_ids(path)
    assert ids, f"no checklist IDs found in §1 of {path}"
    corpus = _test_corpus()
    missing = [i for i in ids if not re.search(rf"\b{re.escape(i)}\b", corpus)]
    assert not missing, (
        f"{game}: {len(missing)} of {len(ids)} checklist IDs of §1 are named by no test under tests/: "
        + ", ".join(missing)
    )


def test_parser_reads_the_nautilus_industries_checklist() -> None:
    """The parser finds §1 only (57 IDs from NIN-001 to NIN-126, none from §2)."""
    path = RULES / "nautilus-industries.clarifications.md"
    assert path.is_file(), f"missing {path}"
    ids = checklist_ids(path)
    assert ids[0] == "NIN-001" and ids[-1] == "NIN-126"
    assert len(ids) == len(set(ids)) == 57
    assert not any(i.startswith(("NIN-D", "NIN-A")) for i in ids)
