"""``python -m service <command>``: operations on the event store and read models."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

from service.config import Settings

Command = Callable[[argparse.Namespace, Settings], int]
COMMANDS: dict[str, tuple[str, Command, Callable[[argparse.ArgumentParser], None]]] = {}


def command(name: str, help_: str, args: Callable[[argparse.ArgumentParser], None] = lambda p: None):
    def register(fn: Command) -> Command:
        COMMANDS[name] = (help_, fn, args)
        return fn

    return register


@command("migrate", "create the database if missing and apply migrations")
def _migrate(ns: argparse.Namespace, settings: Settings) -> int:
    from service.migrate import migrate

    migrate(settings.database_url, echo=True)
    return 0


def _context(settings: Settings):
    from workers.context import make_context

    return make_context(settings)


def _rebuild_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", help="rebuild only this game's board")
    p.add_argument(
        "--processes",
        type=int,
        default=int(os.environ.get("QD_REBUILD_PROCESSES") or os.cpu_count() or 1),
        help="processes folding games side by side (default: the CPU count, or QD_REBUILD_PROCESSES)",
    )


@command("rebuild", "drop and rebuild read models from PostgreSQL", _rebuild_args)
def _rebuild(ns: argparse.Namespace, settings: Settings) -> int:
    from projections.runner import RebuildIncomplete, rebuild_all
    from service.games import registry

    import_global_consumers()
    registry.names()  # every engine imported now, not in the timing (and not once per process)
    ctx = _context(settings)

    def connect():
        own = _context(settings)
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
        )
    except RebuildIncomplete as exc:
        print(f"rebuild incomplete: {exc}", file=sys.stderr)
        return 1
    print(f"rebuilt {n} game(s) in {time.perf_counter() - started:.2f}s")
    return 0


@command("catch-up", "project every game whose read model lags its stream")
def _catch_up(ns: argparse.Namespace, settings: Settings) -> int:
    from projections.runner import global_consumers, sweep

    import_global_consumers()
    ctx = _context(settings)
    caught = sweep(ctx.redis, ctx.store, progress=lambda seen, n: print(f"{seen} events read, {n} games caught up"))
    for consumer in global_consumers:
        consumer(ctx.redis, ctx.store, False, print)
    print(f"caught up {caught} game(s)")
    return 0


def import_global_consumers() -> None:
    """Projections that read the global feed register themselves on import."""
    import projections.leaderboards  # noqa: F401


def _load_extensions() -> None:
    """The organisers' commands (audit, replay, export, verify) register here."""
    import service.cli_audit  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    _load_extensions()
    parser = argparse.ArgumentParser(prog="python -m service", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_, _, add_args) in COMMANDS.items():
        add_args(sub.add_parser(name, help=help_))
    ns = parser.parse_args(argv)
    from service.eventstore import StoreUnavailable

    try:
        return COMMANDS[ns.command][1](ns, Settings.from_env())
    except StoreUnavailable as exc:
        # One clear line, not a traceback: the operator's next step is the
        # server or DATABASE_URL, never our code.
        print(f"error: PostgreSQL unavailable ({exc}); check DATABASE_URL and the server", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
