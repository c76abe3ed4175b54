"""The pages for people (service/http/pages.py) through the Flask test client:
every page of every game answers, with the API's statuses; bad ids and unknown
names get a clear page (no trace); who may replay and audit follows the JSON
API; /v1 keeps its JSON errors.  The hidden-information walk over the pages is
in tests/security/test_hidden_information.py; the real browser in tests/browser."""

from __future__ import annotations

import gzip
import re
from typing import Any

import pytest
from support import auth, finished_and_running

from service.games import registry

TITLES = {"nauticus": "Nauticus", "nautilus-industries": "Nautilus Industries", "waters-of-nereus": "Waters of Nereus"}


@pytest.fixture(scope="module")
def games(app, ctx) -> dict[str, dict[str, Any]]:
    """A finished two-player game of every kind, and a running Waters of Nereus game."""
    return finished_and_running(app, ctx, 40, "pages", "waters-of-nereus", running_seed=7, stop_after=25)


def _html(resp) -> str:
    assert resp.mimetype == "text/html", resp.headers
    text = resp.get_data(as_text=True)
    assert "Traceback" not in text and 'File "' not in text
    return text


@pytest.mark.parametrize("game", registry.names())
def test_every_page_of_a_finished_game(client, games, game):
    created = games[game]
    gid = created["id"]
    head = client.get(f"/v1/games/{gid}").get_json()["version"]

    page = client.get(f"/games/{gid}")
    text = _html(page)
    assert page.status_code == 200
    assert TITLES[game] in text
    # A finished game opens as its replay at the last position, drawn in SVG with text alternatives.
    assert 'data-mode="replay"' in text and f'data-head="{head}"' in text
    assert text.count('role="img"') >= 3
    assert len(re.findall(r"<title id=", text)) == text.count('role="img"')
    assert "The game finished" in text  # the platform's closing event, in words
    assert "Final result." in text
    assert page.headers["Content-Security-Policy"].startswith("default-src 'none'")

    first = client.get(f"/games/{gid}?at=1")
    assert first.status_code == 200 and 'data-version="1"' in _html(first)
    # Any seat's perspective once the game is over (the API's time travel allows it to anyone).
    seat = client.get(f"/games/{gid}/board?at=5&seat=1")
    assert seat.status_code == 200 and 'data-perspective="1"' in _html(seat)

    log = client.get(f"/games/{gid}/log?after={head - 3}")
    assert log.status_code == 200
    assert re.findall(r'data-seq="(\d+)"', _html(log)) == [str(head - 2), str(head - 1), str(head)]

    audit = client.get(f"/games/{gid}/audit")
    text = _html(audit)
    assert audit.status_code == 200
    assert sorted(re.findall(r'data-check="(\w+)"', text)) == ["hash_chain", "projection", "redecide", "seed"]
    assert created["seed_commitment"] in text
    assert f"/v1/games/{gid}/export" in text
    assert "All four checks pass." in text

    for url in (
        "/",
        "/games",
        f"/games?game={game}&status=finished",
        "/leaderboards",
        f"/leaderboards/{game}",
    ):
        resp = client.get(url)
        assert resp.status_code == 200, url
        _html(resp)
    assert gid in client.get(f"/games?game={game}&status=finished").get_data(as_text=True)
    # Its seats were taken by names: guests, with no player's page.
    assert client.get("/players/ann").status_code == 404


def test_the_home_page_links_running_and_finished_games(client, games):
    text = _html(client.get("/"))
    for game in registry.names():
        assert f'href="/games/{games[game]["id"]}"' in text
    assert f'href="/games/{games["running"]["id"]}"' in text
    for title in TITLES.values():
        assert title in text


def test_a_running_game_is_live_for_spectators_and_replayable_by_the_organiser(client, games, settings):
    gid = games["running"]["id"]
    text = _html(client.get(f"/games/{gid}"))
    assert 'data-mode="live"' in text and 'id="replay"' not in text
    # Time travel and the audit of a running game are the organiser's (as in the JSON API).
    assert client.get(f"/games/{gid}?at=3").status_code == 401
    assert client.get(f"/games/{gid}/board?at=3").status_code == 401
    audit = client.get(f"/games/{gid}/audit")
    assert audit.status_code == 401 and "The audit opens when the game finishes" in _html(audit)

    org = auth(settings.admin_token)
    assert 'id="replay"' in _html(client.get(f"/games/{gid}", headers=org))
    replay = client.get(f"/games/{gid}?at=3", headers=org)
    assert replay.status_code == 200 and 'data-mode="replay"' in _html(replay)
    assert 'data-check="redecide"' in _html(client.get(f"/games/{gid}/audit", headers=org))
    assert client.get(f"/games/{gid}", headers=org).headers["Cache-Control"] == "no-store"


def test_a_seat_token_gets_that_seats_page(client, games):
    created = games["running"]
    gid = created["id"]
    token = created["seats"][1]["token"]
    text = _html(client.get(f"/games/{gid}", headers=auth(token)))
    assert "dee (seat 1)" in text
    # Its own science cards by name, as its own view has them.
    hand = client.get(f"/v1/games/{gid}", headers=auth(token)).get_json()["view"]["seats"][1]["hand"]
    for card in hand:
        assert card in text
    refused = client.get(f"/games/{gid}", headers=auth("not-a-token-of-this-game"))
    assert refused.status_code == 403 and "does not belong to a seat" in _html(refused)


def test_partial_pages_are_the_main_block_only(client, games):
    gid = games["nauticus"]["id"]
    text = _html(client.get(f"/games/{gid}?partial=1"))
    assert "<html" not in text and 'id="game"' in text and 'id="board-body"' in text


@pytest.mark.parametrize(
    ("url", "status", "words"),
    [
        ("/games/not-a-game", 404, "That is not a game id"),
        ("/games/00000000-0000-4000-8000-000000000000", 404, "No such game"),
        ("/games/00000000-0000-4000-8000-000000000000/audit", 404, "No such game"),
        ("/games/00000000-0000-4000-8000-000000000000/board", 404, "No such game"),
        ("/games/x'%3E%3Cscript%3E/log", 404, "That is not a game id"),
        ("/players/nobody-at-all", 404, "No such player"),
        ("/players/<b>", 404, "No such player"),
        ("/leaderboards/chess", 404, "No game type called"),
        ("/games?game=chess", 422, "does not match its schema"),
        ("/games?page=0", 422, "between 1 and"),
    ],
)
def test_bad_ids_and_unknown_names_get_a_clear_page(client, url, status, words):
    resp = client.get(url, headers={"Accept": "text/html"})
    assert resp.status_code == status
    text = _html(resp)
    assert words in text
    assert "<script>" not in text


def test_bad_positions_get_a_clear_page(client, games):
    gid = games["nauticus"]["id"]
    assert "must be a whole number" in _html(client.get(f"/games/{gid}?at=abc"))
    too_far = client.get(f"/games/{gid}?at=999999")
    assert too_far.status_code == 422 and "version must be between 1 and" in _html(too_far)
    assert client.get(f"/games/{gid}?seat=9").status_code == 422


def test_unknown_paths_are_pages_for_browsers_and_json_for_the_api(client):
    browser = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    page = client.get("/no/such/page", headers=browser)
    assert page.status_code == 404 and "Not found" in _html(page)
    assert client.get("/no/such/page").get_json()["error"]["code"] == "not_found"
    api = client.get("/v1/no/such/thing", headers=browser)
    assert api.status_code == 404 and api.get_json()["error"]["code"] == "not_found"
    game = client.get("/v1/games/00000000-0000-4000-8000-000000000000", headers=browser)
    assert game.get_json()["error"]["code"] == "game_not_found"
    method = client.post("/games/00000000-0000-4000-8000-000000000000", headers=browser)
    assert method.status_code == 405 and "<h1>" in _html(method)


def test_a_failing_page_is_a_500_page_without_a_trace(client, games, monkeypatch):
    from service.http import pages_boards

    def broken(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(pages_boards, "present", broken)
    resp = client.get(f"/games/{games['nauticus']['id']}")
    assert resp.status_code == 500
    text = _html(resp)
    assert "Something went wrong on our side." in text and "secret internals" not in text


def test_large_pages_are_compressed_and_assets_are_served(client, games):
    gid = games["nautilus-industries"]["id"]
    plain = client.get(f"/games/{gid}")
    packed = client.get(f"/games/{gid}", headers={"Accept-Encoding": "gzip"})
    assert packed.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.get_data()) == plain.get_data()
    text = plain.get_data(as_text=True)
    for asset in re.findall(r'(?:src|href)="(/assets/[^"]+)"', text):
        resp = client.get(asset)
        assert resp.status_code == 200, asset
        assert resp.get_data()


def test_the_home_page_lists_open_tables_as_the_lobby_does(client):
    """The home page shows the open tables (GET /v1/tables), not the started ones."""
    from support.accounts import register

    handle, key = register(client)
    table = client.post("/v1/tables", json={"game": "nauticus", "seats": 3}, headers=auth(key)).get_json()
    text = _html(client.get("/"))
    assert "Open tables" in text
    row = re.search(rf'<tr data-table="{table["id"]}">(.*?)</tr>', text, re.S)
    assert row, "the open table is listed"
    assert "1 / 3" in row.group(1) and f'href="/players/{handle}"' in row.group(1)
    # Once it is left (empty), it is no longer open: the home page no longer lists it.
    assert client.post(f"/v1/tables/{table['id']}/leave", headers=auth(key)).status_code == 200
    assert f'data-table="{table["id"]}"' not in _html(client.get("/"))
