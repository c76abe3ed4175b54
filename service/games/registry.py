"""Which engines exist, by API name and rules version.

Engines register here by import path so that importing the registry stays
cheap and a broken engine shows up as a clear error for its game only.
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


def names() -> list[str]:
    """Registered API names whose engine imports."""
    out = []
    for name in _MODULES:
        try:
            _load(name)
        except (ImportError, AttributeError):
            continue
        out.append(name)
    return out


def get(name: str, version: str | None = None) -> Engine:
    """The engine for ``name``; with ``version``, only that exact rules
    version (replay and audit must use the version a game was created with)."""
    if name not in _MODULES:
        raise UnknownGame(name)
    try:
        engine = _load(name)
    except ImportError as exc:  # pragma: no cover - only while an engine is missing
        raise UnknownGame(name) from exc
    if version is not None and engine.version != version:
        raise RulesVersionUnavailable(f"game was created with {name} rules {version}; this server has {engine.version}")
    return engine
