"""Direct writes: a game stream at the head of its game is written by the hub's
listener itself.

When a board arrives, the listener frames it once per kind of viewer and
framing and offers it to each such stream's :class:`Sink`, which takes it whole
without waiting or does not (a slow reader).  No greenlet wakes, and no WSGI
layer runs, per follower and line; the stream's own greenlet sleeps until its
next ping.  A write not taken whole, a stream that is not at the head, a ping,
the end of the game or a shutdown hand the stream back to its greenlet, which
writes what is left and carries on the common way.

No lock is held while a socket is written: the listener decides what to write
under the cell's lock, marks those streams ``writing``, writes them with the
lock released, and settles them under the lock again.  A stream's greenlet that
wants its stream back meanwhile (its ping is due) asks for it and waits for the
listener to hand it back once its write is done.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any, Protocol

from service import metrics
from service.http.live import framing
from service.http.live.history import BoardHistory

log = logging.getLogger(__name__)

#: The longest a stream's greenlet waits for the listener to finish a write to its
#: sink before it takes the stream back regardless (the write itself never waits).
HAND_BACK_SECONDS = 1.0


class Cell(Protocol):
    """What direct writes use of a game's cell (``hub.Cell``)."""

    lock: threading.Lock
    version: int
    subscribed: threading.Event
    history: BoardHistory
    #: id(stream) -> the streams the listener writes itself.
    direct: dict[int, DirectStream]


class Sink(Protocol):
    """Where the listener writes one stream: a frame goes whole, or the stream is
    handed back to its greenlet with what was not taken."""

    def frame(self, line: bytes) -> bytes:
        """``line`` framed as this response sends it."""
        ...

    def offer(self, data: bytes) -> int:
        """Write what can be written of ``data`` now, never waiting; the bytes taken."""
        ...

    def send(self, data: bytes) -> None:
        """Write all of ``data``, waiting as long as the response's write limit allows."""
        ...


class SocketSink:
    """A response's socket whose file never blocks (gunicorn's gevent worker):
    the listener's write then never waits on a reader.  ``chunked``: the
    response is sent in HTTP/1.1 chunks (each write framed as one), as gunicorn
    frames a body without a length for an HTTP/1.1 client."""

    __slots__ = ("chunked", "fd", "sock")

    def __init__(self, sock: Any, chunked: bool) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.chunked = chunked

    @staticmethod
    def usable(sock: Any) -> bool:
        """True if the listener may write ``sock`` itself: a socket whose file
        never blocks."""
        try:
            return sock is not None and not os.get_blocking(sock.fileno())
        except (OSError, ValueError):
            return False

    def frame(self, line: bytes) -> bytes:
        return framing.http_chunk(line) if self.chunked else line

    def offer(self, data: bytes) -> int:
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0
        except OSError:
            return 0  # the stream's own write of it fails too, and ends it

    def send(self, data: bytes) -> None:
        # With the socket's own write limit (``streams.WRITE_SECONDS``).
        self.sock.sendall(data)


class DirectStream:
    """One game stream as the listener writes it: its sink, and ``shape`` and
    ``finish`` (``streams.board_reader``); ``key`` names its kind of viewer and
    framing, as for ``BoardHistory.chunk_after``."""

    __slots__ = (
        "done",
        "finish",
        "handed",
        "key",
        "last",
        "pending",
        "shape",
        "sink",
        "stream",
        "wants_back",
        "writing",
    )

    def __init__(
        self,
        sink: Sink,
        key: Any,
        shape: Callable[[dict[str, bytes]], tuple[bytes, bool]],
        finish: Callable[[int], bytes],
    ) -> None:
        self.sink = sink
        self.key = key
        self.shape = shape
        self.finish = finish
        #: The last version written to the sink (whole, or in ``pending``).
        self.last = 0
        #: Bytes of the last write the sink did not take: the stream writes them first.
        self.pending = b""
        #: A finished board (and the end line) was written: the stream ends.
        self.done = False
        #: Set when the listener hands the stream back to its greenlet.
        self.handed = threading.Event()
        #: The stream's id in its game's board history (its position there).
        self.stream = 0
        #: The listener is writing the sink (with the cell's lock released).
        self.writing = False
        #: The greenlet asked for the stream back while it was being written.
        self.wants_back = False


def hand_back(cell: Cell, stream: DirectStream) -> None:
    """Give ``stream`` back to its greenlet (with ``cell.lock`` held); one being
    written goes back once its write is done."""
    if stream.writing:
        stream.wants_back = True
        return
    cell.direct.pop(id(stream), None)
    stream.handed.set()


def hold(
    cell: Cell, stream: DirectStream, position: int, last: int, timeout: float, closing: bool
) -> tuple[int, bool] | None:
    """Sleep up to ``timeout`` seconds while the listener writes ``stream``'s
    boards itself.  Only for a stream at the head (it sent ``last``, the newest
    version heard, and its board channel is subscribed); else None at once.
    Returns ``(last version written, game finished)`` once handed back (time up,
    a write not taken whole, the game finished, a version not from the board
    channel, a shutdown), after writing what the sink did not take; a failed
    write raises."""
    with cell.lock:
        if closing or last != cell.version or not cell.subscribed.is_set():
            return None
        stream.last, stream.pending, stream.done = last, b"", False
        stream.stream, stream.writing, stream.wants_back = position, False, False
        stream.handed.clear()
        cell.direct[id(stream)] = stream
    try:
        stream.handed.wait(max(0.0, timeout))
    finally:
        with cell.lock:
            hand_back(cell, stream)
        # Being written (one non-blocking write): the listener hands it back as soon
        # as the write is done.  Bounded, so that a listener that failed mid-write
        # cannot hold the stream: it is then taken back as it is.
        if not stream.handed.wait(HAND_BACK_SECONDS):
            with cell.lock:
                stream.writing = False
                hand_back(cell, stream)
    pending, stream.pending = stream.pending, b""
    if pending:
        stream.sink.send(pending)
    return stream.last, stream.done


def write_board(cell: Cell, head: int, version: int, fields: dict[str, bytes]) -> None:
    """Write board ``version`` to the streams of ``cell`` the listener writes
    (``head``: the newest version heard before it).  A stream that has the
    version already (read from the hash before its board was heard) is left as
    it is; one that lacks a version before it, or whose sink does not take the
    write whole, is handed back to its greenlet."""
    writes: list[tuple[DirectStream, bytes, bool]] = []
    framed: dict[tuple[Any, Any], tuple[bytes, bool]] = {}
    handed = 0
    with cell.lock:
        for stream in list(cell.direct.values()):
            if stream.last >= version:
                continue  # it has this one (read from the hash before its board was heard)
            if stream.last != head:
                hand_back(cell, stream)
                handed += 1
                continue
            how = (stream.key, getattr(stream.sink, "chunked", None))
            got = framed.get(how)
            if got is None:
                try:
                    line, finished = cell.history.shaped(version, fields, stream.key, stream.shape)
                except Exception:  # a bug shaping a board: the stream's own path says so
                    log.exception("live hub: shaping a board failed; its streams go their own way")
                    hand_back(cell, stream)
                    handed += 1
                    continue
                if finished:
                    line += stream.finish(version)
                got = framed[how] = (stream.sink.frame(line), finished)
            stream.writing = True
            writes.append((stream, *got))
    if not writes:
        if handed:
            metrics.DIRECT_LINES.labels("handed_back").inc(handed)
        return
    taken = [stream.sink.offer(data) for stream, data, _ in writes]
    whole = 0
    with cell.lock:
        for (stream, data, finished), n in zip(writes, taken, strict=True):
            stream.writing = False
            stream.last = version
            cell.history.positions[stream.stream] = version
            if n < len(data):
                handed += 1
            else:
                whole += 1
            if n < len(data) or finished or stream.wants_back:
                stream.pending = data[n:]
                stream.done = finished
                hand_back(cell, stream)
    # Once per board, not per stream: a counter's lock per write would cost each line.
    if whole:
        metrics.DIRECT_LINES.labels("whole").inc(whole)
    if handed:
        metrics.DIRECT_LINES.labels("handed_back").inc(handed)
