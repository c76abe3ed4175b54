"""docs/API.md "Audit and replay (organisers)": the events feed (plain and live),
time travel, the four-check audit and the export bundle (spec: docs/AUDIT.md).

Who sees what:

* the operator token (``ADMIN_TOKEN``) sees everything, always, and so does
  the key of the organiser who created the game (over its games only);
* once a game has finished, everyone sees everything (the seed is revealed);
* while it runs, the feed redacts hidden data for the caller's seat (or for a
  spectator), and time travel, audit and export need the operator token.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from flask import Response, request
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from schemas import openapi
from schemas.http import ErrorOut
from service.audit import bundle, reading
from service.audit import checks as audit
from service.domain.identity import GameAccess
from service.domain.records import GameRecord
from service.games import registry
from service.games.base import ADMIN, Engine
from service.http import games, limits, live, streams
from service.http.common import bearer, game_access, require_organiser, services, viewer_for
from service.http.errors import ApiError, not_found
from service.http.live import framing
from service.http.live.hub import Hub, Watch

if TYPE_CHECKING:
    from service.adapters.eventstore import EventStore

blp = Blueprint(
    "audit",
    __name__,
    url_prefix="/v1/games",
    description="Audit and replay for organisers: events feed, time travel, audit, export",
)

#: Longest idle wait of a live feed (``?follow=1&timeout=``), in seconds.
MAX_IDLE_SECONDS = 30.0
DEFAULT_IDLE_SECONDS = 15.0
#: A live feed ends after this long even if events keep coming; the client
#: reconnects with ``?after=<last seq>``.  Keeps a worker from being held forever.
MAX_FOLLOW_SECONDS = 600.0


# -- schemas (documentation of the answers) -----------------------------------
class FeedArgs(Schema):
    after = fields.Integer(
        load_default=0, validate=validate.Range(min=0, max=2**31 - 1), metadata={"description": "Only seq > after."}
    )
    limit = fields.Integer(
        validate=validate.Range(min=1, max=2**31 - 1),
        metadata={
            "description": "At most this many events (default 1000, at most 5000: QD_FEED_PAGE_DEFAULT and "
            "QD_FEED_PAGE_MAX; a larger value is cut to the maximum).  When more follow, the answer carries "
            "`X-Next-After`: ask again with `?after=` that value."
        },
    )
    follow = fields.Boolean(
        load_default=False,
        metadata={"description": "Keep the response open and send new events as they are appended (chunked NDJSON)."},
    )
    timeout = fields.Float(
        load_default=DEFAULT_IDLE_SECONDS,
        validate=validate.Range(min=0.0, max=MAX_IDLE_SECONDS),
        metadata={"description": f"Live feed: end after this many idle seconds (at most {MAX_IDLE_SECONDS:g})."},
    )


class FeedLine(Schema):
    seq = fields.Integer(required=True)
    type = fields.String(required=True)
    schema_version = fields.Integer(required=True)
    data = fields.Dict(required=True, metadata={"description": "Redacted for the caller while the game runs."})
    meta = fields.Dict(
        required=True, metadata={"description": "intent_id, seat, received_at, intent (dropped for other seats)."}
    )
    data_digest = fields.String(required=True, metadata={"description": "sha256(salt || canonical(data))"})
    meta_digest = fields.String(required=True)
    prev_hash = fields.String(required=True)
    hash = fields.String(
        required=True, metadata={"description": "Covers the digests, so redaction keeps links checkable."}
    )
    redacted = fields.Boolean(required=True)


class BundleEvent(FeedLine):
    # An export holds the stored events, never redacted: no "redacted" flag.
    redacted = fields.Boolean()


class StateArgs(Schema):
    version = fields.Integer(
        validate=validate.Range(min=1, max=2**31 - 1),
        metadata={"description": "Number of events to fold (default: the head)."},
    )
    seat = fields.Integer(
        validate=validate.Range(min=0, max=64), metadata={"description": "Whose view to show (default: spectator)."}
    )


class StateOut(Schema):
    id = fields.String(required=True, metadata={"format": "uuid"})
    game = fields.String(required=True)
    rules_version = fields.String(required=True)
    players = fields.List(fields.String(), required=True)
    version = fields.Integer(required=True)
    head = fields.Integer(required=True)
    hash = fields.String(required=True, metadata={"description": "Chain hash of the event at `version`."})
    last_event = fields.Dict(required=True)
    finished = fields.Boolean(required=True)
    to_act = fields.List(fields.Integer(), required=True)
    result = fields.Dict(allow_none=True, required=True)
    clock = fields.Dict(allow_none=True, metadata={"description": "The clock as of `version` (null: no clock)."})
    seat = fields.Integer(allow_none=True, required=True)
    view = fields.Dict(allow_none=True, required=True, metadata={"description": "The seat's view (spectator if none)."})
    state = fields.Dict(allow_none=True, required=True, metadata={"description": "The whole engine state."})


class CheckOut(Schema):
    ok = fields.Boolean(required=True)
    summary = fields.String(required=True)
    details = fields.Dict(required=True)
    skipped = fields.Boolean()


class ChecksOut(Schema):
    hash_chain = fields.Nested(CheckOut, required=True, metadata={"description": "details.first_broken_seq"})
    seed = fields.Nested(CheckOut, required=True)
    redecide = fields.Nested(CheckOut, required=True, metadata={"description": "details.first_divergence"})
    projection = fields.Nested(CheckOut, required=True)


class AuditOut(Schema):
    ok = fields.Boolean(required=True)
    game_id = fields.String(required=True)
    game = fields.String(required=True)
    rules_version = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["active", "finished"]))
    version = fields.Integer(required=True)
    head_hash = fields.String(allow_none=True, required=True)
    checks = fields.Nested(ChecksOut, required=True)
    kept = fields.Boolean(metadata={"description": "True: the report kept from an earlier audit of the finished game"})
    computed_at = fields.String(metadata={"description": "When a kept report was computed (UTC)"})


class BundleOut(Schema):
    format = fields.String(required=True, metadata={"description": "quarterdeck-audit-bundle"})
    format_version = fields.Integer(required=True)
    exported_at = fields.String(required=True)
    game = fields.Dict(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["active", "finished"]))
    version = fields.Integer(required=True)
    head_hash = fields.String(allow_none=True, required=True)
    seed = fields.String(allow_none=True, required=True, metadata={"description": "Revealed seed (hex) once finished."})
    events = fields.List(fields.Nested(BundleEvent), required=True)


# -- access -------------------------------------------------------------------
def _record(store: EventStore, gid: str) -> GameRecord:
    record = store.game(gid)
    if record is None:
        raise not_found()
    return record


def _organiser_unless_finished(store: EventStore, gid: str) -> tuple[GameRecord, bool]:
    record = _record(store, gid)
    finished = reading.stream_finished(store, gid)
    if not finished:
        # The operator, or the organiser who created this game.
        require_organiser(game_access(gid))
    return record, finished


def _engine(record: GameRecord) -> Engine:
    try:
        return registry.get(record.game, record.rules_version)
    except (registry.RulesVersionUnavailable, registry.UnknownGame) as exc:
        raise ApiError(409, "rules_version_unavailable", str(exc), {"rules_version": record.rules_version}) from None


# -- the feed -----------------------------------------------------------------
def _ndjson(line: dict[str, Any]) -> bytes:
    return framing.json_line(line)


def _sse(line: dict[str, Any]) -> bytes:
    return framing.sse(line["type"], framing.json_line(line), line["seq"])


@blp.route("/<uuid:game_id>/events", methods=["GET"])
@openapi.stream(
    "FeedLine",
    "One event per line.  `?follow=1`: a live, chunked stream that ends when the game finishes, after"
    " `timeout` idle seconds, or after 10 minutes.  With `Accept: text/event-stream`, the same lines as"
    ' Server-Sent Events (docs/API.md, "Streams").',
    sse="Server-Sent Events: `retry:` first, then per event `id: <seq>`, `event: <type>`, `data: <FeedLine>`;"
    " `event: GameFinished` closes a finished game; `event: end` (`data: {type, reason, after}`) when the server"
    " ends it early (resume after `after`).  `Last-Event-ID` resumes after that seq; after the game's end it is"
    " answered 204 (an EventSource stops).",
)
@blp.arguments(FeedArgs(), location="query")
@blp.response(
    200,
    FeedLine,
    content_type="application/x-ndjson",
    description="One event per line.  `?follow=1`: a live, chunked stream that ends when the game finishes, "
    "after `timeout` idle seconds, or after 10 minutes.  With `Accept: text/event-stream`, the same as SSE.",
)
@blp.alt_response(204, description="SSE only: `Last-Event-ID` is at or past the end of a finished game")
@blp.alt_response(403, schema=ErrorOut, description="A token that belongs to no seat of this game")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
@blp.alt_response(409, schema=ErrorOut, description="The game's rules version is not on this server (cannot redact)")
def events_feed(args: dict[str, Any], game_id: Any) -> Response:
    """The game's events as JSON lines, redacted for the caller while it runs."""
    svc = services()
    store = svc.store
    gid = str(game_id)
    head_known: tuple[int, bool] | None = None
    if args["follow"]:
        # A live feed starts as the game stream does (service/http/streams.py): who
        # is calling, the rules and the head from the read model, not five
        # PostgreSQL reads per follower (200 followers held /healthz at 210-270 ms
        # where 200 streams held it at 1.9 ms); the events themselves come from one
        # read shared by the followers at one place (_events_after).
        model = games.read_game(gid, ["auth", "info", "status"])
        info = json.loads(model["info"])
        viewer = viewer_for(bearer(), json.loads(model["auth"]) if model["auth"] else [], GameAccess.from_created(info))
        game_name, rules_version = info["game"], info["rules_version"]
        head_known = (int(model["version"]), model["status"] == b"finished")
    else:
        record = _record(store, gid)
        viewer = viewer_for(bearer(), [h.hex() for h in store.token_hashes(gid)], game_access(gid))
        game_name, rules_version = record.game, record.rules_version
    engine: Engine | None = None
    try:
        engine = registry.get(game_name, rules_version)
    except (registry.RulesVersionUnavailable, registry.UnknownGame):
        engine = None
    sse = "text/event-stream" in request.headers.get("Accept", "")
    fmt = _sse if sse else _ndjson
    after = args["after"]
    resumed = streams.last_event_id() if sse else None
    if resumed is not None and "after" not in request.args:
        after = resumed  # an EventSource reconnecting: go on after the last event it had

    def lines(events: list, finished: bool) -> Iterator[bytes]:
        reveal = finished or viewer == ADMIN
        if engine is None and not reveal:
            # Without the game's rules we cannot tell what is hidden: show nothing.
            raise ApiError(409, "rules_version_unavailable", f"{game_name} rules {rules_version} missing")
        for e in events:
            # engine is None only with reveal, where feed_line redacts nothing and needs none.
            yield fmt(reading.feed_line(engine, e, viewer, reveal))  # type: ignore[arg-type]

    if head_known is None:
        if sse and resumed is not None and resumed >= store.version(gid) and reading.stream_finished(store, gid):
            # An EventSource reconnecting after the whole of a finished game (the
            # plain feed's SSE form too): 204 tells it to stop.
            return Response(status=204)
        return _page(store, gid, after, args.get("limit"), viewer, engine is not None, lines, sse)

    idle = args["timeout"]
    # The read model is never ahead of the stream: "finished" there is final; a
    # finish it has not shown yet is seen in the events read (and revealed then).
    head, finished_before = head_known
    if engine is None and not (finished_before or viewer == ADMIN):
        raise ApiError(409, "rules_version_unavailable", f"{game_name} rules {rules_version} missing")

    if sse and finished_before and resumed is not None and resumed >= head:
        # An EventSource reconnecting after the end: 204 tells it to stop.
        return Response(status=204)
    slots = streams.open_slots()  # 429 too_many_streams beyond the client's share
    hub = live.current_hub()
    ping = svc.settings.stream_ping_seconds

    def end(reason: str) -> bytes:
        if reason == "idle":
            return b""  # a feed that idles just ends: resume with ?after=
        # A line without "seq": where to resume (?after=, or the SSE id already sent).
        line = _ndjson({"type": "end", "reason": reason, "after": last})
        return framing.sse("end", line) if sse else line

    last = after
    finished = finished_before
    fresh = True
    # SSE: how soon to reconnect, in the first event's block (or alone, if
    # nothing is sent at once).
    retry = framing.sse_retry(streams.SSE_RETRY_MS) if sse else b""

    def follow() -> Iterator[bytes]:
        # Woken by the projection's announcement of the game (service/http/live/hub.py),
        # then one PostgreSQL read shared by the followers at the same place; sent
        # by the loop every live response shares (streams.deliver).
        with hub.watch(gid) as watch:

            def step() -> tuple[bytes, bool]:
                nonlocal last, finished, fresh, retry
                events: list = []
                if fresh or watch.version > last:
                    fresh = False
                    events, rendered = _events_after(hub, watch, store, gid, last)
                out = b""
                if events:
                    finished = finished or reading.is_finished(events)
                    # Shaped once per kind of viewer and place, and sent in one write,
                    # as the game stream's boards are.
                    key = (viewer, finished, sse, last)
                    text = rendered.get(key)
                    if text is None:
                        text = rendered.setdefault(key, b"".join(lines(events, finished)))
                    out, retry = retry + text, b""
                    last = events[-1].seq
                elif retry and not finished:
                    out, retry = retry + b"\n", b""
                # GameFinished was the last line, and is the closing event: the
                # game is over (a client closes on it), and an EventSource that
                # reconnects anyway is answered 204 (stop).
                return out, finished

            yield from streams.deliver(
                watch,
                step,
                end,
                slots,
                ping=framing.sse_comment("waiting") if sse else b"",
                ping_seconds=ping,
                idle_seconds=idle,
                max_seconds=MAX_FOLLOW_SECONDS,
            )

    return streams.streaming(follow(), sse, slots)


def _events_after(hub: Hub, watch: Watch, store: EventStore, gid: str, last: int) -> tuple[list, dict[Any, bytes]]:
    """The game's events after ``last``, from one read shared by every
    follower of the game in this process that is at (or past) the same place,
    and that read's lines as each kind of viewer was sent them (filled by the
    followers: the first of a kind shapes them, the rest reuse them)."""

    def read() -> tuple[int, tuple[int, list, dict[Any, bytes]]]:
        events = store.read(gid, after=last)
        return (events[-1].seq if events else last), (last, events, {})

    got = hub.fetch(watch, "feed", read, usable=lambda kept: kept[0] <= last)
    assert got is not None
    _, events, rendered = got[1]
    return [e for e in events if e.seq > last], rendered


#: Events read from PostgreSQL at a time while a feed page is sent: a
#: page holds about two batches in memory, whatever its length.
FEED_BATCH = 200


def _page(
    store: EventStore, gid: str, after: int, limit: int | None, viewer: Any, have_rules: bool, lines: Any, sse: bool
) -> Response:
    """One page of the feed, streamed from PostgreSQL in batches: memory
    stays flat however long the game (the whole stream of a 40,000-event game
    was once built in memory per request)."""
    settings = services().settings
    limit = min(limit or settings.feed_page_default, settings.feed_page_max)
    head = store.version(gid)
    upto = min(head, after + limit)
    finished = reading.stream_finished(store, gid)
    if not have_rules and not (finished or viewer == ADMIN):
        list(lines([], False))  # raises rules_version_unavailable before anything is sent

    def body() -> Iterator[bytes]:
        for event in store.iter_stream(gid, after=after, batch=FEED_BATCH):
            if event.seq > upto:
                return
            yield from lines([event], finished)

    resp = Response(body(), mimetype="text/event-stream" if sse else "application/x-ndjson")
    if upto < head:
        resp.headers["X-Next-After"] = str(upto)
    return resp


# -- time travel, audit, export ------------------------------------------------
@blp.route("/<uuid:game_id>/state", methods=["GET"])
@openapi.auth("optional")  # the organiser while the game runs; anyone after
@blp.arguments(StateArgs(), location="query")
@blp.response(200, StateOut)
@blp.alt_response(401, schema=ErrorOut, description="Game running and no operator token")
@blp.alt_response(403, schema=ErrorOut, description="Game running and not the operator token")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
@blp.alt_response(409, schema=ErrorOut, description="The game's rules version is not on this server")
@blp.alt_response(422, schema=ErrorOut, description="Version or seat out of range")
def state_at(args: dict[str, Any], game_id: Any) -> dict[str, Any]:
    """The state, and a seat's view, after the first `version` events, rebuilt
    from the stream alone (operator token while the game runs; anyone after)."""
    store = services().store
    gid = str(game_id)
    _organiser_unless_finished(store, gid)
    with limits.expensive():
        return reading.state_at(store, gid, args.get("version"), args.get("seat"))


class AuditArgs(Schema):
    recheck = fields.Boolean(
        load_default=False,
        metadata={
            "description": "Compute the audit of a finished game again instead of answering the kept one "
            "(the operator, or the organiser of the game)."
        },
    )


#: Games whose audit this process is computing: a second request waits for
#: the first and answers the report it kept, instead of computing it again.
_AUDITING: dict[str, threading.Lock] = {}
_AUDITING_LOCK = threading.Lock()


@blp.route("/<uuid:game_id>/audit", methods=["GET"])
@openapi.auth("optional")
@blp.arguments(AuditArgs(), location="query")
@blp.response(200, AuditOut)
@blp.alt_response(401, schema=ErrorOut, description="Game running and no operator token")
@blp.alt_response(403, schema=ErrorOut, description="Game running and not the operator token")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
def audit_game(args: dict[str, Any], game_id: Any) -> dict[str, Any]:
    """Four checks — `hash_chain`, `seed`, `redecide`, `projection` — each with
    details; `ok` is true only if all pass.  Always 200: a failed audit is a
    result, not an error.  A finished game's passing audit is computed once
    and kept (`kept`, `computed_at`); `?recheck=true` computes it again."""
    svc = services()
    gid = str(game_id)
    _, finished = _organiser_unless_finished(svc.store, gid)
    if args["recheck"]:
        require_organiser(game_access(gid))
    kept = svc.kept_audits
    head = svc.store.version(gid)
    if finished and not args["recheck"] and (report := kept.get(gid, head)) is not None:
        return report
    with _AUDITING_LOCK:
        lock = _AUDITING.setdefault(gid, threading.Lock())
    try:
        with lock, limits.expensive():
            if finished and not args["recheck"] and (report := kept.get(gid, head)) is not None:
                return report  # computed by the request this one waited for
            report = audit.audit_game(svc.store, svc.redis, gid, catch_up=svc.catch_up).to_json()
            if finished and report["ok"] and report["version"] == head:
                kept.keep(gid, head, report)
            return report
    finally:
        with _AUDITING_LOCK:
            if not lock.locked():
                _AUDITING.pop(gid, None)


@blp.route("/<uuid:game_id>/export", methods=["GET"])
@openapi.auth("optional")
@blp.response(200, BundleOut, description="The audit bundle; `service/audit/verify.py` checks it offline.")
@blp.alt_response(401, schema=ErrorOut, description="Game running and no operator token")
@blp.alt_response(403, schema=ErrorOut, description="Game running and not the operator token")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
def export_game(game_id: Any) -> Response:
    """One JSON file with every event, the seed reveal and the rules version."""
    store = services().store
    gid = str(game_id)
    record, _ = _organiser_unless_finished(store, gid)
    with limits.expensive():
        body = bundle.dumps(bundle.build(record, store.read(gid)))
    resp = Response(body, mimetype="application/json")
    resp.headers["Content-Disposition"] = f'attachment; filename="{gid}.json"'
    return resp
