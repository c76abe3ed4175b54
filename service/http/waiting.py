"""Waiting on a push, shared by every request that waits: ``?min_version``
reads (``games._read``), the live events feed (``audit.events_feed``) and the
streams (``streams.py``).

One :class:`Hub` per process holds one Redis pub/sub connection (one per
node on a Redis Cluster), subscribed to exactly the channels of the games and
accounts this process has waiters for: a game's ``g:{<id>}:changed`` (published
by the projection worker inside the write it announces:
``projections/publish.py``) while anything waits on the game, and nothing else.
A process with no waiters hears no announcement.  The connection is the
adapter's (``service/adapters/announcements.py``: ``SUBSCRIBE`` on one Redis
server, ``SSUBSCRIBE`` on a Redis Cluster, so an announcement reaches only the
node of its game and the processes that asked for that game); the composition
root hands the hub a factory that opens one (``bootstrap.announcements``), at
its start and after a failover.  A channel subscribed after its game was
written may have missed that write's announcement, so once Redis confirms a
game's subscription the hub re-reads the game's version.  A channel no longer waited on is left
once it has been unwanted at two safety re-reads in a row (2-4 s), so a game
waited on again a moment later costs no new subscription.

A request that waits registers on its game's *cell* and sleeps on the cell's
event; a message for the game raises the cell's version and sets the event
(replacing it by a fresh one), which wakes its waiters. Nothing polls
PostgreSQL or Redis per waiter: the only timer is a safety re-read of the
watched games' versions, all in one pipelined round trip every
``SAFETY_SECONDS``, which also heals any message lost while the pub/sub
connection was away (it is re-read in full on every reconnect too) and notices
a read model that vanished (Redis flushed).

Under gunicorn's gevent worker (``make run``, ``compose.yaml``) every thread
and lock here is a greenlet and a cooperative lock, so a waiting request costs
a socket and a little memory, not a worker thread; under a threaded server
(the tests' werkzeug server) the same code runs on real threads.

Many followers of one game want the same thing at the same moment: the
board after the change they were woken for.  :meth:`Hub.fetch` lets the first
of them read it and hands the same bytes to the rest (one Redis read and one
serialisation per change and kind of viewer, not per follower).

A game stream wants more: every version, in order, even when versions come
faster than its greenlet is served (the hash holds only the newest).  For the
games it streams, the hub also subscribes to their ``g:{<id>}:board``
channel, which carries each write's board fields (``projections/publish.py``),
and keeps the versions its slowest follower has not sent yet
(:meth:`Hub.boards_after`; at most ``BOARD_HISTORY``: a follower further
behind than that, or one that missed messages while the connection was away,
is served the newest board instead and skips versions, never going back).

A game stream at the head of its game is written by the listener itself
(:meth:`Hub.write_directly`): when a board arrives, the listener frames it once
per kind of viewer and hands it to each such stream's socket with one
non-blocking ``write``, and the stream's greenlet sleeps on until its next
ping.  No greenlet wakes, and no WSGI layer runs, per follower and line.  A
write that does not go through whole (a slow reader), a stream that is not at
the head, a ping, the end of the game or a shutdown hand the stream back to
its own greenlet, which writes what is left and carries on the common way.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from projections import keys, publish
from service import metrics
from service.adapters.announcements import PubSub, PubSubLost

log = logging.getLogger(__name__)

#: Seconds between the safety re-reads of every watched game's version (one
#: pipelined round trip per process, however many waiters).
SAFETY_SECONDS = 2.0
#: Account events kept per follower while it is busy writing (oldest dropped).
ACCOUNT_BACKLOG = 256
#: Boards kept per streamed game for its slowest follower (memory: about this
#: many writes' board fields, a few KB each, per streamed game and process).
BOARD_HISTORY = 16
#: How long a new game stream waits for its board channel's subscription
#: before its first read (else versions written in between could be missed).
SUBSCRIBE_WAIT_SECONDS = 2.0
#: The listener's longest wait for a message: it applies new subscriptions
#: between waits, so this bounds how long a new game's subscription waits.
_TICK_SECONDS = 0.02
#: The longest the listener works through messages waiting in its socket
#: before it lets the process's other greenlets run (it writes streams itself).
_BUSY_SECONDS = 0.005

T = TypeVar("T")

_HUBS: weakref.WeakSet[Hub] = weakref.WeakSet()
#: What :meth:`Hub.chunk_after` keeps when nothing was heard (None is a value).
_NONE = object()


class _Cell:
    """What the waiters of one game share."""

    __slots__ = (
        "board_watchers",
        "boards",
        "built",
        "changed",
        "chunks",
        "direct",
        "lines",
        "lock",
        "locks",
        "positions",
        "queues",
        "subscribed",
        "version",
        "watchers",
    )

    def __init__(self) -> None:
        #: Guards what the listener and the waiters share (boards, queues, positions).
        self.lock = threading.Lock()
        #: Newest version heard of (published, re-read or fetched); 0: unknown.
        self.version = 0
        #: Set, and replaced by a fresh one, by every message, resync and
        #: shutdown: a waiter holds the one current when it last looked and
        #: wakes when it is set.  One event per change wakes every waiter in
        #: one step (a condition variable costs each waiter a lock of its own
        #: and a re-acquire per change).
        self.changed = threading.Event()
        self.watchers = 0
        #: key -> (version, value): the last :meth:`Hub.fetch` result per key.
        self.lines: dict[Any, tuple[int, Any]] = {}
        self.locks: dict[Any, threading.Lock] = {}
        #: Account cells: one queue of payloads per follower.
        self.queues: list[deque[Any]] = []
        #: Game streams following this game in this process (board channel subscribed while > 0).
        self.board_watchers = 0
        #: Set once the game's board channel is subscribed.
        self.subscribed = threading.Event()
        #: (version, fields) of the boards heard, oldest first, newer than the slowest follower.
        self.boards: deque[tuple[int, dict[str, bytes]]] = deque()
        #: version -> key -> value: each board shaped once per kind of viewer.
        self.built: dict[int, dict[Any, Any]] = {}
        #: (key, after) -> what :meth:`Hub.chunk_after` joined, until the next board.
        self.chunks: dict[Any, Any] = {}
        #: id(watch) -> the last version that stream sent.
        self.positions: dict[int, int] = {}
        #: id(writer) -> the game streams the listener writes itself (at the head).
        self.direct: dict[int, DirectWriter] = {}


class Watch:
    """A registration on one game's (or account's) cell; see :meth:`Hub.watch`."""

    def __init__(self, hub: Hub, cell: _Cell) -> None:
        self.hub = hub
        self.cell = cell
        self._changed = cell.changed

    @property
    def version(self) -> int:
        """The newest version of the game heard of (0 if none yet)."""
        return self.cell.version

    def wait(self, timeout: float) -> bool:
        """Sleep until something happened on the cell since the last wait (or
        since registering), the hub shuts down, or ``timeout`` seconds pass.
        True if woken.  The caller re-reads what it waits for afterwards."""
        changed = self._changed
        if not self.hub.closing:
            changed.wait(max(0.0, timeout))
        # Taken after waking: whatever changes from here on sets this one.
        self._changed = self.cell.changed
        return changed.is_set() or self.hub.closing


class DirectWriter:
    """A game stream's socket, which the hub's listener writes itself while the
    stream is at the head of its game (:meth:`Hub.write_directly`).

    Only for a socket whose file is non-blocking (gevent's): the listener's
    ``write`` then never waits on a reader.  ``shape`` and ``finish`` are the
    stream's (``streams.board_reader``); ``key`` names its kind of viewer and
    framing, as for :meth:`Hub.chunk_after`; ``chunked``: the response is sent
    in HTTP/1.1 chunks (each write framed as one)."""

    __slots__ = ("chunked", "done", "fd", "finish", "handed", "key", "last", "pending", "shape", "sock", "wid")

    def __init__(
        self,
        sock: socket.socket,
        chunked: bool,
        key: Any,
        shape: Callable[[dict[str, bytes]], tuple[bytes, bool]],
        finish: Callable[[int], bytes],
    ) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.chunked = chunked
        self.key = key
        self.shape = shape
        self.finish = finish
        #: The last version written to the socket (whole, or in ``pending``).
        self.last = 0
        #: Bytes of the last write the socket did not take: the stream writes them first.
        self.pending = b""
        #: A finished board (and the end line) was written: the stream ends.
        self.done = False
        #: Set when the listener hands the stream back to its greenlet.
        self.handed = threading.Event()
        #: The stream's Watch (its place in :attr:`_Cell.positions`).
        self.wid = 0

    @staticmethod
    def usable(sock: Any) -> bool:
        """True if the listener may write ``sock`` itself: a socket whose
        file never blocks (gunicorn's gevent worker)."""
        try:
            return sock is not None and not os.get_blocking(sock.fileno())
        except (OSError, ValueError):
            return False


class Hub:
    """The per-process fan-out of the projection worker's announcements.

    Built by ``create_app``; it connects on first use (nothing connects at
    import), from the thread (greenlet) of the first waiter."""

    def __init__(self, open_pubsub: Callable[[str], PubSub], safety_seconds: float = SAFETY_SECONDS) -> None:
        """``open_pubsub(name)``: a new pub/sub connection, named ``name`` in Redis
        (``bootstrap.announcements``); called at the start and after each failure."""
        self.open_pubsub = open_pubsub
        self.safety_seconds = safety_seconds
        #: Set by :meth:`shutdown`: every wait returns and streams end with a final line.
        self.closing = False
        #: True while the pub/sub connection is subscribed.
        self.connected = False
        self._games: dict[str, _Cell] = {}
        self._accounts: dict[str, _Cell] = {}
        self._lock = threading.Lock()
        #: Games whose board channel should be subscribed (streamed games).
        self._boards_wanted: set[str] = set()
        #: Channels subscribed (sent, by the listener) and confirmed by Redis.
        self._sent: set[str] = set()
        self._confirmed: set[str] = set()
        #: Set when the channels wanted may have changed: the listener looks only then.
        self._dirty = False
        #: Wakes a listener that has nothing subscribed (and so nothing to wait on).
        self._wake = threading.Event()
        #: Channels unwanted at the last safety re-read: left at the next one if still unwanted.
        self._idle: set[str] = set()
        #: Games whose subscription was just confirmed: their version is read once.
        self._to_read: list[str] = []
        #: Messages heard (announcements, boards, account events), for tests and metrics.
        self.heard = 0
        #: When the listener last let other greenlets run (:meth:`_share`).
        self._busy_since = 0.0
        self._thread: threading.Thread | None = None
        self._pubsub: PubSub | None = None
        #: Its connections' name in Redis (``CLIENT LIST``).
        self.client_name = f"qd-hub-{os.getpid()}-{id(self):x}"
        _HUBS.add(self)

    # -- registering --------------------------------------------------------------
    @contextlib.contextmanager
    def watch(self, game_id: str, boards: bool = False) -> Iterator[Watch]:
        """Register on ``game_id``'s cell for the duration of the block.
        Register *before* reading what you wait for: a change after the read
        then wakes the first :meth:`Watch.wait` at once.

        ``boards``: a game stream, which wants every version's board
        (:meth:`boards_after`); this waits, bounded, until the game's board
        channel is subscribed, so that every write after the caller's first
        read is heard."""
        self._start()
        cell = self._enter(self._games, game_id)
        watch = Watch(self, cell)
        if boards:
            with self._lock:
                cell.board_watchers += 1
                if game_id not in self._boards_wanted:
                    self._boards_wanted.add(game_id)
                    self._changed()
                if publish.board_channel(game_id) in self._confirmed:
                    cell.subscribed.set()
            with cell.lock:
                # Until its first line, a stream may need any board heard (only
                # BOARD_HISTORY bounds what is kept for it).
                cell.positions[id(watch)] = 0
        try:
            if boards:
                # Inside the try: a client that leaves during the wait still unregisters.
                cell.subscribed.wait(SUBSCRIBE_WAIT_SECONDS)
            yield watch
        finally:
            if boards:
                with self._lock:
                    cell.board_watchers -= 1
                    if cell.board_watchers == 0:
                        self._boards_wanted.discard(game_id)
                        self._changed()
                with cell.lock:
                    cell.positions.pop(id(watch), None)
                    if cell.board_watchers == 0:
                        cell.boards.clear()
                        cell.built.clear()
                        cell.chunks = {}
            self._leave(self._games, game_id, cell)

    @contextlib.contextmanager
    def follow_account(self, handle: str) -> Iterator[tuple[Watch, deque[Any]]]:
        """Register for one account's events (``projections.publish.account_event``):
        yields a :class:`Watch` and the queue the events arrive in, in order."""
        self._start()
        key = handle.lower()
        cell = self._enter(self._accounts, key)
        queue: deque[Any] = deque(maxlen=ACCOUNT_BACKLOG)
        with cell.lock:
            cell.queues.append(queue)
        with self._lock:
            if publish.account_channel(key) in self._confirmed:
                cell.subscribed.set()
        try:
            # Events come only once the account's channel is subscribed: wait for it, bounded.
            cell.subscribed.wait(SUBSCRIBE_WAIT_SECONDS)
            yield Watch(self, cell), queue
        finally:
            try:
                with cell.lock:
                    # By identity: deques compare by content, and two streams of one
                    # account hold equal queues (list.remove would take the other's).
                    cell.queues[:] = [q for q in cell.queues if q is not queue]
            finally:
                self._leave(self._accounts, key, cell)

    def _enter(self, table: dict[str, _Cell], key: str) -> _Cell:
        with self._lock:
            cell = table.get(key)
            if cell is None:
                cell = table[key] = _Cell()
                self._changed()
            cell.watchers += 1
            return cell

    def _leave(self, table: dict[str, _Cell], key: str, cell: _Cell) -> None:
        with self._lock:
            cell.watchers -= 1
            if cell.watchers == 0 and table.get(key) is cell:
                del table[key]
                self._changed()

    def _changed(self) -> None:
        # Called with self._lock held.
        self._dirty = True
        self._wake.set()

    def _wanted(self) -> set[str]:
        """The channels this process needs (called with self._lock held)."""
        return (
            {publish.game_channel(g) for g in self._games}
            | {publish.board_channel(g) for g in self._boards_wanted}
            | {publish.account_channel(a) for a in self._accounts}
        )

    def subscriptions(self) -> int:
        """How many channels this process is subscribed to (for tests and metrics)."""
        with self._lock:
            return len(self._sent)

    def watched(self) -> int:
        """How many games are watched in this process (for tests and metrics)."""
        return len(self._games)

    # -- shared reads -------------------------------------------------------------
    def fetch(
        self,
        watch: Watch,
        key: Any,
        read: Callable[[], tuple[int, T] | None],
        usable: Callable[[T], bool] | None = None,
    ) -> tuple[int, T] | None:
        """``read()`` -> ``(version, value)``, shared by every waiter of the
        game that asks with the same ``key`` (e.g. the kind of viewer): while
        the value kept for ``key`` is at least as new as the newest version
        heard of (and ``usable(value)``, if given), it is handed out again
        instead of being read.  Concurrent callers wait for the one that
        reads.  ``None`` (nothing there yet) is not kept."""
        cell = watch.cell
        lock = cell.locks.get(key)
        if lock is None:
            lock = cell.locks.setdefault(key, threading.Lock())
        with lock:
            kept = cell.lines.get(key)
            if kept is not None and kept[0] >= cell.version and (usable is None or usable(kept[1])):
                return kept
            got = read()
            if got is not None:
                cell.lines[key] = got
                if got[0] > cell.version:
                    cell.version = got[0]
            return got

    def boards_after(
        self, watch: Watch, key: Any, after: int, shape: Callable[[dict[str, bytes]], T]
    ) -> list[tuple[int, T]]:
        """The boards heard after version ``after``, oldest first, as
        ``(version, shape(fields))``: each shaped once per ``key`` (kind of
        viewer) and handed to every follower asking with that key.  Empty when
        none was heard (the caller then reads the newest board itself)."""
        cell = watch.cell
        with cell.lock:
            heard = [(v, fields) for v, fields in cell.boards if v > after]
        out = []
        for version, fields in heard:
            shaped = cell.built.setdefault(version, {})
            if key not in shaped:
                shaped[key] = shape(fields)
            out.append((version, shaped[key]))
        return out

    def chunk_after(
        self,
        watch: Watch,
        key: Any,
        after: int,
        shape: Callable[[dict[str, bytes]], tuple[bytes, bool]],
        finish: Callable[[int], bytes],
    ) -> tuple[int, bytes, bool] | None:
        """What a game stream sends after version ``after``: the boards heard
        since, each shaped and framed by ``shape`` (``(line, finished)``, once
        per version and ``key``), joined into one write that stops at a
        finished board with ``finish(version)`` after it; as ``(last version,
        bytes, finished)``, or None when none was heard.  Joined once per
        ``(key, after)`` until the next board: the followers of one kind at one
        place (most of them, most of the time) are handed the same bytes."""
        chunks = watch.cell.chunks  # replaced, not cleared, by the next board
        got = chunks.get((key, after), _NONE)
        if got is not _NONE:
            return got
        parts, last, finished = [], after, False
        for version, (line, finished) in self.boards_after(watch, key, after, shape):
            parts.append(line)
            last = version
            if finished:
                parts.append(finish(version))
                break
        got = (last, b"".join(parts), finished) if parts else None
        chunks[(key, after)] = got
        return got

    def sent(self, watch: Watch, version: int) -> None:
        """A game stream sent ``version``: boards up to the slowest stream's
        are let go when the next board arrives (trimming here, per follower
        and per change, would cost each change the square of its followers)."""
        cell = watch.cell
        with cell.lock:
            cell.positions[id(watch)] = version

    def write_directly(self, watch: Watch, writer: DirectWriter, last: int, timeout: float) -> tuple[int, bool] | None:
        """Sleep up to ``timeout`` seconds while the listener writes the
        stream's boards itself, as they arrive, to ``writer``'s socket.  Only
        for a stream at the head (it sent ``last``, the newest version heard, and
        its board channel is subscribed); else None at once, and the caller
        waits on ``watch`` as usual.  Returns ``(last version written, game
        finished)`` once handed back (time up, a write not taken whole, the game
        finished, a version not from the board channel, a shutdown), after
        writing what the socket did not take; a failed write raises."""
        cell = watch.cell
        with cell.lock:
            if self.closing or last != cell.version or not cell.subscribed.is_set():
                return None
            writer.last, writer.pending, writer.done = last, b"", False
            writer.wid = id(watch)
            writer.handed.clear()
            cell.direct[id(writer)] = writer
        try:
            writer.handed.wait(max(0.0, timeout))
        finally:
            with cell.lock:
                cell.direct.pop(id(writer), None)
        pending, writer.pending = writer.pending, b""
        if pending:
            # With the socket's own write limit (``streams.WRITE_SECONDS``).
            writer.sock.sendall(pending)
        return writer.last, writer.done

    def _write_direct(self, cell: _Cell, head: int, version: int, fields: dict[str, bytes]) -> None:
        """Write board ``version`` to the streams the listener writes itself
        (called with ``cell.lock`` held; ``head`` is the newest version heard
        before it): framed once per kind of viewer and framing, one
        non-blocking ``write`` per socket.  A stream that has the version
        already (read from the hash before its board was heard) is left as it
        is; one that lacks a version before it, or whose socket does not take
        the write whole, is handed back to its greenlet."""
        framed: dict[tuple[Any, bool], tuple[bytes, bool]] = {}
        shaped = cell.built.setdefault(version, {})
        whole = handed = 0
        for writer in list(cell.direct.values()):
            if writer.last >= version:
                continue  # it has this one (read from the hash before its board was heard)
            if writer.last != head:
                self._hand_back(cell, writer)
                handed += 1
                continue
            how = (writer.key, writer.chunked)
            got = framed.get(how)
            if got is None:
                try:
                    if writer.key not in shaped:
                        shaped[writer.key] = writer.shape(fields)
                    line, finished = shaped[writer.key]
                except Exception:  # a bug shaping a board: the stream's own path says so
                    log.exception("waiting hub: shaping a board failed; its streams go their own way")
                    self._hand_back(cell, writer)
                    handed += 1
                    continue
                if finished:
                    line += writer.finish(version)
                got = framed[how] = (b"%X\r\n%s\r\n" % (len(line), line) if writer.chunked else line, finished)
            data, finished = got
            try:
                n = os.write(writer.fd, data)
            except BlockingIOError:
                n = 0
            except OSError:
                n = 0  # the stream's own write of it fails too, and ends it
            writer.last = version
            cell.positions[writer.wid] = version
            if n < len(data):
                handed += 1
            else:
                whole += 1
            if n < len(data) or finished:
                writer.pending = data[n:]
                writer.done = finished
                self._hand_back(cell, writer)
        # Once per board, not per stream: a counter's lock per write would cost each line.
        if whole:
            metrics.DIRECT_LINES.labels("whole").inc(whole)
        if handed:
            metrics.DIRECT_LINES.labels("handed_back").inc(handed)

    @staticmethod
    def _hand_back(cell: _Cell, writer: DirectWriter) -> None:
        # Called with cell.lock held.
        cell.direct.pop(id(writer), None)
        writer.handed.set()

    @staticmethod
    def _trim(cell: _Cell) -> None:
        # Called with cell.lock held, once per board heard.
        slowest = min(cell.positions.values()) if cell.positions else None
        while cell.boards and (
            len(cell.boards) > BOARD_HISTORY or (slowest is not None and cell.boards[0][0] <= slowest)
        ):
            version, _ = cell.boards.popleft()
            cell.built.pop(version, None)

    # -- shutting down ------------------------------------------------------------
    def shutdown(self) -> None:
        """Graceful stop of this process: wake every waiter; streams end with a
        line the client can resume from."""
        self.closing = True
        for cell in self._cells():
            self._bump(cell)

    # -- the listener -------------------------------------------------------------
    def _start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._run, name="qd-waiting-hub", daemon=True)
            self._thread.start()

    def _cells(self) -> list[_Cell]:
        with self._lock:
            return [*self._games.values(), *self._accounts.values()]

    def _bump(self, cell: _Cell, version: int | None = None, reset: bool = False) -> None:
        if version is not None:
            cell.version = version if reset else max(cell.version, version)
        if cell.direct:
            with cell.lock:
                for writer in list(cell.direct.values()):
                    # A version the listener did not write (heard without its
                    # board, or gone back), or a shutdown: the stream's own path.
                    if self.closing or writer.last != cell.version:
                        self._hand_back(cell, writer)
        # What changed is in place before the waiters are woken.
        woken, cell.changed = cell.changed, threading.Event()
        woken.set()

    def _run(self) -> None:
        pause = 0.1
        while not self.closing:
            channels = None
            try:
                channels = self._pubsub = self.open_pubsub(self.client_name)
                self.connected = True
                pause = 0.1
                # Anything published while we were away was lost: re-read it all.
                self._resync(reset=True)
                next_check = time.monotonic() + self.safety_seconds
                self._busy_since = time.monotonic()
                while not self.closing:
                    self._subscribe(channels, leave=False)
                    message = channels.get_message(_TICK_SECONDS, self._wake)
                    if message is not None:
                        self._deliver(message)
                        self._share()
                    if self._to_read:
                        self._read_confirmed()
                    if time.monotonic() >= next_check:
                        channels.check_health()
                        self._subscribe(channels, leave=True)
                        self._resync(reset=False)
                        next_check = time.monotonic() + self.safety_seconds
            except PubSubLost as exc:
                if self.connected:
                    log.warning("waiting hub: Redis pub/sub lost (%s); reconnecting", exc.reason)
                self.connected = False
                time.sleep(pause)
                pause = min(pause * 2, 2.0)
            except Exception:  # a bug must not silence every follower of the process
                log.exception("waiting hub: listener failed; restarting it")
                self.connected = False
                time.sleep(1.0)
            finally:
                self.connected = False
                with self._lock:
                    # A new connection subscribes every wanted channel again.
                    self._sent.clear()
                    self._confirmed.clear()
                    self._to_read.clear()
                    self._idle.clear()
                    self._dirty = True
                    for cell in (*self._games.values(), *self._accounts.values()):
                        cell.subscribed.clear()
                self._pubsub = None
                if channels is not None:
                    channels.close()

    def _subscribe(self, channels: PubSub, leave: bool) -> None:
        """Subscribe the channels newly wanted (only this listener touches the
        pub/sub connection); with ``leave``, also unsubscribe those no longer wanted."""
        with self._lock:
            if not (self._dirty or leave):
                return
            self._dirty = False
            self._wake.clear()
            wanted = self._wanted()
            more = wanted - self._sent
            fewer: set[str] = set()
            if leave:
                # Unwanted at two re-reads in a row: a game waited on now and then (a
                # bot's ``?min_version`` after each of its intents) keeps its channel.
                unwanted = self._sent - wanted
                fewer, self._idle = unwanted & self._idle, unwanted - self._idle
            self._sent = (self._sent | more) - fewer
            self._confirmed -= fewer
        if fewer:
            channels.unsubscribe(sorted(fewer))
        if more:
            channels.subscribe(sorted(more))

    def _confirm(self, channel: str) -> None:
        """Redis confirmed a subscription: a stream's board channel or an account's
        may be used now; a game's version is read once (a write just before the
        subscription was not heard)."""
        with self._lock:
            if channel not in self._sent:
                return
            self._confirmed.add(channel)
            board = publish.board_game_of(channel)
            account = publish.account_of(channel)
            cell = (
                self._games.get(board)
                if board is not None
                else self._accounts.get(account)
                if account is not None
                else None
            )
            if cell is not None:
                cell.subscribed.set()
            game = publish.game_of(channel)
            if game is not None and game in self._games:
                self._to_read.append(game)

    def _read_confirmed(self) -> None:
        assert self._pubsub is not None
        with self._lock:
            games, self._to_read = self._to_read, []
        versions = self._pubsub.versions([keys.game(gid) for gid in games])
        self._drain(self._pubsub)
        for gid, raw in zip(games, versions, strict=True):
            cell = self._games.get(gid)
            if cell is not None and raw is not None:
                self._bump(cell, int(raw))

    def _deliver(self, message: dict[str, Any]) -> None:
        channel = message["channel"]
        channel = channel.decode() if isinstance(channel, bytes) else channel
        kind = message["type"]
        kind = kind.decode() if isinstance(kind, bytes) else kind
        if kind in ("subscribe", "ssubscribe"):
            self._confirm(channel)
            return
        if kind not in ("message", "smessage"):
            return
        self.heard += 1
        game = publish.board_game_of(channel)
        if game is not None:
            cell = self._games.get(game)
            if cell is not None and cell.board_watchers > 0:
                fields = publish.parse_board(message["data"])
                version = int(fields["version"])
                with cell.lock:
                    if not cell.boards or version > cell.boards[-1][0]:
                        head = cell.version
                        cell.boards.append((version, fields))
                        # A new dict: a join under way stores into the old one.
                        cell.chunks = {}
                        if cell.direct:
                            self._write_direct(cell, head, version, fields)
                        self._trim(cell)
                self._bump(cell, version)
            return
        game = publish.game_of(channel)
        if game is not None:
            cell = self._games.get(game)
            if cell is not None:
                try:
                    version = int(message["data"])
                except (TypeError, ValueError):
                    version = None
                self._bump(cell, version)
            return
        account = publish.account_of(channel)
        cell = self._accounts.get(account) if account is not None else None
        if cell is not None:
            with cell.lock:
                for queue in cell.queues:
                    queue.append(message["data"])
            self._bump(cell)

    def _share(self) -> None:
        """After a message: if ``_BUSY_SECONDS`` have passed since the listener
        last let the process's other greenlets (threads) run, let them run once.
        A listener with many boards waiting in its socket, each written to its
        streams, would otherwise serve nothing else (a ``/healthz``, an intent)
        until it has heard them all."""
        now = time.monotonic()
        if now - self._busy_since >= _BUSY_SECONDS:
            time.sleep(0)
            self._busy_since = time.monotonic()

    def _drain(self, channels: PubSub, most: int = 10_000) -> None:
        """Deliver the messages already received, without waiting (``most`` at
        most).  Called between reading versions from the hashes and applying
        them: a board published before the read is then heard before its
        version is, so a stream sends it instead of skipping to the hash's
        newest (a busy listener can have many boards waiting in its socket)."""
        for _ in range(most):
            message = channels.get_message(0, self._wake)
            if message is None:
                return
            self._deliver(message)
            self._share()

    def _resync(self, reset: bool) -> None:
        """Re-read every watched game's version in one round trip; wake the
        waiters of those that moved (all of them when ``reset``: after a
        reconnect, when versions may even have gone back, Redis having
        restarted empty)."""
        assert self._pubsub is not None
        with self._lock:
            games = list(self._games.items())
            accounts = list(self._accounts.values())
        if games:
            versions = self._pubsub.versions([keys.game(gid) for gid, _ in games])
            if not reset:
                self._drain(self._pubsub)
            for (_, cell), raw in zip(games, versions, strict=True):
                version = int(raw) if raw is not None else 0
                if reset or version > cell.version:
                    self._bump(cell, version, reset=reset)
                elif raw is None and cell.version > 0:
                    # The read model vanished (Redis flushed): its waiters ask
                    # for a catch-up when they re-read.
                    self._bump(cell, 0, reset=True)
        if reset:
            for cell in accounts:
                self._bump(cell)


def shutdown_all() -> None:
    """Every hub of this process: the server is stopping (gunicorn's
    ``post_worker_init`` hook watches for it: ``service/http/gunicorn_conf.py``)."""
    for hub in list(_HUBS):
        hub.shutdown()


#: How often :func:`wait_until` looks again at a read model that nothing
#: announces (``game_id`` None: a tournament's), in seconds.
POLL_SECONDS = 0.05


def wait_until(
    hub: Hub | None,
    game_id: str | None,
    read: Callable[[], T],
    done: Callable[[T], bool],
    timeout: float,
    on_wake: Callable[[T], None] | None = None,
) -> T:
    """The one wait for a read model: ``read()`` until ``done(value)`` or
    ``timeout`` seconds, and return the last value read.  A game's
    (``game_id``) sleeps on its announcements in between, never polling; a
    read model that nothing announces (``game_id`` None) is looked at again
    every ``POLL_SECONDS``.  ``on_wake(value)`` runs after each re-read that
    is not done."""
    deadline = time.monotonic() + timeout
    with hub.watch(game_id) if hub is not None and game_id is not None else contextlib.nullcontext() as watch:
        value = read()
        while not done(value) and not (hub is not None and hub.closing):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if watch is not None:
                watch.wait(left)
            else:
                time.sleep(min(POLL_SECONDS, left))
            value = read()
            if on_wake is not None and not done(value):
                on_wake(value)
    return value


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


#: Where ``create_app`` keeps the process's hub.
EXTENSION = "quarterdeck.hub"


def hub() -> Hub:
    """This app's hub (inside a request)."""
    from flask import current_app

    return current_app.extensions[EXTENSION]
