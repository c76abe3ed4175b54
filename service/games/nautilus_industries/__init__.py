"""Nautilus Industries (Lamp Light Games): the pure rules engine.

Players place subs on mining zone tiles, sell the gems they collect on a market whose
commodity values and company stock move with every sale, and buy stock certificates; the
game ends when a company's stock reaches ×10.  The rules reference with the IDs used in the
code (``NIN-0xx``, ``NIN-Dxx``, ``NIN-Axx``, ``NIN-Qxx``) is ``docs/rules/nautilus-industries.md``.

Modules: ``data`` (name, version, player counts, component tables), ``commands`` (the
intents), ``setup`` (opening events), ``evolve`` (events -> state; documents the state
layout), ``legal`` (``legal``, ``to_act``), ``rules`` (``decide`` and the automatic steps:
forfeits, market, upkeep, game end), ``refusals`` (every refusal text), ``views`` (``view``,
``redact_event``: nothing is hidden), ``invariants`` (``check``), ``scoring`` (final score,
``result``), ``search`` (what a bot's search needs: ``determinize``, ``evaluate``).
"""

from service.games.base import GameEngine

ENGINE = GameEngine.assemble(__name__)

__all__ = ["ENGINE"]
