"""The live hub (``service/http/live/``) against a real Redis: woken by
the projection's announcement, one shared read per change, nothing lost when
its subscription drops, a vanished read model noticed, and a shutdown that
wakes everyone.  Plus what a projection write announces (``projections/publish.py``)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis

from projections import keys, publish
from service.bootstrap import announcements
from service.http.live.direct import DirectStream, SocketSink
from service.http.live.history import BOARD_HISTORY
from service.http.live.hub import Hub, Watch
from service.http.live.waits import wait_until


@pytest.fixture
def r(settings):
    client = redis.Redis.from_url(settings.redis_url)
    yield client
    client.close()


@pytest.fixture
def hub(settings):
    h = Hub(announcements(settings), safety_seconds=0.5)
    yield h
    h.shutdown()


def _connected(h: Hub) -> None:
    deadline = time.monotonic() + 5
    while not h.connected and time.monotonic() < deadline:
        time.sleep(0.01)
    assert h.connected


def test_a_waiter_is_woken_by_the_announcement_with_its_version(hub, r):
    gid = str(uuid.uuid4())
    with hub.watch(gid) as watch:
        _connected(hub)
        watch.wait(0.5)  # the connect's resync
        # Joined before the test ends: the fixture closes ``r`` while a publisher
        # still reading its reply would fail in its thread.
        announcer = threading.Timer(0.2, lambda: r.publish(publish.game_channel(gid), "7"))
        announcer.start()
        started = time.monotonic()
        while watch.version < 7 and time.monotonic() - started < 5:
            watch.wait(5)
        announcer.join(5)
        assert watch.version == 7
        assert time.monotonic() - started < 2
    assert hub.watched() == 0  # the cell goes with its last waiter


def test_wait_until_reads_until_done_and_is_bounded(hub, r):
    gid = str(uuid.uuid4())
    key = keys.game(gid)
    r.hset(key, "version", 1)

    def later() -> None:
        r.hset(key, "version", 3)
        r.publish(publish.game_channel(gid), "3")

    writer = threading.Timer(0.3, later)
    writer.start()
    got = wait_until(hub, gid, lambda: int(r.hget(key, "version")), lambda v: v >= 3, timeout=5)
    writer.join(5)
    assert got == 3
    started = time.monotonic()
    assert wait_until(hub, gid, lambda: int(r.hget(key, "version")), lambda v: v >= 9, timeout=0.3) == 3
    assert 0.25 < time.monotonic() - started < 2


def test_followers_share_one_read_per_change(hub):
    gid = str(uuid.uuid4())
    reads = []

    def read() -> tuple[int, str]:
        reads.append(1)
        time.sleep(0.05)
        return 4, "the board at 4"

    got: list = []
    with hub.watch(gid) as watch:

        def follower() -> None:
            got.append(hub.fetch(watch, "public", read))

        threads = [threading.Thread(target=follower) for _ in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(reads) == 1 and got == [(4, "the board at 4")] * 20
        # A newer version heard of: the next fetch reads again, once.
        hub._bump(watch.cell, 5)
        hub.fetch(watch, "public", lambda: (5, "the board at 5"))
        assert hub.fetch(watch, "public", read) == (5, "the board at 5")
        assert len(reads) == 1


def test_what_is_published_while_the_subscription_is_away_is_not_lost(hub, r, settings):
    gid = str(uuid.uuid4())
    key = keys.game(gid)
    r.hset(key, "version", 2)
    with hub.watch(gid) as watch:
        _connected(hub)
        watch.wait(0.5)
        # Cut the hub's pub/sub connection; the change is written (and its
        # announcement lost) before it reconnects.
        deadline = time.monotonic() + 5
        while True:  # listed as pubsub once its first SUBSCRIBE is in
            ours = [c["id"] for c in r.client_list(_type="pubsub") if c.get("name") == hub.client_name]
            if ours or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert ours
        for client_id in ours:
            r.client_kill_filter(_id=client_id)
        r.hset(key, "version", 5)
        r.publish(publish.game_channel(gid), "5")
        deadline = time.monotonic() + 10
        while watch.version < 5 and time.monotonic() < deadline:
            watch.wait(1)
        assert watch.version == 5


def test_a_vanished_read_model_wakes_its_waiters(hub, r):
    gid = str(uuid.uuid4())
    key = keys.game(gid)
    r.hset(key, "version", 8)
    with hub.watch(gid) as watch:
        _connected(hub)
        deadline = time.monotonic() + 5
        while watch.version < 8 and time.monotonic() < deadline:
            watch.wait(1)
        r.delete(key)  # Redis flushed, say
        deadline = time.monotonic() + 5
        while watch.version != 0 and time.monotonic() < deadline:
            watch.wait(1)
        assert watch.version == 0


def test_shutdown_wakes_every_waiter(hub):
    gid = str(uuid.uuid4())
    woken = []
    with hub.watch(gid) as watch:

        def waiter() -> None:
            started = time.monotonic()
            watch.wait(30)
            woken.append(time.monotonic() - started)

        threads = [threading.Thread(target=waiter) for _ in range(5)]
        for t in threads:
            t.start()
        time.sleep(0.2)
        hub.shutdown()
        for t in threads:
            t.join(5)
    assert len(woken) == 5 and max(woken) < 5
    assert hub.closing


def test_account_events_arrive_in_order(hub, r):
    with hub.follow_account("Ann_X") as (watch, queue):
        _connected(hub)
        for i in range(3):
            publish.account_event(r, "ann_x", {"type": "your_turn", "game_id": "g", "version": i})
        deadline = time.monotonic() + 5
        while len(queue) < 3 and time.monotonic() < deadline:
            watch.wait(1)
        assert [json.loads(m)["version"] for m in queue] == [0, 1, 2]


def test_two_streams_of_one_account_each_keep_their_own_queue_and_leave(hub, r):
    """Two streams of one account in one process hold equal (empty) queues: the
    first to close removes its own, the other still hears events, and when both
    have closed the account's channel is left."""
    with hub.follow_account("Bea") as (_, first):
        with hub.follow_account("bea") as (watch, second):
            _connected(hub)
        # The second stream closed: the first still hears its account.
        publish.account_event(r, "bea", {"type": "your_turn", "game_id": "g", "version": 1})
        deadline = time.monotonic() + 5
        while not first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [json.loads(m)["version"] for m in first] == [1]
        assert not second
    with hub._lock:
        assert publish.account_channel("bea") not in hub._wanted()


def _write(r: redis.Redis, gid: str, version: int) -> None:
    """What a projection write publishes, for a game with one field besides its version."""
    fields = {"version": str(version), "view:public": f'{{"at":{version}}}'.encode(), "state": b"{secret}"}
    with r.pipeline() as pipe:
        publish.game_written(pipe, {"id": gid, "players": []}, fields, False, None)
        pipe.execute()


def test_a_game_stream_hears_every_board_in_order_and_the_slowest_one_bounds_what_is_kept(hub, r):
    """docs/API.md "Streams": a follower gets every version, even those the
    hash has moved past; boards are kept only until the slowest stream of the
    process sent them, and never more than BOARD_HISTORY."""
    gid = str(uuid.uuid4())
    shaped: list[int] = []

    def shape(fields: dict[str, bytes]) -> bytes:
        assert "state" not in fields  # only what a board shows leaves the projection
        shaped.append(int(fields["version"]))
        return fields["view:public"]

    with hub.watch(gid, boards=True) as slow, hub.watch(gid, boards=True) as fast:
        assert slow.cell.subscribed.is_set()  # subscribed before the caller's first read
        for v in (2, 3, 5, 8):
            _write(r, gid, v)
        deadline = time.monotonic() + 5
        while slow.version < 8 and time.monotonic() < deadline:
            slow.wait(1)
        expected = [(2, b'{"at":2}'), (3, b'{"at":3}'), (5, b'{"at":5}'), (8, b'{"at":8}')]
        assert hub.boards_after(slow, "k", 1, shape) == expected
        assert hub.boards_after(fast, "k", 3, shape) == expected[2:]
        assert shaped == [2, 3, 5, 8]  # once per version and key, shared by both followers
        hub.sent(fast, 8)
        hub.sent(slow, 3)  # the slowest: 2 and 3 are let go when the next board comes, 5 and 8 kept
        _write(r, gid, 9)
        while slow.version < 9 and time.monotonic() < deadline:
            slow.wait(1)
        assert [v for v, _ in hub.boards_after(slow, "k", 0, shape) if v <= 8] == [5, 8]
        for v in range(10, 9 + 2 * BOARD_HISTORY):
            _write(r, gid, v)
        last = 8 + 2 * BOARD_HISTORY
        while fast.version < last and time.monotonic() < deadline + 5:
            fast.wait(1)
        kept = [v for v, _ in hub.boards_after(slow, "k", 0, shape)]
        assert kept == list(range(last - BOARD_HISTORY + 1, last + 1))  # bounded: the newest
    assert hub.watched() == 0


def test_a_board_channel_is_only_subscribed_while_the_game_is_streamed(hub, r):
    gid = str(uuid.uuid4())
    channel = publish.board_channel(gid).encode()
    with hub.watch(gid):  # a wait, not a stream: no board channel
        _connected(hub)
        time.sleep(0.2)
        assert r.pubsub_numsub(channel) == [(channel, 0)]
    with hub.watch(gid, boards=True):
        assert r.pubsub_numsub(channel) == [(channel, 1)]
    deadline = time.monotonic() + 5
    while r.pubsub_numsub(channel) != [(channel, 0)] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert r.pubsub_numsub(channel) == [(channel, 0)]


class _Recorder:
    """Stands in for a pipeline: records what would be published."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, object]] = []

    def publish(self, channel: str, data: object) -> None:
        if isinstance(data, bytes):  # a board: its fields
            data = {k: v.decode() for k, v in publish.parse_board(data).items()}
        self.sent.append((channel, json.loads(data) if isinstance(data, str) and data.startswith("{") else data))


def _info(**extra: object) -> dict:
    return {"id": "g1", "players": ["ann", "bob"], **extra}


def _now(seconds_ago: float = 0) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds_ago)).isoformat().replace("+00:00", "Z")


def test_a_write_announces_its_version_and_its_account_seats_news():
    pipe = _Recorder()
    fields = {"version": "3", "to_act": "[1]", "auth": "[]"}
    publish.game_written(pipe, _info(accounts=[True, True], table="t1"), fields, False, _now())
    assert pipe.sent == [
        # The board (without the seats' token hashes), then the announcement.
        ("g:{g1}:board", {"version": "3", "to_act": "[1]"}),
        ("g:{g1}:changed", "3"),
        ("a:{ann}:events", {"type": "table_started", "table_id": "t1", "game_id": "g1"}),
        ("a:{bob}:events", {"type": "table_started", "table_id": "t1", "game_id": "g1"}),
        ("a:{bob}:events", {"type": "your_turn", "game_id": "g1", "version": 3}),
    ]
    pipe = _Recorder()
    publish.game_written(pipe, _info(accounts=[True, False]), {"version": "9", "to_act": "[]"}, True, _now())
    assert pipe.sent == [
        ("g:{g1}:board", {"version": "9", "to_act": "[]"}),
        ("g:{g1}:changed", "9"),
        ("a:{ann}:events", {"type": "game_finished", "game_id": "g1", "version": 9}),
    ]


def test_old_news_and_casual_seats_announce_the_version_only():
    for info, newest in [
        (_info(accounts=[True, True]), _now(3600)),
        (_info(), _now()),
        (_info(accounts=[False, False]), _now()),
    ]:
        pipe = _Recorder()
        publish.game_written(pipe, info, {"version": "4", "to_act": "[0, 1]"}, False, newest)
        assert pipe.sent == [("g:{g1}:board", {"version": "4", "to_act": "[0, 1]"}), ("g:{g1}:changed", "4")]


def _until(check, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.02)
    return check()


def test_a_process_with_no_waiters_receives_no_announcements(hub, r):
    """docs/SCALING.md, "Subscriptions per game": the hub subscribes to the games it
    has waiters for and to nothing else (no pattern), so an announcement reaches only
    the processes that wait on its game; PUBLISH answers how many subscribers got it."""
    watched = str(uuid.uuid4())
    with hub.watch(watched) as watch:
        _connected(hub)
        assert _until(lambda: hub.subscriptions() == 1)
        assert _until(lambda: r.publish(publish.game_channel(watched), "1") == 1)
        assert _until(lambda: watch.version == 1)
    assert r.pubsub_numpat() == 0
    # The channel is left at the next safety re-read (0.5 s here).
    assert _until(lambda: hub.subscriptions() == 0)
    assert _until(lambda: r.pubsub_numsub(publish.game_channel(watched))[0][1] == 0)
    heard = hub.heard
    others = [str(uuid.uuid4()) for _ in range(200)]
    receivers = [r.publish(publish.game_channel(gid), "5") for gid in [watched, *others]]
    receivers += [r.publish(publish.board_channel(gid), b"[]\n") for gid in others[:20]]
    receivers.append(r.publish(publish.account_channel("nobody-waits"), "{}"))
    assert receivers == [0] * len(receivers)
    time.sleep(0.2)
    assert hub.heard == heard


def test_a_write_just_before_the_subscription_is_read_once_confirmed(settings, r):
    """A game written (and announced) before the hub's subscription to it took effect
    is not missed until the safety re-read: the hub reads its version on confirmation."""
    h = Hub(announcements(settings), safety_seconds=60)
    try:
        gid = str(uuid.uuid4())
        r.hset(keys.game(gid), "version", 4)
        with h.watch(gid) as watch:
            started = time.monotonic()
            assert _until(lambda: watch.version == 4, 3)
            assert time.monotonic() - started < 2
    finally:
        h.shutdown()


def test_followers_at_one_place_share_one_joined_write(hub, r):
    """A game stream's write after a version is joined once per kind of viewer
    and place, and handed to every follower there; it stops at a finished
    board with the closing line after it, and the next board makes a new one."""
    gid = str(uuid.uuid4())
    shaped: list[int] = []

    def shape(fields: dict[str, bytes]) -> tuple[bytes, bool]:
        shaped.append(int(fields["version"]))
        return fields["view:public"] + b"\n", int(fields["version"]) == 4

    def finish(version: int) -> bytes:
        return b"end %d\n" % version

    with hub.watch(gid, boards=True) as one, hub.watch(gid, boards=True) as two:
        for v in (2, 3):
            _write(r, gid, v)
        deadline = time.monotonic() + 5
        while one.version < 3 and time.monotonic() < deadline:
            one.wait(1)
        first = hub.chunk_after(one, "k", 1, shape, finish)
        assert first == (3, b'{"at":2}\n{"at":3}\n', False)
        assert hub.chunk_after(two, "k", 1, shape, finish) is first  # the same bytes, not joined again
        assert shaped == [2, 3]
        assert hub.chunk_after(one, "k", 3, shape, finish) is None  # nothing heard after 3
        for v in (4, 5):
            _write(r, gid, v)
        while one.version < 5 and time.monotonic() < deadline:
            one.wait(1)
        assert hub.chunk_after(two, "k", 3, shape, finish) == (4, b'{"at":4}\nend 4\n', True)
        assert hub.chunk_after(one, "k", 1, shape, finish) == (4, b'{"at":2}\n{"at":3}\n{"at":4}\nend 4\n', True)


def test_wait_until_looks_again_at_a_read_model_nothing_announces():
    """A tournament's read model has no announcement: the same wait reads it
    again every POLL_SECONDS, bounded by its timeout."""
    reads = iter([None, None, "here"])
    assert wait_until(None, None, lambda: next(reads), lambda v: v is not None, timeout=5) == "here"
    started = time.monotonic()
    assert wait_until(None, None, lambda: None, lambda v: v is not None, timeout=0.2) is None
    assert 0.2 <= time.monotonic() - started < 2


# -- streams the listener writes itself (Hub.write_directly) ------------------------
def _direct_setup(hub: Hub, r: redis.Redis, gid: str, watch: Watch, version: int) -> None:
    """The stream of ``watch`` sent ``version``, the newest board heard."""
    _write(r, gid, version)
    deadline = time.monotonic() + 5
    while watch.version < version and time.monotonic() < deadline:
        watch.wait(1)
    assert watch.version == version
    hub.sent(watch, version)


@contextlib.contextmanager
def _at_head(hub: Hub, r: redis.Redis, version: int = 2) -> Iterator[tuple[str, Watch, socket.socket, socket.socket]]:
    """A game stream of a new game that sent ``version``, the newest board heard;
    yields (game id, its watch, the server's end of its socket, the client's end)."""
    gid = str(uuid.uuid4())
    ours, theirs = socket.socketpair()
    ours.settimeout(5)  # a file that never blocks, as gevent's sockets
    with ours, theirs, hub.watch(gid, boards=True) as watch:
        _direct_setup(hub, r, gid, watch, version)
        yield gid, watch, ours, theirs


def _writer(sock: socket.socket, shaped: list[int], chunked: bool = True, finished_at: int = 0) -> DirectStream:
    def shape(fields: dict[str, bytes]) -> tuple[bytes, bool]:
        shaped.append(int(fields["version"]))
        return fields["view:public"] + b"\n", int(fields["version"]) == finished_at

    def finish(version: int) -> bytes:
        return b"end %d\n" % version

    return DirectStream(SocketSink(sock, chunked), "k", shape, finish)


class _Direct(threading.Thread):
    """``hub.write_directly`` in a thread of its own (as a stream's greenlet)."""

    def __init__(self, hub: Hub, watch: Watch, writer: DirectStream, last: int, timeout: float) -> None:
        super().__init__(daemon=True)
        self.args_ = (hub, watch, writer, last, timeout)
        self.got: Any = "not yet"
        self.took = 0.0

    def run(self) -> None:
        hub, watch, writer, last, timeout = self.args_
        started = time.monotonic()
        self.got = hub.write_directly(watch, writer, last, timeout)
        self.took = time.monotonic() - started

    def registered(self) -> None:
        deadline = time.monotonic() + 5
        while not self.args_[1].cell.direct and self.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)
        assert self.args_[1].cell.direct, self.got


def _read_exactly(sock: socket.socket, size: int, timeout: float = 5.0) -> bytes:
    sock.settimeout(timeout)
    out = b""
    while len(out) < size:
        chunk = sock.recv(size - len(out))
        if not chunk:
            break
        out += chunk
    return out


def _chunk(data: bytes) -> bytes:
    return b"%X\r\n%s\r\n" % (len(data), data)


def test_a_stream_at_the_head_is_written_by_the_listener_in_order_until_the_game_ends(hub, r):
    """docs/API.md "Streams": each board once, in version order, framed as an
    HTTP/1.1 chunk, and the finished board followed by the end line; the
    stream is handed back when the game is finished."""
    shaped: list[int] = []
    with _at_head(hub, r) as (gid, watch, ours, theirs):
        writer = _writer(ours, shaped, finished_at=5)
        assert SocketSink.usable(ours)
        direct = _Direct(hub, watch, writer, 2, timeout=10)
        direct.start()
        direct.registered()
        for v in (3, 5):
            _write(r, gid, v)
        expected = _chunk(b'{"at":3}\n') + _chunk(b'{"at":5}\nend 5\n')
        assert _read_exactly(theirs, len(expected)) == expected
        direct.join(5)
        assert direct.got == (5, True)
        assert direct.took < 5  # handed back at the end, not at the timeout
        assert shaped == [3, 5]
        assert watch.cell.history.positions[id(watch)] == 5
        assert not watch.cell.direct


def test_an_http_1_0_stream_is_written_without_chunks(hub, r):
    with _at_head(hub, r) as (gid, watch, ours, theirs):
        direct = _Direct(hub, watch, _writer(ours, [], chunked=False), 2, timeout=0.5)
        direct.start()
        direct.registered()
        _write(r, gid, 3)
        assert _read_exactly(theirs, 9) == b'{"at":3}\n'
        direct.join(5)
        assert direct.got == (3, False)  # time up: the stream pings, then carries on


class _SlowSink:
    """A sink that notes whether its game's cell was locked while it was written,
    and takes a while over each write (a socket buffer being copied)."""

    chunked = True

    def __init__(self, sock: socket.socket, watch: Watch) -> None:
        self.inner = SocketSink(sock, True)
        self.watch = watch
        self.locked_during_write: list[bool] = []
        self.writing = threading.Event()

    def frame(self, line: bytes) -> bytes:
        return self.inner.frame(line)

    def offer(self, data: bytes) -> int:
        self.writing.set()
        self.locked_during_write.append(self.watch.cell.lock.locked())
        time.sleep(0.3)
        return self.inner.offer(data)

    def send(self, data: bytes) -> None:
        self.inner.send(data)


def test_no_lock_is_held_while_the_listener_writes_a_stream(hub, r):
    """The listener writes a stream's socket with its game's lock released (a
    waiter of the game is not held up by a socket), and a stream handed back
    during that write (here by a shutdown) is handed back once the write is done,
    the line whole."""
    with _at_head(hub, r) as (gid, watch, ours, theirs):
        sink = _SlowSink(ours, watch)
        stream = DirectStream(sink, "k", lambda f: (f["view:public"] + b"\n", False), lambda v: b"")
        direct = _Direct(hub, watch, stream, 2, timeout=10)
        direct.start()
        direct.registered()
        _write(r, gid, 3)
        assert sink.writing.wait(5)
        # Meanwhile the game's lock is free: a waiter (here the shutdown) takes it at once.
        started = time.monotonic()
        hub.shutdown()
        assert time.monotonic() - started < 0.2
        direct.join(5)
        assert sink.locked_during_write == [False]
        assert direct.got == (3, False)  # handed back once its write was done
        assert direct.took < 5
        assert _read_exactly(theirs, len(_chunk(b'{"at":3}\n'))) == _chunk(b'{"at":3}\n')
        assert not watch.cell.direct


def test_a_stream_not_at_the_head_is_left_to_its_own_path(hub, r):
    with _at_head(hub, r) as (gid, watch, ours, theirs):
        assert hub.write_directly(watch, _writer(ours, []), 1, 5) is None  # it lacks version 2
        assert not watch.cell.direct


def test_a_version_heard_without_its_board_hands_the_stream_back(hub, r):
    """An announcement whose board was not heard (the board channel dropped it):
    the stream reads the newest board the common way."""
    with _at_head(hub, r) as (gid, watch, ours, theirs):
        direct = _Direct(hub, watch, _writer(ours, []), 2, timeout=10)
        direct.start()
        direct.registered()
        r.publish(publish.game_channel(gid), "4")
        direct.join(5)
        assert direct.got == (2, False)
        assert direct.took < 5


def test_a_board_already_read_from_the_hash_is_not_written_again(hub, r):
    """A stream's first board may come from the hash before the board channel
    brings that version: the listener skips it and writes the next."""
    with _at_head(hub, r) as (gid, watch, ours, theirs):
        # Version 3 read from the hash (as a new stream's first line) before its board came.
        assert hub.fetch(watch, "k", lambda: (3, b"from the hash")) == (3, b"from the hash")
        hub.sent(watch, 3)
        direct = _Direct(hub, watch, _writer(ours, []), 3, timeout=10)
        direct.start()
        direct.registered()
        _write(r, gid, 3)
        _write(r, gid, 4)
        expected = _chunk(b'{"at":4}\n')
        assert _read_exactly(theirs, len(expected)) == expected
        theirs.settimeout(0.3)
        with pytest.raises(TimeoutError):
            theirs.recv(1)  # nothing else: version 3 was not written twice
        assert direct.is_alive()
        hub.shutdown()  # hands every stream back
        direct.join(5)
        assert direct.got == (4, False)


def test_a_socket_that_takes_part_of_a_write_hands_the_rest_to_its_stream(hub, r):
    """A slow reader: what its socket did not take is written by the stream
    itself (with the socket's write limit), and nothing is lost or repeated."""
    gid = str(uuid.uuid4())
    ours, theirs = socket.socketpair()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    theirs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    ours.settimeout(10)
    big = b"x" * 300_000
    fields = {"version": "3", "view:public": big, "state": b"{secret}"}
    with ours, theirs, hub.watch(gid, boards=True) as watch:
        _direct_setup(hub, r, gid, watch, 2)
        direct = _Direct(hub, watch, _writer(ours, []), 2, timeout=30)
        direct.start()
        direct.registered()
        with r.pipeline() as pipe:
            publish.game_written(pipe, {"id": gid, "players": []}, fields, False, None)
            pipe.execute()
        time.sleep(0.5)  # the reader is slow: the listener's write cannot go through whole
        expected = _chunk(big + b"\n")
        got = _read_exactly(theirs, len(expected), timeout=10)
        direct.join(10)
        assert got == expected
        assert direct.got == (3, False)
        assert direct.took < 10


def test_a_busy_listener_hears_the_boards_before_the_versions_it_re_reads(settings, r):
    """The safety re-read finds a hash ahead of the boards still waiting in the
    listener's socket: they are heard first, so a stream never sees a version
    whose board it could not send (it would skip to the hash's newest)."""
    hub = Hub(announcements(settings), safety_seconds=0.3)
    gid = str(uuid.uuid4())
    ahead: list[tuple[int, int]] = []
    deliver, bump = hub._deliver, hub._bump

    def slow_deliver(message: dict[str, Any]) -> None:
        channel = message["channel"]
        if publish.board_game_of(channel.decode() if isinstance(channel, bytes) else channel) == gid:
            time.sleep(0.5)  # longer than the re-read's period: it runs with boards waiting
        deliver(message)

    def checked_bump(cell: Any, version: int | None = None, reset: bool = False) -> None:
        bump(cell, version, reset)
        heard = cell.history.boards[-1][0] if cell.history.boards else 0
        if cell.board_watchers and cell.version > heard:
            ahead.append((cell.version, heard))

    hub._deliver = slow_deliver  # type: ignore[method-assign]
    hub._bump = checked_bump  # type: ignore[method-assign]
    try:
        with hub.watch(gid, boards=True) as watch:
            for v in (2, 3, 4, 5):
                with r.pipeline() as pipe:  # as the projection writes: the hash, then what it publishes
                    pipe.hset(keys.game(gid), "version", v)
                    fields = {"version": str(v), "view:public": b"{}"}
                    publish.game_written(pipe, {"id": gid, "players": []}, fields, False, None)
                    pipe.execute()
            deadline = time.monotonic() + 15
            while watch.version < 5 and time.monotonic() < deadline:
                watch.wait(1)
            assert watch.version == 5
            assert [v for v, _ in watch.cell.history.boards] == [2, 3, 4, 5]
    finally:
        hub.shutdown()
        r.delete(keys.game(gid))
    assert ahead == []
