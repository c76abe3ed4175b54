"""The seat's moves in words (``pages_text.describe_intents``, the game page's
actions panel): every intent of every game has its own words, with no
placeholder left; a kind's steps lead to one intent each; and every board
element an intent names is one the game's board template draws."""

from __future__ import annotations

import random
import re
from pathlib import Path

import jinja2
import pytest

from service.games import registry
from service.games.rng import Rng
from service.http import pages_boards, pages_text

TEMPLATES = Path(__file__).resolve().parents[2] / "service" / "http" / "templates"
PLAYERS = ["ann", "bob", "cy"]


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    # The macros' other filters (the pages blueprint's): not called by the boards.
    env.filters.update({name: str for name in ("ago", "score", "detail", "duration", "clock_terms")})
    return env


def _drawn_targets(env: jinja2.Environment, game: str, view: dict, players: list[str]) -> set[str]:
    board = pages_boards.present(game, view, players, to_act=[], result=None)
    html = env.get_template(board["template"]).render(b=board)
    return set(re.findall(r'data-target="([^"]+)"', html))


@pytest.mark.parametrize("game", registry.names())
def test_every_command_has_words(game):
    module = pages_text.phrasing(game)
    missing = sorted(set(registry.get(game).commands) - set(module.INTENTS) - {"resign"})
    assert not missing, f"{game}: no words for {missing}"


@pytest.mark.parametrize("game", registry.names())
def test_the_intents_of_whole_games_read_well_and_name_drawn_pieces(game):
    players = 2
    engine = registry.get(game)
    env = _env()
    chooser = random.Random(players)
    rng = Rng(bytes([players]) * 32)
    state = None
    for event in engine.setup(players, {}, rng):
        state = engine.evolve(state, event)
    names = PLAYERS[:players]
    seen_targets = 0
    for step in range(3000):
        if engine.result(state) is not None:
            break
        seats = engine.to_act(state)
        seat = seats[chooser.randrange(len(seats))]
        legal = engine.legal(state, seat)
        view = engine.view(state, seat)
        described = pages_text.describe_intents(game, [c.to_json() for c in legal], view, seat, names)
        # The board is drawn at every 4th decision (drawing costs more than the rest of a step).
        check = step % 4 == 0 and any(d["targets"] for d in described)
        drawn = _drawn_targets(env, game, view, names) if check else set()
        by_steps: dict[tuple, list] = {}
        for d in described:
            assert d["intent"]["type"] in pages_text.phrasing(game).INTENTS
            for text in [d["text"], d["group"], *d["steps"]]:
                assert "{" not in text and "None" not in text and "_" not in text, (d["intent"], text)
            if check:
                assert not set(d["targets"]) - drawn, (d["intent"], set(d["targets"]) - drawn)
                seen_targets += len(d["targets"])
            by_steps.setdefault((d["group"], *d["steps"], d["text"]), []).append(d["intent"])
        # The steps and the words tell the intents apart: a person can choose each one.
        clashes = {k: v for k, v in by_steps.items() if len(v) > 1}
        assert not clashes, clashes
        command = legal[chooser.randrange(len(legal))]
        for event in engine.decide(state, seat, command, rng):
            state = engine.evolve(state, event)
    assert engine.result(state) is not None
    assert seen_targets > 0
