"""The tournament pages (``GET /tournaments/{id}`` and the home page's
"Tournaments" section) through the Flask test client: a finished tournament's
standings, rounds, tables and revealed seed, as its JSON endpoints answer them;
the standings after an earlier round; a clear 404 page for a bad or unknown id;
and a running tournament's page shows nothing a spectator may not see (its
seed above all), whoever asks.  The real browser is in tests/browser."""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any

import pytest
from support import auth
from support.tournaments import run_tournament


@pytest.fixture(scope="module")
def finished(app, ctx, settings) -> dict[str, Any]:
    return run_tournament(app, ctx, settings, name="Finished Cup")


@pytest.fixture(scope="module")
def running(app, ctx, settings) -> dict[str, Any]:
    """Round 1 played, round 2's games running."""
    return run_tournament(app, ctx, settings, name="Running Cup", played_rounds=1, play_first_table=False)


def _html(resp) -> str:
    assert resp.mimetype == "text/html", resp.headers
    text = resp.get_data(as_text=True)
    assert "Traceback" not in text and 'File "' not in text
    return text


def _rows(text: str, table_id: str) -> list[str]:
    body = text.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-player="([^"]+)"', body)


def test_a_finished_tournament_shows_its_standings_rounds_tables_and_seed(client, finished):
    tid = finished["id"]
    t = client.get(f"/v1/tournaments/{tid}").get_json()
    assert t["status"] == "finished" and t["round"] == 2
    page = client.get(f"/tournaments/{tid}")
    assert page.status_code == 200
    text = _html(page)
    assert "Finished Cup" in text and "Nauticus tournament" in text
    assert 'data-status="finished"' in text and "2 of 2" in text
    assert f'<span id="organiser">{finished["organiser"]}</span>' in text
    # The commitment, and the seed it commits to, revealed.
    assert t["seed_commitment"] in text and t["seed"] in text
    assert hashlib.sha256(bytes.fromhex(t["seed"])).hexdigest() == t["seed_commitment"]
    # The standings after the last round, in the JSON's order, each player linking to its page.
    latest = client.get(f"/v1/tournaments/{tid}/standings").get_json()
    assert _rows(text, "standings") == [s["player"] for s in latest["standings"]]
    for handle in finished["keys"]:
        assert f'href="/players/{handle}"' in text
    assert "Standings after round 2" in text
    # Every round, every table: its game linked, its result shown.
    for n in (1, 2):
        rnd = client.get(f"/v1/tournaments/{tid}/rounds/{n}").get_json()
        assert f'id="round-{n}"' in text
        for table in rnd["tables"]:
            assert f'href="/games/{table["game_id"]}"' in text
            assert table["status"] == "finished"
    assert text.count('class="placings"') == 4  # two tables in each of two rounds
    assert f"/v1/tournaments/{tid}/export" in text
    # A finished tournament's page has nothing to follow (the script polls only the others).
    assert 'data-status="finished"' in text.split('id="tournament"', 1)[0] + text.split("<article", 1)[1][:200]
    assert page.headers["Content-Security-Policy"].startswith("default-src 'none'")


def test_the_standings_after_an_earlier_round(client, finished):
    tid = finished["id"]
    after_one = client.get(f"/v1/tournaments/{tid}/standings?round=1").get_json()
    text = _html(client.get(f"/tournaments/{tid}?round=1"))
    assert "Standings after round 1" in text
    assert _rows(text, "standings") == [s["player"] for s in after_one["standings"]]
    assert '<strong aria-current="page">1</strong>' in text
    assert f'href="/tournaments/{tid}"' in text  # back to the latest
    # The latest is linked without ?round= (its own address).
    assert f'href="/tournaments/{tid}?round=2"' not in text


def test_the_home_page_lists_tournaments(client, finished, running):
    text = _html(client.get("/"))
    section = text.split('id="tournament-list"', 1)[1].split("</table>", 1)[0]
    ids = re.findall(r'<tr data-tournament="([^"]+)"', section)
    assert finished["id"] in ids and running["id"] in ids
    assert ids.index(running["id"]) < ids.index(finished["id"])  # running ones first
    assert f'href="/tournaments/{finished["id"]}"' in section


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/tournaments/not-a-tournament", 404, "That is not a tournament id"),
        ("/tournaments/x'%3E%3Cscript%3E", 404, "That is not a tournament id"),
        (f"/tournaments/{uuid.UUID(int=7)}", 404, "No such tournament."),
    ],
)
def test_bad_and_unknown_ids_get_a_clear_page(client, path, status, words):
    resp = client.get(path, headers={"Accept": "text/html"})
    assert resp.status_code == status
    text = _html(resp)
    assert words in text and "<h1>Not found</h1>" in text and "Back to the home page" in text
    assert "<script>" not in text


def test_bad_rounds_get_a_clear_page(client, finished):
    tid = finished["id"]
    resp = client.get(f"/tournaments/{tid}?round=7")
    assert resp.status_code == 404 and "Round 7 has not been paired." in _html(resp)
    resp = client.get(f"/tournaments/{tid}?round=abc")
    assert resp.status_code == 422 and "must be a whole number" in _html(resp)


def test_a_running_tournament_shows_a_spectator_nothing_more(client, ctx, running, settings):
    """A running tournament's seed is secret (its commitment is public); the page is
    built from what the JSON API answers a spectator, and is the same page whoever
    asks (the organiser's key, the operator's token or a player's key add nothing)."""
    tid = running["id"]
    seed = ctx.tournament_store.seed(tid)
    assert seed is not None
    t = client.get(f"/v1/tournaments/{tid}").get_json()
    assert t["status"] == "running" and t["round"] == 2 and t["seed"] is None
    page = client.get(f"/tournaments/{tid}")
    text = _html(page)
    assert page.status_code == 200 and 'data-status="running"' in text
    assert "it is revealed when the tournament finishes" in text
    assert "(being played)" in text  # the latest standings are of a round in play
    secrets = {seed.hex(), seed.hex().upper(), seed.decode("latin-1")}
    assert not any(s in text for s in secrets)
    # Every game it links to is a table of a round the JSON API shows anyone.
    shown = {
        table["game_id"]
        for n in (1, 2)
        for table in client.get(f"/v1/tournaments/{tid}/rounds/{n}").get_json()["tables"]
    }
    assert set(re.findall(r'href="/games/([0-9a-f-]{36})"', text)) == shown
    # The same page for every caller: nothing is added for a credential.
    player_key = next(iter(running["keys"].values()))
    for token in (running["organiser_key"], settings.admin_token, player_key):
        other = client.get(f"/tournaments/{tid}", headers=auth(token))
        assert other.status_code == 200
        assert _html(other) == text
        assert other.headers["Cache-Control"] == "no-store"
    # What the page's poll reads: the summary, without the seed.
    assert seed.hex() not in client.get(f"/v1/tournaments/{tid}").get_data(as_text=True)
    # The partial page (what the poll swaps in) is the main block only, and as secret.
    partial = _html(client.get(f"/tournaments/{tid}?partial=1"))
    assert partial.lstrip().startswith("<article") and "<html" not in partial
    assert seed.hex() not in partial
