"""docs/API.md "Streams": a game's board pushed to the caller as it changes,
an account's news (``GET /v1/account/stream``), and what every long-lived
response shares (the live events feed too).

``GET /v1/games/{id}/stream`` answers NDJSON (Server-Sent Events with
``Accept: text/event-stream``).  Its first line is the caller's board — the
body of ``GET /v1/games/{id}`` for the same token, plus ``legal`` for a seat,
built by the same functions (``views.board_body``, the ``GameOut`` schema) —
then one board line each time the read model changes, in version order,
``{"type": "ping"}`` every 15 s, and a last ``{"type": "end", "reason", "version"}``
line: ``finished`` (the game is over: do not reconnect), ``shutdown`` (the
server is stopping), ``max_duration`` or ``idle`` (reconnect when you like:
a new stream starts with the whole board).

What a stream costs: a socket and a greenlet (``service/http/live/``), no
worker thread, and no reading per follower: the board of a version is read and
serialised once per process and kind of viewer.  Under gunicorn's gevent worker
a stream at the head of its game is written by the process's live hub itself,
one non-blocking write per line, and its greenlet sleeps until its next ping
(``live/direct.py``).  What one client
can hold is bounded: its stream slots (per client address, and per account
key: ``service/adapters/stream_slots.py``), a maximum and an idle duration,
and a write time limit (a reader that stops reading is dropped).  The read
models are read through the read side (``service/views.py``).
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import orjson
from flask import Response, abort, jsonify, request
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from schemas import openapi
from schemas.http import ErrorOut, GameOut
from service import bootstrap, resume, views
from service.adapters.pooled import StoreUnavailable
from service.adapters.stream_slots import SlotsFull
from service.games.base import ADMIN
from service.http import games, live
from service.http.common import principal, require_account, services
from service.http.errors import ApiError
from service.http.live import framing
from service.http.live.direct import DirectStream, SocketSink
from service.http.live.history import BOARD_HISTORY
from service.http.live.hub import Hub, Watch

if TYPE_CHECKING:
    from service.adapters.stream_slots import StreamSlots

blp = Blueprint("streams", __name__, url_prefix="/v1", description="Streams: a game's board as it changes")

#: Sent as SSE ``retry:`` (milliseconds): how soon an EventSource reconnects.
SSE_RETRY_MS = 2000
#: A write that cannot complete in this many seconds drops the client (a
#: reader that stopped reading must not hold its slot for ever).
WRITE_SECONDS = 30.0
#: ``Last-Event-ID`` values beyond this are ignored.
_MAX_ID = 2**31 - 1

_GAME_OUT = GameOut()


# -- limits ---------------------------------------------------------------------
def too_many_streams(scope: str, limit: int) -> Response:
    err = ApiError(
        429,
        "too_many_streams",
        f"At most {limit} streams may be open at once per client {scope}; close one first.",
        {"scope": scope, "limit": limit, "retry_after_seconds": 15},
    )
    resp = jsonify(err.to_json())
    resp.status_code = 429
    resp.headers["Retry-After"] = "15"
    return resp


def open_slots() -> StreamSlots:
    """This request's stream slots, taken (or 429): per client address, and
    per account key when one is sent (``Settings.streams_per_key``)."""
    svc = services()
    settings = svc.settings
    slots = bootstrap.stream_slots(svc.components, lease_seconds=max(60.0, 4 * settings.stream_ping_seconds))
    clients = [("address", request.remote_addr or "unknown", settings.streams_per_address)]
    caller = principal()
    if caller.account is not None:
        clients.append(("key", caller.account.account_id, settings.streams_per_key))
    try:
        slots.acquire(clients)
    except SlotsFull as full:
        abort(too_many_streams(full.scope, full.limit))
    return slots


# -- framing --------------------------------------------------------------------
def wants_sse() -> bool:
    return "text/event-stream" in request.headers.get("Accept", "")


def last_event_id() -> int | None:
    """The SSE ``Last-Event-ID`` header as a number (``None`` when absent or
    empty); anything else is ``400 invalid_last_event_id``.  ASCII digits
    only: ``str.isdigit`` also accepts Unicode digits such as ``²``, which
    ``int`` refuses."""
    raw = request.headers.get("Last-Event-ID", "").strip()
    if not raw:
        return None
    if raw.isascii() and raw.isdigit() and len(raw) <= 10 and int(raw) <= _MAX_ID:
        return int(raw)
    raise ApiError(
        400,
        "invalid_last_event_id",
        f"Last-Event-ID must be a version: a whole number from 0 to {_MAX_ID}.",
        {"max": _MAX_ID},
    )


ndjson = framing.ndjson
sse = framing.sse


def sse_retry() -> bytes:
    """The first block of an SSE stream: how soon an EventSource reconnects."""
    return framing.sse_retry(SSE_RETRY_MS) + b"\n"


class _Body:
    """A stream's body that frees its slots when the server closes it, even
    if it was never iterated (the client left before the first byte)."""

    def __init__(self, lines: Iterator[bytes], slots: StreamSlots | None) -> None:
        self.lines = lines
        self.slots = slots

    def __iter__(self) -> Iterator[bytes]:
        return self.lines

    def close(self) -> None:
        try:
            close = getattr(self.lines, "close", None)
            if close is not None:
                close()
        finally:
            if self.slots is not None:
                self.slots.release()


def direct_stream(
    key: Any, shape: Callable[[dict[str, bytes]], tuple[bytes, bool]], finish: Callable[[int], bytes]
) -> DirectStream | None:
    """This request's stream as the hub's listener writes it (``live/direct.py``),
    or None where it may not: a server whose socket blocks (the tests' threaded
    server) or is not handed to the app.  gunicorn frames a body in HTTP/1.1
    chunks unless the client speaks HTTP/1.0 (a stream has no Content-Length);
    the listener's writes are framed the same way."""
    sock = request.environ.get("gunicorn.socket")
    if not SocketSink.usable(sock):
        return None
    chunked = request.environ.get("SERVER_PROTOCOL", "HTTP/1.0") != "HTTP/1.0"
    return DirectStream(SocketSink(sock, chunked), key, shape, finish)


def streaming(body: Iterator[bytes], is_sse: bool, slots: StreamSlots | None = None) -> Response:
    """The response of a long-lived stream: sent as it is produced, never
    stored; ``slots`` are released when it ends, however it ends."""
    sock = request.environ.get("gunicorn.socket")
    resp = Response(_Body(body, slots), mimetype="text/event-stream" if is_sse else "application/x-ndjson")
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["X-Accel-Buffering"] = "no"  # a buffering proxy in front must pass lines on at once
    if sock is not None:
        # A client that stops reading is dropped after WRITE_SECONDS of a
        # blocked write, instead of holding its greenlet and slot for ever.
        sock.settimeout(WRITE_SECONDS)
        # A stream's connection is not kept alive after it: a stopping server
        # must not wait for the client's next request (gunicorn honours this).
        resp.headers["Connection"] = "close"
    return resp


# -- the game stream ------------------------------------------------------------
def _line_fields() -> dict[str, fields.Field]:
    """Every field a line of the game stream can carry: a board line is the body
    of ``GET /v1/games/{id}`` (each of ``GameOut``'s fields, none required, since
    ``ping`` and ``end`` lines have none of them), plus ``type``, ``legal`` and
    ``reason``; a generated client's model then drops nothing of a board."""
    out: dict[str, fields.Field] = {}
    for name, field in GameOut().fields.items():
        copied = copy.copy(field)
        copied.required = False
        copied.metadata = {**field.metadata, "description": "board lines: " + field.metadata.get("description", name)}
        out[name] = copied
    out["type"] = fields.String(
        required=True,
        validate=validate.OneOf(["board", "ping", "end"]),
        metadata={"description": "`board` (the body of GET /v1/games/{id}), `ping` or `end`"},
    )
    out["legal"] = fields.List(fields.Dict(), metadata={"description": "board lines for a seat: its legal intents"})
    out["reason"] = fields.String(metadata={"description": "`end`: finished | shutdown | max_duration | idle"})
    out["version"] = fields.Integer(metadata={"description": "board and end lines: the version shown / last shown"})
    return out


StreamLine = Schema.from_dict(_line_fields(), name="StreamLine")


def board_reader(
    gid: str, viewer: Any, is_sse: bool = False
) -> tuple[
    Any,
    Callable[[Any], tuple[int, tuple[bytes, bool]] | None],
    Callable[[dict[str, bytes]], tuple[bytes, bool]],
]:
    """(cache key, read, shape) of ``viewer``'s board line, framed as sent
    (NDJSON, or an SSE event with ``is_sse``): ``read(r)`` is one ``HMGET`` (the
    board and the legal list of one version) of the newest board, on the read
    side's client ``r`` (``views.read_board_fields``: its failure raises
    ``views.ReadModelsUnavailable``); ``shape``
    makes the line of a version's fields as the board channel carried them
    (``Hub.boards_after``).  Both shape it exactly as ``GET`` does.  The key
    names the kind of viewer and the framing: a line is made once per key and
    version, and every follower of that key is handed the same bytes."""
    seat = viewer if isinstance(viewer, int) and viewer != ADMIN else None
    names = views.board_names(viewer) + ([f"legal:{seat}"] if seat is not None else [])
    names = ["version", *(n for n in names if n != "version")]
    key = ("board", names[-1], is_sse)

    def shape(model: dict[str, Any]) -> tuple[bytes, bool]:
        # "type" and "version" lead the line, so a client that only tracks
        # versions reads them without parsing the board (docs/API.md, "Streams").
        version = int(model["version"])
        line = {
            "type": "board",
            "version": version,
            **_GAME_OUT.dump(views.board_body(gid, viewer, model)),
        }
        if seat is not None:
            line["legal"] = json.loads(model.get(f"legal:{seat}") or b"[]")
        data = ndjson(line)
        return (sse("board", data, version) if is_sse else data), line["status"] == "finished"

    def read(r: Any) -> tuple[int, tuple[bytes, bool]] | None:
        values = views.read_board_fields(r, gid, names)
        if values[0] is None:
            return None
        return int(values[0]), shape(dict(zip(names, values, strict=True)))

    return key, read, shape


def deliver(
    watch: Watch,
    step: Callable[[], tuple[bytes, bool]],
    end: Callable[[str], bytes],
    slots: StreamSlots,
    ping: bytes,
    ping_seconds: float,
    idle_seconds: float,
    max_seconds: float,
    direct: Callable[[float], bool | None] | None = None,
) -> Iterator[bytes]:
    """The loop of every live response (game streams, the live events feed,
    account streams): ``step()`` gives what to send now, already framed and
    joined into one write, and whether that was the last of it; between steps
    the follower sleeps on its game's announcements (``watch``).  ``end(reason)``
    is the closing line of ``shutdown``, ``max_duration`` and ``idle`` (empty:
    none); ``ping`` is sent every ``ping_seconds`` (empty: none), when the
    stream's slots are renewed too.  ``direct(timeout)``, if given, sleeps
    instead while the hub writes the stream's lines itself
    (``Hub.write_directly``): True if it wrote any, False if none, None if it
    could not (the stream is not at the head), and then the follower sleeps
    as usual."""
    hub = watch.hub
    started = changed = time.monotonic()
    next_ping = started + ping_seconds
    while True:
        data, finished = step()
        if data:
            yield data
            changed = time.monotonic()
        if finished:
            return
        if hub.closing:
            yield end("shutdown")
            return
        now = time.monotonic()
        if now - started >= max_seconds:
            yield end("max_duration")
            return
        if now - changed >= idle_seconds:
            if line := end("idle"):
                yield line
            return
        if now >= next_ping:
            if ping:
                yield ping
            slots.renew()
            next_ping = now + ping_seconds
        timeout = min(next_ping, started + max_seconds, changed + idle_seconds) - now
        wrote = direct(timeout) if direct is not None else None
        if wrote is None:
            watch.wait(timeout)
        elif wrote:
            changed = time.monotonic()


class GameFollower:
    """Where one game stream is, and what it sends next (``step``, for
    :func:`deliver`): the boards heard since its last line, from the hub's board
    history, else the newest board from the read model.  ``read()`` reads the
    newest board (``board_reader``'s ``read``), ``shape`` and ``finish`` make its
    lines; ``catch_up(gid)`` asks for a read model that went away; ``resumed``: the
    SSE ``Last-Event-ID`` it starts after; ``stream``: how the hub's listener writes
    it at the head (None: never)."""

    def __init__(
        self,
        hub: Hub,
        gid: str,
        key: Any,
        read: Callable[[], tuple[int, tuple[bytes, bool]] | None],
        shape: Callable[[dict[str, bytes]], tuple[bytes, bool]],
        finish: Callable[[int], bytes],
        catch_up: Callable[[str], None],
        resumed: int | None,
        stream: DirectStream | None,
    ) -> None:
        self.hub, self.gid, self.key = hub, gid, key
        self.read, self.shape, self.finish, self.catch_up = read, shape, finish, catch_up
        self.stream = stream
        #: Its registration on the game (set once the body runs).
        self.watch: Watch | None = None
        #: The last version sent.
        self.last = resumed if resumed is not None else 0
        #: A board was sent (or the client had one: ``Last-Event-ID``).
        self.sent_any = resumed is not None
        #: The first line is still to be read from the read model.
        self.fresh = True
        #: A read model that went away was asked for (once, until it is back).
        self.asked = False
        #: The listener wrote the finished board and the end line.
        self.ended = False

    def _newest(self) -> tuple[int, tuple[bytes, bool]] | None:
        assert self.watch is not None
        try:
            return self.hub.fetch(self.watch, self.key, self.read)
        except views.ReadModelsUnavailable:
            return None  # Redis away: the next announcement or safety re-read retries

    def missed(self, store: Any) -> Iterator[bytes]:
        """A resumed stream: the boards the client missed before the newest (which
        :meth:`step` sends from the read model), rebuilt from the event stream."""
        newest = self._newest()
        if newest is not None and newest[0] > self.last:
            for version, (data, _) in resume.boards_between(
                store, self.gid, self.last, newest[0], self.shape, BOARD_HISTORY
            ):
                if version < newest[0]:
                    yield data
                    self.last = version

    def step(self) -> tuple[bytes, bool]:
        """What to send now, joined into one write, and whether it was the last."""
        watch = self.watch
        assert watch is not None
        if self.ended:
            return b"", True  # the hub wrote the finished board and the end line
        if self.sent_any and watch.version < self.last:
            # The read model vanished or went back (Redis flushed or
            # restarted empty): ask for it once; its announcement wakes us.
            if not self.asked:
                views.ask_for_read_model(self.catch_up, self.gid)
            self.asked = True
        else:
            self.asked = False
        out = b""
        if self.sent_any and watch.version > self.last:
            # Every version heard since the last line, in order, from the
            # board channel (not only the newest: the hash has it), joined
            # once for every follower of this kind at this place.
            got = self.hub.chunk_after(watch, self.key, self.last, self.shape, self.finish)
            if got is not None:
                self.last, out, finished = got
                self.hub.sent(watch, self.last)
                if finished:
                    return out, True
        if self.fresh or watch.version > self.last:
            # The first line, or versions the board channel did not bring
            # (heard while it was away, or more than the hub keeps): the
            # newest board, from the hash.
            self.fresh = False
            newest = self._newest()
            if newest is not None and (newest[0] > self.last or not self.sent_any):
                version, (data, finished) = newest
                self.last, self.sent_any = version, True
                self.hub.sent(watch, self.last)
                return out + data + (self.finish(self.last) if finished else b""), finished
        return out, False

    def direct(self, timeout: float) -> bool | None:
        """Sleep up to ``timeout`` while the hub's listener writes the stream
        (``Hub.write_directly``): whether it wrote any line, or None if it could not."""
        if self.stream is None or not self.sent_any:
            return None
        assert self.watch is not None
        got = self.hub.write_directly(self.watch, self.stream, self.last, timeout)
        if got is None:
            return None
        wrote = got[0] > self.last
        self.last, self.ended = got
        return wrote


@blp.route("/games/<uuid:game_id>/stream", methods=["GET"])
@openapi.stream(
    "StreamLine",
    "The caller's board first (the body of `GET /v1/games/{id}`, plus `legal` for a seat), then a board line each"
    ' time the read model changes, `{"type": "ping"}` every 15 s, and a last `{"type": "end", "reason", "version"}`'
    ' (docs/API.md, "Streams").',
    sse="Server-Sent Events: `retry:` first, then `id: <version>`, `event: board`, `data: <StreamLine>` per board,"
    " and `event: ping` / `event: end`.  `Last-Event-ID` (a version) skips boards the client has; a finished game"
    " whose last version it has is answered 204 (an EventSource stops).",
)
@blp.response(
    200,
    StreamLine,
    content_type="application/x-ndjson",
    description="NDJSON, one line per change (SSE with `Accept: text/event-stream`): the caller's board first "
    "(the body of `GET /v1/games/{id}`, plus `legal` for a seat), then a board line each time the read model "
    'changes, `{"type": "ping"}` every 15 s, and a final `{"type": "end", "reason", "version"}`.',
)
@blp.alt_response(204, description="SSE only: `Last-Event-ID` is the last version of a finished game")
@blp.alt_response(403, schema=ErrorOut, description="A token that belongs to no seat of this game")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
@blp.alt_response(429, schema=ErrorOut, description="too_many_streams: this client has too many streams open")
@blp.alt_response(503, schema=ErrorOut, description="Redis or the game's read model unavailable")
def game_stream(game_id: Any) -> Response:
    """The caller's board, then one line per change until the game ends."""
    svc = services()
    hub = live.current_hub()
    settings = svc.settings
    gid = str(game_id)
    viewer = games.viewer_of(gid)  # 404, 403 and 503 before any byte is sent
    # The board exists (or 503): waits, bounded, for a read model being built.
    head = games.read_game(gid, ["status"])
    is_sse = wants_sse()
    resumed = last_event_id() if is_sse else None
    if resumed is not None and head["status"] == b"finished" and resumed >= int(head["version"]):
        # SSE: a reconnect after the end; 204 tells an EventSource to stop.
        return Response(status=204)
    slots = open_slots()
    r = svc.redis
    cache_key, read, shape = board_reader(gid, viewer, is_sse)

    def frame(kind: str, obj: dict[str, Any]) -> bytes:
        return sse(kind, ndjson(obj)) if is_sse else ndjson(obj)

    def finish(version: int) -> bytes:
        return frame("end", {"type": "end", "reason": "finished", "version": version})

    follower = GameFollower(
        hub,
        gid,
        cache_key,
        lambda: read(r),
        shape,
        finish,
        svc.catch_up,
        resumed,
        direct_stream(cache_key, shape, finish),
    )

    def body() -> Iterator[bytes]:
        if is_sse:
            yield sse_retry()
        with hub.watch(gid, boards=True) as watch:
            follower.watch = watch
            if resumed is not None:
                yield from follower.missed(svc.store)
            yield from deliver(
                watch,
                follower.step,
                lambda reason: frame("end", {"type": "end", "reason": reason, "version": follower.last}),
                slots,
                ping=frame("ping", {"type": "ping"}),
                ping_seconds=settings.stream_ping_seconds,
                idle_seconds=settings.stream_idle_seconds,
                max_seconds=settings.stream_max_seconds,
                direct=follower.direct,
            )

    return streaming(body(), is_sse, slots)


# -- the account stream -----------------------------------------------------------
#: Active games looked at when an account stream starts (its turns now).
CATCH_UP_GAMES = 100


class AccountLine(Schema):
    type = fields.String(
        required=True,
        metadata={"description": "`your_turn`, `table_started`, `game_finished`, `invitation`, `ping` or `end`"},
    )
    game_id = fields.String()
    table_id = fields.String()
    invitation_id = fields.String(metadata={"description": "`invitation`: accept or decline it (docs/API.md, Consent)"})
    kind = fields.String(metadata={"description": "`invitation`: `game` or `tournament`"})
    tournament_id = fields.String(metadata={"description": "`invitation` of kind `tournament`"})
    version = fields.Integer()
    reason = fields.String(metadata={"description": "`end`: shutdown | max_duration"})


def _invitations_now(invitations: Any, account: Any) -> list[dict[str, Any]]:
    """``invitation`` for each of the account's pending invitations: a stream (re)started
    misses none that came while it was away (PostgreSQL away: none, the stream goes on)."""
    try:
        pending = invitations.pending_for(account)
    except StoreUnavailable:
        return []
    return [
        {"type": "invitation", "invitation_id": i["id"], "kind": i["kind"]}
        | {k: i[k] for k in ("game_id", "tournament_id") if k in i}
        for i in pending
    ]


@blp.route("/account/stream", methods=["GET"])
@openapi.stream(
    "AccountLine",
    "`your_turn` for each game where the account is to act now, then each `your_turn`, `table_started` and"
    ' `game_finished` as it happens, `ping` every 15 s, and a last `end` line (docs/API.md, "Streams").',
    sse="Server-Sent Events: `retry:` first, then `event: <type>`, `data: <AccountLine>` per line.",
)
@blp.response(
    200,
    AccountLine,
    content_type="application/x-ndjson",
    description="NDJSON (SSE with `Accept: text/event-stream`): `your_turn` for each game where the account is to "
    "act now, then each `your_turn`, `table_started` and `game_finished` as it happens, `ping` every 15 s, and "
    "a final `end` line (shutdown, max_duration).",
)
@blp.alt_response(401, schema=ErrorOut, description="key_required")
@blp.alt_response(403, schema=ErrorOut, description="Not an account's key")
@blp.alt_response(429, schema=ErrorOut, description="too_many_streams")
def account_stream() -> Response:
    """The account's news: its turns, its tables starting, its games ending."""
    caller = require_account()
    assert caller.account is not None
    svc = services()
    hub = live.current_hub()
    settings = svc.settings
    handle = caller.account.handle
    account = caller.account
    # Captured here: the body runs after the request's context is gone.
    invitations = svc.invitations
    is_sse = wants_sse()
    slots = open_slots()
    r = svc.redis

    def frame(obj: dict[str, Any] | bytes) -> bytes:
        data = obj if isinstance(obj, bytes) else ndjson(obj)
        if not is_sse:
            return data.rstrip(b"\n") + b"\n"
        kind = obj["type"] if isinstance(obj, dict) else orjson.loads(obj).get("type", "message")
        return sse(str(kind), data)

    def body() -> Iterator[bytes]:
        if is_sse:
            yield sse_retry()
        # Registered before the catch-up read: nothing falls in between.
        with hub.follow_account(handle) as (watch, queue):

            def step() -> tuple[bytes, bool]:
                lines = []
                while queue:
                    lines.append(frame(queue.popleft()))
                return b"".join(lines), False

            with contextlib.suppress(views.ReadModelsUnavailable):
                for line in views.turns_now(r, handle, CATCH_UP_GAMES):
                    yield frame(line)
            for line in _invitations_now(invitations, account):
                yield frame(line)
            yield from deliver(
                watch,
                step,
                lambda reason: frame({"type": "end", "reason": reason}),
                slots,
                ping=frame({"type": "ping"}),
                ping_seconds=settings.stream_ping_seconds,
                idle_seconds=math.inf,
                max_seconds=settings.stream_max_seconds,
            )

    return streaming(body(), is_sse, slots)
