"""House bots: pure functions of what a seat sees (docs/BOTS.md, "House bots").

``choose(game, seat, view, legal, level=, seed=, cpu_clock=)`` returns one of the seat's legal intents.  The
package imports no Flask, psycopg, redis or rq, reads no clock of its own and no global random
(``tests/unit/test_architecture.py``): the caller passes the seat's view and legal intents as the API serves
them, a seed, and a CPU clock.

* ``levels`` — :data:`LEVELS` and :func:`choose`;
* ``position`` — the API's view and intents to the states and commands a search works on;
* ``greedy`` — level 1, one ply;
* ``ismcts`` — levels 2 and 3, Information-Set MCTS;
* ``arena`` — bots against bots or random, engine only: the strength measurement.
"""

from service.bots.levels import LEVELS, Level, choose

__all__ = ["LEVELS", "Level", "choose"]
