"""The pages and house bots (docs/BOTS.md "House bots"), through the Flask test
client: a game's page says which seats are house bots and their level, a casual
seat cannot pass for one, and the home page offers "play a bot"."""

from __future__ import annotations

import re

import pytest
from support import auth
from support.accounts import register

from projections.runner import project_game
from service.adapters.house_bots import HouseBots, levels
from service.games import registry


@pytest.fixture(scope="module")
def house(ctx, settings) -> dict[tuple[str, int], str]:
    made = HouseBots(ctx.store.pool).provision(registry.names(), levels(), settings.bot_key_secret)
    return {(b.game, b.level): b.handle for b in made}


def _html(resp) -> str:
    assert resp.status_code == 200 and resp.mimetype == "text/html"
    text = resp.get_data(as_text=True)
    assert "Traceback" not in text
    return text


def test_a_games_page_shows_its_house_bots_and_their_levels(client, ctx, house):
    ann, key = register(client)
    tid = client.post("/v1/tables", json={"game": "waters-of-nereus", "seats": 3}, headers=auth(key)).get_json()["id"]
    client.post(f"/v1/tables/{tid}/bots", json={"level": 1}, headers=auth(key))
    gid = client.post(f"/v1/tables/{tid}/bots", json={"level": 3}, headers=auth(key)).get_json()["game_id"]
    project_game(ctx.redis, ctx.store, gid)
    players = client.get(f"/v1/games/{gid}").get_json()["players"]
    text = _html(client.get(f"/games/{gid}"))
    head = text[text.index('class="players"') : text.index("</p>", text.index('class="players"'))]
    badges = re.findall(
        r'data-seat="(\d)".*?</span>( <span class="badge bot"[^>]*>house bot, level (\d)</span>)?', head
    )
    shown = {int(seat): int(level) for seat, _, level in badges if level}
    assert shown == {
        players.index(house["waters-of-nereus", 1]): 1,
        players.index(house["waters-of-nereus", 3]): 3,
    }
    assert "house bot" not in head.split(f'data-seat="{players.index(ann)}"')[1].split("data-seat")[0]


def test_a_casual_seat_cannot_take_a_house_bots_name(client, house):
    resp = client.post("/v1/games", json={"game": "nauticus", "players": ["ann", house["nauticus", 2]]})
    assert resp.status_code == 422 and resp.get_json()["error"]["code"] == "reserved_name"
    assert resp.get_json()["error"]["details"]["names"] == [house["nauticus", 2]]


def test_the_home_page_offers_play_bots(client, house):
    text = _html(client.get("/"))
    assert "Play bots" in text and 'data-action="play-bot"' in text
    form = text[text.index('data-action="play-bot"') : text.index("</form>", text.index('data-action="play-bot"'))]
    assert set(re.findall(r'<option value="([a-z-]+)"', form)) == set(registry.names())
    levels_select = form[form.index('name="level"') : form.index("</select>", form.index('name="level"'))]
    assert set(re.findall(r'<option value="(\d)">', levels_select)) == {str(n) for n in levels()}
    for handle in house.values():
        assert f'data-bot="{handle}"' in text
