"""The layout's rules, checked on the source (``docs/DEVELOPING.md``).

* No import cycles among our modules (imports inside functions count too).
* The rules engines import nothing of ours but ``service.games`` and no
  infrastructure; the house bots (``service.bots``) nothing of ours but
  ``service.games`` and themselves, no infrastructure, no clock and no global
  random (docs/BOTS.md, "House bots"); the write side (``service.domain``, ``service.adapters``,
  ``service.service_layer``) imports no Flask, RQ or
  Redis and nothing of the HTTP layer, the workers or the projections.
* Nothing of the product points outside the repo (the working material
  beside our checkout is not the product).
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("service", "workers", "projections", "schemas", "devtools")
INFRASTRUCTURE = ("flask", "flask_smorest", "werkzeug", "psycopg", "psycopg_pool", "redis", "rq", "gunicorn")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def imports_of(name: str) -> set[str]:
    """Every module ``name`` imports, at any depth of its code, resolved to
    our modules where they are ours (``from pkg import mod`` is ``pkg.mod``)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    is_package = MODULES[name].name == "__init__.py"
    base = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                module = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                module = node.module or ""
            for alias in node.names:
                full = f"{module}.{alias.name}"
                out.add(full if full in MODULES else module)
    return out


def _graph() -> dict[str, set[str]]:
    return {name: {m for m in imports_of(name) if m in MODULES and m != name} for name in MODULES}


def test_the_checker_sees_the_modules() -> None:
    assert {"service.domain.pipeline", "service.http.app", "workers.jobs", "service.games.nauticus.rules"} <= set(
        MODULES
    )
    assert "service.domain.pipeline" in _graph()["service.service_layer.commands"]


def test_no_import_cycles() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            # A package's __init__ importing its own modules is how a package
            # exposes them, not a cycle with them.
            own_module = node == nxt.rpartition(".")[0] and MODULES[node].name == "__init__.py"
            if nxt == node.rpartition(".")[0] or own_module:
                continue
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles[:5])


def _tops(name: str) -> set[str]:
    return {m.split(".")[0] for m in imports_of(name)}


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("service.games")))
def test_the_rules_engines_import_no_infrastructure(name: str) -> None:
    ours = {m for m in imports_of(name) if m.split(".")[0] in PACKAGES}
    assert all(m.startswith("service.games") for m in ours), ours
    assert not _tops(name) & set(INFRASTRUCTURE), _tops(name) & set(INFRASTRUCTURE)
    if name != "service.games.simulate":  # the playout driver: a seeded chooser and a timer, no rules
        assert not {"random", "time", "datetime"} & _tops(name), "no clock and no global random in a rules engine"


def _random_module_uses(name: str) -> set[str]:
    """The names a module reads off the ``random`` module (``random.Random``, ``random.choice``...)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "random"
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "random":
            used.update(alias.name for alias in node.names)
    return used


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("service.bots")))
def test_the_bots_are_pure(name: str) -> None:
    """Issue #34: a bot is a pure function of what its seat sees, seeded: no infrastructure (so it cannot read
    PostgreSQL or Redis), no clock (the caller passes one) and only seeded generators (``random.Random``)."""
    ours = {m for m in imports_of(name) if m.split(".")[0] in PACKAGES}
    assert all(m.startswith(("service.games", "service.bots")) for m in ours), ours
    assert not _tops(name) & set(INFRASTRUCTURE), _tops(name) & set(INFRASTRUCTURE)
    if name != "service.bots.arena":  # the measurement: it times the bots with the clock it passes them
        assert not {"time", "datetime"} & _tops(name), "no clock in a bot: the caller passes cpu_clock"
    assert _random_module_uses(name) <= {"Random"}, "no global random in a bot: random.Random(seed) only"


def test_the_bots_checker_sees_the_bots() -> None:
    assert {"service.bots.levels", "service.bots.ismcts", "service.bots.arena"} <= set(MODULES)
    assert _random_module_uses("service.bots.arena") == {"Random"}


@pytest.mark.parametrize(
    "name", sorted(m for m in MODULES if m.startswith(("service.domain", "service.adapters", "service.service_layer")))
)
def test_the_write_side_imports_no_http_queue_or_cache(name: str) -> None:
    forbidden = {"flask", "flask_smorest", "werkzeug", "redis", "rq", "gunicorn"}
    assert not _tops(name) & forbidden, _tops(name) & forbidden
    ours = {m for m in imports_of(name) if m.split(".")[0] in PACKAGES}
    leaks = {
        m
        for m in ours
        if m.startswith(("service.http", "service.audit", "service.bootstrap", "workers", "projections"))
    }
    assert not leaks, leaks


def test_nothing_points_outside_the_repo() -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True)
    pattern = re.compile(r"\.\./shared|shared/(rules|API)|clarifications\.md")
    hits = []
    for rel in files.stdout.split():
        path = REPO / rel
        if path.suffix in (".py", ".md", ".toml", ".yaml", ".yml", ".txt", ".cfg", ".sh") or path.name in (
            "Makefile",
            "Dockerfile",
            "run",
        ):
            if path.resolve() == Path(__file__).resolve() or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            hits += [f"{rel}:{i}" for i, line in enumerate(text.splitlines(), 1) if pattern.search(line)]
    assert not hits, hits[:10]
