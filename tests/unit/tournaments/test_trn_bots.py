"""House bots in a field (docs/TOURNAMENTS.md "House bots in a field": TRN-080,
TRN-081): an odd field's bye played against the bye bot, registered bots, the
standings that say which games were against bots, and the audit."""

from __future__ import annotations

import json
import random
from fractions import Fraction as F

import pytest
from support.tournament_states import SEED

from service.domain.errors import Refused
from service.tournaments import rules, standings
from service.tournaments.audit import audit
from service.tournaments.commands import CreateTournament, RegisterPlayers
from service.tournaments.events import to_json
from service.tournaments.evolve import fold
from service.tournaments.simulate import random_result, run

BOT = {"level": 2, "rated": False}
PAIRS = CreateTournament("Bots", "nauticus", 2, by="org", rounds=4, table_sizes=(2,), bye_bot=BOT)


def simulated(command: CreateTournament, players: int, chooser: int = 4):
    r = random.Random(chooser)
    games: dict[str, dict] = {}

    def result_of(round_: int, table: int, seated: list[str]) -> dict:
        res = random_result(r, len(seated), forfeits=0.0, aborts=0.0)
        games[f"r{round_}t{table}"] = {"game": "nauticus", "players": seated, "result": res}
        return res

    events, state = run(command, [f"pl{i:02d}" for i in range(players)], SEED, result_of)
    return json.loads(json.dumps([to_json(e) for e in events])), state, games


def test_trn_080_an_odd_fields_bye_is_played_against_the_bye_bot():
    stream, state, games = simulated(PAIRS, 7)
    assert state["bye_bot"] == {"handle": "nauticus-bot-2", "level": 2, "rated": False}
    faced = []
    for rnd in state["history"]:
        assert rnd["byes"] == [] and len(rnd["tables"]) == 4
        last = rnd["tables"][-1]["players"]
        assert last[1] == "nauticus-bot-2"  # the bot, last table, last seat
        faced.append(last[0])
    assert len(set(faced)) == 4  # TRN-022: the bot's game is a bye, so it goes round
    rows = {r.player: r for r in standings.standings(state)}
    assert "nauticus-bot-2" not in rows and len(rows) == 7
    assert {p: r.bot_games for p, r in rows.items() if r.bot_games} == dict.fromkeys(faced, 1)
    report = audit(stream, games=games)
    assert report["ok"] and report["complete"], report["checks"]


def test_trn_080_without_a_bye_bot_the_same_field_has_byes():
    _, state, _ = simulated(CreateTournament("No bots", "nauticus", 2, by="org", rounds=2, table_sizes=(2,)), 7)
    assert all(len(rnd["byes"]) == 1 and len(rnd["tables"]) == 3 for rnd in state["history"])


@pytest.mark.parametrize(("players", "bot_table"), [(11, True), (10, False)])
def test_trn_080_the_bot_table_must_be_an_allowed_size(players, bot_table):
    """Tables of 4 only: 11 players leave 3 byes, who make a table of 4 with the bot;
    10 leave 2, and a table of 3 is not allowed: they stay byes."""
    command = CreateTournament("Fours", "nauticus", 4, by="org", rounds=1, table_sizes=(4,), bye_bot=BOT)
    _, state, _ = simulated(command, players)
    rnd = state["history"][0]
    has_bot = any("nauticus-bot-2" in t["players"] for t in rnd["tables"])
    assert has_bot is bot_table and (rnd["byes"] == []) is bot_table


def test_trn_081_the_bye_bot_counts_as_an_opponent_who_drew_every_round():
    command = CreateTournament("One", "nauticus", 2, by="org", rounds=1, table_sizes=(2,), bye_bot=BOT)
    _, state, _ = simulated(command, 3)
    player = state["history"][0]["tables"][-1]["players"][0]
    row = next(r for r in standings.standings(state) if r.player == player)
    assert row.opponents_points == F(1, 2)  # one round, the average place of a table of 2


def test_trn_080_bots_registered_like_players_are_marked_and_the_bye_bot_cannot_be():
    state = fold(rules.decide(None, PAIRS, seed=SEED))
    with pytest.raises(Refused) as err:
        rules.decide(state, RegisterPlayers(("Nauticus-Bot-2",), by="org"), seed=SEED)
    assert err.value.code == "invalid_handle"
    command = CreateTournament("Mixed", "nauticus", 2, by="org", rounds=2, table_sizes=(2,))
    r = random.Random(1)
    _, state = run(
        command, ["ann", "bob", "nauticus-bot-1", "cat"], SEED, lambda n, t, seated: random_result(r, len(seated))
    )
    rows = {row.player: row for row in standings.standings(state)}
    assert rows["nauticus-bot-1"].bot and not rows["ann"].bot
    met_bot = {
        p for rnd in state["history"] for t in rnd["tables"] if "nauticus-bot-1" in t["players"] for p in t["players"]
    }
    for p in ("ann", "bob", "cat"):
        assert rows[p].bot_games == (1 if p in met_bot else 0)
    assert rows["nauticus-bot-1"].bot_games == 0  # a bot's own games are not "against a bot"


@pytest.mark.parametrize("bye_bot", [{"level": 0}, {"level": "2"}, {"level": 2, "rated": "yes"}, {"level": 2, "x": 1}])
def test_trn_080_a_bad_bye_bot_is_refused(bye_bot):
    command = CreateTournament("X", "nauticus", 2, by="org", rounds=2, bye_bot=bye_bot)
    with pytest.raises(Refused) as err:
        rules.decide(None, command, seed=SEED)
    assert err.value.details == {"field": "bye_bot"}
