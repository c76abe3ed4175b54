"""Offline verifier for a Quarterdeck audit bundle (spec: docs/AUDIT.md).

    python service/audit/verify.py exports/<game id>.json    # this file alone, no install
    python -m service verify exports/<game id>.json          # inside Quarterdeck: with re-decide

Standard library only, and self-contained on purpose: it re-implements the
canonical JSON, the salted digests and the hash chain from docs/AUDIT.md
instead of importing ours, so an organiser can copy this one file and check a
bundle without trusting (or installing) our code.  It checks:

* ``hash_chain`` — dense seqs from 1, every ``prev_hash`` link, every ``hash``;
  with the revealed seed also every ``data_digest``/``meta_digest``; the
  closing event's ``head_hash`` and that nothing follows it;
* ``seed`` — the revealed seed's sha256 equals the commitment published in the
  opening event (and in the bundle header);
* ``redecide`` — only when a re-decider is lent to :func:`verify_bundle`
  (``python -m service verify`` lends Quarterdeck's own engines): every
  recorded intent is decided again with the revealed seed and must reproduce
  every event byte for byte.  This file alone skips it and says so.

Every event type is chained and digested the same way, so this file checks
the platform's own events too (``SeatResigned``, ``SeatTimedOut``,
``GameAborted``: docs/CLOCKS.md) without knowing them; re-deciding them, and
the clock recorded in each event's meta, is ``redecide``'s job.

A tournament bundle (``"format": "quarterdeck-tournament-bundle"``,
docs/TOURNAMENTS.md) is checked the same way: its manifest, the tournament
stream's chain, digests and seed, every game bundle above, and that every
table's game seated the table's players and ended with the recorded result;
the pairings are re-made only when a re-pairer is lent (``python -m service
verify`` lends the tournament audit).

Prints a readable report; exits 0 when every check that could run passed,
1 when one failed, 2 when the bundle cannot be read.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
from collections.abc import Callable
from typing import Any

BUNDLE_FORMAT = "quarterdeck-audit-bundle"
BUNDLE_FORMAT_VERSION = 1
GENESIS = "0" * 64
SALT_LABEL = b"quarterdeck-event-salt-v1"
OPENING = "GameCreated"
CLOSING = "GameFinished"


# -- the spec, re-implemented ---------------------------------------------------
def canonical(obj: Any) -> bytes:
    """docs/AUDIT.md "Canonical JSON": sorted keys, no whitespace, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def event_salt(seed: bytes, seq: int) -> bytes:
    return hmac.digest(seed, SALT_LABEL + seq.to_bytes(8, "big"), "sha256")


def digest(salt: bytes, obj: Any) -> str:
    return hashlib.sha256(salt + canonical(obj)).hexdigest()


def link_hash(game_id: str, e: dict[str, Any], prev_hash: str) -> str:
    body = {
        "data_digest": e["data_digest"],
        "game_id": game_id,
        "meta_digest": e["meta_digest"],
        "prev_hash": prev_hash,
        "schema_version": e.get("schema_version", 1),
        "seq": e["seq"],
        "type": e["type"],
    }
    return hashlib.sha256(canonical(body)).hexdigest()


def commitment(seed: bytes) -> str:
    return hashlib.sha256(seed).hexdigest()


# -- checks --------------------------------------------------------------------
def _result(ok: bool, summary: str, **details: Any) -> dict[str, Any]:
    return {"ok": ok, "summary": summary, "details": details}


def _skipped(summary: str) -> dict[str, Any]:
    return {"ok": True, "summary": summary, "details": {}, "skipped": True}


def revealed_seed(events: list[dict[str, Any]]) -> bytes | None:
    """The seed revealed by the closing event, if there is one and it parses."""
    for e in events:
        if e.get("type") == CLOSING:
            try:
                seed = bytes.fromhex(str(e["data"]["seed"]))
            except (KeyError, TypeError, ValueError):
                return None
            return seed if len(seed) == 32 else None
    return None


def opening_commitment(events: list[dict[str, Any]]) -> str | None:
    if events and events[0].get("type") == OPENING and isinstance(events[0].get("data"), dict):
        value = events[0]["data"].get("seed_commitment")
        return value if isinstance(value, str) else None
    return None


def check_chain(game_id: str, events: list[dict[str, Any]], seed: bytes | None) -> dict[str, Any]:
    """Links always; digests too when ``seed`` is given (it must be the
    committed seed: a wrong one would make every digest look broken)."""
    prev = GENESIS
    checked_digests = seed is not None
    closed_at = None
    for i, e in enumerate(events):
        expected_seq = i + 1
        seq = e.get("seq")

        def broken(reason: str, at: int = expected_seq) -> dict[str, Any]:
            return _result(
                False,
                f"broken at seq {at}: {reason}",
                first_broken_seq=at,
                reason=reason,
                events=len(events),
                digests_checked=checked_digests,
            )

        if seq != expected_seq:
            if isinstance(seq, int) and seq > expected_seq:
                missing = f"{expected_seq}" if seq == expected_seq + 1 else f"{expected_seq}-{seq - 1}"
                return broken(f"event(s) {missing} missing: the stream jumps from {expected_seq - 1} to {seq}")
            return broken(f"expected seq {expected_seq}, found {seq!r}")
        if closed_at is not None:
            return broken(f"an event follows the closing event (seq {closed_at})")
        if e.get("prev_hash") != prev:
            return broken("prev_hash is not the hash of the event before it")
        if seed is not None:
            salt = event_salt(seed, seq)
            if digest(salt, e.get("data")) != e.get("data_digest"):
                return broken("data_digest does not match the event's data")
            if digest(salt, e.get("meta")) != e.get("meta_digest"):
                return broken("meta_digest does not match the event's meta")
        if link_hash(game_id, e, prev) != e.get("hash"):
            return broken("hash does not match the event")
        if e.get("type") == CLOSING:
            closed_at = seq
            head = e.get("data", {}).get("head_hash") if isinstance(e.get("data"), dict) else None
            if head != prev:
                return broken("the closing event's head_hash is not the hash of the event before it")
        prev = e["hash"]
    if not events:
        return _result(False, "no events", first_broken_seq=1, reason="empty stream", events=0)
    how = "links and digests" if checked_digests else "links only (digests need the revealed seed)"
    return _result(
        True,
        f"{len(events)} events chained, head {prev[:16]}…; checked {how}",
        first_broken_seq=None,
        events=len(events),
        head_hash=prev,
        digests_checked=checked_digests,
        closed=closed_at is not None,
    )


def check_seed(events: list[dict[str, Any]], header_commitment: str | None = None) -> dict[str, Any]:
    committed = opening_commitment(events)
    if committed is None:
        return _result(False, "the opening event carries no seed commitment", commitment=None)
    if header_commitment is not None and header_commitment != committed:
        return _result(
            False,
            "the bundle header's commitment differs from the opening event's",
            commitment=committed,
            header_commitment=header_commitment,
        )
    closing = [e for e in events if e.get("type") == CLOSING]
    if not closing:
        return _result(True, "not revealed yet (the game is still running)", commitment=committed, revealed=False)
    seed = revealed_seed(events)
    if seed is None:
        return _result(False, "the closing event's seed is not 32 bytes of hex", commitment=committed, revealed=True)
    actual = commitment(seed)
    if actual != committed:
        return _result(
            False,
            "sha256(revealed seed) does not match the commitment",
            commitment=committed,
            revealed=True,
            revealed_commitment=actual,
        )
    return _result(True, f"sha256(revealed seed) = commitment {committed[:16]}…", commitment=committed, revealed=True)


# -- the bundle ----------------------------------------------------------------
class BundleError(Exception):
    pass


def load_bundle(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            bundle = json.load(fh)
    except (OSError, ValueError) as exc:
        raise BundleError(f"cannot read {path}: {exc}") from None
    if isinstance(bundle, dict) and bundle.get("format") == TOURNAMENT_FORMAT:
        if bundle.get("format_version") != TOURNAMENT_FORMAT_VERSION:
            raise BundleError(f"unsupported tournament bundle format_version {bundle.get('format_version')!r}")
        if not isinstance(bundle.get("events"), list) or not isinstance(bundle.get("games"), list):
            raise BundleError("the tournament bundle has no events or no games")
        return bundle
    if not isinstance(bundle, dict) or bundle.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"{path} is not a {BUNDLE_FORMAT} file")
    if bundle.get("format_version") != BUNDLE_FORMAT_VERSION:
        raise BundleError(f"unsupported bundle format_version {bundle.get('format_version')!r}")
    if not isinstance(bundle.get("events"), list) or not isinstance(bundle.get("game"), dict):
        raise BundleError("the bundle has no events or no game header")
    return bundle


#: ``redecide(game_id, events, seed) -> check``: a re-decider lent by the caller.
Redecider = Callable[[str, list[dict[str, Any]], bytes], dict[str, Any]]


def verify_bundle(bundle: dict[str, Any], redecide: Redecider | None = None) -> dict[str, Any]:
    """All checks on a loaded bundle: ``{"ok", "checks": {name: result}}``.
    Without ``redecide`` the re-decide step is reported as skipped."""
    header = bundle["game"]
    events = bundle["events"]
    game_id = str(header.get("id"))
    checks: dict[str, dict[str, Any]] = {}
    seed_check = check_seed(events, header.get("seed_commitment"))
    checks["seed"] = seed_check
    seed = revealed_seed(events)
    good_seed = seed if seed is not None and seed_check["ok"] else None
    checks["hash_chain"] = check_chain(game_id, events, good_seed)
    if bundle.get("seed") is not None and seed is not None and bundle["seed"] != seed.hex():
        checks["seed"] = _result(False, "the bundle header's seed differs from the closing event's")
    if redecide is None:
        checks["redecide"] = _skipped("skipped: run 'python -m service verify' inside Quarterdeck to re-decide")
    elif good_seed is None:
        checks["redecide"] = _skipped("skipped: needs the revealed seed (the game must be finished)")
    else:
        checks["redecide"] = redecide(game_id, events, good_seed)
    ran = [c for c in checks.values() if not c.get("skipped")]
    return {"ok": all(c["ok"] for c in ran), "checks": checks}


# -- tournaments ----------------------------------------------------------------
# A tournament bundle (docs/TOURNAMENTS.md "Export") holds the tournament's
# stream, every table's game bundle and a manifest of their hashes.  Its stream
# is chained and digested exactly like a game's (the tournament id where a
# game's id goes, salted with the tournament's seed); its opening event
# commits to the seed and TournamentFinished (or TournamentAborted) reveals it.
TOURNAMENT_FORMAT = "quarterdeck-tournament-bundle"
TOURNAMENT_FORMAT_VERSION = 1
T_OPENING, T_CLOSING, T_ABORTED = "TournamentCreated", "TournamentFinished", "TournamentAborted"
#: The keys of a game's result a tournament records (docs/TOURNAMENTS.md "The stream").
RESULT_KEYS = ("reason", "forfeited", "ranking", "ranks", "scores")

#: ``repair(events, seed) -> check``: re-decides a tournament stream (the pairings,
#: the standings), lent by the caller (``python -m service verify``).
Repairer = Callable[[list[dict[str, Any]], bytes], dict[str, Any]]


def manifest_entry(stream_id: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    """One stream of the manifest: its id, length, head hash and the sha256 of
    its events in canonical JSON."""
    return {
        "id": stream_id,
        "events": len(events),
        "head_hash": events[-1].get("hash") if events else None,
        "sha256": hashlib.sha256(canonical(events)).hexdigest(),
    }


def _tournament_seed(events: list[dict[str, Any]]) -> tuple[dict[str, Any], bytes | None]:
    """The seed check of a tournament stream, and the seed if it checks."""
    opening = events[0] if events and events[0].get("type") == T_OPENING else None
    committed = opening["data"].get("seed_commitment") if opening and isinstance(opening.get("data"), dict) else None
    if not isinstance(committed, str):
        return _result(False, "the stream does not open with a seed commitment"), None
    closing = next((e for e in events if e.get("type") in (T_CLOSING, T_ABORTED)), None)
    if closing is None:
        return _result(True, "not revealed yet (the tournament is running)", revealed=False), None
    try:
        seed = bytes.fromhex(str(closing["data"]["seed"]))
    except (KeyError, TypeError, ValueError):
        seed = b""
    if len(seed) != 32 or commitment(seed) != committed:
        return _result(False, "sha256(revealed seed) does not match the commitment", revealed=True), None
    return _result(True, f"sha256(revealed seed) = commitment {committed[:16]}…", revealed=True), seed


def _data(event: dict[str, Any]) -> dict[str, Any]:
    """An event's data, or ``{}`` when the bundle (untrusted input) gives none."""
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def _round(data: dict[str, Any]) -> int:
    """The round an event's data names, or 0 when it names none."""
    n = data.get("round")
    return n if isinstance(n, int) else 0


def _shown(result: Any) -> Any:
    """A game's recorded result as a tournament keeps it (one recorded before
    forfeits existed says no reason: it completed, nobody left)."""
    if not isinstance(result, dict):
        return None
    full = {"reason": "completed", "forfeited": []} | result
    return {k: full.get(k) for k in RESULT_KEYS}


def check_tables(events: list[dict[str, Any]], games: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Every table's game seated the table's players in its seat order, is a game
    of the tournament's game, and ended with the result the tournament recorded."""
    # Keyed by (round, table) as the bundle, untrusted, gives them.
    tables: dict[tuple[Any, Any], Any] = {}
    game_of = events[0].get("data", {}).get("game") if events else None
    problems: list[str] = []
    checked = 0
    for e in events:
        data = _data(e)
        if e.get("type") == "RoundPaired":
            for t in data.get("tables", []):
                tables[(data.get("round"), t.get("table"))] = t.get("players")
        elif e.get("type") in ("TableStarted", "TableFinished"):
            gid: Any = data.get("game_id")  # as the bundle gives it
            where = f"round {data.get('round')} table {data.get('table')} (game {gid})"
            game = games.get(gid)
            if game is None:
                problems.append(f"{where}: the bundle does not hold its game")
                continue
            checked += 1
            header = game.get("game", {})
            if header.get("players") != tables.get((data.get("round"), data.get("table"))):
                problems.append(f"{where}: the game did not seat the table's players in its order")
            if header.get("game") != game_of:
                problems.append(f"{where}: the game is {header.get('game')}, not {game_of}")
            if e.get("type") == "TableFinished":
                closing = next((x for x in game.get("events", []) if x.get("type") == CLOSING), None)
                theirs = _shown(closing.get("data", {}).get("result")) if closing else None
                if theirs != data.get("result"):
                    problems.append(f"{where}: the tournament recorded a result the game did not end with")
    if problems:
        return _result(False, f"{len(problems)} problem(s): {problems[0]}", problems=problems[:20])
    return _result(True, f"{checked} table records match their games", tables=checked)


def check_record(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The withdrawals, late entrants and abort the stream records (docs/TOURNAMENTS.md
    TRN-050, TRN-060, TRN-070), and what needs no seed to check of them: a withdrawn
    player is paired no more after the round it left in, a late entrant not before
    the round it joined for, and nothing follows an abort.  (The pairings themselves
    are re-made by the lent re-pairer.)"""
    withdrawn: dict[str, int] = {}
    late: dict[str, int] = {}
    aborted: dict[str, Any] | None = None
    problems: list[str] = []
    for i, e in enumerate(events):
        data = _data(e)
        kind = e.get("type")
        if aborted is not None:
            problems.append(f"event {i} ({kind}) follows the abort")
        if kind == "PlayerWithdrawn":
            withdrawn[str(data.get("player"))] = _round(data)
        elif kind == "LatePlayerRegistered":
            late[str(data.get("player"))] = _round(data)
        elif kind == T_ABORTED:
            aborted = {k: data.get(k) for k in ("by", "reason", "round")}
        elif kind == "RoundPaired":
            n = _round(data)
            seated = [p for t in data.get("tables") or [] if isinstance(t, dict) for p in t.get("players") or []]
            for p in [*seated, *(data.get("byes") or [])]:
                if p in withdrawn and withdrawn[p] < n:
                    problems.append(f"round {n} pairs {p}, who withdrew after round {withdrawn[p]}")
                if p in late and late[p] > n:
                    problems.append(f"round {n} pairs {p}, who joined for round {late[p]}")
    details = {"withdrawals": withdrawn, "late": late, "aborted": aborted}
    if problems:
        return _result(False, f"{len(problems)} problem(s): {problems[0]}", problems=problems[:20], **details)
    said = [f"{len(withdrawn)} withdrawal(s)", f"{len(late)} late entrant(s)"]
    if aborted is not None:
        who = aborted["by"] if aborted["by"] is not None else "the operator"
        said.append(f"aborted by {who} after round {aborted['round']}: {aborted['reason']}")
    return _result(True, "; ".join(said), **details)


def verify_tournament_bundle(
    bundle: dict[str, Any], redecide: Redecider | None = None, repair: Repairer | None = None
) -> dict[str, Any]:
    """All checks on a loaded tournament bundle: ``{"ok", "checks", "games"}``.
    Without ``repair`` the pairings are reported as skipped."""
    header = bundle.get("tournament") or {}
    events = bundle.get("events") or []
    tid = str(header.get("id"))
    games_list = bundle.get("games") or []
    games = {str(g.get("game", {}).get("id")): g for g in games_list if isinstance(g, dict)}
    checks: dict[str, dict[str, Any]] = {}
    manifest = bundle.get("manifest") or {}
    wanted = [manifest_entry(tid, events)] + [manifest_entry(gid, g.get("events") or []) for gid, g in games.items()]
    listed = [manifest.get("tournament"), *(manifest.get("games") or [])]
    started = [
        e["data"].get("game_id") for e in events if e.get("type") == "TableStarted" and isinstance(e.get("data"), dict)
    ]
    if listed != wanted:
        checks["manifest"] = _result(False, "the manifest does not match the streams in the bundle")
    elif sorted(started) != sorted(games):
        checks["manifest"] = _result(False, "the bundle's games are not the games the tournament's tables started")
    else:
        checks["manifest"] = _result(True, f"{len(wanted)} streams match the manifest")
    seed_check, seed = _tournament_seed(events)
    if header.get("seed_commitment") != (events[0].get("data", {}).get("seed_commitment") if events else None):
        seed_check = _result(False, "the bundle header's commitment differs from the opening event's")
    checks["seed"] = seed_check
    checks["hash_chain"] = check_chain(tid, events, seed)
    reports = {gid: verify_bundle(g, redecide) for gid, g in games.items()}
    bad = sorted(gid for gid, r in reports.items() if not r["ok"])
    checks["games"] = (
        _result(False, f"{len(bad)} of {len(reports)} games fail their own checks", failed=bad)
        if bad
        else _result(True, f"{len(reports)} games verified (chain, seed{', re-decide' if redecide else ''})")
    )
    checks["tables"] = check_tables(events, games)
    checks["record"] = check_record(events)
    if repair is None:
        checks["pairings"] = _skipped("skipped: run 'python -m service verify' inside Quarterdeck to re-pair")
    elif seed is None:
        checks["pairings"] = _skipped("skipped: needs the revealed seed (the tournament must be finished)")
    else:
        checks["pairings"] = repair([{"type": e.get("type"), "data": e.get("data")} for e in events], seed)
    ran = [c for c in checks.values() if not c.get("skipped")]
    return {"ok": all(c["ok"] for c in ran), "checks": checks, "games": reports}


def render_tournament(bundle: dict[str, Any], report: dict[str, Any]) -> str:
    header = bundle.get("tournament") or {}
    lines = [
        f"Bundle: tournament {header.get('id')} ({header.get('name')}, {header.get('game')})",
        f"        {len(bundle.get('events') or [])} events; {len(bundle.get('games') or [])} games;"
        f" status {bundle.get('status')}",
    ]
    for name in ("manifest", "hash_chain", "seed", "pairings", "tables", "record", "games"):
        c = report["checks"].get(name)
        if c is not None:
            mark = "SKIP" if c.get("skipped") else ("ok  " if c["ok"] else "FAIL")
            lines.append(f"  [{mark}] {name:<10} {c['summary']}")
    lines.append("VERIFIED" if report["ok"] else "FAILED")
    return "\n".join(lines)


# -- the report ----------------------------------------------------------------
def render(bundle: dict[str, Any], report: dict[str, Any]) -> str:
    header = bundle["game"]
    lines = [
        f"Bundle: game {header.get('id')} ({header.get('game')}, rules {header.get('rules_version')})",
        f"        players {', '.join(map(str, header.get('players') or []))}; "
        f"{len(bundle['events'])} events; status {bundle.get('status')}",
    ]
    for name in ("hash_chain", "seed", "redecide"):
        c = report["checks"].get(name)
        if c is None:
            continue
        mark = "SKIP" if c.get("skipped") else ("ok  " if c["ok"] else "FAIL")
        lines.append(f"  [{mark}] {name:<10} {c['summary']}")
    lines.append("VERIFIED" if report["ok"] else "FAILED")
    return "\n".join(lines)


def main(argv: list[str] | None = None, redecide: Redecider | None = None, repair: Repairer | None = None) -> int:
    """The command line; ``python -m service verify`` calls it with a re-decider
    (and, for a tournament bundle, a re-pairer)."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args
    no_redecide = "--no-redecide" in args
    paths = [a for a in args if not a.startswith("--")]
    if len(paths) != 1:
        print("usage: verify.py BUNDLE [--json] [--no-redecide]", file=sys.stderr)
        return 2
    try:
        bundle = load_bundle(paths[0])
    except BundleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if bundle.get("format") == TOURNAMENT_FORMAT:
        report = verify_tournament_bundle(
            bundle, redecide=None if no_redecide else redecide, repair=None if no_redecide else repair
        )
        print(json.dumps(report, indent=2) if as_json else render_tournament(bundle, report))
        return 0 if report["ok"] else 1
    report = verify_bundle(bundle, redecide=None if no_redecide else redecide)
    print(json.dumps(report, indent=2) if as_json else render(bundle, report))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
