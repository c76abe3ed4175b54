"""Every rule of each game's reference is findable by its ID.

``docs/rules/<api name>.md`` is the repo's own rules reference: §1 ("Rule
checklist") lists every rule with its ID, the later sections the data values and
the decisions we took, each with its ID too.  Two checks per engine:

* each §1 ID is named by at least one file under ``tests/`` other than this one
  (a test name or docstring says which rule it checks);
* every ID of the whole reference appears, written out on its own (never as a
  range such as ``NAU-010..018``), in the engine's package ``service/games/<pkg>``,
  where the rule is implemented or the value defined.

A missing reference is a failure, never a skip.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from service.games import registry

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "docs" / "rules"
TESTS = REPO / "tests"
GAMES = REPO / "service" / "games"
THIS = Path(__file__).resolve()

#: A reference item: a list line starting with an ID such as ``NIN-033``, ``WON-130``,
#: ``NAU-A20``, ``NIN-D04`` or ``WON-Q01`` (optionally in bold).
ITEM = re.compile(r"^\s*[-*]\s+\**([A-Z]{2,4}-[A-Z]?\d{2,3})\b")
SECTION_1 = re.compile(r"^##\s+1\.")
NEXT_SECTION = re.compile(r"^##\s+\d+\.")


def engine_names() -> list[str]:
    """Every registered engine; one that fails to import fails the suite."""
    return registry.names()


def reference(game: str) -> Path:
    path = RULES / f"{game}.md"
    assert path.is_file(), f"the rules reference of {game} is missing: {path}"
    return path


def checklist_ids(path: Path) -> list[str]:
    """The IDs of §1 of a rules reference, in order."""
    ids: list[str] = []
    inside = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if SECTION_1.match(line):
            inside = True
            continue
        if inside and NEXT_SECTION.match(line):
            break
        if inside and (m := ITEM.match(line)):
            ids.append(m.group(1))
    return ids


def all_ids(path: Path) -> list[str]:
    """Every ID the reference lists, in any section."""
    return [m.group(1) for line in path.read_text(encoding="utf-8").splitlines() if (m := ITEM.match(line))]


def _corpus(root: Path, exclude: Path | None = None) -> str:
    parts = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.resolve() != exclude and path.suffix in (".py", ".md", ".txt", ".json"):
            parts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


def _missing(ids: list[str], corpus: str) -> list[str]:
    return [i for i in ids if not re.search(rf"(?<![\w-]){re.escape(i)}(?![\w.])", corpus)]


def test_registry_is_not_empty() -> None:
    assert engine_names(), "no engine is registered and importable"


@pytest.mark.parametrize("game", engine_names())
def test_every_checklist_id_is_tested(game: str) -> None:
    ids = checklist_ids(reference(game))
    assert ids, f"no checklist IDs found in §1 of {reference(game)}"
    missing = _missing(ids, _corpus(TESTS, exclude=THIS))
    assert not missing, (
        f"{game}: {len(missing)} of {len(ids)} checklist IDs of §1 are named by no test under tests/: "
        + ", ".join(missing)
    )


@pytest.mark.parametrize("game", engine_names())
def test_every_id_is_in_the_engine(game: str) -> None:
    """Grep finds every rule and every data decision where it is implemented."""
    ids = all_ids(reference(game))
    package = GAMES / game.replace("-", "_")
    assert package.is_dir(), package
    code = "\n".join(p.read_text(encoding="utf-8") for p in sorted(package.glob("*.py")))
    missing = _missing(ids, code)
    assert not missing, (
        f"{game}: {len(missing)} of {len(ids)} IDs of docs/rules/{game}.md are written nowhere in "
        f"{package.relative_to(REPO)}: " + ", ".join(missing)
    )


@pytest.mark.parametrize("game", engine_names())
def test_ids_are_listed_once(game: str) -> None:
    ids = all_ids(reference(game))
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    assert not dupes, f"{game}: listed more than once in docs/rules/{game}.md: {dupes}"


def test_parser_reads_the_nautilus_industries_checklist() -> None:
    """The parser finds §1 only (57 IDs from NIN-001 to NIN-126, none from later sections)."""
    ids = checklist_ids(reference("nautilus-industries"))
    assert ids[0] == "NIN-001" and ids[-1] == "NIN-126"
    assert len(ids) == len(set(ids)) == 57
    assert not any(i.startswith(("NIN-D", "NIN-A", "NIN-Q")) for i in ids)
