"""The worker (and with it the clocks' scheduler) is killed before a seat's deadline and comes
back after it: nothing is timed out while it is away, and once it is back the timeout is
written by itself, recorded at the deadline (not when it was written), and the audit passes."""

from __future__ import annotations

import json
import secrets
import time

import redis
import requests
from support.bots import equals_rebuild, store_for
from support.servers import stack, wait_until

from service.domain import clocks


def test_a_worker_down_across_a_deadline_writes_the_timeout_at_the_deadline_when_it_is_back():
    with stack("fault-admin-" + secrets.token_hex(8)) as st, store_for(st.pg.url()) as store:
        url = st.service.url
        body = {
            "game": "waters-of-nereus",
            "players": ["ann", "bob"],
            "clock": {"type": "fischer", "base_s": 2, "increment_s": 0},
        }
        created = requests.post(f"{url}/v1/games", json=body, timeout=10).json()
        gid = created["id"]
        board = requests.get(f"{url}/v1/games/{gid}", params={"min_version": created["version"]}, timeout=15).json()
        assert board["version"] == created["version"], "the worker did not project the new game"
        (seat,) = board["to_act"]
        deadline = board["clock"]["deadline"][str(seat)]
        (worker,) = st.service.workers
        st.service.kill_worker(worker)
        # Well past the deadline with no worker: nothing can write the timeout.
        late = clocks.to_us(deadline) / 1_000_000 + 3 - time.time()
        time.sleep(max(late, 0))
        assert store.version(gid) == created["version"]
        assert requests.get(f"{url}/v1/games/{gid}", timeout=10).json()["status"] == "active"
        came_back = clocks.to_iso(round(time.time() * 1_000_000))
        st.service.start_worker()
        wait_until(lambda: store.read(gid)[-1].type == "GameFinished", 30, "the timeout after the restart")
        events = store.read(gid)
        (timed_out,) = [e for e in events if e.type == "SeatTimedOut"]
        assert timed_out.data == {"seat": seat, "deadline": deadline}
        assert timed_out.meta["received_at"] == deadline < came_back  # the deadline, not the restart
        result = events[-1].data["result"]
        assert result["reason"] == "forfeit" and result["ranking"] == [1 - seat, seat]
        wait_until(
            lambda: requests.get(f"{url}/v1/games/{gid}", timeout=10).json()["status"] == "finished", 30, "projection"
        )
        report = requests.get(f"{url}/v1/games/{gid}/audit", timeout=30).json()
        assert report["ok"] is True, json.dumps(report)[:2000]
        r = redis.Redis.from_url(st.redis.url())
        assert equals_rebuild(r, store, gid)
        r.close()
