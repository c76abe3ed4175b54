"""House bots against real PostgreSQL and Redis (docs/BOTS.md "House bots",
docs/API.md "House bots"): provisioning, ``GET /v1/bots``, seating a bot at a
table and by handle, the reserved handles, and the bot worker acting through
the command path: once per turn, however often its job is delivered and however
many workers run it."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest
from rq import Queue
from support import auth
from support.accounts import accept_invitations, organiser, register, unique

from projections import keys
from projections.runner import project_game
from service.adapters.house_bots import HouseBots, levels
from service.bootstrap import fair_line, pending_turns
from service.domain import identity
from service.games import registry
from workers import bots as bot_worker


@pytest.fixture(scope="module")
def house(ctx, settings) -> dict[tuple[str, int], str]:
    """The house bots, provisioned as ``make bots`` does (a bot of each level per seat):
    ``{(game, level): handle}`` of the first of each."""
    seats = {game: registry.get(game).max_players for game in registry.names()}
    made = HouseBots(ctx.store.pool).provision(registry.names(), levels(), settings.bot_key_secret, seats)
    return {(b.game, b.level): b.handle for b in made if b.instance == 1}


def project(ctx, gid: str) -> dict:
    project_game(ctx.redis, ctx.store, gid)
    version, status, to_act = ctx.redis.hmget(keys.game(gid), ["version", "status", "to_act"])
    return {"version": int(version), "status": status.decode(), "to_act": json.loads(to_act)}


#: The person's choices: random, seeded (the first legal intent can go round in a circle for
#: ever in Waters of Nereus: docs/BOTS.md, "The Python SDK").
_PERSON = random.Random(34)


def play_a_legal(client, gid: str, key: str, version: int) -> None:
    legal = client.get(f"/v1/games/{gid}/legal?min_version={version}", headers=auth(key)).get_json()
    intent = _PERSON.choice([i for i in legal["intents"] if i["type"] != "resign"])
    resp = client.post(
        f"/v1/games/{gid}/intents", json={"intent": intent, "expected_version": legal["version"]}, headers=auth(key)
    )
    assert resp.status_code == 201, resp.get_json()


def play_until_to_act(client, ctx, gid: str, key: str, seat: int, state: dict) -> dict:
    """The person plays (each intent projected, which announces the bot's turn on its
    account channel) until ``seat`` is to act, 100 intents at most; the state then."""
    for _ in range(100):
        if seat in state["to_act"]:
            break
        play_a_legal(client, gid, key, state["version"])
        state = project(ctx, gid)
    return state


def bot_decisions(ctx, gid: str, seat: int, after: int) -> int:
    """The decisions recorded for ``seat`` after version ``after`` (one intent id each)."""
    return len({e.meta["intent_id"] for e in ctx.store.read(gid, after=after) if e.meta.get("seat") == seat})


# -- provisioning and listing ---------------------------------------------------------------
def test_provisioning_is_idempotent_and_keys_come_from_the_secret(ctx, settings, house):
    """docs/BOTS.md "House bots": one account of kind bot per game and level; again is a no-op."""
    store = HouseBots(ctx.store.pool)
    again = store.provision(registry.names(), levels(), settings.bot_key_secret)
    assert {(b.game, b.level): b.handle for b in again} == house
    assert len(house) == len(registry.names()) * len(levels()) >= 9
    for handle in house.values():
        assert len(handle) <= 24 and identity.reserved_handle(handle)
    handle = house["nauticus", 2]
    assert handle == "nauticus-bot-2"
    from service.adapters.accounts import AccountStore

    accounts = AccountStore(ctx.store.pool)
    found = accounts.by_key(identity.bot_key(settings.bot_key_secret, handle))
    assert found is not None and found.handle == handle and found.kind == "bot"
    # Another secret re-keys every bot: the old keys stop at once.
    store.provision(["nauticus"], [2], "another secret")
    assert accounts.by_key(identity.bot_key(settings.bot_key_secret, handle)) is None
    assert accounts.by_key(identity.bot_key("another secret", handle)) is not None
    store.provision(registry.names(), levels(), settings.bot_key_secret)
    assert accounts.by_key(identity.bot_key(settings.bot_key_secret, handle)) is not None


def test_get_bots_lists_every_bot_with_budget_and_rating(client, house):
    """docs/API.md "House bots": ``GET /v1/bots``."""
    from service.bots import LEVELS

    resp = client.get("/v1/bots")
    assert resp.status_code == 200
    listed = {(b["game"], b["level"]): b for b in resp.get_json()["bots"]}
    assert set(listed) == set(house)
    for (game, level), bot in listed.items():
        assert bot["handle"] == house[game, level]
        assert bot["budget_ms"] == round(LEVELS[level].budget_s * 1000)
        assert bot["rating"] is None or isinstance(bot["rating"], float)


def test_nobody_registers_a_house_bots_handle(client):
    """A handle of the bots' form is reserved for them (409 handle_reserved)."""
    for handle in ["nauticus-bot-7", "Waters-of-Nereus-bot-1", f"x{unique('')[:6]}-bot-12"]:
        resp = client.post("/v1/accounts", json={"handle": handle})
        assert resp.status_code == 409 and resp.get_json()["error"]["code"] == "handle_reserved", handle
    assert client.post("/v1/accounts", json={"handle": unique("robot")}).status_code == 201


# -- seating ---------------------------------------------------------------------------------
def test_the_owner_seats_bots_and_the_last_one_starts_the_game(client, ctx, house):
    """docs/API.md "House bots": ``POST /v1/tables/{id}/bots``; the seat that fills the table starts it."""
    ann, key = register(client)
    table = client.post(
        "/v1/tables", json={"game": "waters-of-nereus", "seats": 3, "rated": True}, headers=auth(key)
    ).get_json()
    tid = table["id"]
    first = client.post(f"/v1/tables/{tid}/bots", json={"level": 1}, headers=auth(key))
    assert first.status_code == 200 and first.get_json()["status"] == "open"
    assert first.get_json()["players"] == [ann, house["waters-of-nereus", 1]]
    full = client.post(f"/v1/tables/{tid}/bots", json={"level": 2}, headers=auth(key))
    body = full.get_json()
    assert full.status_code == 200 and body["status"] == "started" and body["game_id"]
    project(ctx, body["game_id"])
    game = client.get(f"/v1/games/{body['game_id']}").get_json()
    assert game["rated"] is True
    assert sorted(game["players"]) == sorted([ann, house["waters-of-nereus", 1], house["waters-of-nereus", 2]])


def test_only_the_owner_or_its_organiser_seats_a_bot(client, settings, house):
    _, owner = register(client)
    _, stranger = register(client)
    tid = client.post("/v1/tables", json={"game": "nauticus", "seats": 3}, headers=auth(owner)).get_json()["id"]
    refused = client.post(f"/v1/tables/{tid}/bots", json={"level": 1}, headers=auth(stranger))
    assert refused.status_code == 403 and refused.get_json()["error"]["code"] == "not_your_table"
    nobody = client.post(f"/v1/tables/{tid}/bots", json={"level": 1})
    assert nobody.status_code == 401
    missing = client.post(f"/v1/tables/{tid}/bots", json={"level": 9}, headers=auth(owner))
    assert missing.status_code == 404 and missing.get_json()["error"]["code"] == "bot_not_found"
    bad = client.post(f"/v1/tables/{tid}/bots", json={"level": "2"}, headers=auth(owner))
    assert bad.status_code == 422
    # An organiser's table for players: its organiser seats bots.
    _, org = organiser(client, settings)
    otid = client.post(
        "/v1/tables", json={"game": "nauticus", "seats": 2, "join": False}, headers=auth(org)
    ).get_json()["id"]
    seated = client.post(f"/v1/tables/{otid}/bots", json={"level": 3}, headers=auth(org))
    assert seated.status_code == 200 and seated.get_json()["players"] == [house["nauticus", 3]]


def test_a_table_its_players_left_closes_whatever_bots_sit_at_it(client, ctx, house):
    """A player's table with nobody but bots at it is closed: bots cannot keep tables open (the
    owner's open-tables cap stops counting a table it left)."""
    _, key = register(client)
    tid = client.post("/v1/tables", json={"game": "nauticus", "seats": 3}, headers=auth(key)).get_json()["id"]
    client.post(f"/v1/tables/{tid}/bots", json={"level": 1}, headers=auth(key))
    left = client.post(f"/v1/tables/{tid}/leave", headers=auth(key))
    assert left.status_code == 200 and left.get_json()["status"] == "closed"


def test_an_organiser_seats_bots_by_handle_and_tournaments_register_them(client, settings, house):
    """docs/API.md "House bots": ``POST /v1/games`` (organiser) accepts bots' handles."""
    ann, _ = register(client)
    _, org = organiser(client, settings)
    resp = client.post(
        "/v1/games",
        json={"game": "nauticus", "players": [ann, house["nauticus", 1]], "accounts": True},
        headers=auth(org),
    )
    assert resp.status_code == 201, resp.get_json()
    t = client.post(
        "/v1/tournaments",
        json={"name": "Bots Cup", "game": "nauticus", "table_size": 2, "format": "swiss", "rounds": 1},
        headers=auth(org),
    ).get_json()
    reg = client.post(f"/v1/tournaments/{t['id']}/players", json={"handles": [house["nauticus", 2]]}, headers=auth(org))
    assert reg.status_code == 200, reg.get_json()
    assert house["nauticus", 2] in reg.get_json()["players"]


# -- acting ----------------------------------------------------------------------------------
def _bot_game(client, settings, house, game: str = "nauticus", level: int = 1) -> tuple[str, str, str, int]:
    """A game of a player (seat 0) against a house bot (seat 1): ``(game_id, player key, bot, bot seat)``."""
    ann, key = register(client)
    _, org = organiser(client, settings)
    bot = house[game, level]
    resp = client.post("/v1/games", json={"game": game, "players": [ann, bot], "accounts": True}, headers=auth(org))
    assert resp.status_code == 201, resp.get_json()
    accept_invitations(client, [key])  # the person consents; the house bot needs no invitation
    return resp.get_json()["id"], key, bot, 1


def test_two_workers_and_redelivery_never_make_a_bot_act_twice(client, ctx, settings, house):
    """docs/BOTS.md "House bots": the same job delivered twice to each of two workers at once
    records one decision; the bot plays every turn of a whole game that way."""
    gid, key, bot, seat = _bot_game(client, settings, house)
    workers = [bot_worker.Actor(ctx), bot_worker.Actor(ctx)]  # two command caches: two processes
    turns = consecutive = 0
    state = project(ctx, gid)
    for _ in range(5000):
        if state["status"] != "active":
            break
        before = state["version"]
        acted = seat in state["to_act"]
        if acted:
            turns += 1
            outcomes: list[str] = []

            def run(actor: bot_worker.Actor, outcomes: list[str]) -> None:
                for _ in range(2):  # delivered twice to each worker
                    outcomes.append(actor.act(gid, bot).action)

            threads = [threading.Thread(target=run, args=(w, outcomes)) for w in workers]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert bot_decisions(ctx, gid, seat, before) == 1, outcomes
            assert outcomes.count("posted") == 1, outcomes
        else:
            play_a_legal(client, gid, key, before)
        state = project(ctx, gid)
        consecutive += acted and seat in state["to_act"] and state["status"] == "active"
    assert state["status"] == "finished"
    assert turns > 5
    # The test means something only if the bot was, at times, to act again right after acting:
    # then a second delivery at the old version would have been a second decision.
    assert consecutive > 0


def test_jobs_for_finished_games_are_dropped_and_one_waits_per_turn(client, ctx, settings, house):
    """The queue cannot grow without bound: one job waits per (game, bot); a finished game's does nothing."""
    gid, key, bot, seat = _bot_game(client, settings, house)
    queue = Queue(f"bots-test-{unique('')}", connection=ctx.redis)
    assert bot_worker.request_turn(ctx, queue, gid, bot, queue_max=10)
    assert not bot_worker.request_turn(ctx, queue, gid, bot, queue_max=10)
    assert queue.count == 1
    other, _, _, _ = _bot_game(client, settings, house)
    assert not bot_worker.request_turn(ctx, queue, other, bot, queue_max=1)  # at the cap
    queue.empty()
    pending_turns(ctx).unmark(gid, bot)
    # Aborted: the job finds the game over and posts nothing.
    project(ctx, gid)
    aborted = client.post(f"/v1/games/{gid}/abort", json={"reason": "test"}, headers=auth(settings.admin_token))
    assert aborted.status_code == 200
    state = project(ctx, gid)
    assert state["status"] == "finished"
    assert bot_worker.Actor(ctx).act(gid, bot).action == "finished"
    # The job itself (what RQ runs) counts its outcome in /metrics.
    from workers import metrics

    finished = metrics.BOT_JOBS.labels("finished")
    before = finished._value.get()
    assert bot_worker.act(gid, bot) == "finished"
    assert finished._value.get() == before + 1
    assert bot_decisions(ctx, gid, seat, 0) == 0


def test_a_bot_hears_its_turn_on_its_account_stream(client, ctx, settings, house):
    """The worker learns of a turn from the account's channel, as an account stream does."""
    gid, key, bot, seat = _bot_game(client, settings, house)
    queue = Queue(f"bots-test-{unique('')}", connection=ctx.redis)
    listener = bot_worker.Listener(ctx, queue)
    pubsub = ctx.redis.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(bot_worker.publish.account_channel(bot))
    try:
        state = project(ctx, gid)
        state = play_until_to_act(client, ctx, gid, key, seat, state)
        heard, quiet_until = 0, time.monotonic() + 2.0
        while time.monotonic() < quiet_until:
            message = pubsub.get_message(timeout=0.2)
            # The house accounts are shared by every test and a channel is the whole server's: a
            # parallel test's game of the same bot announces here too.  Only this game counts.
            if message is not None and json.loads(message["data"]).get("game_id") == str(gid):
                heard += listener.heard(message["channel"], message["data"])
    finally:
        pubsub.close()
    assert heard == 1 and queue.count == 1
    # The job takes the next turn of the fair line: this one.
    assert queue.jobs[0].args == (queue.name,)
    assert fair_line(queue).pop() == (gid, bot)
    # The resync finds the same turn, already waiting: nothing more is queued.
    assert listener.resync([bot]) == 0 and queue.count == 1
    pending_turns(ctx).unmark(gid, bot)
    assert listener.resync([bot]) == 1
    queue.empty()


def test_the_listener_hears_a_turn_on_its_subscription(client, ctx, settings, house):
    """workers/bots.py ``Listener.run``: subscribed to the bot's account channel (through the
    live hub's pub/sub, ``service/adapters/announcements.py``), it enqueues a turn announced
    after its first resync, long before the next one."""
    import copy

    gid, key, bot, seat = _bot_game(client, settings, house)
    state = project(ctx, gid)
    while seat in state["to_act"]:  # the bot's turn must come after the first resync
        assert bot_worker.Actor(ctx).act(gid, bot).action == "posted"
        state = project(ctx, gid)
    queue = Queue(f"bots-test-{unique('')}", connection=ctx.redis)
    quiet = copy.copy(ctx)
    quiet.settings = settings.with_(bot_resync_seconds=600.0)
    listener = bot_worker.Listener(quiet, queue)
    listener.handles = lambda: [bot]  # type: ignore[method-assign]
    resynced = threading.Event()
    first_resync = listener.resync

    def resync(handles: list[str]) -> int:
        n = first_resync(handles)
        resynced.set()
        return n

    listener.resync = resync  # type: ignore[method-assign]
    stop = threading.Event()
    thread = threading.Thread(target=listener.run, args=(stop,), daemon=True)
    thread.start()
    marks = pending_turns(ctx)
    try:
        assert resynced.wait(10)
        assert not ctx.redis.exists(marks.key(gid, bot))
        state = play_until_to_act(client, ctx, gid, key, seat, state)
        assert seat in state["to_act"]
        heard_by = time.monotonic() + 5.0
        while not ctx.redis.exists(marks.key(gid, bot)):
            assert time.monotonic() < heard_by, "the listener did not hear the bot's turn"
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
    waiting = []
    fair = fair_line(queue)
    while (turn := fair.pop()) is not None:
        waiting.append(turn)
        marks.unmark(*turn)
    queue.empty()
    assert (gid, bot) in waiting


def test_the_resync_reads_the_turns_past_the_first_page(ctx):
    """workers/bots.py ``turns_now`` (``service.views.turns_now``, read 100 games at a time):
    the bot's turns among its 250 newest active games, newest first, ``limit`` at most."""
    bot, person = unique("nauticus-bot-"), unique("ann")
    listed = keys.games_list({"player": bot, "status": "active"})
    ids = [unique("g") for _ in range(250)]
    for i, gid in enumerate(ids):
        info = {"id": gid, "game": "nauticus", "players": [person, bot], "accounts": [True, True]}
        ctx.redis.zadd(listed, {gid: i})
        ctx.redis.hset(
            keys.game(gid),
            mapping={
                "info": json.dumps(info | {"created_at": "2026-01-01T00:00:00Z"}),
                "status": "active",
                "version": "1",
                "to_act": json.dumps([1] if i % 3 == 0 else [0]),
            },
        )
    newest_first = ids[::-1]
    mine = [gid for gid in newest_first if ids.index(gid) % 3 == 0]
    try:
        assert list(bot_worker.turns_now(ctx, bot)) == mine and len(mine) == 84
        assert list(bot_worker.turns_now(ctx, bot, limit=150)) == [g for g in mine if g in newest_first[:150]]
    finally:
        ctx.redis.delete(listed, *(keys.game(gid) for gid in ids))


def test_a_bots_intents_count_in_its_keys_rate_limit(client, ctx, settings, house, monkeypatch):
    """Every limit that binds a player binds a bot: its intents count in its key's budget
    (docs/API.md "Rate limits"), and over it the job fails (RQ retries it later)."""
    from service.bootstrap import rate_limits
    from service.http.limits import RateLimited

    limited = settings.with_(rate_limits=True, limit_intents_key="2/minute", limit_intents="1000/second")
    monkeypatch.setattr(bot_worker, "LIMIT_WAIT", 0.2)
    gid, key, bot, seat = _bot_game(client, settings, house)
    actor = bot_worker.Actor(ctx)
    actor.limits = rate_limits(limited, prefix=f"qd:rl:test:{unique('')}")
    posted, limited_seen = 0, False
    state = project(ctx, gid)
    for _ in range(100):
        if seat in state["to_act"]:
            if posted == 2:
                with pytest.raises(RateLimited):
                    actor.act(gid, bot)
                limited_seen = True
                break
            assert actor.act(gid, bot).action == "posted"
            posted += 1
        else:
            play_a_legal(client, gid, key, state["version"])
        state = project(ctx, gid)
    assert limited_seen and posted == 2 and bot_decisions(ctx, gid, seat, 0) == 2


class _Recording:
    """A Redis client that notes every field of a hash read through it."""

    def __init__(self, r):
        self.r, self.fields = r, set()

    def hget(self, key, name):
        self.fields.add(name)
        return self.r.hget(key, name)

    def hmget(self, key, names):
        self.fields.update(names)
        return self.r.hmget(key, names)

    def __getattr__(self, name):
        return getattr(self.r, name)


def test_a_bot_sees_exactly_what_its_key_sees_and_logs_none_of_it(client, ctx, settings, house, monkeypatch, caplog):
    """docs/BOTS.md "House bots": the worker feeds the bot its seat's board and legal
    intents as the API serves them to the bot's key, reads no other seat's view nor the
    engine's state (Waters of Nereus: hidden hands), and logs neither."""
    import copy

    gid, key, bot, seat = _bot_game(client, settings, house, game="waters-of-nereus", level=1)
    bot_key = identity.bot_key(settings.bot_key_secret, bot)
    seen: list[tuple[dict, list]] = []
    real_choose = bot_worker._choose

    def spy(b, s, board, legal, seed):
        seen.append((board, legal))
        return real_choose(b, s, board, legal, seed)

    monkeypatch.setattr(bot_worker, "_choose", spy)
    actor = bot_worker.Actor(ctx)
    actor.ctx = copy.copy(ctx)
    actor.ctx.redis = recording = _Recording(ctx.redis)
    allowed = {"info", "version", "status", "to_act", "result", "clock", f"view:{seat}", f"legal:{seat}"}
    caplog.set_level("INFO", logger="workers")
    acted = 0
    state = project(ctx, gid)
    for _ in range(2000):
        if state["status"] != "active" or acted == 12:
            break
        if seat in state["to_act"]:
            api_board = client.get(f"/v1/games/{gid}", headers=auth(bot_key)).get_json()
            api_legal = client.get(f"/v1/games/{gid}/legal", headers=auth(bot_key)).get_json()["intents"]
            assert actor.act(gid, bot).action == "posted"
            board, legal = seen[-1]
            assert board == api_board
            assert legal == [i for i in api_legal if i["type"] != "resign"]
            acted += 1
        else:
            play_a_legal(client, gid, key, state["version"])
        state = project(ctx, gid)
    assert acted == 12 and recording.fields <= allowed, recording.fields - allowed
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("workers"))
    for board, legal in seen:
        for intent in legal:
            assert json.dumps(intent) not in logged and str(intent) not in logged
        assert json.dumps(board["view"])[:40] not in logged


def test_two_bot_worker_processes_given_the_same_job_twice_act_once(client, ctx, settings, house):
    """docs/BOTS.md "House bots": two ``python -m workers.bots`` processes, the job queued twice."""
    import subprocess
    import sys

    from rq.registry import FailedJobRegistry
    from support.live import ROOT, service_env

    gid, key, bot, seat = _bot_game(client, settings, house, level=3)
    state = project(ctx, gid)
    state = play_until_to_act(client, ctx, gid, key, seat, state)
    name = f"bots-test-{unique('')}"
    queue = Queue(name, connection=ctx.redis)
    for _ in range(2):
        queue.enqueue(bot_worker.ACT_JOB, gid, bot)
    env = service_env(settings, QD_BOT_QUEUE=name, QD_LOG_LEVEL="WARNING")
    procs = [subprocess.Popen([sys.executable, "-m", "workers.bots", "--burst"], cwd=ROOT, env=env) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert bot_decisions(ctx, gid, seat, state["version"]) == 1
    assert queue.count == 0 and FailedJobRegistry(name, connection=ctx.redis).count == 0


# -- what bots cost ----------------------------------------------------------------------------
def _table_of_bots(client, key: str, game: str, seats: int, levels_: list[int]) -> dict:
    tid = client.post("/v1/tables", json={"game": game, "seats": seats, "rated": True}, headers=auth(key)).get_json()
    body: dict = {}
    for level in levels_:
        resp = client.post(f"/v1/tables/{tid['id']}/bots", json={"level": level}, headers=auth(key))
        assert resp.status_code == 200, resp.get_json()
        body = resp.get_json()
    return body


def test_a_table_fills_with_bots_of_one_level_and_ends_when_its_person_resigns(client, ctx, house):
    """docs/BOTS.md "House bots": a table seats bots of one level up to the game's most seats
    (each its own account); once no person plays, the game ends at once, and the audit re-makes it."""
    ann, key = register(client)
    seats = registry.get("nautilus-industries").max_players
    started = _table_of_bots(client, key, "nautilus-industries", seats, [1] * (seats - 1))
    assert started["status"] == "started", started
    bots = [p for p in started["players"] if p != ann]
    assert len(set(bots)) == seats - 1 and all(identity.reserved_handle(b) for b in bots)
    assert house["nautilus-industries", 1] in bots and "nautilus-ind-bot-1-2" in bots
    gid = started["game_id"]
    project(ctx, gid)
    resigned = client.post(f"/v1/games/{gid}/intents", json={"intent": {"type": "resign"}}, headers=auth(key))
    assert resigned.status_code == 201, resigned.get_json()
    project(ctx, gid)
    game = client.get(f"/v1/games/{gid}").get_json()
    result = game["result"]
    assert game["status"] == "finished" and result["reason"] == "forfeit", result
    me = game["players"].index(ann)
    # The bots still playing share first place; the person who left ranks last.
    assert result["ranking"][-1] == me and result["forfeited"] == [me]
    assert {result["ranks"][str(s)] for s in range(seats) if s != me} == {1} and result["ranks"][str(me)] == seats
    report = client.get(f"/v1/games/{gid}/audit").get_json()
    assert report["ok"] is True, report


def test_a_game_of_people_and_bots_goes_on_while_a_person_plays(client, ctx, settings, house):
    """Only the last person leaving ends it: two people and a bot, one person resigns, the game goes on."""
    ann, ann_key = register(client)
    bob, bob_key = register(client)
    table = client.post(
        "/v1/tables", json={"game": "nauticus", "seats": 3, "rated": True}, headers=auth(ann_key)
    ).get_json()
    assert client.post(f"/v1/tables/{table['id']}/bots", json={"level": 1}, headers=auth(ann_key)).status_code == 200
    started = client.post(f"/v1/tables/{table['id']}/join", headers=auth(bob_key)).get_json()
    gid = started["game_id"]
    project(ctx, gid)
    resigned = client.post(f"/v1/games/{gid}/intents", json={"intent": {"type": "resign"}}, headers=auth(ann_key))
    assert resigned.status_code == 201
    assert project(ctx, gid)["status"] == "active"
    resigned = client.post(f"/v1/games/{gid}/intents", json={"intent": {"type": "resign"}}, headers=auth(bob_key))
    assert resigned.status_code == 201
    project(ctx, gid)
    game = client.get(f"/v1/games/{gid}").get_json()
    assert game["status"] == "finished" and game["result"]["reason"] == "forfeit"
    assert game["players"][game["result"]["ranking"][0]] == house["nauticus", 1]


def test_an_account_has_a_bounded_number_of_unfinished_tables_with_bots(client, ctx, settings, house):
    """docs/API.md "House bots": ``409 too_many_bot_games`` beyond ``QD_MAX_BOT_GAMES``; a game
    that ends frees its place."""
    _, key = register(client)
    cap = settings.max_bot_games
    games = [_table_of_bots(client, key, "nauticus", 2, [1])["game_id"] for _ in range(cap)]
    tid = client.post("/v1/tables", json={"game": "nauticus", "seats": 2}, headers=auth(key)).get_json()["id"]
    refused = client.post(f"/v1/tables/{tid}/bots", json={"level": 1}, headers=auth(key))
    assert refused.status_code == 409 and refused.get_json()["error"]["code"] == "too_many_bot_games"
    assert refused.get_json()["error"]["details"] == {"bot_games": cap, "limit": cap}
    project(ctx, games[0])
    assert client.post(f"/v1/games/{games[0]}/intents", json={"intent": {"type": "resign"}}, headers=auth(key))
    seated = client.post(f"/v1/tables/{tid}/bots", json={"level": 1}, headers=auth(key))
    assert seated.status_code == 200 and seated.get_json()["status"] == "started"


def test_a_bots_intents_count_in_qd_intents_total(client, ctx, settings, house):
    """/metrics: a house bot's accepted intent counts as any client's does."""
    from service import metrics

    gid, key, bot, seat = _bot_game(client, settings, house)
    state = project(ctx, gid)
    state = play_until_to_act(client, ctx, gid, key, seat, state)
    accepted = metrics.INTENTS.labels("accepted", "ok")
    before = accepted._value.get()
    assert bot_worker.Actor(ctx).act(gid, bot).action == "posted"
    assert accepted._value.get() == before + 1


def test_the_bots_serve_accounts_round_robin(ctx):
    """service/adapters/bot_turns.py ``FairLine``: one account's many turns never starve another's."""
    queue = Queue(f"bots-test-{unique('')}", connection=ctx.redis)
    fair = fair_line(queue)
    for i in range(20):
        fair.push("flood", f"g{i}", "nauticus-bot-1")
    fair.push("other", "mine", "nauticus-bot-1")
    order = [fair.pop() for _ in range(21)]
    assert order[1] == ("mine", "nauticus-bot-1")
    assert order[0] == ("g0", "nauticus-bot-1") and order[2:] == [(f"g{i}", "nauticus-bot-1") for i in range(1, 20)]
    assert fair.pop() is None
