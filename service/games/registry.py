"""Which engines exist, by API name and rules version.

Engines register here by import path, so importing the registry stays cheap:
an engine is imported the first time it is asked for.
"""

from __future__ import annotations

import importlib
from functools import cache

from service.games.base import Engine

#: API name -> module that exposes ``ENGINE``.
_MODULES: dict[str, str] = {
    "nautilus-industries": "service.games.nautilus_industries",
    "nauticus": "service.games.nauticus",
    "waters-of-nereus": "service.games.waters_of_nereus",
}


class UnknownGame(LookupError):
    pass


class RulesVersionUnavailable(LookupError):
    pass


@cache
def _load(name: str) -> Engine:
    module = importlib.import_module(_MODULES[name])
    return module.ENGINE


def registered() -> list[str]:
    """The API names, without importing any engine."""
    return list(_MODULES)


def package(name: str) -> str:
    """The engine package of ``name`` (``service.games.<package>``)."""
    if name not in _MODULES:
        raise UnknownGame(name)
    return _MODULES[name]


def names() -> list[str]:
    """Every registered API name.  An engine that fails to import fails here,
    loudly, rather than silently dropping out of the API and the test suites."""
    for name in _MODULES:
        _load(name)
    return list(_MODULES)


def get(name: str, version: str | None = None) -> Engine:
    """The engine for ``name``; with ``version``, only that exact rules
    version (replay and audit must use the version a game was created with)."""
    if name not in _MODULES:
        raise UnknownGame(name)
    engine = _load(name)
    if version is not None and engine.version != version:
        raise RulesVersionUnavailable(f"game was created with {name} rules {version}; this server has {engine.version}")
    return engine
