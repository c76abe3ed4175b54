"""Redis stopped for a while and restarted empty, with intents accepted
meanwhile.

Policy under test (docs/RELIABILITY.md, "Policies under test"): the command path never needs Redis,
so intents and game creation keep committing (201) while it is away; queries
are answered from Redis, so they fail clean with 503 ``redis_unavailable``.
Once Redis is back, empty, the worker's periodic sweep projects every game
again without any manual step."""

from __future__ import annotations

import random
import secrets
import time

import redis
import requests
from support.bots import advance, assert_logs_clean, auth, create, equals_rebuild, store_for
from support.servers import stack, wait_until

from service.games import registry


def _version(url: str, gid: str) -> int:
    resp = requests.get(f"{url}/v1/games/{gid}", timeout=10)
    return resp.json()["version"] if resp.status_code == 200 else -1


def test_redis_outage_intents_commit_queries_503_then_catch_up():
    admin = "fault-admin-" + secrets.token_hex(8)
    # DEBUG: the most the processes will ever log, checked for secrets at the end.
    with stack(admin, QD_LOG_LEVEL="DEBUG") as st, store_for(st.pg.url()) as store:
        url = st.service.url
        rng = random.Random(7)
        games = [create(url, name) for name in registry.names()]
        for g in games:
            advance(url, store, g, 5, rng)
        wait_until(lambda: all(_version(url, g["id"]) == store.version(g["id"]) for g in games), 30, "projection")

        with redis.Redis.from_url(st.redis.url()) as before:
            old_run = before.info("server")["run_id"]
        st.redis.kill()
        down_started = time.monotonic()
        accepted = sum(advance(url, store, g, 4, rng) for g in games)
        assert accepted == 4 * len(games)
        late = create(url, registry.names()[0])  # creating needs no Redis either
        games.append(late)
        advance(url, store, late, 2, rng)

        gid = games[0]["id"]
        token = games[0]["seats"][0]["token"]
        for path, headers in [
            (f"/v1/games/{gid}", {}),
            (f"/v1/games/{gid}/legal", auth(token)),
            ("/v1/games", {}),
        ]:
            resp = requests.get(url + path, headers=headers, timeout=10)
            assert resp.status_code == 503, (path, resp.status_code, resp.text)
            assert resp.json()["error"]["code"] == "redis_unavailable"
        ready = requests.get(url + "/readyz", timeout=10)
        assert ready.status_code == 503 and ready.json()["checks"]["postgres"] == "ok"
        time.sleep(max(0.0, 3 - (time.monotonic() - down_started)))  # stay down a while

        st.redis.start()  # same port, empty: nothing was saved
        r = redis.Redis.from_url(st.redis.url())
        assert r.info("server")["run_id"] != old_run  # a new, empty server (it saves nothing)
        heads = {g["id"]: store.version(g["id"]) for g in games}
        # No manual step: the worker reconnects and its sweep projects everything.
        wait_until(lambda: all(int(r.hget(f"g:{{{g}}}", "version") or 0) == h for g, h in heads.items()), 60, "sweep")
        for g, head in heads.items():
            assert _version(url, g) == head
            assert equals_rebuild(r, store, g), g
        listed = requests.get(url + "/v1/games", timeout=10).json()
        assert {x["id"] for x in listed["games"]} == set(heads)
        # And play goes on through the read side again.
        legal = requests.get(f"{url}/v1/games/{gid}/legal", headers=auth(token), timeout=10)
        assert legal.status_code == 200
        r.close()
        tokens = [s["token"] for g in games for s in g["seats"]]
        assert_logs_clean(st.service.log_text(), st.pg.url(), [*tokens, admin])
