"""Redis restarted (empty) while 500 streams are open, and the API restarted
while streams and live feeds are open.

Policy under test (docs/API.md "Streams"; docs/RELIABILITY.md): the push
behind every stream is Redis pub/sub, which loses what is published while a
subscriber is away.  So each API process re-reads every watched game when its
subscription comes back, and every stream carries on from there: it ends
cleanly or carries on, never skips back, and its last board is the game's
head.  The API keeps answering meanwhile (intents need no Redis).  A
stopping API ends each stream and feed with a line to resume from; a client
that reconnects misses nothing."""

from __future__ import annotations

import json
import random
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import requests
from support.bots import advance, create, store_for
from support.servers import ROOT, stack, wait_until

ENV = {
    "QD_RATE_LIMITS": "off",  # 500 streams from one address: measure the server, not the abuse limits
    "QD_STREAM_PING_SECONDS": "1",
    "QD_STREAMS_PER_ADDRESS": "1000",
}


def _head_projected(st: Any, store: Any, gid: str) -> bool:
    resp = requests.get(f"{st.service.url}/v1/games/{gid}", timeout=10)
    return resp.status_code == 200 and resp.json()["version"] == store.version(gid)


def test_redis_restarted_under_500_streams(tmp_path: Path):
    admin = "fault-admin-" + secrets.token_hex(8)
    with stack(admin, api=False, **ENV) as st, store_for(st.pg.url()) as store:
        st.service.start_shipped_api()
        url = st.service.url
        rng = random.Random(16)
        games = [create(url, "nautilus-industries") for _ in range(10)]
        for g in games:
            advance(url, store, g, 3, rng)
        wait_until(lambda: all(_head_projected(st, store, g["id"]) for g in games), 30, "projection")
        out = tmp_path / "followers.json"
        argv = [sys.executable, "-m", "scripts.bench.followers", "--url", url, "--out", str(out)]
        argv += ["--games", ",".join(g["id"] for g in games), "--streams", "500", "--seconds", "120"]
        followers = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        try:
            assert followers.stdout is not None
            assert followers.stdout.readline().strip() == "ready"
            for g in games:
                advance(url, store, g, 2, rng)
            time.sleep(1.0)

            st.redis.kill()
            # The API keeps answering: health, and intents (the command path needs no Redis).
            health = []
            for g in games:
                t0 = time.perf_counter()
                assert requests.get(url + "/healthz", timeout=10).status_code == 200
                health.append(time.perf_counter() - t0)
                assert advance(url, store, g, 2, rng) == 2
            time.sleep(2.0)
            st.redis.start()  # same port, empty

            # Back: the worker's sweep projects every game again, the API's
            # subscriptions come back, and the streams carry on.
            for g in games:
                advance(url, store, g, 2, rng)
            heads = {g["id"]: store.version(g["id"]) for g in games}
            wait_until(lambda: all(_head_projected(st, store, gid) for gid in heads), 60, "projection after restart")
            time.sleep(3.0)  # the streams' last lines
        finally:
            if followers.poll() is None:
                followers.send_signal(signal.SIGTERM)
            followers.wait(60)
    assert max(health) < 1.0, health
    seen = json.loads(out.read_text())
    assert seen["connected"] == 500
    for f in seen["streams"]:
        versions = [v for v, _ in f["boards"]]
        assert f["status"] == 200 and f["error"] is None, f
        # It ended cleanly (a final line), or it is still going; never cut, never back.
        assert f["end"] in (None, "finished", "max_duration", "idle", "shutdown"), f
        assert versions == sorted(set(versions)), f["game"]
        # And it missed nothing that matters: its last board is the head.
        assert versions[-1] == heads[f["game"]], (f["game"], versions[-3:], heads[f["game"]])


class _Lines(threading.Thread):
    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.lines: list[dict[str, Any]] = []
        self.started = threading.Event()

    def run(self) -> None:
        with requests.get(self.url, stream=True, timeout=60) as resp:
            for raw in resp.iter_lines():
                if raw:
                    self.lines.append(json.loads(raw))
                    self.started.set()


def test_a_restarted_api_ends_streams_and_feeds_where_they_can_resume(tmp_path: Path):
    admin = "fault-admin-" + secrets.token_hex(8)
    with stack(admin, api=False, **ENV) as st, store_for(st.pg.url()) as store:
        st.service.start_shipped_api()
        url = st.service.url
        rng = random.Random(7)
        game = create(url, "nauticus")
        gid = game["id"]
        advance(url, store, game, 3, rng)
        wait_until(lambda: _head_projected(st, store, gid), 30, "projection")
        stream = _Lines(f"{url}/v1/games/{gid}/stream")
        feed = _Lines(f"{url}/v1/games/{gid}/events?follow=1&timeout=30")
        stream.start()
        feed.start()
        assert stream.started.wait(20) and feed.started.wait(20)
        advance(url, store, game, 2, rng)
        time.sleep(1.0)
        assert st.service.api is not None
        st.service.api.send_signal(signal.SIGTERM)  # gunicorn's master: a graceful stop
        st.service.api.wait(30)
        stream.join(10)
        feed.join(10)
        end = feed.lines[-1]
        assert stream.lines[-1]["type"] == "end" and stream.lines[-1]["reason"] == "shutdown"
        assert end["type"] == "end" and end["reason"] == "shutdown"
        # Meanwhile the game goes on; the API comes back; the clients resume.
        st.service.start_shipped_api()
        advance(url, store, game, 2, rng)
        head = store.version(gid)
        wait_until(lambda: _head_projected(st, store, gid), 30, "projection")
        more = requests.get(f"{url}/v1/games/{gid}/events", params={"after": end["after"]}, timeout=10)
        seqs = [x["seq"] for x in feed.lines[:-1]] + [json.loads(x)["seq"] for x in more.text.splitlines() if x]
        assert seqs == list(range(1, head + 1)), "the feed missed or repeated an event across the restart"
        board = requests.get(f"{url}/v1/games/{gid}/stream", stream=True, timeout=10)
        first = json.loads(next(board.iter_lines()))
        board.close()
        assert first["type"] == "board" and first["version"] == head
