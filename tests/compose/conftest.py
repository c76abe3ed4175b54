"""The Docker engine of the compose tests (tests/compose), one test file at a time."""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.compose_stack import docker_engine, log

#: Held by a test file for as long as it uses the engine: files run one after the other, even in
#: different pytest workers or checkouts, so that no one stops a dockerd another one still uses
#: (and two stacks never build and boot on the same cores at once).
LOCK = Path(tempfile.gettempdir()) / "quarterdeck-compose-tests.lock"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A Docker engine: the one that answers, else a dockerd started here and stopped after.
    Without one the test file is skipped with the reason, except under CI (or
    QD_COMPOSE_TEST=require), where that fails."""
    with LOCK.open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another compose test to finish with the engine ({LOCK})")
            fcntl.flock(lock, fcntl.LOCK_EX)
        with docker_engine(tmp_path_factory.mktemp("dockerd")) as problem:
            if problem:
                if os.environ.get("CI") or os.environ.get("QD_COMPOSE_TEST") == "require":
                    pytest.fail(f"the compose test must run here, but: {problem}")
                pytest.skip(problem)
            yield
