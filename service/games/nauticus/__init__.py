"""Nauticus (Kramer & Kiesling, Kosmos 2013): the pure rules engine.

2-4 players build ships in their shipyards from hull parts, masts and sails bought in action phases, load them
with goods and deliver them; each round the start player picks one of 8 action tiles, its board space gives a
bonus and a number of blue workers, and every player in turn carries the action out or passes.  There is no
hidden information; the only random draw is the layout of the action tiles each round.

Rules reference: ``docs/rules/nauticus.md`` (the IDs ``NAU-...`` cited in the code).  ``ENGINE`` is the one
:class:`~service.games.base.GameEngine` built from these modules:

* ``data`` — name, version, player counts, every component table and constant, and our decisions (NAU-Qxx);
* ``commands`` — the intents (``COMMANDS``);
* ``setup`` — the opening events;
* ``evolve`` — how each event changes the state;
* ``legal`` — who is to act (``to_act``) and every command a seat may send now (``legal``);
* ``rules`` — ``decide``: the events of a command and the automatic follow-ups (end of turn, phase, round,
  layout draw, final scoring);
* ``views`` — ``view`` and ``redact_event`` (nothing is hidden);
* ``refusals`` — every refusal code and text, and why a command is refused;
* ``invariants`` — ``check``;
* ``scoring`` — crowns, final scoring and ``result``;
* ``search`` — what a bot's search needs: ``determinize`` (nothing is hidden) and ``evaluate``.

Private helpers: ``state`` (the state's shape and the small questions about it that several modules ask:
price, room in the warehouse, blue workers, the running action) and ``hulls`` (ship geometry).
"""

from service.games.base import GameEngine

ENGINE = GameEngine.assemble(__name__)

__all__ = ["ENGINE"]
