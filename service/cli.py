"""``python -m service <command>``: the operator's and the organiser's commands.

One module, one table of commands; each builds the components it needs from
the composition root (``service.bootstrap``) and closes them.  Domain errors
become one line on stderr and exit code 2, never a traceback; a failed audit
or verification exits 1.

    migrate | rebuild [--game ID] | catch-up | bots | backup [--out F] | restore F [--check] | audit ID
    replay ID N | export ID | verify BUNDLE
    tournament-audit ID | tournament-export ID
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from service.config import Settings
from service.domain.errors import DomainError

Handler = Callable[[argparse.Namespace, Settings], int]


def _uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a game id: {value!r}") from None


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _components(settings: Settings):
    from service.bootstrap import bootstrap

    return bootstrap(settings)


# -- operations on the store and the read models --------------------------------
def _migrate(ns: argparse.Namespace, settings: Settings) -> int:
    from service.adapters.migrate import migrate

    migrate(settings.database_url, echo=True)
    return 0


def _rebuild_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", help="rebuild only this game's board")
    p.add_argument(
        "--processes",
        type=int,
        default=Settings.from_env().rebuild_processes or os.cpu_count() or 1,
        help="processes folding games side by side (default: the CPU count, or QD_REBUILD_PROCESSES)",
    )


def _rebuild(ns: argparse.Namespace, settings: Settings) -> int:
    from projections.runner import RebuildIncomplete, rebuild_all

    ctx = _components(settings)

    def connect():
        own = _components(settings)
        return own.redis, own.store

    started = time.perf_counter()
    try:
        n = rebuild_all(
            ctx.redis,
            ctx.store,
            ns.game,
            progress=lambda msg: print(msg, flush=True),
            processes=max(1, ns.processes),
            connect=connect,
            consumers=ctx.global_projections,
            retention=settings.finished_retention_s,
        )
    except RebuildIncomplete as exc:
        print(f"rebuild incomplete: {exc}", file=sys.stderr)
        return 1
    finally:
        ctx.close()
    print(f"rebuilt {n} game(s) in {time.perf_counter() - started:.2f}s")
    return 0


def _catch_up(ns: argparse.Namespace, settings: Settings) -> int:
    from projections.runner import sweep

    ctx = _components(settings)
    try:
        caught = sweep(
            ctx.redis,
            ctx.store,
            progress=lambda seen, n: print(f"{seen} events read, {n} games caught up"),
            retention=settings.finished_retention_s,
        )
        for consume in ctx.global_projections:
            consume(ctx.redis, ctx.store, False, print)
    finally:
        ctx.close()
    print(f"caught up {caught} game(s)")
    return 0


def _bots(ns: argparse.Namespace, settings: Settings) -> int:
    """Provision the house bots (idempotent): per game and level, one account per
    seat the game has at most, keyed from the bot secret (docs/BOTS.md "House bots")."""
    from service.adapters.house_bots import levels
    from service.bootstrap import house_bots
    from service.games import registry

    secret = settings.bot_key_secret
    if not secret:
        return _fail("set QD_BOT_SECRET (or ADMIN_TOKEN): the house bots' keys are derived from it")
    ctx = _components(settings)
    try:
        # As many bots of each level as the game has seats: a table can be filled with them.
        seats = {game: registry.get(game).max_players for game in registry.names()}
        bots = house_bots(ctx).provision(registry.names(), levels(), secret, seats)
    finally:
        ctx.close()
    print(f"{len(bots)} house bot(s): " + ", ".join(b.handle for b in bots))
    return 0


def _backup_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default=None, help="the file to write (default backups/quarterdeck-<UTC time>.qdb.gz)")
    p.add_argument("--level", type=int, default=1, help="gzip level, 1 (fast, the default) to 9 (small)")


def _backup(ns: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    from service.adapters.backup import BackupError, backup

    out = Path(ns.out or f"backups/quarterdeck-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.qdb.gz")
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    started = time.perf_counter()
    try:
        with partial.open("wb") as f:
            trailer = backup(settings.database_url, f, progress=lambda msg: print(msg, flush=True), level=ns.level)
    except BackupError as exc:
        partial.unlink(missing_ok=True)
        return _fail(str(exc))
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(out)  # a file under its final name is always whole
    rows = {t: e["rows"] for t, e in trailer["manifest"].items()}
    print(
        f"wrote {out}: {out.stat().st_size} bytes, {rows['events']} events, {rows['games']} games,"
        f" {sum(rows.values())} rows in {time.perf_counter() - started:.1f}s; sha256 {trailer['sha256']}"
    )
    print(f"  restore into an EMPTY database with: make restore FILE={out}  (then: make rebuild)")
    return 0


def _restore_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file")
    p.add_argument("--check", action="store_true", help="only read the file through and check it (no database)")
    p.add_argument(
        "--rebase-feed",
        choices=("auto", "yes", "no"),
        default="auto",
        help="renumber the global feed (docs/RELIABILITY.md 'Backups'; default: only if this server needs it)",
    )


def _restore(ns: argparse.Namespace, settings: Settings) -> int:
    from service.adapters.backup import BackupError, check, restore

    say = lambda msg: print(msg, flush=True)  # noqa: E731
    if not os.path.exists(ns.file):
        return _fail(f"no such file: {ns.file}")
    try:
        if ns.check:
            check(ns.file, progress=say)
            return 0
        report = restore(
            settings.database_url,
            ns.file,
            progress=say,
            rebase={"auto": None, "yes": True, "no": False}[ns.rebase_feed],
        )
    except BackupError as exc:
        return _fail(f"{exc}; nothing was restored")
    print(
        f"restored {sum(report.tables.values())} rows ({report.tables['events']} events,"
        f" {report.tables['games']} games) in {report.seconds:.1f}s"
        + (", global feed rebased" if report.rebased else "")
    )
    if report.migrations_after:
        print(f"  then applied the newer migrations {', '.join(report.migrations_after)}")
    print("  next: make rebuild (the read models, from the restored events)")
    return 0


# -- the organiser's commands ------------------------------------------------------
def _audit_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", type=_uuid)
    p.add_argument("--json", action="store_true")


def _audit(ns: argparse.Namespace, settings: Settings) -> int:
    from service.audit.checks import audit_game

    ctx = _components(settings)
    try:
        report = audit_game(ctx.store, ctx.redis, ns.game, catch_up=ctx.nudge)
    finally:
        ctx.close()
    print(json.dumps(report.to_json(), indent=2) if ns.json else report.render())
    return 0 if report.ok else 1


def _replay_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", type=_uuid)
    p.add_argument("version", type=int, help="number of events to fold")
    p.add_argument("--seat", type=int, default=None, help="show this seat's view (default: spectator)")
    p.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    p.add_argument("--state", action="store_true", help="also print the whole engine state")


def _replay(ns: argparse.Namespace, settings: Settings) -> int:
    from service.audit.reading import state_at
    from service.games import registry
    from service.games.base import ADMIN

    ctx = _components(settings)
    try:
        answer = state_at(ctx.store, ns.game, ns.version, ns.seat)
        events = ctx.store.read(ns.game, after=max(0, ns.version - 5), upto=ns.version)
    finally:
        ctx.close()
    if ns.json:
        print(json.dumps(answer, indent=2, ensure_ascii=False))
        return 0
    engine = registry.get(answer["game"], answer["rules_version"])
    state = answer["state"]
    print(f"Game {answer['id']} ({answer['game']}, rules {answer['rules_version']})")
    print(f"  after {answer['version']} of {answer['head']} events; hash at this version {answer['hash']}")
    print("  last events:")
    for e in events:
        seat = e.meta.get("seat")
        who = f"seat {seat}" if seat is not None else "setup"
        print(f"    {e.seq:>5}  {e.type:<28} {who:<8} {json.dumps(e.data, ensure_ascii=False)[:90]}")
    if answer["result"] is not None:
        print(f"  result: {json.dumps(answer['result'], ensure_ascii=False)}")
    else:
        print(f"  to act: {answer['to_act']}")
    if state is not None:
        seats = [ns.seat] if ns.seat is not None else list(range(len(answer["players"])))
        for seat in seats:
            print(f"  view of seat {seat}:")
            print(_readable(engine.view(state, seat)))
        if ns.state:
            print("  whole state (organiser):")
            print(_readable(engine.view(state, ADMIN)))
    return 0


def _readable(view: Any, prefix: str = "    ", width: int = 160) -> str:
    """One line per top-level key, values as compact JSON (cut at ``width``)."""
    if not isinstance(view, dict):
        return prefix + json.dumps(view, ensure_ascii=False)[:width]
    lines = []
    for key in sorted(view):
        text = json.dumps(view[key], ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        lines.append(f"{prefix}{key}: {text if len(text) <= width else text[: width - 1] + '…'}")
    return "\n".join(lines)


def _export_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", type=_uuid)
    p.add_argument("--out", default=None)


def _export(ns: argparse.Namespace, settings: Settings) -> int:
    from service.audit import bundle
    from service.domain.errors import game_not_found

    ctx = _components(settings)
    try:
        record = ctx.store.game(ns.game)
        if record is None:
            raise game_not_found()
        events = ctx.store.read(ns.game)
    finally:
        ctx.close()
    b = bundle.build(record, events)
    path = bundle.write(ns.out or f"exports/{ns.game}.json", b)
    print(f"wrote {path}: {len(events)} events, status {b['status']}, head {b['head_hash']}")
    if b["seed"] is None:
        print("  the game is still running: the seed is not revealed, so only the links can be verified")
    print(f"  verify offline with: python -m service verify {path}")
    print("  (or, without Quarterdeck installed: python service/audit/verify.py BUNDLE, which skips re-deciding)")
    return 0


def _tournament_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("tournament", type=_uuid)
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", default=None, help="export: the file to write (default exports/tournament-<id>.json)")


def _tournament_audit(ns: argparse.Namespace, settings: Settings) -> int:
    from service.audit.tournament_audit import audit_tournament
    from service.bootstrap import kept_audits

    ctx = _components(settings)
    try:
        # The operator's audit: with the kept seed, so a running tournament's pairings are re-made too.
        report = audit_tournament(ctx.tournament_store, ctx.store, ns.tournament, with_seed=True, kept=kept_audits(ctx))
    finally:
        ctx.close()
    if ns.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"Tournament {ns.tournament}: {report['status']}")
        aborted = report.get("aborted")
        if aborted:
            who = aborted["by"] or "the operator"
            print(f"  aborted by {who} after round {aborted['round']}: {aborted['reason']}")
        for w in report.get("withdrawals") or []:
            print(f"  withdrawn: {w['player']} after round {w['round']} (by {w['by'] or 'the operator'})")
        for late in report.get("late") or []:
            print(f"  late entrant: {late['player']} from round {late['round']}")
        for name, check in report["checks"].items():
            mark = {True: "ok  ", False: "FAIL", None: "SKIP"}[check["ok"]]
            counted = ", ".join(f"{k} {v}" for k, v in check.items() if isinstance(v, int) and not isinstance(v, bool))
            print(f"  [{mark}] {name:<10} {counted or check.get('detail', '')}")
            for problem in check.get("problems") or []:
                print(f"         {json.dumps(problem)[:200]}")
        print("OK" if report["ok"] else "FAILED")
    return 0 if report["ok"] else 1


def _tournament_export(ns: argparse.Namespace, settings: Settings) -> int:
    from service.audit import tournament_bundle

    ctx = _components(settings)
    try:
        b = tournament_bundle.build(ctx.tournament_store, ctx.store, ns.tournament)
    finally:
        ctx.close()
    path = tournament_bundle.write(ns.out or f"exports/tournament-{ns.tournament}.json", b)
    print(f"wrote {path}: {len(b['events'])} events, {len(b['games'])} games, status {b['status']}")
    print(f"  verify offline with: python -m service verify {path}")
    return 0


def _verify_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundle")
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-redecide", action="store_true", help="skip deciding every intent again")


def _verify(ns: argparse.Namespace, settings: Settings) -> int:
    # The offline verifier is standard-library only and imports nothing of
    # ours; here it is lent our engines for its re-decide step.
    from service.audit import verify
    from service.audit.checks import redecide_dicts
    from service.audit.tournament_audit import repair_dicts

    args = [ns.bundle, *(["--json"] if ns.json else []), *(["--no-redecide"] if ns.no_redecide else [])]
    return verify.main(args, redecide=redecide_dicts, repair=repair_dicts)


def _none(p: argparse.ArgumentParser) -> None:
    """No arguments."""


#: name -> (help, handler, arguments).
COMMANDS: dict[str, tuple[str, Handler, Callable[[argparse.ArgumentParser], Any]]] = {
    "migrate": ("create the database if missing and apply migrations", _migrate, _none),
    "rebuild": ("drop and rebuild read models from PostgreSQL", _rebuild, _rebuild_args),
    "catch-up": ("project every game whose read model lags its stream", _catch_up, _none),
    "bots": ("provision the house bots' accounts, per game and level one per seat (idempotent)", _bots, _none),
    "backup": ("dump the source of truth (events, seeds, accounts...) into one checked file", _backup, _backup_args),
    "restore": ("load a backup file into an EMPTY database (then: rebuild)", _restore, _restore_args),
    "audit": ("run the four audit checks on a game", _audit, _audit_args),
    "replay": ("show a game's state and views after N events", _replay, _replay_args),
    "export": ("write a game's audit bundle (default exports/<id>.json)", _export, _export_args),
    "verify": ("check an audit bundle offline (chain, digests, seed commitment, re-decide)", _verify, _verify_args),
    "tournament-audit": (
        "audit a tournament: seed, pairings, standings, its games",
        _tournament_audit,
        _tournament_args,
    ),
    "tournament-export": (
        "write a tournament's bundle (its stream and every game's)",
        _tournament_export,
        _tournament_args,
    ),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_, _, add_args) in COMMANDS.items():
        add_args(sub.add_parser(name, help=help_))
    ns = parser.parse_args(argv)
    from service.adapters.eventstore import StoreUnavailable

    try:
        return COMMANDS[ns.command][1](ns, Settings.from_env())
    except StoreUnavailable as exc:
        # One clear line, not a traceback: the operator's next step is the
        # server or DATABASE_URL, never our code.
        return _fail(f"PostgreSQL unavailable ({exc}); check DATABASE_URL and the server")
    except DomainError as exc:
        return _fail(f"{exc.message} ({exc.code})")
