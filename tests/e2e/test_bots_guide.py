"""docs/BOTS.md's complete bot and the SDK's seat loop, run for real.

The bot in the guide is ``clients/python/examples/bot.py`` verbatim, under 80
lines; one copy per seat plays a game of Waters of Nereus (simultaneous crew
choices) to the end against a real server on loopback, each following its
own seat's stream.  The SDK's ``Seat`` does the same for Nauticus, and its
``Conflict`` carries what a client needs to resync.
"""

from __future__ import annotations

import importlib.util
import json
import re
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from quarterdeck_sdk import Client, Conflict, Seat, first_legal
from support import serving

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "clients" / "python" / "examples" / "bot.py"
GUIDE = ROOT / "docs" / "BOTS.md"


@pytest.fixture(scope="module")
def base_url(app) -> Iterator[str]:
    with serving(app) as url:
        yield url


def _players() -> list[str]:
    tag = uuid.uuid4().hex[:6]
    return [f"ann-{tag}", f"bob-{tag}"]


def _in_threads(target: Any, args: list[tuple]) -> list[Any]:
    results: list[Any] = [None] * len(args)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            results[i] = target(*args[i])
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(args))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    assert not any(t.is_alive() for t in threads), "a bot did not finish within 240 s"
    if errors:
        raise errors[0]
    return results


def test_the_guide_shows_the_example_bot_verbatim_and_it_is_short():
    code = BOT.read_text()
    block = re.search(
        r"<!-- bot: clients/python/examples/bot.py -->\n```python\n(.*?)```\n<!-- end of bot -->",
        GUIDE.read_text(),
        re.S,
    )
    assert block is not None and block.group(1) == code
    assert len(code.splitlines()) < 80


def test_the_guide_bot_plays_a_game_with_simultaneous_choices_to_the_end(base_url):
    spec = importlib.util.spec_from_file_location("guide_bot", BOT)
    assert spec is not None and spec.loader is not None
    bot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bot)
    api = Client(base_url)
    created = api.create_game("waters-of-nereus", _players())
    finals = _in_threads(bot.play, [(base_url, created["id"], s["token"], i) for i, s in enumerate(created["seats"])])
    for seat, final in enumerate(finals):
        assert final["status"] == "finished" and final["seat"] == seat
        assert sorted(final["result"]["ranking"]) == [0, 1]
    # Both seats chose crews, cycle after cycle, each acting for itself.
    status, feed = api.raw("GET", f"/v1/games/{created['id']}/events")
    chosen = {line["data"]["seat"] for line in map(json.loads, feed.splitlines()) if line["type"] == "CrewChosen"}
    assert status == 200 and chosen == {0, 1}
    api.close()


def test_the_sdk_seat_plays_a_game_and_conflicts_say_how_to_resync(base_url):
    api = Client(base_url)
    created = api.create_game("nauticus", _players())
    gid = created["id"]

    def play(seat: int, token: str) -> tuple[dict, int]:
        player = Seat(Client(base_url), gid, seat, token)
        final = player.play(first_legal)
        return final, player.intents

    results = _in_threads(play, [(s["seat"], s["token"]) for s in created["seats"]])
    assert all(final["status"] == "finished" for final, _ in results)
    assert sum(n for _, n in results) > 50
    # A stale intent after the end of the game: 422; a stale version on a running game: 409.
    fresh = api.create_game("nauticus", _players())
    token = fresh["seats"][0]["token"]
    legal = api.legal(fresh["id"], token, min_version=fresh["version"])
    if not legal["intents"]:
        token = fresh["seats"][1]["token"]
        legal = api.legal(fresh["id"], token, min_version=fresh["version"])
    answer = api.post_intent(fresh["id"], token, legal["intents"][0], legal["version"])
    with pytest.raises(Conflict) as stale:
        api.post_intent(fresh["id"], token, legal["intents"][0], legal["version"])
    assert stale.value.current_version == answer["version"]
    assert isinstance(stale.value.to_act, list) and stale.value.to_act
    api.close()
