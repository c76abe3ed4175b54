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

Used by the API (``service/http/audit.py``), the CLI (``service/cli.py``, which
also lends :func:`redecide_dicts` to the offline verifier) and the tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from marshmallow import ValidationError

from schemas.intents import load_intent
from service.adapters.eventstore import EventStore
from service.audit.bundle import from_bundle_events
from service.domain import canonical, clocks, pipeline
from service.domain.errors import game_not_found
from service.domain.pipeline import GAME_CREATED, GAME_FINISHED
from service.domain.records import StoredEvent
from service.domain.replay import fold_stream
from service.games import registry
from service.games.base import Engine, RuleViolation
from service.games.rng import commitment

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
        dd, md = e.data_digest, e.meta_digest
        if seed is not None:
            # The store derives the digests with the seed it keeps (migration 0009);
            # the audit derives them again with the seed that matches the commitment,
            # so the chain is checked against the game's own seed, not the stored one.
            salt = canonical.event_salt(seed, e.seq)
            dd, md = canonical.digest(salt, e.data), canonical.digest(salt, e.meta)
        link = canonical.link_hash(game_id, e.seq, e.type, e.schema_version, dd, md, prev)
        if link != e.hash:
            return broken(e.seq, "hash does not match the event: its data, meta or type changed since it was sealed")
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
    """Decide every recorded intent again, through the same pipeline that
    wrote it (``service.domain.pipeline``), and compare every event."""
    if seed is None:
        return Check(False, "no seed matching the commitment to re-decide with", {"seed_source": "none"})
    try:
        engine, created = _engine_for(events)
    except registry.RulesVersionUnavailable as exc:
        return Check(False, f"rules_version_unavailable: {exc}", {"error": "rules_version_unavailable"})
    except (registry.UnknownGame, ValueError, KeyError) as exc:
        return Check(False, f"cannot replay: {exc}", {"error": "unknown_game"})
    details: dict[str, Any] = {"seed_source": seed_source, "rules_version": engine.version, "events": len(events)}
    intents = 0

    def diverge(seq: int, what: str, message: str, **more: Any) -> Check:
        details["intents"] = intents
        details["first_divergence"] = {"seq": seq, "what": what, "message": message, **more}
        return Check(False, f"diverges at seq {seq}: {message}", details)

    try:
        # The same call that opened the game, with the terms it recorded
        # (rated, accounts, clock, ...); a table's game draws its seats again
        # from its join order and the seed, so a seat order not drawn from the
        # committed seed diverges at seq 1.
        players, terms = pipeline.opening_terms(created)
        expected = pipeline.open_game(engine, game_id, players, dict(created["options"]), seed, events[0].meta, **terms)
    except Exception as exc:  # a broken opening is a divergence, not a crash
        return diverge(1, "setup", f"the opening cannot be set up again: {exc}")
    if "joined" in created:
        drawn = expected[0].data["players"]
        details["seating"] = {"joined": created["joined"], "drawn": drawn, "recorded": created["players"]}
        if drawn != created["players"]:
            return diverge(1, "seating", "the seat order is not the one drawn from the committed seed and join order")
    try:
        state = fold_stream(engine, expected)
        assert state is not None, "the opening folds to no state"  # reported below, as any failure there
    except Exception as exc:
        return diverge(len(expected), "error", f"the engine fails on its own opening: {exc!r}")
    finished = False

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
            # A platform intent (resign, timeout, abort) or the game's own; only an abort has no seat.
            try:
                command = pipeline.platform_command(raw)
            except RuleViolation as rv:
                return diverge(rec.seq, "intent", f"the recorded intent does not load: {rv.message}", intent=raw)
            if not (isinstance(seat, int) or (isinstance(command, pipeline.Abort) and seat is None)) or raw is None:
                return diverge(rec.seq, "meta", "no intent recorded for this event", recorded=_excerpt(meta))
            try:
                command = command or load_intent(created["game"], raw)
            except (ValidationError, TypeError, ValueError) as exc:
                return diverge(rec.seq, "intent", f"the recorded intent does not load: {exc}", intent=_excerpt(raw))
            intents += 1
            try:
                # The clock as this re-decision recorded it at the event before: a recorded
                # clock is never trusted, it is computed again (service/domain/clocks.py).
                spec = created.get("clock")
                clock = (
                    clocks.Clock(spec, len(created["players"]), expected[-1].meta.get("clock"))
                    if clocks.runs(spec)
                    else None
                )
                at = pipeline.Head(game_id, seed, len(expected), expected[-1].hash, meta, clock)
                decision = pipeline.act(
                    engine,
                    state,
                    seat,
                    command,
                    at,
                    # The length cap the game was created with (pipeline.cap_length).
                    max_events=created.get("max_events"),
                    # The house bots it was created with (pipeline.unattended).
                    house_bots=pipeline.bot_seats(created),
                )
                if canonical.canonical(command.to_json()) != canonical.canonical(raw):
                    return diverge(rec.seq, "intent", "the recorded intent is not in canonical form", intent=raw)
            except RuleViolation as rv:
                return diverge(
                    rec.seq, "refused", f"the rules refuse the recorded intent ({rv.code}: {rv.message})", intent=raw
                )
            except Exception as exc:  # an engine crash on a recorded intent is a finding, not a 500
                return diverge(rec.seq, "error", f"the engine fails on the recorded intent: {exc!r}", intent=raw)
            state = decision.state
            expected.extend(decision.events)
            finished = decision.result is not None
            if pos >= len(expected):
                return diverge(rec.seq, "extra", "re-deciding the recorded intent produces no event", intent=raw)
        exp = expected[pos]
        intent = rec.meta.get("intent")
        if rec.type != exp.type:
            return diverge(rec.seq, "type", f"type {rec.type}, re-decided {exp.type}", intent=intent)
        if canonical.canonical(rec.data) != canonical.canonical(exp.data):
            return diverge(
                rec.seq, "data", "data differs", intent=intent, recorded=_excerpt(rec.data), expected=_excerpt(exp.data)
            )
        if canonical.canonical(rec.meta) != canonical.canonical(exp.meta):
            return diverge(
                rec.seq,
                "meta",
                "meta differs from its batch's",
                recorded=_excerpt(rec.meta),
                expected=_excerpt(exp.meta),
            )
        if rec.schema_version != exp.schema_version or rec.hash != exp.hash:
            return diverge(rec.seq, "hash", "same content but a different hash", recorded=rec.hash, expected=exp.hash)
        pos += 1
    if len(expected) > len(events):
        missing = len(events) + 1
        what = expected[len(events)].type
        return diverge(missing, "missing", f"re-deciding produces a {what} at seq {missing} that is not recorded")
    details["intents"] = intents
    details["first_divergence"] = None
    return Check(True, f"{intents} intents re-decided; all {len(events)} events identical", details)


def redecide_dicts(game_id: str, events: Sequence[dict[str, Any]], seed: bytes) -> dict[str, Any]:
    """:func:`redecide` over bundle/feed lines, as the offline verifier's
    re-decide step (``service.audit.verify.verify_bundle(redecide=...)``)."""
    try:
        stored = from_bundle_events(game_id, events)
    except (KeyError, TypeError) as exc:
        return Check(False, f"malformed event line: missing {exc}", {}).to_json()
    return redecide(game_id, stored, seed).to_json()


# -- projection ---------------------------------------------------------------
def check_projection(
    r: Any,
    store: EventStore,
    game_id: str,
    events: Sequence[StoredEvent],
    catch_up: Callable[[str], None] | None = None,
    wait_seconds: float = 5.0,
) -> Check:
    """Compare the Redis read model with a rebuild folded in memory.

    Reads only: a read model behind the stream's head (or missing) is asked
    to catch up (``catch_up``, the projection nudge) and waited for, bounded;
    whatever version it then has is compared with a rebuild of that prefix."""
    import redis

    from projections import keys
    from projections.boards import dumps, info_from, is_finished, render_board_fields, stream_terms

    key = keys.game(game_id)
    head = events[-1].seq if events else 0
    asked = False
    try:
        current = r.hgetall(key)
        if (not current or int(current.get(b"version", b"0")) < head) and catch_up is not None:
            catch_up(game_id)
            asked = True
            deadline = time.monotonic() + wait_seconds
            while (not current or int(current.get(b"version", b"0")) < head) and time.monotonic() < deadline:
                time.sleep(0.02)
                current = r.hgetall(key)
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        return Check(False, f"Redis cannot be reached: {exc}", {"error": "redis_unavailable"})
    version = int(current.get(b"version", b"0"))
    details: dict[str, Any] = {"version": version, "head": head, "catch_up_asked": asked}
    if not current:
        return Check(False, "there is no read model of this game (yet); a catch-up was asked for", details)
    if version > head:
        return Check(False, f"the read model is at version {version}, past the stream's head {head}", details)
    prefix = list(events[:version])
    try:
        engine, _ = _engine_for(prefix)
        info = info_from(prefix, None)
        state = fold_stream(engine, prefix)
        # _engine_for found GameCreated first; a failure here is reported as any fold's.
        assert info is not None and state is not None, "no game in the stream's prefix"
        fresh = render_board_fields(engine, info, state, version, is_finished(prefix, False), **stream_terms(prefix))
    except registry.RulesVersionUnavailable as exc:
        return Check(False, f"rules_version_unavailable: {exc}", details | {"error": "rules_version_unavailable"})
    except Exception as exc:
        return Check(False, f"the stream cannot be folded: {exc}", details | {"error": "fold_failed"})
    fresh["auth"] = dumps([h.hex() for h in store.token_hashes(game_id)])
    mismatched = sorted(f for f, v in fresh.items() if current.get(f.encode()) != _bytes(v))
    details |= {"fields_checked": len(fresh), "mismatched_fields": mismatched}
    if mismatched:
        return Check(False, f"{len(mismatched)} field(s) differ from a rebuild: {', '.join(mismatched[:6])}", details)
    behind = f" (the stream's head is {head})" if version < head else ""
    return Check(True, f"read model at version {version} equals a rebuild ({len(fresh)} fields){behind}", details)


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


# -- the whole audit ----------------------------------------------------------
def audit_game(
    store: EventStore,
    r: Any,
    game_id: str,
    projection: bool = True,
    catch_up: Callable[[str], None] | None = None,
) -> AuditReport:
    record = store.game(game_id)
    if record is None:
        raise game_not_found()
    events = store.read(game_id)
    try:
        stored_seed: bytes | None = store.secrets(game_id)[0]
    except KeyError:
        stored_seed = None
    return audit_events(
        game_id, events, stored_seed, record.seed_commitment, store=store, r=r, projection=projection, catch_up=catch_up
    )


def audit_events(
    game_id: str,
    events: Sequence[StoredEvent],
    stored_seed: bytes | None = None,
    record_commitment: str | None = None,
    store: EventStore | None = None,
    r: Any = None,
    projection: bool = True,
    catch_up: Callable[[str], None] | None = None,
) -> AuditReport:
    seed, source = committed_seed(events, stored_seed)
    checks = {
        "hash_chain": check_chain(game_id, events, seed),
        "seed": check_seed(events, stored_seed, record_commitment),
        "redecide": redecide(game_id, events, seed, source),
    }
    if projection and store is not None and r is not None:
        checks["projection"] = check_projection(r, store, game_id, events, catch_up)
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
