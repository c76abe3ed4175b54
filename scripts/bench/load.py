"""Load clients for ``make bench``: threads, each with one keep-alive HTTP
connection (``http.client``: the cheapest client in the standard library, so
the client side costs as little CPU as possible — the bench reports how much).
"""

from __future__ import annotations

import gc
import http.client
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import orjson


class Conn:
    """One keep-alive connection; reconnects once if the server closed it."""

    def __init__(self, base_url: str):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)

    def post(self, path: str, body: Any, token: str | None = None) -> tuple[int, Any]:
        data = orjson.dumps(body)
        headers = {"Content-Type": "application/json", "Connection": "keep-alive"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        for attempt in (0, 1):
            try:
                self.conn.request("POST", path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                return resp.status, orjson.loads(raw) if raw else None
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.conn.close()


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


@dataclass
class LoadResult:
    ok: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    client_cpu: float = 0.0  # CPU seconds of this (client) process during the run

    @property
    def rate(self) -> float:
        return self.ok / self.seconds if self.seconds else 0.0

    def p(self, q: float) -> float:
        return percentile(self.latencies, q) * 1000

    def add_error(self, key: str) -> None:
        self.errors[key] = self.errors.get(key, 0) + 1


#: A client's work: yields ``(path, body, token)`` and receives ``(status, answer)``.
Script = Callable[[int], Iterator[tuple[str, Any, str | None]]]


def closed_loop(
    base_url: str, clients: int, seconds: float, script: Script, warmup: float = 1.0, pace: float | None = None
) -> LoadResult:
    """``clients`` threads run their ``script`` back to back for ``warmup`` +
    ``seconds``; only requests that *start* after the warm-up count.  With
    ``pace`` (requests/s in total), each thread sends on a fixed schedule
    instead (open loop) — used for the lag measurement."""
    result = LoadResult()
    lock = threading.Lock()
    start_at = time.perf_counter() + 0.2
    measure_from = start_at + warmup
    stop_at = measure_from + seconds

    def run(n: int) -> None:
        conn = Conn(base_url)
        gen = script(n)
        lat: list[float] = []
        ok = 0
        last = measure_from
        errs: dict[str, int] = {}
        interval = clients / pace if pace else 0.0
        next_at = start_at + (interval * n / clients if pace else 0.0)
        while time.perf_counter() < start_at:
            time.sleep(0.001)
        try:
            # The script sees each answer as soon as it arrives (before any
            # pacing sleep): the lag watcher times from that moment.
            request = gen.send(None)
            while True:
                if pace:
                    delay = next_at - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                    next_at += interval
                t0 = time.perf_counter()
                if t0 >= stop_at:
                    break
                status, body = conn.post(*request)
                t1 = time.perf_counter()
                if t0 >= measure_from:
                    last = t1
                    if status in (200, 201):
                        ok += 1
                        lat.append(t1 - t0)
                    else:
                        code = body.get("error", {}).get("code", "") if isinstance(body, dict) else ""
                        key = f"{status} {code}".strip()
                        errs[key] = errs.get(key, 0) + 1
                request = gen.send((status, body, t1))
        except StopIteration:
            pass
        finally:
            conn.close()
            with lock:
                ends.append(last)
                result.ok += ok
                result.latencies.extend(lat)
                for k, v in errs.items():
                    result.errors[k] = result.errors.get(k, 0) + v

    ends: list[float] = []
    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(clients)]
    # The load generator must not pause itself: a full collection of this
    # process (its plans, its games: 50 ms and more) stops every client and the
    # lag watcher at once, and would be counted as the service's latency.  No
    # collection while the load runs (the clients' garbage is freed by
    # reference counting); one after it.
    gc.collect()
    gc.disable()
    cpu0 = time.process_time()
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        gc.enable()
    result.client_cpu = time.process_time() - cpu0
    gc.collect()
    result.seconds = max(0.0, min(stop_at, max(ends, default=measure_from)) - measure_from)
    return result
