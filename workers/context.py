"""The worker process's components, built on first use by the composition
root (``service.bootstrap``), never at import."""

from __future__ import annotations

import threading

from service.bootstrap import Components, bootstrap

#: What a job talks to (kept under its old name for the jobs' signatures).
Context = Components

_ctx: Components | None = None
_lock = threading.Lock()


def get() -> Components:
    global _ctx
    with _lock:
        if _ctx is None:
            _ctx = bootstrap()
        return _ctx


def set_context(ctx: Components | None) -> None:
    """For tests and embedded workers: use these components."""
    global _ctx
    with _lock:
        _ctx = ctx
