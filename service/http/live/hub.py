"""The hub: one per process, the fan-out of the projection worker's announcements
to every request of the process that waits on a game or an account.

It holds one Redis pub/sub connection (one per node on a Redis Cluster),
subscribed to exactly the channels of the games and accounts this process has
waiters for: a game's ``g:{<id>}:changed`` (published by the projection worker
inside the write it announces: ``projections/publish.py``) while anything waits
on the game, and nothing else.  A process with no waiters hears no
announcement.  The connection is the adapter's
(``service/adapters/announcements.py``: ``SUBSCRIBE`` on one Redis server,
``SSUBSCRIBE`` on a Redis Cluster, so an announcement reaches only the node of
its game and the processes that asked for that game); the composition root
hands the hub a factory that opens one (``bootstrap.announcements``), at its
start and after a failover.  A channel subscribed after its game was written
may have missed that write's announcement, so once Redis confirms a game's
subscription the hub re-reads the game's version.  A channel no longer waited
on is left once it has been unwanted at two safety re-reads in a row (2-4 s),
so a game waited on again a moment later costs no new subscription.

A request that waits registers on its game's :class:`Cell` and sleeps on the
cell's event; a message for the game raises the cell's version and sets the
event (replacing it by a fresh one), which wakes its waiters.  Nothing polls
PostgreSQL or Redis per waiter: the only timer is a safety re-read of the
watched games' versions, all in one pipelined round trip every
``SAFETY_SECONDS``, which also heals any message lost while the pub/sub
connection was away (it is re-read in full on every reconnect too) and notices
a read model that vanished (Redis flushed).

Under gunicorn's gevent worker (``make run``, ``compose.yaml``) every thread
and lock here is a greenlet and a cooperative lock, so a waiting request costs
a socket and a little memory, not a worker thread; under a threaded server
(the tests' werkzeug server) the same code runs on real threads.

Many followers of one game want the same thing at the same moment: the board
after the change they were woken for.  :meth:`Hub.fetch` lets the first of them
read it and hands the same bytes to the rest (one Redis read and one
serialisation per change and kind of viewer, not per follower).  A streamed
game's cell also keeps its board history (``history.py``) and the streams the
listener writes itself (``direct.py``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from projections import keys, publish
from service.adapters.announcements import PubSubLost
from service.http.live import direct
from service.http.live.direct import DirectStream
from service.http.live.history import BOARD_HISTORY, BoardHistory

if TYPE_CHECKING:
    from service.adapters.announcements import PubSub

log = logging.getLogger(__name__)

#: Seconds between the safety re-reads of every watched game's version (one
#: pipelined round trip per process, however many waiters).
SAFETY_SECONDS = 2.0
#: Account events kept per follower while it is busy writing (oldest dropped).
ACCOUNT_BACKLOG = 256
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

__all__ = ["BOARD_HISTORY", "Cell", "Hub", "Watch", "shutdown_all"]


class Cell:
    """What the waiters of one game (or account) share."""

    __slots__ = (
        "board_watchers",
        "changed",
        "direct",
        "history",
        "lines",
        "lock",
        "locks",
        "queues",
        "subscribed",
        "version",
        "watchers",
    )

    def __init__(self) -> None:
        #: Guards what the listener and the waiters share (the history, queues, direct streams).
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
        #: Set once the game's board channel (or the account's channel) is subscribed.
        self.subscribed = threading.Event()
        #: The boards heard for the game's streams (``history.py``).
        self.history = BoardHistory(self.lock)
        #: id(stream) -> the game streams the listener writes itself (``direct.py``).
        self.direct: dict[int, DirectStream] = {}


class Watch:
    """A registration on one game's (or account's) cell; see :meth:`Hub.watch`."""

    def __init__(self, hub: Hub, cell: Cell) -> None:
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
        self._games: dict[str, Cell] = {}
        self._accounts: dict[str, Cell] = {}
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
            # Until its first line, a stream may need any board heard (only
            # BOARD_HISTORY bounds what is kept for it).
            cell.history.follow(id(watch))
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
                    cell.history.positions.pop(id(watch), None)
                    if cell.board_watchers == 0:
                        cell.history.clear()
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

    def _enter(self, table: dict[str, Cell], key: str) -> Cell:
        with self._lock:
            cell = table.get(key)
            if cell is None:
                cell = table[key] = Cell()
                self._changed()
            cell.watchers += 1
            return cell

    def _leave(self, table: dict[str, Cell], key: str, cell: Cell) -> None:
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
        """The boards heard after ``after`` (``BoardHistory.after``)."""
        return watch.cell.history.after(key, after, shape)

    def chunk_after(
        self,
        watch: Watch,
        key: Any,
        after: int,
        shape: Callable[[dict[str, bytes]], tuple[bytes, bool]],
        finish: Callable[[int], bytes],
    ) -> tuple[int, bytes, bool] | None:
        """What a game stream sends after ``after`` (``BoardHistory.chunk_after``)."""
        return watch.cell.history.chunk_after(key, after, shape, finish)

    def sent(self, watch: Watch, version: int) -> None:
        """A game stream sent ``version`` (``BoardHistory.sent``)."""
        watch.cell.history.sent(id(watch), version)

    def write_directly(self, watch: Watch, stream: DirectStream, last: int, timeout: float) -> tuple[int, bool] | None:
        """Sleep while the listener writes ``stream`` itself (``direct.hold``): None at
        once for a stream not at the head; else ``(last version written, finished)``."""
        return direct.hold(watch.cell, stream, id(watch), last, timeout, self.closing)

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
            self._thread = threading.Thread(target=self._run, name="qd-live-hub", daemon=True)
            self._thread.start()

    def _cells(self) -> list[Cell]:
        with self._lock:
            return [*self._games.values(), *self._accounts.values()]

    def _bump(self, cell: Cell, version: int | None = None, reset: bool = False) -> None:
        if version is not None:
            cell.version = version if reset else max(cell.version, version)
        if cell.direct:
            with cell.lock:
                for stream in list(cell.direct.values()):
                    # A version the listener did not write (heard without its
                    # board, or gone back), or a shutdown: the stream's own path.
                    if self.closing or stream.last != cell.version:
                        direct.hand_back(cell, stream)
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
                    log.warning("live hub: Redis pub/sub lost (%s); reconnecting", exc.reason)
                self.connected = False
                time.sleep(pause)
                pause = min(pause * 2, 2.0)
            except Exception:  # a bug must not silence every follower of the process
                log.exception("live hub: listener failed; restarting it")
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
                    head = cell.version
                    added = cell.history.add(version, fields)
                if added:
                    if cell.direct:
                        direct.write_board(cell, head, version, fields)
                    with cell.lock:
                        cell.history.trim()
                self._bump(cell, version)
            return
        game = publish.game_of(channel)
        if game is not None:
            cell = self._games.get(game)
            if cell is not None:
                heard: int | None
                try:
                    heard = int(message["data"])
                except (TypeError, ValueError):
                    heard = None
                self._bump(cell, heard)
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
