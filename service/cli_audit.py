"""``python -m service audit|replay|export|verify``: the organiser's commands
(``make audit GAME=<id>``, ``make replay GAME=<id> VERSION=<n>``,
``make export GAME=<id>``).  They read PostgreSQL (and Redis for the
projection check) directly: an organiser with database access needs no API."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from service.config import Settings


def _registrars() -> list[Any]:
    """The ``command`` decorators to register with.  ``python -m service``
    runs ``service/__main__.py`` as the module ``__main__``; importing
    ``service.__main__`` from here would make a second copy with its own
    command table, so register with the running one as well."""
    import service.__main__ as module

    out = [module]
    running = sys.modules.get("__main__")
    if running is not None and running is not module and hasattr(running, "COMMANDS"):
        out.append(running)
    return out


def command(name: str, help_: str, args: Any = lambda p: None):
    def register(fn: Any) -> Any:
        for module in _registrars():
            module.command(name, help_, args)(fn)
        return fn

    return register


def _context(settings: Settings):
    from workers.context import make_context

    return make_context(settings)


def _uuid(value: str) -> str:
    import uuid

    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a game id: {value!r}") from None


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


@command(
    "audit",
    "run the four audit checks on a game",
    lambda p: (p.add_argument("game", type=_uuid), p.add_argument("--json", action="store_true")),
)
def _audit(ns: argparse.Namespace, settings: Settings) -> int:
    from service.audit import audit_game
    from service.errors import ApiError

    ctx = _context(settings)
    try:
        report = audit_game(ctx.store, ctx.redis, ns.game)
    except ApiError as exc:
        return _fail(exc.message)
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


@command("replay", "show a game's state and views after N events", _replay_args)
def _replay(ns: argparse.Namespace, settings: Settings) -> int:
    from service.audit import state_at
    from service.errors import ApiError
    from service.games import registry

    ctx = _context(settings)
    try:
        answer = state_at(ctx.store, ns.game, ns.version, ns.seat)
        events = ctx.store.read(ns.game, after=max(0, ns.version - 5), upto=ns.version)
    except ApiError as exc:
        return _fail(exc.message)
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
        from service.games.base import ADMIN

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


@command(
    "export",
    "write a game's audit bundle (default exports/<id>.json)",
    lambda p: (p.add_argument("game", type=_uuid), p.add_argument("--out", default=None)),
)
def _export(ns: argparse.Namespace, settings: Settings) -> int:
    from service import bundle
    from service.errors import not_found

    ctx = _context(settings)
    try:
        record = ctx.store.game(ns.game)
        if record is None:
            return _fail(not_found().message)
        events = ctx.store.read(ns.game)
    finally:
        ctx.close()
    b = bundle.build(record, events)
    path = bundle.write(ns.out or f"exports/{ns.game}.json", b)
    print(f"wrote {path}: {len(events)} events, status {b['status']}, head {b['head_hash']}")
    if b["seed"] is None:
        print("  the game is still running: the seed is not revealed, so only the links can be verified")
    print(f"  verify offline with: python -m service.verify {path}")
    return 0


@command(
    "verify",
    "check an audit bundle offline (chain, digests, seed commitment, re-decide)",
    lambda p: (p.add_argument("bundle"), p.add_argument("--json", action="store_true")),
)
def _verify(ns: argparse.Namespace, settings: Settings) -> int:
    from service import verify

    return verify.main([ns.bundle, *(["--json"] if ns.json else [])])
