"""A streamed game's board history in one process.

A game stream wants every version, in order, even when versions come faster
than its greenlet is served (the read model's hash holds only the newest).  For
the games it streams, the hub subscribes to their ``g:{<id>}:board`` channel,
which carries each write's board fields (``projections/publish.py``), and keeps
here the versions the slowest follower has not sent yet (at most
``BOARD_HISTORY``: a follower further behind than that, or one that missed
messages while the connection was away, is served the newest board instead and
skips versions, never going back).  Each board is shaped once per kind of viewer
(``key``) and handed to every follower asking with that key.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: Boards kept per streamed game for its slowest follower (memory: about this
#: many writes' board fields, a few KB each, per streamed game and process).
BOARD_HISTORY = 16
#: What :meth:`BoardHistory.chunk_after` keeps when nothing was heard (None is a value).
_NONE = object()

Shape = Callable[[dict[str, bytes]], T]


class BoardHistory:
    """The boards heard for one game, oldest first, and where each of its
    streams is.  ``lock`` is the game's cell's: the listener holds it while it
    adds a board and writes the streams at the head (``direct.py``)."""

    __slots__ = ("boards", "built", "chunks", "lock", "positions")

    def __init__(self, lock: threading.Lock) -> None:
        self.lock = lock
        #: (version, fields) of the boards heard, newer than the slowest follower's.
        self.boards: deque[tuple[int, dict[str, bytes]]] = deque()
        #: version -> key -> value: each board shaped once per kind of viewer.
        self.built: dict[int, dict[Any, Any]] = {}
        #: (key, after) -> what :meth:`chunk_after` joined, until the next board.
        self.chunks: dict[Any, Any] = {}
        #: A stream's id -> the last version it sent.
        self.positions: dict[int, int] = {}

    # -- the listener's side (with ``lock`` held) ---------------------------------
    def add(self, version: int, fields: dict[str, bytes]) -> bool:
        """Keep board ``version`` if it is newer than every board kept; whether it was."""
        if self.boards and version <= self.boards[-1][0]:
            return False
        self.boards.append((version, fields))
        # A new dict: a join under way stores into the old one.
        self.chunks = {}
        return True

    def shaped(self, version: int, fields: dict[str, bytes], key: Any, shape: Shape[T]) -> T:
        """Board ``version`` shaped for ``key`` (once per version and key)."""
        built = self.built.setdefault(version, {})
        if key not in built:
            built[key] = shape(fields)
        return built[key]

    def trim(self) -> None:
        """Let go of the boards every stream has sent, and of any beyond
        ``BOARD_HISTORY`` (once per board heard, not per follower: trimming per
        follower and change would cost each change the square of its followers)."""
        slowest = min(self.positions.values()) if self.positions else None
        while self.boards and (
            len(self.boards) > BOARD_HISTORY or (slowest is not None and self.boards[0][0] <= slowest)
        ):
            version, _ = self.boards.popleft()
            self.built.pop(version, None)

    def clear(self) -> None:
        """The game has no stream left in this process."""
        self.boards.clear()
        self.built.clear()
        self.chunks = {}

    # -- the streams' side ----------------------------------------------------------
    def follow(self, stream: int) -> None:
        """A stream starts: until its first line it may need any board heard."""
        with self.lock:
            self.positions[stream] = 0

    def leave(self, stream: int) -> None:
        with self.lock:
            self.positions.pop(stream, None)

    def sent(self, stream: int, version: int) -> None:
        """``stream`` sent ``version``: the boards up to the slowest stream's are let
        go when the next board arrives."""
        with self.lock:
            self.positions[stream] = version

    def after(self, key: Any, after: int, shape: Shape[T]) -> list[tuple[int, T]]:
        """The boards heard after version ``after``, oldest first, as
        ``(version, shape(fields))``.  Empty when none was heard (the caller then
        reads the newest board itself)."""
        with self.lock:
            heard = [(v, fields) for v, fields in self.boards if v > after]
        return [(version, self.shaped(version, fields, key, shape)) for version, fields in heard]

    def chunk_after(
        self,
        key: Any,
        after: int,
        shape: Shape[tuple[bytes, bool]],
        finish: Callable[[int], bytes],
    ) -> tuple[int, bytes, bool] | None:
        """What a game stream sends after version ``after``: the boards heard
        since, each shaped and framed by ``shape`` (``(line, finished)``), joined
        into one write that stops at a finished board with ``finish(version)``
        after it; as ``(last version, bytes, finished)``, or None when none was
        heard.  Joined once per ``(key, after)`` until the next board: the
        followers of one kind at one place (most of them, most of the time) are
        handed the same bytes."""
        chunks = self.chunks  # replaced, not cleared, by the next board
        got = chunks.get((key, after), _NONE)
        if got is not _NONE:
            return got  # what an earlier call of this key stored
        parts, last, finished = [], after, False
        for version, (line, finished) in self.after(key, after, shape):
            parts.append(line)
            last = version
            if finished:
                parts.append(finish(version))
                break
        joined = (last, b"".join(parts), finished) if parts else None
        chunks[(key, after)] = joined
        return joined
