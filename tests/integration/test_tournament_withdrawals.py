"""Withdrawals, late entrants and aborts against real PostgreSQL, Redis and RQ
(docs/TOURNAMENTS.md "Withdrawals, late entrants and aborts", TRN-050..TRN-070):
through the HTTP API and the worker, then the audit and the bundle verified offline."""

from __future__ import annotations

import pytest
from support import auth
from support.accounts import accept_invitations, organiser, register, unique

from service import cli
from service.adapters.house_bots import HouseBots
from service.audit import verify
from service.audit.checks import redecide_dicts
from service.audit.tournament_audit import repair_dicts
from service.service_layer.tournaments import TournamentService
from service.tournaments.commands import AbortTournament
from workers import tournaments as tjobs

CLOCK = {"type": "deadline", "per_decision_s": 3600}


def create(client, key: str, **body) -> dict:
    terms = {"name": "Club Night", "game": "nauticus", "table_size": 4, "rounds": 3, "clock": CLOCK} | body
    resp = client.post("/v1/tournaments", json=terms, headers=auth(key))
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


def players(client, n: int) -> dict[str, str]:
    return dict(register(client, unique("p")) for _ in range(n))


def end_game(client, ctx, game_id: str, keys: dict[str, str]) -> None:
    """Every seat but the last resigns, each with its account's key."""
    seated = ctx.store.read(game_id, upto=1)[0].data["players"]
    for handle in seated[:-1]:
        resp = client.post(
            f"/v1/games/{game_id}/intents", json={"intent": {"type": "resign"}}, headers=auth(keys[handle])
        )
        assert resp.status_code == 201, resp.get_json()


def seated(rnd: dict) -> list[str]:
    return [p for t in rnd["tables"] for p in t["players"]] + rnd["byes"]


def post(client, path: str, key: str, body: dict | None = None, status: int = 200) -> dict:
    resp = client.post(path, json=body or {}, headers=auth(key))
    assert resp.status_code == status, resp.get_json()
    return resp.get_json()


def test_trn_060_050_a_12_player_swiss_with_a_no_show_a_withdrawal_and_a_late_entrant(
    client, ctx, settings, run_worker
):
    """The issue's case: a no-show withdrawn by the organiser before round 1, a player who
    withdraws after round 1, a late entrant who joins in round 2; it finishes, its audit
    is complete and its bundle verifies offline with all three recorded."""
    org, okey = organiser(client, settings)
    keys = players(client, 12)
    handles = list(keys)
    no_show, leaver = handles[11], handles[0]
    late, late_key = register(client, unique("late"))
    keys[late] = late_key
    tid = create(client, okey, late_until_round=2)["id"]
    post(client, f"/v1/tournaments/{tid}/players", okey, {"handles": handles})
    accept_invitations(client, list(keys.values()))  # docs/API.md "Consent"

    # The organiser withdraws the no-show before round 1; a reason is required.
    err = post(client, f"/v1/tournaments/{tid}/withdraw", okey, {"player": no_show}, status=422)
    assert err["error"]["code"] == "invalid_reason"
    err = post(client, f"/v1/tournaments/{tid}/withdraw", keys[handles[1]], {"player": no_show}, status=403)
    assert err["error"]["code"] == "not_your_tournament"
    t = post(client, f"/v1/tournaments/{tid}/withdraw", okey, {"player": no_show, "reason": "No-show."})
    assert t["withdrawals"] == [{"player": no_show, "by": org, "reason": "No-show.", "round": 0}]
    assert post(client, f"/v1/tournaments/{tid}/start", okey)["status"] == "running"
    run_worker()
    round1 = client.get(f"/v1/tournaments/{tid}/rounds/1").get_json()
    assert no_show not in seated(round1) and len(seated(round1)) == 11

    # Round 1 is played; the leaver withdraws itself while it is in play, and the late
    # entrant registers itself.  The leaver's game is not touched: it ends by play.
    tables = round1["tables"]
    leaver_table = next(t for t in tables if leaver in t["players"])
    err = post(client, f"/v1/tournaments/{tid}/withdraw", keys[leaver], {"player": handles[3]}, status=403)
    assert err["error"]["code"] == "not_your_tournament"
    t = post(client, f"/v1/tournaments/{tid}/withdraw", keys[leaver], {"player": leaver.upper()})  # itself, named
    assert [w["player"] for w in t["withdrawals"]] == [no_show, leaver] and t["withdrawals"][1]["round"] == 1
    assert t["withdrawals"][1]["by"] == leaver and t["withdrawals"][1]["reason"] is None
    err = post(client, f"/v1/tournaments/{tid}/withdraw", keys[leaver], status=409)
    assert err["error"]["code"] == "already_withdrawn"
    t = post(client, f"/v1/tournaments/{tid}/players", late_key)
    assert t["late"] == [{"player": late, "round": 2}] and t["players"][-1] == late
    assert ctx.store.read(leaver_table["game_id"])[-1].type != "GameFinished"
    for table in tables:
        end_game(client, ctx, table["game_id"], keys)
    run_worker()
    for n in (2, 3):
        rnd = client.get(f"/v1/tournaments/{tid}/rounds/{n}").get_json()
        assert leaver not in seated(rnd) and no_show not in seated(rnd) and late in seated(rnd), rnd
        assert len(seated(rnd)) == 11
        if n == 2:  # too late now: round 2 (late_until_round) is paired
            err = post(client, f"/v1/tournaments/{tid}/players", keys[no_show], status=409)
            assert err["error"]["code"] in ("registration_closed", "already_registered")
        run_worker()
        for table in client.get(f"/v1/tournaments/{tid}/rounds/{n}").get_json()["tables"]:
            end_game(client, ctx, table["game_id"], keys)
        run_worker()

    summary = client.get(f"/v1/tournaments/{tid}").get_json()
    assert summary["status"] == "finished" and summary["seed"]
    rows = {r["player"]: r for r in client.get(f"/v1/tournaments/{tid}/standings").get_json()["standings"]}
    assert rows[leaver]["withdrawn"] and rows[leaver]["games"] == 1
    assert rows[no_show]["withdrawn"] and rows[no_show]["games"] == 0
    assert not rows[late]["withdrawn"] and rows[late]["games"] + rows[late]["byes"] == 2
    after1 = {r["player"]: r for r in client.get(f"/v1/tournaments/{tid}/standings?round=1").get_json()["standings"]}
    assert late in after1 and after1[late]["points"] == 0  # TRN-051: nothing for the round it missed

    # The page shows the withdrawals (who, when, by whom, why), marks them in the
    # standings, and names the late entrant.
    page = client.get(f"/tournaments/{tid}").get_data(as_text=True)
    listed = page.split('id="withdrawals"', 1)[1].split("</ul>", 1)[0]
    assert f"{no_show}, before round 1, withdrawn by {org}: No-show." in listed
    assert f"{leaver}, after round 1</li>" in listed
    assert f'data-player="{leaver}" data-withdrawn="true"' in page
    assert f"{late} (from round 2)" in page

    report = client.get(f"/v1/tournaments/{tid}/audit").get_json()
    assert report["ok"] and report["complete"], report["checks"]
    assert [w["player"] for w in report["withdrawals"]] == [no_show, leaver]
    assert report["late"] == [{"player": late, "round": 2}] and report["status"] == "finished"

    bundle = client.get(f"/v1/tournaments/{tid}/export").get_json()
    types = [e["type"] for e in bundle["events"]]
    assert types.count("PlayerWithdrawn") == 2 and types.count("LatePlayerRegistered") == 1
    offline = verify.verify_tournament_bundle(bundle)  # the standard library alone
    assert offline["ok"], offline["checks"]
    record = offline["checks"]["record"]["details"]
    assert record["withdrawals"] == {no_show: 0, leaver: 1} and record["late"] == {late: 2}
    full = verify.verify_tournament_bundle(bundle, redecide=redecide_dicts, repair=repair_dicts)
    assert full["ok"] and not full["checks"]["pairings"].get("skipped"), full["checks"]["pairings"]
    # The withdrawal re-made: a stream claiming the leaver withdrew by someone else fails.
    forged = next(e for e in bundle["events"] if e["type"] == "PlayerWithdrawn" and e["data"]["player"] == leaver)
    forged["data"]["by"] = handles[2]
    assert not verify.verify_tournament_bundle(bundle, repair=repair_dicts)["checks"]["pairings"]["ok"]


def test_trn_070_an_aborted_tournament_aborts_its_games_and_its_audit_says_so(
    client, ctx, settings, run_worker, monkeypatch, capsys
):
    org, okey = organiser(client, settings)
    keys = players(client, 8)
    tid = create(client, okey, rounds=3)["id"]
    post(client, f"/v1/tournaments/{tid}/players", okey, {"handles": list(keys)})
    accept_invitations(client, list(keys.values()))  # docs/API.md "Consent"
    post(client, f"/v1/tournaments/{tid}/start", okey)
    run_worker()
    for table in client.get(f"/v1/tournaments/{tid}/rounds/1").get_json()["tables"]:
        end_game(client, ctx, table["game_id"], keys)
    run_worker()  # round 2 paired and its games started
    round2 = client.get(f"/v1/tournaments/{tid}/rounds/2").get_json()
    assert all(t["status"] == "playing" for t in round2["tables"])
    first = round2["tables"][0]["game_id"]
    end_game(client, ctx, first, keys)  # one table of round 2 ends before the abort

    stranger = next(iter(keys.values()))
    err = post(client, f"/v1/tournaments/{tid}/abort", stranger, {"reason": "mine"}, status=403)
    assert err["error"]["code"] == "not_your_tournament"
    err = post(client, f"/v1/tournaments/{tid}/abort", okey, {"reason": ""}, status=422)
    t = post(client, f"/v1/tournaments/{tid}/abort", okey, {"reason": "The hall closed."})
    assert t["status"] == "aborted" and t["seed"]
    assert t["aborted"] == {"by": org, "reason": "The hall closed.", "round": 1}
    # The round's running games were aborted through the game service, by the organiser.
    for table in round2["tables"][1:]:
        events = ctx.store.read(table["game_id"])
        assert [e.type for e in events[-2:]] == ["GameAborted", "GameFinished"]
        assert events[-1].data["result"]["reason"] == "aborted"
        assert events[-2].data["by"] == f"organiser:{org}" and "The hall closed." in events[-2].data["reason"]
    assert ctx.store.read(first)[-1].data["result"]["reason"] != "aborted"
    run_worker()  # the worker's advance finds nothing left to abort and pairs nothing
    assert client.get(f"/v1/tournaments/{tid}").get_json()["round"] == 2
    assert tid not in ctx.tournament_store.unfinished()
    err = post(client, f"/v1/tournaments/{tid}/abort", okey, {"reason": "again"}, status=409)
    assert err["error"]["code"] == "tournament_not_running"
    err = post(client, f"/v1/tournaments/{tid}/withdraw", stranger, status=409)
    assert err["error"]["code"] == "tournament_not_running"

    report = client.get(f"/v1/tournaments/{tid}/audit").get_json()  # anyone: the seed is revealed
    assert report["ok"] and report["complete"], report["checks"]
    assert report["status"] == "aborted" and report["aborted"] == {"by": org, "reason": "The hall closed.", "round": 1}
    standings = client.get(f"/v1/tournaments/{tid}/standings?round=1").get_json()["standings"]
    closing = ctx.tournament_store.read(tid)[-1]
    assert closing.type == "TournamentAborted"
    assert closing.data["standings"] == [{"rank": r["rank"], "player": r["player"]} for r in standings]

    page = client.get(f"/tournaments/{tid}").get_data(as_text=True)
    banner = page.split('id="aborted"', 1)[1].split("</p>", 1)[0]
    assert f"by {org}: The hall closed." in banner and "frozen after round 1" in banner
    assert "aborted</span> after round 1" in page and f"/v1/tournaments/{tid}/export" in page

    resp = client.get(f"/v1/tournaments/{tid}/export")  # anyone, once aborted
    assert resp.status_code == 200
    bundle = resp.get_json()
    assert bundle["status"] == "aborted" and bundle["aborted"]["by"] == org
    full = verify.verify_tournament_bundle(bundle, redecide=redecide_dicts, repair=repair_dicts)
    assert full["ok"], full["checks"]
    assert "aborted by " + org in full["checks"]["record"]["summary"]
    # The operator's command (make audit TOURNAMENT=...) says it too.
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    monkeypatch.setenv("REDIS_URL", settings.redis_url)
    assert cli.main(["tournament-audit", tid]) == 0
    shown = capsys.readouterr().out
    assert f"{tid}: aborted" in shown and f"aborted by {org} after round 1: The hall closed." in shown


@pytest.mark.parametrize("late_until_round", [4, 1])
def test_trn_050_late_until_round_out_of_range_is_refused(client, settings, late_until_round):
    _, okey = organiser(client, settings)
    resp = client.post(
        "/v1/tournaments",
        json={"name": "X", "game": "nauticus", "table_size": 4, "rounds": 3, "late_until_round": late_until_round},
        headers=auth(okey),
    )
    assert resp.status_code == 422 and resp.get_json()["error"]["details"] == {"field": "late_until_round"}


def test_trn_080_an_odd_fields_bye_is_played_against_a_house_bot(client, ctx, settings, run_worker):
    """Five players at tables of two: each round, the player with the bye plays the
    house bot instead (unrated, as asked); the standings say who played it."""
    HouseBots(ctx.store.pool).provision(["nauticus"], [2], settings.bot_key_secret)
    bot = "nauticus-bot-2"
    org, okey = organiser(client, settings)
    keys = players(client, 5)
    bad = client.post(
        "/v1/tournaments",
        json={"name": "X", "game": "nauticus", "table_size": 2, "rounds": 2, "bye_bot": {"level": 9}},
        headers=auth(okey),
    )
    assert bad.status_code == 422 and bad.get_json()["error"]["details"] == {"field": "bye_bot"}
    t = create(client, okey, table_size=2, table_sizes=[2], rounds=2, bye_bot={"level": 2, "rated": False})
    assert t["bye_bot"] == {"handle": bot, "level": 2, "rated": False}
    tid = t["id"]
    post(client, f"/v1/tournaments/{tid}/players", okey, {"handles": list(keys)})
    accept_invitations(client, list(keys.values()))  # docs/API.md "Consent"
    post(client, f"/v1/tournaments/{tid}/start", okey)
    faced = []
    for n in (1, 2):
        run_worker()
        rnd = client.get(f"/v1/tournaments/{tid}/rounds/{n}").get_json()
        assert rnd["byes"] == [] and len(rnd["tables"]) == 3
        last = rnd["tables"][-1]
        assert last["players"][1] == bot and last["bots"] == [1]
        assert all(t["bots"] == [] for t in rnd["tables"][:-1])
        opening = ctx.store.read(last["game_id"], upto=1)[0].data
        assert opening["players"] == last["players"] and opening["rated"] is False  # as the organiser chose
        assert ctx.store.read(rnd["tables"][0]["game_id"], upto=1)[0].data["rated"] is True
        faced.append(last["players"][0])
        for table in rnd["tables"]:
            humans = [p for p in table["players"] if p != bot]
            resp = client.post(
                f"/v1/games/{table['game_id']}/intents",
                json={"intent": {"type": "resign"}},
                headers=auth(keys[humans[0]]),
            )
            assert resp.status_code == 201, resp.get_json()
        run_worker()
    assert faced[0] != faced[1]  # the bot's game is a bye: it goes round
    rows = {r["player"]: r for r in client.get(f"/v1/tournaments/{tid}/standings").get_json()["standings"]}
    assert bot not in rows and {p for p, r in rows.items() if r["bot_games"]} == set(faced)
    page = client.get(f"/tournaments/{tid}").get_data(as_text=True)
    assert f'{bot}</a> <span class="badge bot">house bot, level 2</span>' in page
    report = client.get(f"/v1/tournaments/{tid}/audit").get_json()
    assert report["ok"] and report["complete"], report["checks"]
    bundle = client.get(f"/v1/tournaments/{tid}/export").get_json()
    full = verify.verify_tournament_bundle(bundle, redecide=redecide_dicts, repair=repair_dicts)
    assert full["ok"], full["checks"]


def test_trn_070_the_operator_aborts_a_registering_tournament(client, settings):
    _, okey = organiser(client, settings)
    keys = players(client, 3)
    tid = create(client, okey)["id"]
    post(client, f"/v1/tournaments/{tid}/players", okey, {"handles": list(keys)})
    accept_invitations(client, list(keys.values()))  # docs/API.md "Consent"
    t = post(client, f"/v1/tournaments/{tid}/abort", settings.admin_token, {"reason": "Nobody came."})
    assert t["status"] == "aborted" and t["aborted"] == {"by": None, "reason": "Nobody came.", "round": 0}
    err = post(client, f"/v1/tournaments/{tid}/start", okey, status=409)
    assert err["error"]["code"] == "tournament_not_running"
    newcomer, _ = register(client, unique("p"))
    err = post(client, f"/v1/tournaments/{tid}/players", okey, {"handles": [newcomer]}, status=409)
    assert err["error"]["code"] == "registration_closed" and "aborted" in err["error"]["message"]
    report = client.get(f"/v1/tournaments/{tid}/audit").get_json()
    assert report["ok"] and report["status"] == "aborted" and report["aborted"]["by"] is None, report
    assert report["checks"]["seed"]["ok"] and report["checks"]["pairings"]["ok"], report["checks"]


def test_trn_070_the_worker_aborts_the_games_an_abort_did_not_reach(client, ctx, settings, run_worker):
    """An abort recorded without its games aborted (the request died after the commit):
    its export stays the organiser's while a game runs, and the worker's advance,
    which the abort's commit enqueues, aborts the rest."""
    org, okey = organiser(client, settings)
    keys = players(client, 4)
    tid = create(client, okey, rounds=2)["id"]
    post(client, f"/v1/tournaments/{tid}/players", okey, {"handles": list(keys)})
    accept_invitations(client, list(keys.values()))  # docs/API.md "Consent"
    post(client, f"/v1/tournaments/{tid}/start", okey)
    run_worker()
    game = client.get(f"/v1/tournaments/{tid}/rounds/1").get_json()["tables"][0]["game_id"]
    TournamentService(ctx.tournament_store, ctx.nudge.tournament).execute(tid, AbortTournament("Fire.", by=org), by=org)
    assert ctx.store.read(game)[-1].type != "GameFinished"
    tjobs.project(tid)  # the read model says aborted; the game still runs
    assert client.get(f"/v1/tournaments/{tid}").get_json()["status"] == "aborted"
    assert client.get(f"/v1/tournaments/{tid}/export").status_code == 401  # its hidden information
    assert client.get(f"/v1/tournaments/{tid}/export", headers=auth(okey)).status_code == 200
    run_worker()  # the jobs the abort's commit enqueued: the advance aborts the game
    assert client.get(f"/v1/tournaments/{tid}").get_json()["status"] == "aborted"
    assert [e.type for e in ctx.store.read(game)[-2:]] == ["GameAborted", "GameFinished"]
    assert client.get(f"/v1/tournaments/{tid}/export").status_code == 200


def test_trn_060_a_player_not_registered_withdrawing_itself_is_404_not_registered(client, settings):
    """docs/API.md: a player that is not in the tournament gets ``404 not_registered``
    (it got ``403 not_your_tournament``, meant for one naming another player)."""
    _, okey = organiser(client, settings)
    keys = players(client, 2)
    tid = create(client, okey)["id"]
    post(client, f"/v1/tournaments/{tid}/players", okey, {"handles": list(keys)})
    stranger, skey = register(client, unique("p"))
    for body in ({}, {"player": stranger}):
        err = post(client, f"/v1/tournaments/{tid}/withdraw", skey, body, status=404)
        assert err["error"]["code"] == "not_registered", err
    # Naming another player is still the 403.
    err = post(client, f"/v1/tournaments/{tid}/withdraw", skey, {"player": next(iter(keys))}, status=403)
    assert err["error"]["code"] == "not_your_tournament"
