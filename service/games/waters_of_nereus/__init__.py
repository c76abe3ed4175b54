"""Waters of Nereus (Dr. Finn's Games, 2018): the pure rules engine.

Rules reference: ``docs/rules/waters-of-nereus.md`` (the IDs ``WON-...`` cited in the code).
``ENGINE`` is the one :class:`~service.games.base.GameEngine` built from these modules:

* ``data`` — name, version, player counts, every component table and constant;
* ``commands`` — the intents (``COMMANDS``);
* ``setup`` — the opening events;
* ``evolve`` — how each event changes the state;
* ``legal`` — every command a seat may send now (``legal``) and who is to act (``to_act``);
* ``rules`` — ``decide``: one handler per command, and the automatic follow-ups;
* ``views`` — ``view`` and ``redact_event`` (hidden information);
* ``refusals`` — every refusal code and text;
* ``invariants`` — ``check``;
* ``scoring`` — game-end science cards, final scoring and ``result``;
* ``search`` — what a bot's search needs: ``determinize`` (draws the hidden parts) and ``evaluate``.

Private helpers: ``cabin`` (what fits where in the cabin), ``movement`` (ship steps and the
neutral ship), ``flow`` (days, cycles, explorer phase, conclude, the neutral player) and
``context`` (the event collector of ``decide`` and the random draws).
"""

from service.games.base import GameEngine

ENGINE = GameEngine.assemble(__name__)

__all__ = ["ENGINE"]
