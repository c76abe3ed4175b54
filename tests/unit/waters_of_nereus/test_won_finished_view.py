"""docs/games/waters-of-nereus.md, "Hidden information": "Once the game has
finished, everyone sees everything (the feed, the views, time travel)".  A
finished game's spectator and seat views still hid the hands and the science
deck."""

from __future__ import annotations

import random

from service.games.base import ADMIN
from service.games.simulate import random_playout
from service.games.waters_of_nereus import ENGINE


def test_a_finished_games_views_show_everything_to_everyone():
    played = random_playout(ENGINE, 2, {}, b"finished-view".ljust(32, b"-"), random.Random(3))
    assert played.finished
    state = played.state
    admin = ENGINE.view(state, ADMIN)
    for viewer in (None, 0, 1):
        shown = ENGINE.view(state, viewer)
        assert shown == admin, viewer
        assert "science_deck" in shown and all("hand" in seat for seat in shown["seats"])


def test_a_running_games_views_still_hide_hands_and_the_deck():
    played = random_playout(ENGINE, 2, {}, b"running-view".ljust(32, b"-"), random.Random(3), max_steps=20)
    assert not played.finished
    shown = ENGINE.view(played.state, None)
    assert "science_deck" not in shown and all("hand" not in seat for seat in shown["seats"])
