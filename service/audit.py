"""Audit and replay of one game (spec: docs/AUDIT.md).

Four checks, each a :class:`Check` with a one-line summary and details:

* ``hash_chain`` — dense seqs, every link, every salted digest (with the
  committed seed), the closing event's head hash; names the first broken seq.
* ``seed`` — the seed revealed by the closing event, and the secret seed the
  server holds, both hash to the commitment published in the opening event.
* ``redecide`` — every recorded intent, decided again by the rules version the
  game was created with and the committed seed, reproduces every event byte
  for byte (type, data, meta, digests, hash); names the first divergence.
* ``projection`` — the Redis read model equals a fresh rebuild from the stream.

Plus time travel (:func:`state_at`) and the feed's redaction (:func:`feed_line`).
Used by the API (``service/api/audit.py``), the CLI (``service/cli_audit.py``),
the offline verifier (``service/verify.py``, re-decide step) and the tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from marshmallow import ValidationError

from schemas.intents import load_intent
from service import canonical
from service.errors import ApiError, not_found
from service.eventstore import GAME_CREATED, GAME_FINISHED, PLATFORM_EVENTS, EventStore, StoredEvent
from service.games import registry
from service.games.base import ADMIN, Engine, Event, RuleViolation, Viewer
from service.games.rng import Rng, commitment
from service.replay import created_data, finished_data, fold_stream

CHECKS = ("hash_chain", "seed", "redecide", "projection")
#: Longest excerpt of recorded/expected JSON quoted in a divergence.
_EXCERPT = 1500


@dataclass
class Check:
    ok: bool
    summary: str
    details: dict[str, Any] = field(default_factory=dict)
    skipped: bool = False

    def to_json(self) -> dict[str, Any]:
        out = {"ok": self.ok, "summary": self.summary, "details": self.details}
        if self.skipped:
            out["skipped"] = True
        return out


@dataclass
class AuditReport:
    game_id: str
    game: str
    rules_version: str
    status: str
    version: int
    head_hash: str | None
    checks: dict[str, Check]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "game_id": self.game_id,
            "game": self.game,
            "rules_version": self.rules_version,
            "status": self.status,
            "version": self.version,
            "head_hash": self.head_hash,
            "checks": {name: c.to_json() for name, c in self.checks.items()},
        }

    def render(self) -> str:
        """A report a person reads (``make audit``)."""
        lines = [
            f"Audit of game {self.game_id} ({self.game}, rules {self.rules_version})",
            f"  status {self.status}, {self.version} events, head {self.head_hash or '-'}",
        ]
        for name, c in self.checks.items():
            mark = "SKIP" if c.skipped else ("ok  " if c.ok else "FAIL")
            lines.append(f"  [{mark}] {name:<10} {c.summary}")
            div = c.details.get("first_divergence")
            if div:
                for key in ("intent", "recorded", "expected"):
                    if key in div:
                        lines.append(f"               {key}: {canonical.canonical(div[key]).decode()[:300]}")
        lines.append("AUDIT OK" if self.ok else "AUDIT FAILED")
        return "\n".join(lines)


# -- hash chain ---------------------------------------------------------------
def check_chain(game_id: str, events: Sequence[StoredEvent], seed: bytes | None) -> Check:
    """Recompute every link with the production sealing code."""
    prev = canonical.GENESIS
    closed_at = None

    def broken(at: int, reason: str) -> Check:
        return Check(
            False,
            f"broken at seq {at}: {reason}",
            {"first_broken_seq": at, "reason": reason, "events": len(events), "digests_checked": seed is not None},
        )

    if not events:
        return broken(1, "the stream is empty")
    for i, e in enumerate(events):
        expected = i + 1
        if e.seq != expected:
            return broken(expected, f"event(s) missing: the stream jumps from {expected - 1} to {e.seq}")
        if closed_at is not None:
            return broken(e.seq, f"an event follows the closing event (seq {closed_at})")
        if e.prev_hash != prev:
            return broken(e.seq, "prev_hash is not the hash of the event before it")
        if seed is not None:
            salt = canonical.event_salt(seed, e.seq)
            if canonical.digest(salt, e.data) != e.data_digest:
                return broken(e.seq, "data_digest does not match the event's data")
            if canonical.digest(salt, e.meta) != e.meta_digest:
                return broken(e.seq, "meta_digest does not match the event's meta")
        link = canonical.link_hash(game_id, e.seq, e.type, e.schema_version, e.data_digest, e.meta_digest, prev)
        if link != e.hash:
            return broken(e.seq, "hash does not match the event")
        if e.type == GAME_FINISHED:
            closed_at = e.seq
            if e.data.get("head_hash") != prev:
                return broken(e.seq, "the closing event's head_hash is not the hash of the event before it")
        prev = e.hash
    how = "links and digests" if seed is not None else "links only (no seed matching the commitment)"
    return Check(
        True,
        f"{len(events)} events chained, head {prev[:16]}…; checked {how}",
        {
            "first_broken_seq": None,
            "events": len(events),
            "head_hash": prev,
            "digests_checked": seed is not None,
            "closed": closed_at is not None,
        },
    )


# -- seed ---------------------------------------------------------------------
def _revealed(events: Sequence[StoredEvent]) -> tuple[bool, bytes | None]:
    for e in events:
        if e.type == GAME_FINISHED:
            try:
                seed = bytes.fromhex(str(e.data.get("seed")))
            except ValueError:
                return True, None
            return True, seed if len(seed) == 32 else None
    return False, None


def _opening_commitment(events: Sequence[StoredEvent]) -> str | None:
    if events and events[0].type == GAME_CREATED:
        value = events[0].data.get("seed_commitment")
        return value if isinstance(value, str) else None
    return None


def check_seed(
    events: Sequence[StoredEvent], stored_seed: bytes | None = None, record_commitment: str | None = None
) -> Check:
    committed = _opening_commitment(events)
    details: dict[str, Any] = {"commitment": committed}
    if committed is None:
        return Check(False, "the opening event carries no seed commitment", details)
    problems = []
    if record_commitment is not None:
        details["record_matches"] = record_commitment == committed
        if record_commitment != committed:
            problems.append("the games table's commitment differs from the opening event's")
    closed, revealed = _revealed(events)
    details["revealed"] = closed
    if closed:
        details["revealed_matches"] = revealed is not None and commitment(revealed) == committed
        if not details["revealed_matches"]:
            problems.append("sha256(revealed seed) does not match the commitment")
    if stored_seed is not None:
        details["stored_matches"] = commitment(stored_seed) == committed
        if not details["stored_matches"]:
            problems.append("the seed held by the server does not match the commitment")
    if problems:
        return Check(False, "; ".join(problems), details)
    what = "revealed seed" if closed else "seed (not revealed yet; the server's copy)"
    if not closed and stored_seed is None:
        return Check(True, "not revealed yet (the game is still running)", details)
    return Check(True, f"sha256({what}) = commitment {committed[:16]}…", details)


def committed_seed(events: Sequence[StoredEvent], stored_seed: bytes | None = None) -> tuple[bytes | None, str]:
    """The seed to check digests and re-decide with: the revealed one if it
    matches the commitment, else the server's copy if that does, else none."""
    committed = _opening_commitment(events)
    _, revealed = _revealed(events)
    if revealed is not None and commitment(revealed) == committed:
        return revealed, "revealed"
    if stored_seed is not None and commitment(stored_seed) == committed:
        return stored_seed, "stored"
    return None, "none"


# -- redecide -----------------------------------------------------------------
def _excerpt(obj: Any) -> Any:
    text = canonical.canonical(obj).decode()
    return obj if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


def _engine_for(events: Sequence[StoredEvent]) -> tuple[Engine, dict[str, Any]]:
    """The engine of the rules version the game was created with, or a clear
    refusal (:class:`registry.RulesVersionUnavailable`)."""
    if not events or events[0].type != GAME_CREATED:
        raise ValueError("the stream does not start with GameCreated")
    created = events[0].data
    return registry.get(created["game"], created["rules_version"]), created


def redecide(game_id: str, events: Sequence[StoredEvent], seed: bytes | None, seed_source: str = "revealed") -> Check:
    """Decide every recorded intent again and compare every event."""
    if seed is None:
        return Check(False, "no seed matching the commitment to re-decide with", {"seed_source": "none"})
    try:
        engine, created = _engine_for(events)
    except registry.RulesVersionUnavailable as exc:
        return Check(False, f"rules_version_unavailable: {exc}", {"error": "rules_version_unavailable"})
    except (registry.UnknownGame, ValueError, KeyError) as exc:
        return Check(False, f"cannot replay: {exc}", {"error": "unknown_game"})
    details: dict[str, Any] = {"seed_source": seed_source, "rules_version": engine.version, "events": len(events)}
    opening_meta = events[0].meta
    expected: list[tuple[str, int, dict[str, Any], dict[str, Any]]] = []  # type, schema_version, data, meta
    hashes: list[str] = []
    intents = 0
    state = None
    finished = False

    def diverge(seq: int, what: str, message: str, **more: Any) -> Check:
        details["intents"] = intents
        details["first_divergence"] = {"seq": seq, "what": what, "message": message, **more}
        return Check(False, f"diverges at seq {seq}: {message}", details)

    def emit(type_: str, data: dict[str, Any], meta: dict[str, Any]) -> None:
        prev = hashes[-1] if hashes else canonical.GENESIS
        _, _, h = canonical.seal(seed, game_id, len(expected) + 1, type_, 1, data, meta, prev)
        expected.append((type_, 1, data, meta))
        hashes.append(h)

    try:
        players = list(created["players"])
        options = dict(created["options"])
        emit(
            GAME_CREATED,
            created_data(players, created["game"], engine.version, options, commitment(seed)),
            opening_meta,
        )
        setup = engine.setup(len(players), options, Rng(seed, domain=1))
    except Exception as exc:  # a broken opening is a divergence, not a crash
        return diverge(1, "setup", f"the opening cannot be set up again: {exc}")
    try:
        for ev in setup:
            emit(ev.type, ev.data, opening_meta)
            state = engine.evolve(state, ev)
    except Exception as exc:
        return diverge(len(expected), "error", f"the engine fails on its own opening: {exc!r}")

    pos = 0
    while pos < len(events):
        rec = events[pos]
        if rec.seq != pos + 1:
            return diverge(pos + 1, "missing", f"event {pos + 1} is not in the stream (next recorded: {rec.seq})")
        if pos >= len(expected):
            # The recorded event starts a new intent's batch: decide it.
            if finished:
                return diverge(rec.seq, "extra", "an event follows the end of the game")
            meta = rec.meta
            if pos > 0 and meta.get("intent_id") == events[pos - 1].meta.get("intent_id"):
                return diverge(rec.seq, "extra", "the intent before it causes fewer events than recorded")
            seat, raw = meta.get("seat"), meta.get("intent")
            if not isinstance(seat, int) or raw is None:
                return diverge(rec.seq, "meta", "no intent recorded for this event", recorded=_excerpt(meta))
            try:
                command = load_intent(created["game"], raw)
            except (ValidationError, TypeError, ValueError) as exc:
                return diverge(rec.seq, "intent", f"the recorded intent does not load: {exc}", intent=_excerpt(raw))
            intents += 1
            try:
                new = engine.decide(state, seat, command, Rng(seed, domain=len(expected)))
                if canonical.canonical(command.to_json()) != canonical.canonical(raw):
                    return diverge(rec.seq, "intent", "the recorded intent is not in canonical form", intent=raw)
                for ev in new:
                    state = engine.evolve(state, ev)
                    emit(ev.type, ev.data, meta)
                result = engine.result(state)
            except RuleViolation as rv:
                return diverge(
                    rec.seq, "refused", f"the rules refuse the recorded intent ({rv.code}: {rv.message})", intent=raw
                )
            except Exception as exc:  # an engine crash on a recorded intent is a finding, not a 500
                return diverge(rec.seq, "error", f"the engine fails on the recorded intent: {exc!r}", intent=raw)
            if result is not None:
                emit(GAME_FINISHED, finished_data(result, seed, hashes[-1]), meta)
                finished = True
            if pos >= len(expected):
                return diverge(rec.seq, "extra", "re-deciding the recorded intent produces no event", intent=raw)
        exp_type, exp_sv, exp_data, exp_meta = expected[pos]
        intent = rec.meta.get("intent")
        if rec.type != exp_type:
            return diverge(rec.seq, "type", f"type {rec.type}, re-decided {exp_type}", intent=intent)
        if canonical.canonical(rec.data) != canonical.canonical(exp_data):
            return diverge(
                rec.seq, "data", "data differs", intent=intent, recorded=_excerpt(rec.data), expected=_excerpt(exp_data)
            )
        if canonical.canonical(rec.meta) != canonical.canonical(exp_meta):
            return diverge(
                rec.seq,
                "meta",
                "meta differs from its batch's",
                recorded=_excerpt(rec.meta),
                expected=_excerpt(exp_meta),
            )
        if rec.schema_version != exp_sv or rec.hash != hashes[pos]:
            return diverge(
                rec.seq, "hash", "same content but a different hash", recorded=rec.hash, expected=hashes[pos]
            )
        pos += 1
    if len(expected) > len(events):
        missing = len(events) + 1
        what = expected[len(events)][0]
        return diverge(missing, "missing", f"re-deciding produces a {what} at seq {missing} that is not recorded")
    details["intents"] = intents
    details["first_divergence"] = None
    return Check(True, f"{intents} intents re-decided; all {len(events)} events identical", details)


def redecide_dicts(game_id: str, events: Sequence[dict[str, Any]], seed: bytes) -> Check:
    """:func:`redecide` over bundle/feed lines (the offline verifier's hook)."""
    from service.bundle import from_bundle_events

    try:
        stored = from_bundle_events(game_id, events)
    except (KeyError, TypeError) as exc:
        return Check(False, f"malformed event line: missing {exc}", {})
    return redecide(game_id, stored, seed)


# -- projection ---------------------------------------------------------------
def check_projection(r: Any, store: EventStore, game_id: str, events: Sequence[StoredEvent]) -> Check:
    """Compare the Redis read model with a rebuild folded in memory."""
    import redis

    from projections import keys
    from projections.boards import board_fields, dumps, info_from, is_finished
    from projections.runner import project_game

    key = keys.game(game_id)
    head = events[-1].seq if events else 0
    try:
        current = r.hgetall(key)
        caught_up = False
        if not current or int(current.get(b"version", b"0")) < head:
            project_game(r, store, game_id)
            current = r.hgetall(key)
            caught_up = True
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        return Check(False, f"Redis cannot be reached: {exc}", {"error": "redis_unavailable"})
    except Exception as exc:  # a stream the projector cannot fold
        return Check(False, f"the read model cannot be brought up to date: {exc}", {"error": "projection_failed"})
    version = int(current.get(b"version", b"0"))
    details: dict[str, Any] = {"version": version, "head": head, "caught_up_first": caught_up}
    if version > head:
        return Check(False, f"the read model is at version {version}, past the stream's head {head}", details)
    prefix = list(events[:version])
    try:
        engine, _ = _engine_for(prefix)
        info = info_from(prefix, None)
        state = fold_stream(engine, prefix)
        fresh = board_fields(engine, info, state, version, is_finished(prefix, False))
    except registry.RulesVersionUnavailable as exc:
        return Check(False, f"rules_version_unavailable: {exc}", details | {"error": "rules_version_unavailable"})
    except Exception as exc:
        return Check(False, f"the stream cannot be folded: {exc}", details | {"error": "fold_failed"})
    fresh["auth"] = dumps([h.hex() for h in store.secrets(game_id)[1]])
    mismatched = sorted(f for f, v in fresh.items() if current.get(f.encode()) != _bytes(v))
    details |= {"fields_checked": len(fresh), "mismatched_fields": mismatched}
    if mismatched:
        return Check(False, f"{len(mismatched)} field(s) differ from a rebuild: {', '.join(mismatched[:6])}", details)
    return Check(True, f"read model at version {version} equals a rebuild ({len(fresh)} fields)", details)


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


# -- the whole audit ----------------------------------------------------------
def audit_game(store: EventStore, r: Any, game_id: str, projection: bool = True) -> AuditReport:
    record = store.game(game_id)
    if record is None:
        raise not_found()
    events = store.read(game_id)
    try:
        stored_seed: bytes | None = store.secrets(game_id)[0]
    except KeyError:
        stored_seed = None
    return audit_events(game_id, events, stored_seed, record.seed_commitment, store=store, r=r, projection=projection)


def audit_events(
    game_id: str,
    events: Sequence[StoredEvent],
    stored_seed: bytes | None = None,
    record_commitment: str | None = None,
    store: EventStore | None = None,
    r: Any = None,
    projection: bool = True,
) -> AuditReport:
    seed, source = committed_seed(events, stored_seed)
    checks = {
        "hash_chain": check_chain(game_id, events, seed),
        "seed": check_seed(events, stored_seed, record_commitment),
        "redecide": redecide(game_id, events, seed, source),
    }
    if projection and store is not None and r is not None:
        checks["projection"] = check_projection(r, store, game_id, events)
    else:
        checks["projection"] = Check(True, "skipped: no read model to compare", skipped=True)
    created = events[0].data if events and events[0].type == GAME_CREATED else {}
    finished = any(e.type == GAME_FINISHED for e in events)
    return AuditReport(
        game_id,
        str(created.get("game", "?")),
        str(created.get("rules_version", "?")),
        "finished" if finished else "active",
        events[-1].seq if events else 0,
        events[-1].hash if events else None,
        checks,
    )


# -- feed redaction and time travel -------------------------------------------
def feed_line(engine: Engine, e: StoredEvent, viewer: Viewer, reveal_all: bool) -> dict[str, Any]:
    """One line of the events feed as ``viewer`` may see it.

    ``reveal_all`` (organiser, or the game has finished) shows everything.
    Otherwise ``data`` is what ``engine.redact_event`` leaves for ``viewer``
    and ``meta.intent`` is dropped unless the viewer's own seat sent it (and
    ``meta.seat`` too when the event's data was redacted).  The
    digests, ``prev_hash`` and ``hash`` are always the stored ones: the hash
    covers the digests, not the data, so every link still checks."""
    line = e.to_json()
    line["redacted"] = False
    if reveal_all or viewer == ADMIN:
        return line
    data_hidden = False
    if e.type not in PLATFORM_EVENTS:
        shown = engine.redact_event(Event(e.type, e.data), viewer).data
        if shown is not e.data and canonical.canonical(shown) != canonical.canonical(e.data):
            line["data"] = shown
            line["redacted"] = data_hidden = True
    if e.meta.get("seat") != viewer:
        # Another seat's intent is theirs alone; and when the event itself
        # hides something (a secret crew choice), so is the fact that it was
        # that seat who acted.
        hidden = {"intent", "seat"} if data_hidden else {"intent"}
        if any(e.meta.get(k) is not None for k in hidden):
            line["meta"] = {k: v for k, v in e.meta.items() if k not in hidden}
            line["redacted"] = True
    return line


def is_finished(events: Sequence[StoredEvent]) -> bool:
    return any(e.type == GAME_FINISHED for e in events)


def stream_finished(store: EventStore, game_id: str) -> bool:
    """Whether the game's stream is closed (its last event is GameFinished)."""
    head = store.version(game_id)
    return head > 0 and any(e.type == GAME_FINISHED for e in store.read(game_id, after=head - 1))


def state_at(store: EventStore, game_id: str, version: int | None, seat: int | None) -> dict[str, Any]:
    """The state and views after the first ``version`` events, rebuilt from
    the stream alone with the rules version the game was created with.
    Access control is the caller's job."""
    record = store.game(game_id)
    if record is None:
        raise not_found()
    head = store.version(game_id)
    version = head if version is None else version
    if not 1 <= version <= head:
        raise ApiError(422, "invalid_version", f"version must be between 1 and {head}.", {"head": head})
    try:
        engine = registry.get(record.game, record.rules_version)
    except registry.RulesVersionUnavailable as exc:
        raise ApiError(409, "rules_version_unavailable", str(exc), {"rules_version": record.rules_version}) from None
    if seat is not None and not 0 <= seat < len(record.players):
        raise ApiError(422, "invalid_seat", f"seat must be between 0 and {len(record.players) - 1}.")
    events = store.read(game_id, upto=version)
    state = fold_stream(engine, events)
    finished_at_version = is_finished(events)
    result = engine.result(state) if state is not None else None
    return {
        "id": game_id,
        "game": record.game,
        "rules_version": record.rules_version,
        "players": list(record.players),
        "version": version,
        "head": head,
        "hash": events[-1].hash,
        "last_event": {"seq": events[-1].seq, "type": events[-1].type},
        "finished": finished_at_version,
        "to_act": [] if state is None or result is not None else engine.to_act(state),
        "result": result,
        "seat": seat,
        "view": None if state is None else engine.view(state, seat),
        "state": state,
    }
