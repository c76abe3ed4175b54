"""The account, lobby and My games pages, and the words of the pages people read
(service/http/pages.py), through the Flask test client: the lobby's forms and hooks,
My games as a key sees it, a clock in days, a provisional position, an empty
leaderboard that says why, each house bot's level, a round's table still pairing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from support import auth
from support.accounts import organiser, register, unique
from support.tournaments import work

from projections import leaderboards as lb
from projections import tournaments as tview
from projections.runner import project_game
from service.adapters.house_bots import HouseBots, levels
from service.games import registry
from service.http.pages import clock_terms, duration


def _html(resp) -> str:
    assert resp.status_code == 200 and resp.mimetype == "text/html", resp.status_code
    text = resp.get_data(as_text=True)
    assert "Traceback" not in text
    return text


@pytest.fixture(scope="module")
def house(ctx, settings) -> dict[tuple[str, int], str]:
    made = HouseBots(ctx.store.pool).provision(registry.names(), levels(), settings.bot_key_secret)
    return {(b.game, b.level): b.handle for b in made}


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (259200, "3 days"),
        (86400 + 4 * 3600 + 59, "1 day 4 h"),
        (7500, "2 h 5 min"),
        (270, "4 min 30 s"),
        (600, "10 min"),
        (12.7, "12 s"),
        (0, "0 s"),
    ],
)
def test_a_clock_is_written_in_days_hours_minutes(seconds, words):
    assert duration(seconds) == words


def test_clock_terms():
    assert clock_terms({"type": "deadline", "per_decision_s": 259200}) == "3 days a move"
    assert clock_terms({"type": "fischer", "base_s": 900, "increment_s": 10}) == "15 min + 10 s a move"
    assert clock_terms({"type": "none"}) == "no clock"


def test_a_three_day_clock_reads_3_days_on_the_game_page(client, ctx):
    """The default clock (a deadline of 3 days a decision) on a running game's page."""
    made = client.post(
        "/v1/games",
        json={"game": "nauticus", "players": ["ann", "bob"], "clock": {"type": "deadline", "per_decision_s": 259200}},
    ).get_json()
    project_game(ctx.redis, ctx.store, made["id"])
    text = _html(client.get(f"/games/{made['id']}"))
    clock = text[text.index('class="clock"') : text.index("</dl>", text.index('class="clock"'))]
    assert "3 days a move" in clock and "4320 min" not in clock and "min 0 s" not in clock


def test_the_account_page_has_the_sign_up_and_sign_in_hooks(client):
    text = _html(client.get("/account"))
    assert re.search(r'<form[^>]*data-action="sign-up"', text) and 'name="handle"' in text
    assert re.search(r'<form[^>]*data-action="sign-in"', text) and 'name="key"' in text
    assert 'data-role="new-key"' in text and "cannot be recovered" in text
    for page in ("/", "/account", "/me", "/leaderboards"):
        assert "/assets/account.js" in _html(client.get(page))


def test_the_lobby_forms_offer_every_game_and_no_key_field(client, house):
    text = _html(client.get("/"))
    for action in ("open-table", "play-bot"):
        start = text.index(f'data-action="{action}"')
        form = text[start : text.index("</form>", start)]
        games = re.findall(r'<option value="([a-z-]+)" data-min="(\d)" data-max="(\d)"', form)
        assert {g: (int(lo), int(hi)) for g, lo, hi in games} == {
            g: (registry.get(g).min_players, registry.get(g).max_players) for g in registry.names()
        }
        assert 'name="key"' not in form and 'name="clock"' in form and 'name="rated"' in form
    start = text.index('data-action="open-table"')
    assert 'name="neutral"' in text[start : text.index("</form>", start)]


def test_my_games_for_a_key(client, ctx, settings, house):
    """Without a key: a page that says to sign in; with one: its games (its turn marked),
    its open tables, its invitations and its ratings."""
    assert "Sign in" in _html(client.get("/me"))
    ann, key = register(client)
    bob, bob_key = register(client, unique("bob"))
    open_table = client.post(
        "/v1/tables", json={"game": "waters-of-nereus", "seats": 2, "options": {"neutral": True}}, headers=auth(key)
    ).get_json()
    played = client.post("/v1/tables", json={"game": "nauticus", "seats": 2}, headers=auth(key)).get_json()
    gid = client.post(f"/v1/tables/{played['id']}/join", headers=auth(bob_key)).get_json()["game_id"]
    project_game(ctx.redis, ctx.store, gid)
    _, org_key = organiser(client, settings)
    invited = client.post(
        "/v1/games", json={"game": "nauticus", "players": [ann, bob], "accounts": True}, headers=auth(org_key)
    ).get_json()
    # Guests by the same name in a casual game are not this account's.
    guests = client.post("/v1/games", json={"game": "nauticus", "players": [ann, "zed"]}).get_json()
    project_game(ctx.redis, ctx.store, guests["id"])

    text = _html(client.get("/me?partial=1", headers=auth(key)))
    assert f'data-handle="{ann}"' in text
    assert f'data-table="{open_table["id"]}"' in text and "with the neutral ship" in text
    assert re.search(rf'data-action="leave-table" data-id="{open_table["id"]}"', text)
    assert re.search(rf'data-action="accept-invitation" data-id="[^"]+" data-game="{invited["id"]}"', text)
    row = re.search(rf'<tr data-game="{gid}"[^>]*>(.*?)</tr>', text, re.S).group(1)
    seen = client.get(f"/v1/games/{gid}", headers=auth(key)).get_json()
    assert ("your turn" in row) == (seen["seat"] in seen["to_act"])
    bob_row = re.search(
        rf'<tr data-game="{gid}"[^>]*>(.*?)</tr>', _html(client.get("/me?partial=1", headers=auth(bob_key))), re.S
    ).group(1)
    assert ("your turn" in row) != ("your turn" in bob_row)  # one of the two is to act in Nauticus
    assert f'data-game="{guests["id"]}"' not in text
    # A key of nobody: the API's refusal, as a page.
    assert client.get("/me", headers=auth("qdk_" + "x" * 43)).status_code == 403


def test_the_tables_list_filters_by_player(client):
    ann, key = register(client)
    mine = client.post("/v1/tables", json={"game": "nauticus", "seats": 3}, headers=auth(key)).get_json()
    _, other_key = register(client, unique("oth"))
    theirs = client.post("/v1/tables", json={"game": "nauticus", "seats": 3}, headers=auth(other_key)).get_json()
    listed = [t["id"] for t in client.get(f"/v1/tables?player={ann.upper()}").get_json()["tables"]]
    assert listed == [mine["id"]] and theirs["id"] not in listed
    assert client.get("/v1/tables?player=").status_code == 422


def _render(app, template: str, **context: Any) -> str:
    from service.http.pages import render

    with app.test_request_context("/"):
        return render(template, **context).get_data(as_text=True)


def test_an_empty_leaderboard_with_finished_games_says_why(app):
    board = {"game": "nauticus", "entries": [], "total": 0, "finished_games": 14, "limit": 25, "offset": 0}
    text = _render(app, "leaderboard.html", board=board, page=1, pages=1)
    assert "No finished game yet" not in text
    assert f"{lb.TRUST.games} of their rated games have counted against at least {lb.TRUST.opponents}" in text
    fresh = dict(board, finished_games=0)
    assert "No finished game yet" in _render(app, "leaderboard.html", board=fresh, page=1, pages=1)


def test_a_provisional_position_is_not_printed_as_none(app):
    player = {
        "player": "ann",
        "active_games": 0,
        "ratings": [
            {
                "game": "nauticus",
                "position": None,
                "rating": 1.5,
                "games": 1,
                "wins": 1,
                "average_score": 10,
                "best_score": 10,
                "provisional": True,
            }
        ],
        "recent": [],
    }
    text = _render(app, "player.html", player=player, active={"games": [], "total": 0})
    row = re.search(r"<tbody>\s*<tr>(.*?)</tr>", text, re.S).group(1)
    assert "None" not in row and "provisional" in row


def test_a_tournament_table_still_pairing_says_so_and_each_bot_shows_its_level(client, ctx, settings, house):
    """A round's table whose game the worker has not created yet reads "pairing…", and
    house bots at one table each wear their own level."""
    _, org_key = organiser(client, settings)
    handles = [house["nauticus", lvl] for lvl in sorted(levels())[:3]]
    tid = client.post(
        "/v1/tournaments",
        json={"name": "Bots' cup", "game": "nauticus", "format": "swiss", "rounds": 1, "table_size": 3},
        headers=auth(org_key),
    ).get_json()["id"]
    assert (
        client.post(f"/v1/tournaments/{tid}/players", json={"handles": handles}, headers=auth(org_key)).status_code
        == 200
    )
    assert client.post(f"/v1/tournaments/{tid}/start", headers=auth(org_key)).status_code == 200
    # The read model of the paired round, before the worker has created its table's game.
    tview.catch_up(ctx.redis, ctx.tournament_store, tid)
    assert client.get(f"/v1/tournaments/{tid}/rounds/1").get_json()["tables"][0]["game_id"] is None
    row = re.search(r'<tr data-table="1"[^>]*>(.*?)</tr>', _html(client.get(f"/tournaments/{tid}")), re.S).group(1)
    assert "pairing…" in row and "–" not in row
    assert sorted(re.findall(r"house bot, level (\d)", row)) == [str(lvl) for lvl in sorted(levels())[:3]]
    work(ctx, tid)
    row = re.search(r'<tr data-table="1"[^>]*>(.*?)</tr>', _html(client.get(f"/tournaments/{tid}")), re.S).group(1)
    assert "pairing…" not in row and "game-link" in row
