"""The tournament core is pure and every rule of docs/TOURNAMENTS.md is findable (TRN-001).

* ``service/tournaments/**`` imports no infrastructure (Flask, psycopg, Redis, RQ, ...), no
  clock and no global random, and of ours only the games (the RNG, the registry), the
  domain errors, handles and clocks of ``service.domain`` and itself;
* every ``TRN-`` ID of the rule checklist is named in ``service/tournaments/`` and in the
  tests of tournaments, written out on its own.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "service" / "tournaments"
DOC = REPO / "docs" / "TOURNAMENTS.md"
TESTS = [
    *sorted((REPO / "tests" / "unit" / "tournaments").glob("*.py")),
    REPO / "tests" / "property" / "test_pairing.py",
]
INFRASTRUCTURE = {"flask", "flask_smorest", "werkzeug", "psycopg", "psycopg_pool", "redis", "rq", "gunicorn"}
NO_CLOCK_NO_RANDOM = {"random", "time", "datetime", "secrets", "os", "uuid"}
ALLOWED_OURS = (
    "service.games",
    "service.tournaments",
    "service.domain.errors",
    "service.domain.identity",
    "service.domain.clocks",
)
ITEM = re.compile(r"^\s*[-*]\s+\**(TRN-\d{3})\b")


def imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: relative import"
            out.update(f"{node.module}.{a.name}" for a in node.names)  # a module or a name in one
    return out


MODULES = sorted(PACKAGE.glob("*.py"))


def test_trn_001_the_checker_sees_the_package():
    assert {p.stem for p in MODULES} >= {"events", "commands", "evolve", "rules", "pairing", "standings", "audit"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_trn_001_the_tournament_core_imports_no_infrastructure(path):
    found = imports(path)
    tops = {m.split(".")[0] for m in found}
    assert not tops & INFRASTRUCTURE, tops & INFRASTRUCTURE
    assert not tops & NO_CLOCK_NO_RANDOM, "no clock and no global random in the tournament core"
    ours = {m for m in found if m.split(".")[0] in {"service", "workers", "projections", "schemas", "devtools"}}
    assert all(m.startswith(ALLOWED_OURS) for m in ours), ours


def checklist() -> list[str]:
    ids = [m.group(1) for line in DOC.read_text(encoding="utf-8").splitlines() if (m := ITEM.match(line))]
    assert len(ids) >= 25, "the rule checklist of docs/TOURNAMENTS.md was not found"
    return ids


def test_trn_001_every_rule_is_implemented_and_tested_where_it_says():
    code = "\n".join(p.read_text(encoding="utf-8") for p in MODULES)
    tests = "\n".join(p.read_text(encoding="utf-8").replace("_", "-").upper() for p in TESTS)
    missing_code = [i for i in checklist() if not re.search(rf"\b{i}\b", code)]
    missing_tests = [i for i in checklist() if not re.search(rf"\b{i}\b", tests)]
    assert not missing_code, f"named nowhere in service/tournaments: {missing_code}"
    assert not missing_tests, f"named by no test: {missing_tests}"
