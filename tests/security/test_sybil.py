"""The probe's rating scripts against real PostgreSQL
and Redis: none of them can move a rating any more (docs/LEADERBOARDS.md,
"What counts").

* 20 rated tables, each joined by a second account that resigns at once;
* an organiser seating accounts in a rated game with a 1 s clock, the victim
  timed out before its first decision;
* an organiser registering 32 accounts in a rated tournament with a 1 s clock,
  every game ended by timeouts.

Each script is run over HTTP (the Flask test client; timeouts written by the
service's own scheduler call), then the leaderboards are folded, and every
rating of every account involved is compared with before: no record, nothing
listed, each game ``"rated": false`` with its reason."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from support import auth, wait_for_feed_horizon
from support.accounts import accept_invitations, organiser, register, unique
from support.tournaments import work

from projections import leaderboards as lb
from projections.runner import project_game

LATER = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
ONE_SECOND = {"type": "fischer", "base_s": 1, "increment_s": 0}


def fold(ctx) -> None:
    wait_for_feed_horizon(ctx.settings.database_url)
    for _ in range(50):
        if not lb.consume(ctx.redis, ctx.store):
            break


def ratings(client, handles: list[str]) -> dict[str, list]:
    """Every rating record of ``handles`` (per game type), and whether any is listed."""
    out = {}
    for h in handles:
        page = client.get(f"/v1/players/{h}")
        # 404: no game lists this account yet.
        out[h] = page.get_json()["ratings"] if page.status_code == 200 else []
    board = client.get("/v1/leaderboards/nauticus?limit=500").get_json()
    listed = {e["player"] for e in board["entries"]} & set(handles)
    return {"records": out, "listed": sorted(listed)}


def unrated(client, ctx, gid: str) -> str | None:
    project_game(ctx.redis, ctx.store, gid)
    shown = client.get(f"/v1/games/{gid}").get_json()
    assert shown["status"] == "finished", shown
    return None if shown["rated"] else shown["unrated_reason"]


def test_twenty_join_and_resign_games_move_no_rating(client, ctx):
    target, target_key = register(client, unique("target"))
    sybil, sybil_key = register(client, unique("sybil"))
    before = ratings(client, [target, sybil])
    reasons = []
    for i in range(20):
        table = client.post(
            "/v1/tables", json={"game": "nauticus", "seats": 2, "rated": True}, headers=auth(target_key)
        ).get_json()
        gid = client.post(f"/v1/tables/{table['id']}/join", headers=auth(sybil_key)).get_json()["game_id"]
        resp = client.post(
            f"/v1/games/{gid}/intents",
            json={"intent": {"type": "resign"}},
            headers={**auth(sybil_key), "Idempotency-Key": f"resign-{i}"},
        )
        assert resp.status_code == 201, resp.get_json()
        reasons.append(unrated(client, ctx, gid))
    fold(ctx)
    assert reasons == ["no_first_decision"] * 20
    after = ratings(client, [target, sybil])
    assert after == before == {"records": {target: [], sybil: []}, "listed": []}
    page = client.get(f"/v1/players/{target}").get_json()
    assert {e["unrated_reason"] for e in page["recent"]} == {"no_first_decision"}


def test_an_organiser_seating_accounts_with_a_one_second_clock_moves_no_rating(app, client, ctx, settings):
    _, org_key = organiser(client, settings)
    victim, victim_key = register(client, unique("victim"))
    friend, friend_key = register(client, unique("friend"))
    before = ratings(client, [victim, friend])
    games = app.extensions["quarterdeck"].games
    body = {"game": "nauticus", "players": [victim, friend], "accounts": True, "rated": True, "clock": ONE_SECOND}
    # Without their consent: no game at all, only invitations.
    created = client.post("/v1/games", json=body, headers=auth(org_key))
    assert created.status_code == 201 and created.get_json()["status"] == "invited", created.get_json()
    gid = created.get_json()["id"]
    assert ctx.store.game(gid) is None
    assert client.get(f"/v1/games/{gid}").get_json()["status"] == "invited"
    for key in (victim_key, friend_key):
        answered = accept_invitations(client, [key])
        assert [a["game_id"] for a in answered] == [gid]
    for _ in range(3):
        created = client.post("/v1/games", json=body, headers=auth(org_key))
        assert created.status_code == 201, created.get_json()
        gid = created.get_json()["id"]
        # With it: both accept, then the victim's clock runs out before its first decision.
        accept_invitations(client, [victim_key, friend_key])
        # The scheduler's call once the deadline has passed: the seat to act times out,
        # and with one seat left the game ends.
        assert games.time_out(gid, now=LATER) >= 1
        assert unrated(client, ctx, gid) == "no_first_decision"
    fold(ctx)
    assert ratings(client, [victim, friend]) == before == {"records": {victim: [], friend: []}, "listed": []}


def test_an_organiser_registering_32_accounts_in_a_rated_tournament_moves_no_rating(app, client, ctx, settings):
    _, org_key = organiser(client, settings)
    keys = dict(register(client, unique("reg")) for _ in range(32))
    handles = list(keys)
    before = ratings(client, handles)
    terms = {"name": "Sybil Cup", "game": "nauticus", "table_size": 2, "rounds": 2, "clock": ONE_SECOND}
    resp = client.post("/v1/tournaments", json=terms | {"format": "swiss", "rated": True}, headers=auth(org_key))
    assert resp.status_code == 201, resp.get_json()
    tid = resp.get_json()["id"]
    invited = client.post(f"/v1/tournaments/{tid}/players", json={"handles": handles}, headers=auth(org_key))
    assert invited.status_code == 200 and invited.get_json()["players"] == [], invited.get_json()
    assert len(invited.get_json()["invitations"]) == 32
    # Without their consent nobody is registered: the tournament cannot start.
    refused = client.post(f"/v1/tournaments/{tid}/start", headers=auth(org_key))
    assert refused.status_code == 422 and refused.get_json()["error"]["code"] == "field_too_small"
    # With it: they accept, and then every game times out before anyone's first decision.
    accept_invitations(client, keys.values())
    assert client.post(f"/v1/tournaments/{tid}/start", headers=auth(org_key)).status_code == 200
    games = app.extensions["quarterdeck"].games
    reasons = []
    for n in (1, 2):
        work(ctx, tid)
        tables = client.get(f"/v1/tournaments/{tid}/rounds/{n}").get_json()["tables"]
        assert len(tables) == 16
        for table in tables:
            games.time_out(table["game_id"], now=LATER)
            reasons.append(unrated(client, ctx, table["game_id"]))
    work(ctx, tid)
    fold(ctx)
    assert reasons == ["no_first_decision"] * 32
    assert ratings(client, handles) == before == {"records": {h: [] for h in handles}, "listed": []}


# -- a ring of fresh accounts (docs/LEADERBOARDS.md, "Trust") ------------------------------------
class Clock:
    """The game service's "now", set by the test: days of games in a few seconds."""

    def __init__(self, start: str):
        self.at = datetime.fromisoformat(start).replace(tzinfo=UTC)

    def __call__(self) -> str:
        return self.at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def advance(self, **delta: float) -> None:
        self.at += timedelta(**delta)


def principal_of(app, key: str):
    from service.domain.identity import ACCOUNT, Principal

    return Principal(ACCOUNT, app.extensions["quarterdeck"].accounts.by_key(key))


def first_decisions_then_resign(app, gid: str, keys: dict[str, str], quitter: str, seed: int) -> None:
    """Legal intents (random, seeded) until every seat has made its first decision,
    then ``quitter`` resigns: a game that counts, won by the other seat."""
    import random

    from support import command_of

    games = app.extensions["quarterdeck"].games
    players = app.extensions["quarterdeck"].store.read(gid, upto=1)[0].data["players"]
    chooser = random.Random(seed)
    decided: set[int] = set()
    n = 0
    while decided != set(range(len(players))):
        loaded = games.load(gid)
        with loaded.lock:
            games.refresh(loaded)
            seat = chooser.choice(loaded.engine.to_act(loaded.state))
            command = chooser.choice(loaded.engine.legal(loaded.state, seat))
        games.submit(gid, None, command, None, None, f"{gid}-{n}", principal=principal_of(app, keys[players[seat]]))
        decided.add(seat)
        n += 1
    resign = command_of(games, gid, {"type": "resign"})
    games.submit(gid, None, resign, None, None, f"{gid}-resign", principal=principal_of(app, keys[quitter]))


def rated_pair_game(client, host_key: str, guest_key: str) -> str:
    table = client.post(
        "/v1/tables", json={"game": "nauticus", "seats": 2, "rated": True}, headers=auth(host_key)
    ).get_json()
    joined = client.post(f"/v1/tables/{table['id']}/join", headers=auth(guest_key))
    assert joined.status_code == 200, joined.get_json()
    return joined.get_json()["game_id"]


def bot_game(client, key: str, level: int) -> tuple[str, str]:
    """A rated two-seat Nauticus table of the player and the house bot of ``level``."""
    table = client.post(
        "/v1/tables", json={"game": "nauticus", "seats": 2, "rated": True}, headers=auth(key)
    ).get_json()
    started = client.post(f"/v1/tables/{table['id']}/bots", json={"level": level}, headers=auth(key))
    assert started.status_code == 200, started.get_json()
    body = started.get_json()
    return body["game_id"], next(p for p in body["players"] if p.startswith("nauticus-bot-"))


def test_a_ring_of_fresh_accounts_lists_none_of_its_members(app, client, ctx):
    """The probe's ring: a boss and five fresh puppets, three rated Nauticus games each, every
    puppet resigning after its first decision.  It counts (every seat decided), and lists
    nobody: nobody in it has an established opponent, so no rating moves either."""
    boss, boss_key = register(client, unique("boss"))
    puppets = dict(register(client, unique("puppet")) for _ in range(5))
    handles = [boss, *puppets]
    for i, (puppet, key) in enumerate(puppets.items()):
        for j in range(3):
            gid = rated_pair_game(client, boss_key, key)
            first_decisions_then_resign(app, gid, {boss: boss_key, puppet: key}, puppet, seed=10 * i + j)
            assert unrated(client, ctx, gid) is None  # it counts
    fold(ctx)
    after = ratings(client, handles)
    assert after["listed"] == []
    boss_rating = after["records"][boss][0]
    assert (boss_rating["games"], boss_rating["wins"], boss_rating["provisional"]) == (15, 15, True)
    # Games against no established opponent move no rating: the boss is where it started.
    assert boss_rating["rating"] == 0.0 and boss_rating["position"] is None
    # Live equals rebuild.
    before = {h: client.get(f"/v1/players/{h}").get_json() for h in handles}
    lb.consume(ctx.redis, ctx.store, rebuild=True)
    assert {h: client.get(f"/v1/players/{h}").get_json() for h in handles} == before


def test_a_player_who_beats_established_players_and_house_bots_is_listed(app, client, ctx, settings):
    """Trust is earned against established opponents over a day: house bots are established
    from the start; a player who beats three of them five times over more than a day is
    established, and one who beats it and the bots is listed as well."""
    from service.adapters.house_bots import HouseBots
    from service.domain import identity

    HouseBots(ctx.store.pool).provision(["nauticus"], [1, 2, 3], settings.bot_key_secret)
    games = app.extensions["quarterdeck"].games
    clock = Clock("2032-03-01T00:00:00")
    with_now, games.now = games.now, clock
    bot_keys = {h: identity.bot_key(settings.bot_key_secret, h) for h in (f"nauticus-bot-{n}" for n in (1, 2, 3))}

    def beat_the_bots(handle: str, key: str, levels: list[int]) -> None:
        for n, level in enumerate(levels):
            gid, bot = bot_game(client, key, level)
            first_decisions_then_resign(app, gid, {handle: key, bot: bot_keys[bot]}, bot, seed=n)
            clock.advance(hours=7)

    try:
        eve, eve_key = register(client, unique("eve"))
        ann, ann_key = register(client, unique("ann"))
        beat_the_bots(eve, eve_key, [1, 2, 3, 1, 2])  # five games, three bots, 28 hours
        fold(ctx)
        assert ratings(client, [eve])["listed"] == [eve]
        # Within the day, the same games do not list: Ann's first four are less than 24 hours.
        beat_the_bots(ann, ann_key, [1, 2, 3])
        gid = rated_pair_game(client, ann_key, eve_key)
        first_decisions_then_resign(app, gid, {ann: ann_key, eve: eve_key}, eve, seed=7)
        fold(ctx)
        assert ratings(client, [ann])["listed"] == []
        clock.advance(hours=4)
        beat_the_bots(ann, ann_key, [3])
    finally:
        games.now = with_now
    fold(ctx)
    page = client.get(f"/v1/players/{ann}").get_json()["ratings"][0]
    assert (page["games"], page["wins"], page["provisional"]) == (5, 5, False) and page["position"] is not None
    assert page["rating"] > 0.0
    assert ratings(client, [ann, eve])["listed"] == sorted([ann, eve])
    live = {h: client.get(f"/v1/players/{h}").get_json() for h in (ann, eve)}
    board = client.get("/v1/leaderboards/nauticus?limit=500").get_json()
    lb.consume(ctx.redis, ctx.store, rebuild=True)
    assert {h: client.get(f"/v1/players/{h}").get_json() for h in (ann, eve)} == live
    assert client.get("/v1/leaderboards/nauticus?limit=500").get_json() == board
