"""The generated parts of the client guides ``docs/games/<game>.md``.

``python -m devtools.guides --write`` rewrites, in each guide, the sections
between ``<!-- generated: NAME -->`` and ``<!-- end of generated: NAME -->``:

* ``intents``: every intent type with its fields (from the schemas that
  validate them, ``schemas/intents/``), what it does (the command's own
  description) and an example body taken from ``legal`` in a real game;
* ``events``: every event type with its data fields (``schemas/games/``) and
  what other seats and spectators receive of it while the game runs, found by
  playing games and redacting each event as the service does;
* ``view`` and ``result``: their fields;
* ``worked``: the first intents of a real 2-player game, as the seat that
  acts sees them and as the other seat receives them.

``tests/unit/test_game_guides.py`` fails while a guide is out of date, so the
guides cannot drift from the engines and the published schemas.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

from marshmallow import Schema, fields, validate

from schemas.games import PLATFORM_EVENTS, contract
from schemas.intents import schemas_for
from schemas.openapi import platform_intents
from service.domain import pipeline
from service.games import registry
from service.games.base import Engine, Event, fold
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, decision_domain

ROOT = Path(__file__).resolve().parent.parent
GUIDES = ROOT / "docs" / "games"
SECTIONS = ("intents", "events", "view", "result", "worked")
#: Seeded games played to find example intents and what redaction does.
GAMES = 6


def begin(name: str) -> str:
    return f"<!-- generated: {name} (python -m devtools.guides --write; do not edit) -->"


def end(name: str) -> str:
    return f"<!-- end of generated: {name} -->"


# -- field types in words ---------------------------------------------------------------
def _choices(field: fields.Field) -> list[Any] | None:
    for v in [field.validate, *getattr(field, "validators", [])]:
        if isinstance(v, validate.OneOf):
            return list(v.choices)
    return None


def kind(field: fields.Field) -> str:
    """A field's type as a client sees it in JSON."""
    if isinstance(field, fields.Nested):
        inner = field.nested if isinstance(field.nested, type) else type(field.nested)
        text = f"`{inner.__name__}`"
    elif isinstance(field, fields.List):
        text = f"[{kind(field.inner)}]"
    elif isinstance(field, fields.Dict):
        keys = _choices(field.key_field) if field.key_field is not None else None
        by_seat = field.key_field is not None and any(
            isinstance(v, validate.Regexp) and "0-7" in v.regex.pattern for v in field.key_field.validators
        )
        key = "/".join(keys) if keys else "seat" if by_seat else "key"
        text = f"{{{key}: {kind(field.value_field)}}}" if field.value_field is not None else "object"
    else:
        choices = _choices(field)
        if choices is not None:
            shown = [json.dumps(c) for c in choices]
            text = " | ".join(shown) if len(shown) <= 8 else " | ".join(shown[:8]) + " | …"
        elif isinstance(field, fields.Boolean):
            text = "bool"
        elif isinstance(field, fields.Integer):
            rng = next((v for v in [field.validate, *field.validators] if isinstance(v, validate.Range)), None)
            if rng is None or rng.min is None:
                text = "int"
            else:
                text = f"int {rng.min}..{rng.max}" if rng.max is not None else f"int ≥ {rng.min}"
        elif isinstance(field, fields.String):
            text = "string"
        else:
            text = "any"
    if field.allow_none:
        text += " or null"
    return text


def describe(name: str, field: fields.Field) -> str:
    text = f"`{name}`: {kind(field)}"
    if not field.required:
        default = field.load_default
        shown = default() if callable(default) else default
        text += " (optional" + (f", default `{json.dumps(shown)}`" if _is_json(shown) else "") + ")"
    note = field.metadata.get("description")
    return text + (f" — {note}" if note else "")


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False  # marshmallow's "missing": no default
    return True


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("``", "`").replace("|", "\\|")


# -- what real games show ------------------------------------------------------------------
def playouts(game: str) -> tuple[dict[str, dict[str, Any]], dict[str, str], list[tuple[int, Any, list[Event]]]]:
    """``(an example of each intent type from legal, what others see of each
    event type, the first steps of the first game)``, from seeded 2-player
    games (and the neutral variant where there is one)."""
    engine = registry.get(game)
    examples: dict[str, dict[str, Any]] = {}
    seen: dict[str, set[str]] = {}
    first: list[tuple[int, Any, list[Event]]] = []
    cases = [{}] + ([{"neutral": True}] if game == "waters-of-nereus" else [])
    for n in range(GAMES):
        players = 2 if n < GAMES // 2 else engine.max_players
        options = cases[n % len(cases)] if players == 2 else {}
        seed = hashlib.sha256(f"guide|{game}|{n}".encode()).digest()
        chooser = random.Random(n)
        events = engine.setup(players, options, Rng(seed, domain=SETUP_DOMAIN))
        state = fold(engine, events)
        every = list(events)
        _redaction(engine, events, players, seen)
        while seats := engine.to_act(state):
            seat = chooser.choice(seats)
            legal = engine.legal(state, seat)
            for command in legal:
                examples.setdefault(command.type, command.to_json())
            command = legal[0] if n == 0 else chooser.choice(legal)
            new = engine.decide(state, seat, command, Rng(seed, domain=decision_domain(len(every))))
            for e in new:
                state = engine.evolve(state, e)
            if n == 0 and len(first) < 12:
                first.append((seat, command, new))
            every += new
            _redaction(engine, new, players, seen)
    return examples, {t: _redaction_text(v) for t, v in seen.items()}, first


def _redaction(engine: Engine, events: list[Event], players: int, seen: dict[str, set[str]]) -> None:
    for e in events:
        acted = e.data.get("seat")
        others = [s for s in range(players) if s != acted]
        for viewer in [None, *others]:
            shown = engine.redact_event(e, viewer).data
            seen.setdefault(e.type, set()).add(_difference(e.data, shown))


def _difference(data: dict[str, Any], shown: dict[str, Any]) -> str:
    if shown == data:
        return ""
    if not shown:
        return "`{}` (not even which seat)"
    hidden = [k for k in data if shown.get(k) != data[k]]
    return ", ".join(f"`{k}`" for k in hidden) + " hidden (null in place of each hidden value)"


def _redaction_text(found: set[str]) -> str:
    hidden = sorted(f for f in found if f)
    if not hidden:
        return "everything"
    return "; ".join(hidden)


# -- the sections -----------------------------------------------------------------------------
def schema_example(wire: str, schema: Any) -> dict[str, Any]:
    """An intent body built from its schema alone (each required field's first
    choice, or its range's minimum), for an intent the seeded games never offered:
    well-formed, so the schema accepts it, though the rules may refuse it in a game."""
    body: dict[str, Any] = {"type": wire}
    for name, field in schema.fields.items():
        if not field.required:
            continue
        choices = _choices(field)
        rng = next((v for v in [field.validate, *field.validators] if isinstance(v, validate.Range)), None)
        if choices:
            body[name] = choices[0]
        elif isinstance(field, fields.Integer):
            body[name] = rng.min if rng is not None and rng.min is not None else 0
        elif isinstance(field, fields.Boolean):
            body[name] = False
        elif isinstance(field, fields.List):
            body[name] = []
        else:
            body[name] = ""
    return body


def intents_section(game: str, examples: dict[str, dict[str, Any]]) -> str:
    engine = registry.get(game)
    rows = ["| intent | fields | what it does | example body (`intent`) |", "|---|---|---|---|"]
    for wire, schema in schemas_for(game).items():
        command = engine.commands[wire]
        doc = _cell((command.__doc__ or "").strip().split("\n\n")[0])
        described = "<br>".join(_cell(describe(n, f)) for n, f in schema.fields.items()) or "—"
        example = examples.get(wire) or schema_example(wire, schema)
        rows.append(f"| `{wire}` | {described} | {doc} | `{json.dumps(example)}` |")
    for wire, command in platform_intents().items():
        # The platform's intents, posted in any game (never listed by /legal).
        doc = _cell((command.__doc__ or "").strip().split("\n\n")[0])
        rows.append(f"| `{wire}` | — | {doc} | `{json.dumps({'type': wire})}` |")
    return "\n".join(rows)


def _schema_rows(schema: type[Schema] | Schema) -> str:
    instance = schema() if isinstance(schema, type) else schema
    return "<br>".join(_cell(describe(n, f)) for n, f in instance.fields.items()) or "—"


def events_section(game: str, redaction: dict[str, str]) -> str:
    typed = contract(game)
    rows = ["| event | data | what it says | others see, while the game runs |", "|---|---|---|---|"]
    for event_type, schema in [*PLATFORM_EVENTS.items(), *sorted(typed.events.items())]:
        doc = _cell((schema.__doc__ or "").strip())
        if event_type in PLATFORM_EVENTS:
            others = "everything"
        else:
            others = redaction.get(event_type, "everything (not seen in the sample games)")
        rows.append(f"| `{event_type}` | {_schema_rows(schema)} | {doc} | {others} |")
    return "\n".join(rows)


def fields_section(schema: type[Schema]) -> str:
    rows = ["| field | type | meaning |", "|---|---|---|"]
    for name, field in schema().fields.items():
        note = field.metadata.get("description", "")
        optional = "" if field.required else " (not always present)"
        rows.append(f"| `{name}` | {_cell(kind(field))}{optional} | {_cell(note)} |")
    nested = sorted(
        {
            f.nested if isinstance(f.nested, type) else type(f.nested)
            for f in _walk(schema())
            if isinstance(f, fields.Nested)
        },
        key=lambda s: s.__name__,
    )
    for inner in nested:
        rows.append("")
        rows.append(f"`{inner.__name__}`: {_cell((inner.__doc__ or '').strip())}")
        rows.append("")
        rows.append("| field | type | meaning |")
        rows.append("|---|---|---|")
        for name, field in inner().fields.items():
            rows.append(f"| `{name}` | {_cell(kind(field))} | {_cell(field.metadata.get('description', ''))} |")
    return "\n".join(rows)


def _walk(schema: Schema) -> list[fields.Field]:
    out: list[fields.Field] = []
    for field in schema.fields.values():
        stack = [field]
        while stack:
            f = stack.pop()
            out.append(f)
            if isinstance(f, fields.List):
                stack.append(f.inner)
            elif isinstance(f, fields.Dict) and f.value_field is not None:
                stack.append(f.value_field)
            elif isinstance(f, fields.Nested):
                inner = f.nested if isinstance(f.nested, type) else type(f.nested)
                stack.extend(inner().fields.values())
    return out


def worked_section(game: str, steps: list[tuple[int, Any, list[Event]]]) -> str:
    engine = registry.get(game)
    out = [
        "The first intents of a real 2-player game (seeded; versions as they were). Each step is one",
        "`POST /v1/games/{id}/intents` by the seat to act; the answer's `events` are as that seat sees",
        "them, and the other seat receives the same events, redacted as shown, in its feed and stream.",
        "",
    ]
    version = 1 + len(engine.setup(2, {}, Rng(hashlib.sha256(f"guide|{game}|0".encode()).digest(), domain=1)))
    for seat, command, events in steps[:6]:
        body = {"intent": command.to_json(), "expected_version": version}
        answer = [{"seq": version + i + 1, "type": e.type, "data": e.data} for i, e in enumerate(events)]
        out.append(f"Seat {seat} posts `{json.dumps(body)}`; the answer:")
        out.append("")
        out.append("```json")
        out.append(json.dumps({"version": version + len(events), "events": answer}))
        out.append("```")
        other = 1 - seat
        differs = [
            {"seq": version + i + 1, "type": e.type, "data": engine.redact_event(e, other).data}
            for i, e in enumerate(events)
            if engine.redact_event(e, other).data != e.data and e.type not in pipeline.PLATFORM_EVENTS
        ]
        if differs:
            out.append("")
            out.append(f"Seat {other} receives instead: `{json.dumps(differs)}`")
        out.append("")
        version += len(events)
    return "\n".join(out).rstrip()


def sections(game: str) -> dict[str, str]:
    examples, redaction, first = playouts(game)
    typed = contract(game)
    return {
        "intents": intents_section(game, examples),
        "events": events_section(game, redaction),
        "view": fields_section(typed.view),
        "result": fields_section(typed.result),
        "worked": worked_section(game, first),
    }


def render(text: str, generated: dict[str, str]) -> str:
    """``text`` with each generated section replaced (its markers must be there)."""
    for name, body in generated.items():
        pattern = re.compile(re.escape(begin(name)) + r".*?" + re.escape(end(name)), re.S)
        if not pattern.search(text):
            raise ValueError(f"the guide has no markers for section {name!r}")
        text = pattern.sub(lambda _m, n=name, b=body: f"{begin(n)}\n\n{b}\n\n{end(n)}", text)
    return text


def guide_path(game: str) -> Path:
    return GUIDES / f"{game}.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.guides", description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the generated sections of docs/games/*.md")
    parser.add_argument("games", nargs="*", help="games (default: every registered game)")
    args = parser.parse_args(argv)
    stale = []
    for game in args.games or registry.registered():
        path = guide_path(game)
        text = path.read_text()
        new = render(text, sections(game))
        if new != text:
            stale.append(game)
            if args.write:
                path.write_text(new)
    verb = "rewrote" if args.write else "out of date:"
    print(f"{verb} {', '.join(stale) or 'nothing'}")
    return 0 if args.write or not stale else 1


if __name__ == "__main__":
    sys.exit(main())
