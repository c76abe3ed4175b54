"""docs/API.md "Audit and replay (organisers)": the events feed (plain and live),
time travel, the four-check audit and the export bundle (spec: docs/AUDIT.md).

Who sees what:

* the organiser token (``ADMIN_TOKEN``) sees everything, always;
* once a game has finished, everyone sees everything (the seed is revealed);
* while it runs, the feed redacts hidden data for the caller's seat (or for a
  spectator), and time travel, audit and export need the organiser token.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from flask import Response, request
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from schemas.http import ErrorOut
from service.audit import bundle, reading
from service.audit import checks as audit
from service.core.eventstore import EventStore
from service.core.records import GameRecord
from service.games import registry
from service.games.base import ADMIN, Engine
from service.http.common import bearer, require_admin, services, viewer_for
from service.http.errors import ApiError, not_found

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
#: How often a live feed looks for new events.
POLL_SECONDS = 0.25


# -- schemas (documentation of the answers) -----------------------------------
class FeedArgs(Schema):
    after = fields.Integer(
        load_default=0, validate=validate.Range(min=0, max=2**31 - 1), metadata={"description": "Only seq > after."}
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
    id = fields.String(required=True)
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
    status = fields.String(required=True)
    version = fields.Integer(required=True)
    head_hash = fields.String(allow_none=True, required=True)
    checks = fields.Nested(ChecksOut, required=True)


class BundleOut(Schema):
    format = fields.String(required=True, metadata={"description": "quarterdeck-audit-bundle"})
    format_version = fields.Integer(required=True)
    exported_at = fields.String(required=True)
    game = fields.Dict(required=True)
    status = fields.String(required=True)
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
        require_admin()
    return record, finished


def _engine(record: GameRecord) -> Engine:
    try:
        return registry.get(record.game, record.rules_version)
    except (registry.RulesVersionUnavailable, registry.UnknownGame) as exc:
        raise ApiError(409, "rules_version_unavailable", str(exc), {"rules_version": record.rules_version}) from None


# -- the feed -----------------------------------------------------------------
def _ndjson(line: dict[str, Any]) -> str:
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"


def _sse(line: dict[str, Any]) -> str:
    return f"id: {line['seq']}\nevent: {line['type']}\ndata: {_ndjson(line)}\n"


@blp.route("/<uuid:game_id>/events", methods=["GET"])
@blp.arguments(FeedArgs(), location="query")
@blp.response(
    200,
    FeedLine,
    content_type="application/x-ndjson",
    description="One event per line.  `?follow=1`: a live, chunked stream that ends when the game finishes, "
    "after `timeout` idle seconds, or after 10 minutes.  With `Accept: text/event-stream`, the same as SSE.",
)
@blp.alt_response(403, schema=ErrorOut, description="A token that belongs to no seat of this game")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
@blp.alt_response(409, schema=ErrorOut, description="The game's rules version is not on this server (cannot redact)")
def events_feed(args: dict[str, Any], game_id: Any) -> Response:
    """The game's events as JSON lines, redacted for the caller while it runs."""
    svc = services()
    store = svc.store
    gid = str(game_id)
    record = _record(store, gid)
    viewer = viewer_for(bearer(), [h.hex() for h in store.secrets(gid)[1]])
    engine: Engine | None = None
    try:
        engine = registry.get(record.game, record.rules_version)
    except (registry.RulesVersionUnavailable, registry.UnknownGame):
        engine = None
    sse = "text/event-stream" in request.headers.get("Accept", "")
    fmt = _sse if sse else _ndjson
    after = args["after"]

    def lines(events: list, finished: bool) -> Iterator[str]:
        reveal = finished or viewer == ADMIN
        if engine is None and not reveal:
            # Without the game's rules we cannot tell what is hidden: show nothing.
            raise ApiError(409, "rules_version_unavailable", f"{record.game} rules {record.rules_version} missing")
        for e in events:
            yield fmt(reading.feed_line(engine, e, viewer, reveal))  # type: ignore[arg-type]

    if not args["follow"]:
        events = store.read(gid, after=after)
        finished = reading.is_finished(events) or reading.stream_finished(store, gid)
        body = "".join(lines(events, finished))
        return Response(body, mimetype="text/event-stream" if sse else "application/x-ndjson")

    idle = args["timeout"]
    finished_before = reading.stream_finished(store, gid)
    if engine is None and not (finished_before or viewer == ADMIN):
        raise ApiError(409, "rules_version_unavailable", f"{record.game} rules {record.rules_version} missing")

    def follow() -> Iterator[str]:
        last = after
        started = time.monotonic()
        idle_until = started + idle
        finished = finished_before
        while True:
            events = store.read(gid, after=last)
            if events:
                finished = finished or reading.is_finished(events)
                yield from lines(events, finished)
                last = events[-1].seq
                idle_until = time.monotonic() + idle
            if finished:
                return
            now = time.monotonic()
            if now >= idle_until or now - started >= MAX_FOLLOW_SECONDS:
                return
            if sse and not events:
                yield ": waiting\n\n"
            time.sleep(min(POLL_SECONDS, max(0.0, idle_until - now)))

    resp = Response(follow(), mimetype="text/event-stream" if sse else "application/x-ndjson")
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["X-Accel-Buffering"] = "no"
    return resp


# -- time travel, audit, export ------------------------------------------------
@blp.route("/<uuid:game_id>/state", methods=["GET"])
@blp.arguments(StateArgs(), location="query")
@blp.response(200, StateOut)
@blp.alt_response(401, schema=ErrorOut, description="Game running and no organiser token")
@blp.alt_response(403, schema=ErrorOut, description="Game running and not the organiser token")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
@blp.alt_response(409, schema=ErrorOut, description="The game's rules version is not on this server")
@blp.alt_response(422, schema=ErrorOut, description="Version or seat out of range")
def state_at(args: dict[str, Any], game_id: Any) -> dict[str, Any]:
    """The state, and a seat's view, after the first `version` events, rebuilt
    from the stream alone (organiser token while the game runs; anyone after)."""
    store = services().store
    gid = str(game_id)
    _organiser_unless_finished(store, gid)
    return reading.state_at(store, gid, args.get("version"), args.get("seat"))


@blp.route("/<uuid:game_id>/audit", methods=["GET"])
@blp.response(200, AuditOut)
@blp.alt_response(401, schema=ErrorOut, description="Game running and no organiser token")
@blp.alt_response(403, schema=ErrorOut, description="Game running and not the organiser token")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
def audit_game(game_id: Any) -> dict[str, Any]:
    """Four checks — `hash_chain`, `seed`, `redecide`, `projection` — each with
    details; `ok` is true only if all pass.  Always 200: a failed audit is a
    result, not an error."""
    svc = services()
    gid = str(game_id)
    _organiser_unless_finished(svc.store, gid)
    return audit.audit_game(svc.store, svc.redis, gid, catch_up=svc.catch_up).to_json()


@blp.route("/<uuid:game_id>/export", methods=["GET"])
@blp.response(200, BundleOut, description="The audit bundle; `service/audit/verify.py` checks it offline.")
@blp.alt_response(401, schema=ErrorOut, description="Game running and no organiser token")
@blp.alt_response(403, schema=ErrorOut, description="Game running and not the organiser token")
@blp.alt_response(404, schema=ErrorOut, description="No such game")
def export_game(game_id: Any) -> Response:
    """One JSON file with every event, the seed reveal and the rules version."""
    store = services().store
    gid = str(game_id)
    record, _ = _organiser_unless_finished(store, gid)
    body = bundle.dumps(bundle.build(record, store.read(gid)))
    resp = Response(body, mimetype="application/json")
    resp.headers["Content-Disposition"] = f'attachment; filename="{gid}.json"'
    return resp
