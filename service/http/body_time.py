"""A time limit on reading a request's body (``common.check_body``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class TimeLimitExceeded(Exception):
    """Raised inside :func:`time_limit`'s block when its time is up."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Bound the blocking I/O of the block (reading a request body): under
    gevent (``make run``, compose) a ``gevent.Timeout`` raising
    :class:`TimeLimitExceeded`; elsewhere (a threaded test server) no limit,
    since no such server is what we ship."""
    try:
        from gevent import Timeout, monkey
    except ImportError:  # gevent not installed
        yield
        return
    if not monkey.is_module_patched("socket"):
        yield
        return
    with Timeout(seconds, TimeLimitExceeded):
        yield
