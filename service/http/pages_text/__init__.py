"""The log in words: one sentence per event ("ann bought a bow for 2 Taler").

The phrasing is data, kept in one module per game (``nauticus.py``,
``nautilus_industries.py``, ``waters_of_nereus.py``) plus ``platform.py`` for
the platform's own events.  Each module has:

* ``SENTENCES``: event type -> a template, or a list of templates tried in
  order; the first whose fields are all present and not null is used, so a
  redacted event (hidden fields set to null, or ``{}``) reads as its vaguer
  template and never as a sentence with holes;
* ``NAMES``: words for the game's identifiers (items, colours, crews...);
* optionally ``CONTEXT``: constants a converter needs (a board's size).

Templates are ``str.format`` strings whose format spec names a converter
(``{seat:player}``, ``{item:name}``, ``{count:n:gem/gems}``); this module is
the only logic.  The sentences are built only from what the events feed gave
the viewer (``service.http.pages_api.events``).
"""

from __future__ import annotations

import importlib
import string
from collections.abc import Mapping
from functools import cache
from types import ModuleType
from typing import Any

#: API name -> phrasing module (inside this package).
_MODULES = {
    "nauticus": "nauticus",
    "nautilus-industries": "nautilus_industries",
    "waters-of-nereus": "waters_of_nereus",
}


class _Missing(Exception):
    """A template names a field the event does not carry (or carries as null)."""


@cache
def phrasing(game: str) -> ModuleType | None:
    """The phrasing module of ``game`` (None for a game without one)."""
    name = _MODULES.get(game)
    return importlib.import_module(f"{__name__}.{name}") if name else None


@cache
def _platform() -> ModuleType:
    return importlib.import_module(f"{__name__}.platform")


def join_words(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    words = [w for w in words if w]
    if not words:
        return "nothing"
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " and " + words[-1]


def humanise(event_type: str) -> str:
    """``SeatTimedOut`` -> ``Seat timed out``: the sentence of an event no module phrases."""
    out = []
    for i, ch in enumerate(event_type):
        if ch.isupper() and i:
            out.append(" ")
        out.append(ch.lower() if i else ch)
    return "".join(out)


class _Formatter(string.Formatter):
    def __init__(self, players: list[str], names: dict[str, str], context: dict[str, Any]):
        super().__init__()
        self.players = players
        self.names = names
        self.context = context

    def get_value(self, key: Any, args: Any, kwargs: Mapping[str, Any]) -> Any:
        value = kwargs.get(key) if key in kwargs else self.context.get(key)
        # null, "" and [] all mean "not there": the next, vaguer template is used.
        if value is None or (isinstance(value, str | list) and not value):
            raise _Missing(key)
        return value

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        return value if conversion is None else super().convert_field(value, conversion)

    # -- converters (the format spec) -----------------------------------------
    def player(self, seat: Any) -> str:
        if isinstance(seat, int) and 0 <= seat < len(self.players):
            return self.players[seat]
        if seat == -1:
            return "the neutral player"
        return f"seat {seat}"

    def name(self, value: Any) -> str:
        if isinstance(value, list):
            return join_words([self.name(v) for v in value])
        return self.names.get(str(value), str(value).replace("_", " "))

    def format_field(self, value: Any, spec: str) -> str:
        kind, _, arg = spec.partition(":")
        if kind == "":
            return str(value)
        if kind == "player_names":  # a list of handles, as they are
            return join_words([str(v) for v in value])
        if kind == "player":
            if isinstance(value, list):
                return join_words([self.player(v) for v in value])
            return self.player(value)
        if kind == "name":
            return self.name(value)
        if kind == "a":  # the name with its article
            word = self.name(value)
            return ("an " if word[:1].lower() in "aeiou" else "a ") + word
        if kind == "num1":  # a 0-based index, counted from 1 for people
            return str(int(value) + 1)
        if kind == "n":  # "{count:n:gem/gems}" -> "1 gem", "3 gems"
            one, _, many = arg.partition("/")
            return f"{value} {one if value == 1 else (many or one + 's')}"
        if kind == "if":  # "{blue:if:, with a blue worker}" -> the text when the value is true
            return arg if value else ""
        if kind == "signed":
            return f"{int(value):+d}"
        if kind == "abs":
            return str(abs(int(value)))
        if kind == "counts":  # {"Y": 2, "K": 1} -> "2 gold and 1 black" (zeros left out)
            return join_words([f"{n} {self.name(k)}" for k, n in value.items() if n])
        if kind == "tally":  # ["O", "K", "O"] -> "2 orange and 1 black"
            tally: dict[str, int] = {}
            for v in value:
                tally[str(v)] = tally.get(str(v), 0) + 1
            return join_words([f"{n} {self.name(k)}" for k, n in tally.items()])
        if kind == "values":  # {"Y": 6, ...} -> "gold 6, blue 3 ..."
            return join_words([f"{self.name(k)} {v}" for k, v in value.items()])
        if kind == "len":
            return str(len(value))
        if kind == "short":  # a long hex string, shortened
            return f"{str(value)[:12]}…"
        if kind == "winner":  # a result -> the name(s) ranked first
            ranks = value.get("ranks") or {}
            first = [int(s) for s, r in ranks.items() if r == 1] or list(value.get("ranking", [])[:1])
            return join_words([self.player(s) for s in sorted(first)])
        if kind == "cell":  # a board cell number -> "C2" (column letter, row number)
            size = int(self.context.get("size") or 1)
            row, col = divmod(int(value), size)
            return f"{chr(ord('A') + col)}{row + 1}"
        if kind == "cells":
            return join_words([self.format_field(v, "cell") for v in value])
        raise ValueError(f"unknown converter {spec!r}")


def _context(module: ModuleType | None, players: list[str]) -> dict[str, Any]:
    make = getattr(module, "context", None)
    return dict(make(players)) if callable(make) else {}


def sentence(game: str, line: dict[str, Any], players: list[str]) -> str:
    """The sentence of one events-feed line (``type``, ``data``, ``meta``)."""
    module = phrasing(game)
    data = line.get("data") or {}
    etype = line.get("type", "")
    for source in (_platform(), module):
        if source is None or etype not in source.SENTENCES:
            continue
        templates = source.SENTENCES[etype]
        formatter = _Formatter(players, {**_platform().NAMES, **source.NAMES}, _context(source, players))
        for template in [templates] if isinstance(templates, str) else templates:
            try:
                # ``_all`` is the whole data (a result that is the event's data itself).
                return formatter.vformat(template, (), {**data, "_all": data})
            except (_Missing, KeyError, TypeError, ValueError, AttributeError):
                continue
    return _fallback(etype, data, players)


def _fallback(etype: str, data: dict[str, Any], players: list[str]) -> str:
    """An event no module phrases (a newer platform event, say): its type in words and who it concerns."""
    text = humanise(etype)
    seat = data.get("seat")
    if isinstance(seat, int) and 0 <= seat < len(players):
        text += f" ({players[seat]})"
    return text


def has_sentence(game: str, event_type: str) -> bool:
    """Whether ``event_type`` is phrased (by the game's module or the platform's)."""
    module = phrasing(game)
    return event_type in _platform().SENTENCES or (module is not None and event_type in module.SENTENCES)


def _first(formatter: _Formatter, templates: str | list[str], facts: dict[str, Any]) -> str | None:
    for template in [templates] if isinstance(templates, str) else templates:
        try:
            return formatter.vformat(template, (), facts)
        except (_Missing, KeyError, TypeError, ValueError, AttributeError):
            continue
    return None


def describe_intents(
    game: str, intents: list[dict[str, Any]], view: dict[str, Any], seat: int, players: list[str]
) -> list[dict[str, Any]]:
    """A seat's legal intents (``GET /v1/games/{id}/legal``) for the actions panel: each
    ``{"intent", "group", "text", "steps", "targets"}``.  ``intent`` is the intent as the
    API gave it (posted as is); ``group`` the kind of move it is; ``text`` the move in
    words; ``steps`` the words of each choice that leads to it when its group is long
    (the tile, then the colour); ``targets`` the board's elements it names (each a
    ``data-target`` of the game's board template).

    Each phrasing module may have ``INTENTS`` (type -> ``group``, ``text`` and
    ``steps`` templates, as ``SENTENCES``), ``intent_facts(intent, view, seat)`` (words
    the fields do not carry: the action on a space) and ``intent_targets(intent, view,
    seat)``; an intent it does not phrase reads as its type in words."""
    module = phrasing(game)
    specs: dict[str, dict[str, Any]] = getattr(module, "INTENTS", {})
    facts_of = getattr(module, "intent_facts", None)
    targets_of = getattr(module, "intent_targets", None)
    formatter = _Formatter(players, {**_platform().NAMES, **getattr(module, "NAMES", {})}, _context(module, players))
    out = []
    for intent in intents:
        kind = str(intent.get("type", ""))
        spec = specs.get(kind, {})
        facts = {**intent, "seat": seat, **(facts_of(intent, view, seat) if facts_of else {})}
        plain = kind.replace("_", " ").capitalize()
        text = _first(formatter, spec.get("text", []), facts) or plain
        steps = [_first(formatter, step, facts) or "" for step in spec.get("steps", [])]
        out.append(
            {
                "intent": intent,
                "group": spec.get("group") or plain,
                "text": text,
                "steps": steps,
                "targets": targets_of(intent, view, seat) if targets_of else [],
            }
        )
    return out


def log_lines(game: str, lines: list[dict[str, Any]], players: list[str]) -> list[dict[str, Any]]:
    """Feed lines -> ``{"seq", "type", "text", "redacted", "seat"}`` for the templates."""
    out = []
    for line in lines:
        data = line.get("data") or {}
        seat = data.get("seat") if isinstance(data.get("seat"), int) else None
        out.append(
            {
                "seq": line["seq"],
                "type": line["type"],
                "text": sentence(game, line, players),
                "redacted": bool(line.get("redacted")),
                "seat": seat,
            }
        )
    return out
