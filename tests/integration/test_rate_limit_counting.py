"""How the rate limits count (``service/http/limits.py`` ``RateLimits``; docs/API.md "Rate
limits"), on a private Redis so that its command counts are this test's alone: every window
of a request in one script call per client (one round trip a request), the ``limits``
library's sliding-window counter, the longest wait as ``Retry-After``, and counting in
memory while Redis is away.  The HTTP behaviour of each budget: tests/security/test_rate_limits.py."""

from __future__ import annotations

import dataclasses
import itertools
import random
import threading
import time

import pytest
import redis
from limits import parse
from limits.storage import MemoryStorage
from limits.strategies import SlidingWindowCounterRateLimiter

from service.adapters.rate_limits import RateLimited, RateLimits
from service.bootstrap import rate_limits
from service.config import Settings
from service.games import registry
from service.games.simulate import random_playout

_clients = (f"203.0.113.{i}" for i in itertools.count(1))


def limits_on(settings, redis_url: str, **budgets: str) -> RateLimits:
    return rate_limits(settings.with_(redis_url=redis_url, rate_limits=True, **budgets))


def calls(r: redis.Redis, command: str) -> int:
    return int(r.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0))


def test_every_window_of_a_request_is_counted_in_one_call_per_client(settings, private_redis_server):
    r = redis.Redis.from_url(private_redis_server.url())
    defaults = {"limit_intents": "30/second;1200/minute", "limit_intents_key": "10/second;600/minute"}
    limits = limits_on(settings, private_redis_server.url(), **defaults)
    limits.check("intents", next(_clients), "")  # loads the script
    before = calls(r, "evalsha")
    for _ in range(5):
        limits.check("intents", next(_clients), "k:abc")
    with_key = calls(r, "evalsha") - before
    before = calls(r, "evalsha")
    for _ in range(5):
        limits.check("intents", next(_clients), "")
    without_key = calls(r, "evalsha") - before
    # Four windows (two per client) in two script calls, pipelined; one client, one call.
    # Flask-Limiter, before, made one call per window.
    assert (with_key, without_key) == (10, 5)
    assert calls(r, "script|exists") == 0  # the pipeline sends EVALSHA, not Script objects


def test_a_window_holds_its_amount_then_refuses_with_the_longest_wait(settings, private_redis_server):
    limits = limits_on(settings, private_redis_server.url(), limit_reads="3/second;5/minute", limit_reads_key="none")
    client = next(_clients)
    for _ in range(3):
        limits.check("reads", client, "")
    with pytest.raises(RateLimited) as refused:
        limits.check("reads", client, "")
    assert refused.value.budget == "reads" and str(refused.value.item) == "3 per 1 second"
    assert refused.value.retry_after == 1
    limits.check("reads", next(_clients), "")  # another client is not affected
    # The refused request counted in no window, not even the minute's where it fitted
    # (docs/API.md "Rate limits": a refused request spends no budget): 3 of 5 there.
    time.sleep(2.1)  # the second's window and its sliding weight are gone
    limits.check("reads", client, "")  # 4 of 5
    limits.check("reads", client, "")  # 5 of 5
    with pytest.raises(RateLimited) as refused:
        limits.check("reads", client, "")
    # Now the minute's window is full: its wait, the longer, is the answer.
    assert str(refused.value.item) == "5 per 1 minute"
    assert 50 <= refused.value.retry_after <= 60


def test_redis_decides_as_the_limits_library_does(settings, private_redis_server):
    """The script is ``limits``' sliding-window counter: the same sequence of hits, the
    same answers as the library's own strategy (in memory, same instants)."""
    limits = limits_on(settings, private_redis_server.url(), limit_intents="7/minute", limit_intents_key="none")
    library = SlidingWindowCounterRateLimiter(MemoryStorage())
    item = parse("7/minute")
    client = next(_clients)
    ours, theirs = [], []
    for _ in range(12):
        try:
            limits.check("intents", client, "")
            ours.append(True)
        except RateLimited:
            ours.append(False)
        theirs.append(library.hit(item, client))
    assert ours == theirs == [True] * 7 + [False] * 5


def test_without_redis_each_process_counts_in_memory_and_comes_back(settings, private_redis_server):
    limits = limits_on(settings, "redis://127.0.0.1:1/0", limit_creation="2/minute", limit_creation_key="none")
    client = next(_clients)
    limits.check("creation", client, "")  # Redis refused: counted in memory
    limits.check("creation", client, "")
    with pytest.raises(RateLimited) as refused:
        limits.check("creation", client, "")
    assert 1 <= refused.value.retry_after <= 60
    # Redis is back (here: another server): after the back-off, counting returns to it.
    limits.redis = redis.Redis.from_url(private_redis_server.url())
    limits._redis_after = 0.0
    fresh = next(_clients)
    before = calls(limits.redis, "evalsha")
    limits.check("creation", fresh, "")
    assert calls(limits.redis, "evalsha") == before + 1


@pytest.mark.parametrize("where", ["redis", "memory"])
def test_a_refused_request_is_taken_back_while_the_address_has_refunds(settings, private_redis_server, where):
    """Only accepted requests spend a budget (docs/API.md "Rate limits"): a request answered
    4xx is taken back from every window it was counted in, by address and by credential,
    up to the address's refunds (``QD_LIMIT_REFUNDS``); beyond, a refusal counts, so a
    flood of refused requests is bounded by the budget it falls in."""
    url = private_redis_server.url() if where == "redis" else "redis://127.0.0.1:1/0"
    limits = limits_on(
        settings, url, limit_accounts="3/minute;20/day", limit_accounts_key="4/hour", limit_refunds="5/minute"
    )
    client, key = next(_clients), f"k:{next(_clients)}"
    for _ in range(5):  # five refusals, each taken back
        assert limits.refund(limits.check("accounts", client, key))
    for _ in range(2):  # accepted: two of the three
        limits.check("accounts", client, key)
    # The sixth refusal is past the address's refunds: it stays counted, and fills the budget.
    assert not limits.refund(limits.check("accounts", client, key))
    with pytest.raises(RateLimited) as refused:
        limits.check("accounts", client, key)
    assert refused.value.budget == "accounts"
    # The credential's windows were taken back with the address's: from elsewhere it has one left.
    limits.check("accounts", next(_clients), key)
    with pytest.raises(RateLimited):
        limits.check("accounts", next(_clients), key)


def test_concurrent_requests_never_overrun_a_window(settings, private_redis_server):
    """Counted before it runs and taken back if refused: 40 requests at once against
    "5/minute", half of them refused after counting, leave no more than 5 accepted."""
    limits = limits_on(settings, private_redis_server.url(), limit_creation="5/minute", limit_creation_key="none")
    client = next(_clients)
    barrier = threading.Barrier(40)
    accepted: list[int] = []

    def request(i: int) -> None:
        barrier.wait()
        try:
            reservation = limits.check("creation", client, "")
        except RateLimited:
            return
        if i % 2:
            limits.refund(reservation)  # answered 4xx
        else:
            accepted.append(i)

    threads = [threading.Thread(target=request, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(accepted) <= 5
    spent = len(accepted)
    for _ in range(5 - spent):
        limits.check("creation", client, "")
    with pytest.raises(RateLimited):
        limits.check("creation", client, "")


def _longest_turn(games: int = 4) -> int:
    """The most intents one seat sends in a row (its turn: nothing to wait for between
    them), over seeded random playouts of every game at every table size's ends."""
    longest = 0
    for name in registry.names():
        engine = registry.get(name)
        for i in range(games):
            players = engine.min_players if i % 2 else engine.max_players
            played = random_playout(engine, players, {}, bytes([i]) * 32, random.Random(i), max_steps=3000)
            run, previous = 0, None
            for step in played.steps:
                run = run + 1 if step.seat == previous else 1
                previous = step.seat
                longest = max(longest, run)
    return longest


def test_a_bot_that_replies_at_once_fits_the_default_intent_limits(settings, private_redis_server):
    """A bot that answers each board at once sends a whole turn within a second: the
    default per-key limit (10/second) answered 429 to 22 of its intents in four ordinary
    games.  The defaults hold the longest turn of the playouts, twice over, as one burst."""
    defaults = {f.name: f.default for f in dataclasses.fields(Settings) if f.name.startswith("limit_intents")}
    limits = limits_on(settings, private_redis_server.url(), **defaults)
    turn = _longest_turn()
    assert turn >= 8, turn
    client, key = next(_clients), f"k:{next(_clients)}"
    for _ in range(2 * turn):
        limits.check("intents", client, key)
