"""Many idle-but-alive clients at once, for ``make bench`` and the slow-client
tests: followers of games' streams, ``?min_version`` waits, and half-sent
requests.  Loopback only, bounded in count and in time; it stops by itself.

It runs as its own process under gevent (one greenlet per client, so
thousands of them cost little), so that its work does not slow down the
process that measures::

    python -m scripts.bench.followers --url http://127.0.0.1:8000 --games ID,ID --streams 200 \\
        --waits 200 --wait-game ID --wait-version N --half 200 --seconds 20 --out result.json

It prints ``ready`` on stdout once every client is connected (streams: once
each has its first board line), then keeps them going until ``--seconds`` have
passed or it gets SIGTERM, and writes what it saw to ``--out``:

* ``streams``: per follower, its game, the status, every board line's
  ``[version, wall-clock time]``, pings, and how it ended;
* ``waits``: answers ``[status, version, seconds, start time]`` (and the error's
  code, or the exception's name, when it is not 200) of the
  ``?min_version`` reads, each re-issued when answered until it sees the
  version it waits for;
* ``half``: half-sent requests (a request line and half a header, then
  nothing): how many were opened and how soon the server closed each;
* ``watch`` (with ``--watch REDIS_URL``): every ``g:{id}:changed``
  announcement heard, ``[game, version, wall-clock time]`` — the moment each
  projection committed, to time the followers' delivery from.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import gc  # noqa: E402
import http.client  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

import gevent  # noqa: E402
import orjson  # noqa: E402
from gevent.event import Event  # noqa: E402

LOOPBACK = ("127.0.0.1", "localhost", "::1")
_BOARD_HEAD = re.compile(rb'\{"type":"board","version":(\d+)[,}]')


@dataclass
class Follower:
    game: str
    status: int = 0
    boards: list[list[float]] = field(default_factory=list)
    pings: int = 0
    end: str | None = None
    error: str | None = None


def _target(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    if host not in LOOPBACK:
        raise SystemExit(f"bench_followers: {host} is not a loopback address; refusing")
    return host, parts.port or 80


def follow(
    host: str, port: int, f: Follower, token: str | None, connected: list[int], stop: Event, feed: bool = False
) -> None:
    """Follow one game: its board stream, or (``feed``) its live events feed, each
    feed line counted as a board of its ``seq``."""
    headers = {"Accept": "application/x-ndjson"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn = http.client.HTTPConnection(host, port, timeout=120)
    first = True
    path = f"/v1/games/{f.game}/events?follow=1&timeout=30" if feed else f"/v1/games/{f.game}/stream"
    try:
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        f.status = resp.status
        if resp.status != 200:
            resp.read()
            return
        buf = b""
        while not stop.is_set():
            chunk = resp.read1(65536)
            if not chunk:
                f.end = f.end or "closed"
                break
            now = time.time()
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                if not raw:
                    continue
                # A board line leads with its type and version: read them
                # without parsing a board of several KB (what this client does
                # thousands of times a second, on the cores it measures).
                head = _BOARD_HEAD.match(raw)
                line = {"type": "board", "version": int(head.group(1))} if head else orjson.loads(raw)
                if feed and "seq" in line:
                    line = {"type": "board", "version": line["seq"]}
                kind = line.get("type")
                if kind == "board":
                    f.boards.append([line["version"], now])
                    if first:
                        first = False
                        connected[0] += 1
                elif kind == "ping":
                    f.pings += 1
                elif kind == "end":
                    f.end = line.get("reason")
    except Exception as exc:  # recorded, not raised: the caller judges
        f.error = f"{type(exc).__name__}: {exc}"[:200]
    finally:
        if first:  # refused, or ended before its first board: no longer waited for
            connected[0] += 1
        conn.close()


def wait_loop(host: str, port: int, game: str, version: int, out: list[list[Any]], stop: Event) -> None:
    conn = http.client.HTTPConnection(host, port, timeout=60)
    while not stop.is_set():
        t0 = time.time()
        try:
            conn.request("GET", f"/v1/games/{game}?min_version={version}")
            resp = conn.getresponse()
            body = resp.read()
            try:
                answer = orjson.loads(body) if body else {}
            except orjson.JSONDecodeError:  # not ours (a proxy's or the server's own page)
                answer = {}
            got = answer.get("version") if resp.status == 200 else None
            record = [resp.status, got, time.time() - t0, t0]
            if resp.status != 200:  # which refusal it was: the error's stable code
                record.append((answer.get("error") or {}).get("code"))
            out.append(record)
            if got is not None and got >= version:
                break  # what it waited for came; a wait is re-issued only while it has not
        except Exception as exc:
            out.append([0, None, time.time() - t0, t0, type(exc).__name__])
            conn.close()
            conn = http.client.HTTPConnection(host, port, timeout=60)
            gevent.sleep(0.1)
    conn.close()


def half_loop(host: str, port: int, out: list[list[float]], stop: Event, body: bool) -> None:
    """Keep one half-sent request open: when the server closes it, open another."""
    while not stop.is_set():
        t0 = time.time()
        try:
            s = socket.create_connection((host, port), timeout=5)
        except OSError:
            gevent.sleep(0.1)
            continue
        try:
            if body:  # headers complete, a body announced and hardly sent
                s.sendall(b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
                s.sendall(b"Content-Length: 1000\r\n\r\n{")
            else:  # a request line and half a header
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Half: ")
            s.settimeout(None)
            closed = gevent.spawn(s.recv, 65536)
            while not stop.is_set() and not closed.ready():
                closed.join(0.5)
            if closed.ready():
                out.append([time.time() - t0, t0, len(closed.value or b"")])
            else:
                closed.kill()
        except OSError:
            out.append([time.time() - t0, t0, -1])
        finally:
            s.close()


def watch(redis_url: str, out: list[list[Any]], stop: Event, ready: Event) -> None:
    import redis

    r = redis.Redis.from_url(redis_url)
    p = r.pubsub(ignore_subscribe_messages=True)
    p.psubscribe("g:{*}:changed")
    ready.set()
    while not stop.is_set():
        m = p.get_message(timeout=0.5)
        if m is not None:
            now = time.time()
            channel = m["channel"].decode()
            out.append([channel[3 : -len("}:changed")], int(m["data"]), now])
    p.close()
    r.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench.followers", description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--games", default="", help="comma-separated game ids the streams follow (round robin)")
    ap.add_argument("--tokens", default="", help="comma-separated seat tokens, one per game (optional)")
    ap.add_argument("--streams", type=int, default=0)
    ap.add_argument("--feed", action="store_true", help="the streams follow the live events feed instead")
    ap.add_argument("--waits", type=int, default=0)
    ap.add_argument("--wait-game", default="")
    ap.add_argument("--wait-version", type=int, default=1)
    ap.add_argument("--half", type=int, default=0, help="half-sent request headers held open")
    ap.add_argument("--half-body", type=int, default=0, help="requests whose announced body never comes")
    ap.add_argument("--watch", default="", help="Redis URL: record every projection announcement")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--connect-seconds", type=float, default=60.0, help="give up waiting for 'ready' after this")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    if args.streams + args.waits + args.half + args.half_body > 20_000:
        raise SystemExit("bench_followers: at most 20,000 clients")
    host, port = _target(args.url)
    games = [g for g in args.games.split(",") if g]
    tokens = [t for t in args.tokens.split(",") if t]
    stop = Event()
    # SIGTERM or SIGINT: stop early and still write what was seen.
    for sig in (signal.SIGTERM, signal.SIGINT):
        gevent.signal_handler(sig, stop.set)
    jobs = []
    watched: list[list[Any]] = []
    if args.watch:
        heard = Event()
        jobs.append(gevent.spawn(watch, args.watch, watched, stop, heard))
        heard.wait(10)
    followers = [Follower(games[i % len(games)]) for i in range(args.streams)] if games else []
    connected = [0]
    for i, f in enumerate(followers):
        token = tokens[i % len(games)] if tokens and i % 2 else None  # every other follower as the seat
        jobs.append(gevent.spawn(follow, host, port, f, token, connected, stop, args.feed))
        if i % 100 == 99:
            gevent.sleep(0.01)
    waits: list[list[Any]] = []
    for _ in range(args.waits):
        jobs.append(gevent.spawn(wait_loop, host, port, args.wait_game, args.wait_version, waits, stop))
    half: list[list[float]] = []
    for _ in range(args.half):
        jobs.append(gevent.spawn(half_loop, host, port, half, stop, False))
    half_body: list[list[float]] = []
    for _ in range(args.half_body):
        jobs.append(gevent.spawn(half_loop, host, port, half_body, stop, True))
    started = time.monotonic()
    while connected[0] < len(followers) and time.monotonic() - started < args.connect_seconds:
        gevent.sleep(0.05)
    gevent.sleep(0.2)  # the waits and half-sent requests are sent by now
    ok = sum(1 for f in followers if f.status == 200 and f.boards)
    # The measuring instrument must not pause itself: with thousands of
    # clients alive, this process's collections took up to 228 ms (a
    # gc.callbacks probe), and every
    # follower's read would wait for them, counted as the server's delivery
    # time.  No collection while it measures (its garbage is freed by
    # reference counting; what it records it keeps anyway), one after.
    gc.collect()
    gc.freeze()
    gc.disable()
    print("ready" if ok == len(followers) else f"partial {ok}/{len(followers)}", flush=True)

    stop.wait(max(0.0, args.seconds - (time.monotonic() - started)))
    stop.set()
    gevent.joinall(jobs, timeout=15)
    gevent.killall([j for j in jobs if not j.dead], block=True, timeout=5)
    gc.enable()
    result = {
        "streams": [f.__dict__ for f in followers],
        "waits": waits,
        "half": half,
        "half_body": half_body,
        "watch": watched,
        "connected": sum(1 for f in followers if f.status == 200 and f.boards),
    }
    with open(args.out, "w") as fh:
        json.dump(result, fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
