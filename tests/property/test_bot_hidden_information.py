"""docs/BOTS.md, "a bot is a pure function of what its seat sees": games of Waters of Nereus (the game with
hidden information: hands, decks, face-down crew cards) in which, at every decision of the bot's seat, the
hidden parts of the state are reshuffled (``support.waters_of_nereus.perturb``, independent of the engine's own
``determinize``) give the bot identical choices: it cannot depend on what it does not see.

Each decision is made twice with the same seed and the same CPU clock readings (a clock that ticks a fixed
step per reading), once from the real state's view and legal intents, once from the reshuffled state's.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable

import pytest
from support.waters_of_nereus import CONFIGS, perturb

from service.bots import choose
from service.bots.position import intent_key
from service.games.base import fold
from service.games.rng import Rng
from service.games.simulate import SETUP_DOMAIN, decision_domain
from service.games.waters_of_nereus import ENGINE

GAME = "waters-of-nereus"


def ticking(step: float) -> Callable[[], float]:
    """A CPU clock that advances ``step`` seconds at each reading: the same readings on every run."""
    counter = itertools.count()
    return lambda: next(counter) * step


def api(obj: object) -> object:
    """Through JSON, as a client reads it."""
    return json.loads(json.dumps(obj))


@pytest.mark.parametrize(("players", "neutral"), CONFIGS)
@pytest.mark.parametrize("level", [1, 2, 3])
def test_reshuffled_hidden_parts_give_identical_choices(players: int, neutral: bool, level: int) -> None:
    seed = (1000 * players + 10 * level + neutral).to_bytes(32, "big")
    options = {"neutral": True} if neutral else {}
    events = ENGINE.setup(players, options, Rng(seed, domain=SETUP_DOMAIN))
    state = fold(ENGINE, events)
    chooser = random.Random(seed)
    shuffle = random.Random(7)
    bot = 0
    decisions = reshuffled = 0
    while ENGINE.to_act(state):
        seats = ENGINE.to_act(state)
        seat = bot if bot in seats else chooser.choice(seats)
        legal = api([c.to_json() for c in ENGINE.legal(state, seat)])
        if seat == bot:
            other = perturb(state, bot, shuffle)
            assert ENGINE.view(other, bot) == ENGINE.view(state, bot), "the reshuffle must keep the seat's view"
            reshuffled += other != state
            seed_now = chooser.getrandbits(64)
            picks = [
                choose(
                    GAME,
                    bot,
                    api(ENGINE.view(s, bot)),
                    api([c.to_json() for c in ENGINE.legal(s, bot)]),
                    level=level,
                    seed=seed_now,
                    cpu_clock=ticking(0.004),
                )
                for s in (state, other)
            ]
            assert picks[0] == picks[1], f"decision {decisions}: the bot saw hidden information"
            intent = picks[0]
            decisions += 1
        else:
            intent = legal[chooser.randrange(len(legal))]
        command = {intent_key(c.to_json()): c for c in ENGINE.legal(state, seat)}[intent_key(intent)]
        new = ENGINE.decide(state, seat, command, Rng(seed, domain=decision_domain(len(events))))
        events.extend(new)
        state = fold(ENGINE, new, state)
    assert ENGINE.result(state) is not None
    assert decisions > 20 and reshuffled > decisions // 2, (decisions, reshuffled)
