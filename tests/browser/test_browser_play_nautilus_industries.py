"""A whole game of Nautilus Industries on the game page in a real browser (docs/API.md "Pages,
for people"): a person signs up in the page and plays against a level-1 house bot by clicking
only, at random with a seed among the controls the page offers and with the stated weights of
``support.play_pages.CLICK_WEIGHTS``, until the result shows.  The longest game of the three has
a file of its own, so the suite's workers (a whole file each) share the load; the other two
games and the rest of the game page are in test_browser_play.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.live import live_service
from support.play_pages import WHOLE_GAME_SECONDS, play_a_whole_game


@pytest.fixture(scope="module")
def site(settings) -> Iterator[str]:
    """The service as ``make run`` starts it, house bots and their worker included."""
    with live_service(settings, bots=True) as url:
        yield url


@pytest.mark.timeout(WHOLE_GAME_SECONDS + 120)
def test_a_person_plays_a_whole_nautilus_industries_game_against_a_house_bot_by_clicking(browser, person):
    play_a_whole_game(browser, person, "nautilus-industries")
