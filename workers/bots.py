"""The bot worker: house bots act through the front door (docs/BOTS.md "House bots").

What tells a bot to act is what tells any client: its account stream's
``your_turn`` (``projections/publish.py``: the projection's write publishes it
on the account's channel), and, when the worker starts and every
``QD_BOT_RESYNC_SECONDS``, the turns an account stream starts with (its active
games where it is to act now), for what pub/sub may have dropped.  Each turn
waits in its account's line (the person or organiser whose game it is:
:func:`account_of`) and enqueues one job on the ``bots`` queue
(:func:`act_next`), which runs the next turn of the next account in a ring, so
the bots serve accounts round-robin and one account's many games never starve
another's; at most one turn waits per (game, bot): :func:`request_turn` marks it
pending first, and the queue has a cap (``QD_BOT_QUEUE_MAX``).  The marks and
the lines are Redis's (``service/adapters/bot_turns.py``: ``PendingTurns`` and
``FairLine``, built by ``service.bootstrap``); the reads of the read models are
the read side's (``service.views``), and the account streams' announcements
come through the live hub's pub/sub (``service/adapters/announcements.py``), so
this module sends no Redis command itself.

A job reads the bot's seat's board and legal intents from the read side (the
game's read model in Redis, one ``HMGET``, exactly what ``GET /v1/games/{id}``
and ``/legal`` answer that seat), asks the bot package to choose within its
level's CPU budget (``cpu_clock=time.thread_time``), and posts the intent
through ``GameService.submit`` with the bot's own key, the per-key intent limits
of the API, ``expected_version`` and an ``Idempotency-Key`` derived from the
version (the key is scoped to the game and the seat).  So a job delivered twice,
or run by two workers at once, records one intent at most: the second finds its
seat no longer to act, or loses the version race, or gets the first answer back.

A job for a game that has finished or been aborted does nothing.  A job that
fails (a server away, a bot that cannot decide) is retried by RQ a few times and
by the next resync; a bot never resigns, and the game's clock is the backstop, as
for anyone.  The worker runs one job at a time (``SimpleWorker``), so a process
spends at most one level's budget of CPU at a time; nothing here logs a view, a
legal list or a choice.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rq import Queue, Retry, get_current_job

from projections import publish
from schemas.intents import parse_intent
from service import bootstrap, redis_roles, views
from service import metrics as service_metrics
from service.adapters.house_bots import HouseBot
from service.adapters.rate_limits import RateLimited
from service.bootstrap import announcements, fair_line, game_service, pending_turns, rate_limits, rq_connection
from service.config import INTENTS, Settings
from service.domain import identity
from service.domain.errors import DomainError
from service.domain.identity import Principal
from service.domain.tokens import rate_credential
from workers import context, metrics

log = logging.getLogger(__name__)

#: The job a turn enqueues (by name).
ACT_JOB = "workers.bots.act"
#: Retries of a job that failed (a server away, a bot that raised), and their delays.
RETRY = Retry(max=3, interval=[1, 5, 15])
#: Active games looked at per bot in one resync, at most.
RESYNC_GAMES = 1000
#: States kept by the worker's command side.
CACHE_SIZE = 256


def request_turn(ctx: context.Context, queue: Queue, game_id: str, handle: str, queue_max: int) -> bool:
    """Enqueue a job for ``handle``'s turn in ``game_id`` unless one waits already
    (``PendingTurns.mark``) or the queue is at its cap; whether one was enqueued.

    The turn waits in its account's line (:func:`account_of`, ``FairLine.push``) and
    the job takes the next turn of the next account in the ring (:func:`act_next`): the
    jobs are served round-robin over accounts, so many games of one account never
    starve another's."""
    if queue.count >= queue_max:
        return False
    if not pending_turns(ctx).mark(game_id, handle):
        return False
    fair_line(queue).push(account_of(ctx, game_id), game_id, handle)
    queue.enqueue(NEXT_JOB, queue.name, retry=RETRY, result_ttl=0, failure_ttl=3600)
    return True


def account_of(ctx: context.Context, game_id: str) -> str:
    """The account whose line a game's bot turns wait in: the organiser who created the
    game, else the first (by handle) of its seats that are not house bots; ``""`` for a
    game whose read model is not there yet."""
    [info] = views.read_board_fields(ctx.redis, game_id, ["info"])
    if info is None:
        return ""
    created = json.loads(info)
    if created.get("created_by"):
        return identity.handle_key(str(created["created_by"]))
    people = [identity.handle_key(p) for p in created.get("players") or () if not identity.reserved_handle(p)]
    return min(people, default="")


#: The job that runs the next turn of the fair line of a queue (by name).
NEXT_JOB = "workers.bots.act_next"


# -- acting -----------------------------------------------------------------------
#: The read-model fields a decision reads (besides the seat's view and legal list).
_BOARD = ("version", "info", "status", "to_act", "result", "clock")


@dataclass
class Outcome:
    """What one job did (for tests and the log)."""

    action: str  # posted | replayed | raced | refused | not_to_act | finished | not_seated
    version: int | None = None
    cpu_ms: float | None = None


class Actor:
    """Acts for the house bots with their keys, one decision at a time."""

    def __init__(self, ctx: context.Context):
        self.ctx = ctx
        self.games = game_service(ctx, cache_size=CACHE_SIZE)
        self.accounts = bootstrap.accounts(ctx)
        self.bots = bootstrap.house_bots(ctx)
        self.limits = _limits(ctx.settings)

    def act(self, game_id: str, handle: str) -> Outcome:
        bot = self.bots.by_handle(handle)
        if bot is None:
            return Outcome("not_seated")
        read = self._read(game_id, handle)
        if isinstance(read, Outcome):
            return read
        seat, version, board, legal = read
        started = time.thread_time()
        intent = _choose(bot, seat, board, legal, _seed(game_id, version, seat))
        cpu_ms = (time.thread_time() - started) * 1000
        metrics.BOT_DECISION_CPU.labels(bot.game, str(bot.level)).observe(cpu_ms / 1000)
        try:
            answer = self._post(bot, game_id, intent, version)
        except DomainError as exc:
            # Counted as the API counts a client's intent (qd_intents_total).
            service_metrics.INTENTS.labels("refused", exc.code).inc()
            # Lost the version race (another seat chose first, or another worker
            # acted): the projection of that intent announces the bot's next turn,
            # if it still has one, and that brings a job of its own.  Or refused
            # for a reason reading again cannot mend (its clock ran out, the game
            # ended meanwhile).  Either way, nothing to retry here.
            log.info("bot %s: game %s v%d not recorded (%s)", handle, game_id, version, exc.code)
            return Outcome("raced" if exc.code == "version_conflict" else "refused", version, cpu_ms)
        service_metrics.INTENTS.labels("accepted", "ok").inc()
        log.info("bot %s: game %s v%d decided in %.1f ms CPU", handle, game_id, version, cpu_ms)
        return Outcome("replayed" if answer.get("replayed") else "posted", version, cpu_ms)

    def _read(self, game_id: str, handle: str) -> Outcome | tuple[int, int, dict[str, Any], list[dict[str, Any]]]:
        """The bot's seat, the version, its board and its legal intents, from ONE
        read of the read model (so they are of one version); or why there is
        nothing to do."""
        r = self.ctx.redis
        [info] = views.read_board_fields(r, game_id, ["info"])  # who sits where never changes for a game
        if info is None:
            self.games.catch_up(game_id)
            raise RuntimeError(f"game {game_id} has no read model yet")  # retried
        seat = identity.account_seat(
            Principal(identity.ACCOUNT, identity.Account("", handle, identity.BOT)),
            identity.GameAccess.from_created(json.loads(info)),
        )
        if seat is None:
            return Outcome("not_seated")
        names = [*_BOARD, f"view:{seat}", f"legal:{seat}"]
        model = dict(zip(names, views.read_board_fields(r, game_id, names), strict=True))
        if model["version"] is None:
            raise RuntimeError(f"game {game_id}'s read model went away")  # retried
        if model["status"] != b"active":
            return Outcome("finished", int(model["version"]))
        board = views.board_body(game_id, seat, model)  # exactly as GET /v1/games/{id} builds it
        if board["status"] != "active" or seat not in board["to_act"]:
            return Outcome("not_to_act", board["version"])
        # A house bot never resigns: the clock is the backstop.
        legal = [i for i in json.loads(model[f"legal:{seat}"] or b"[]") if i.get("type") != "resign"]
        if not legal:
            return Outcome("not_to_act", board["version"])
        return seat, board["version"], board, legal

    def _post(self, bot: HouseBot, game_id: str, intent: dict[str, Any], version: int) -> dict[str, Any]:
        """Post ``intent`` as the bot, with its own key, as a client's request would."""
        key = identity.bot_key(self._secret(), bot.handle)
        account = self.accounts.by_key(key)
        if account is None:
            raise RuntimeError(f"bot {bot.handle} is not keyed with this secret: run `make bots`")
        _take_limit(self.limits, bot.handle, key)
        body = {"intent": intent, "expected_version": version}
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return self.games.submit(
            game_id,
            None,
            parse_intent(bot.game, intent),
            version,
            f"house-bot-v{version}",
            hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
            principal=Principal(identity.ACCOUNT, account),
        )

    def _secret(self) -> str:
        secret = self.ctx.settings.bot_key_secret
        if not secret:
            raise RuntimeError("no bot secret: set QD_BOT_SECRET (or ADMIN_TOKEN)")
        return secret


def _choose(bot: HouseBot, seat: int, board: dict[str, Any], legal: list[dict[str, Any]], seed: int) -> dict:
    from service.bots import choose

    return choose(bot.game, seat, board, legal, level=bot.level, seed=seed, cpu_clock=time.thread_time)


def _seed(game_id: str, version: int, seat: int) -> int:
    """The bot's seed for one decision: the same decision, the same seed (replayable)."""
    digest = hashlib.sha256(f"{game_id}:{version}:{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _limits(settings: Settings) -> Any:
    """The API's rate limits (``service/adapters/rate_limits.py``), or ``None`` when they are off."""
    if not settings.rate_limits:
        return None
    return rate_limits(settings)


#: Seconds a job waits, at most, for the bot's intent budget before it fails (and is retried).
LIMIT_WAIT = 10.0


def _take_limit(limits: Any, handle: str, key: str) -> None:
    """Count the intent in the bot's key's budget, as the API counts a request's:
    over it, wait as ``Retry-After`` says (a bot is bound like any client)."""
    if limits is None:
        return
    waited = 0.0
    while True:
        try:
            limits.check(INTENTS, f"bot:{handle}", rate_credential(key))
            return
        except RateLimited as exc:
            if waited >= LIMIT_WAIT:
                raise  # the job fails and RQ retries it later
            pause = min(max(exc.retry_after, 0.05), LIMIT_WAIT - waited)
            time.sleep(pause)
            waited += pause


_actor: Actor | None = None
_actor_lock = threading.Lock()


def actor() -> Actor:
    global _actor
    with _actor_lock:
        if _actor is None:
            _actor = Actor(context.get())
        return _actor


def reset_actor() -> None:
    """For tests: the next job builds its actor from the current context."""
    global _actor
    with _actor_lock:
        _actor = None


def act(game_id: str, handle: str) -> str:
    """The job: act for ``handle`` in ``game_id`` if it is to act there now."""
    # Unmarked first: a turn announced while this job thinks gets a job of its own.
    pending_turns(context.get()).unmark(game_id, handle)
    try:
        outcome = actor().act(game_id, handle)
    except Exception:
        metrics.BOT_JOBS.labels("failed").inc()
        raise
    metrics.BOT_JOBS.labels(outcome.action).inc()
    return outcome.action


def act_next(queue_name: str) -> str:
    """The job: act for the next turn of the fair line of ``queue_name`` (``FairLine``).
    A job that fails gives its turn back to its account's line, for its retry."""
    ctx = context.get()
    job = get_current_job()
    queue = Queue(queue_name, connection=job.connection if job is not None else ctx.queue.connection)
    fair = fair_line(queue)
    turn = fair.pop()
    if turn is None:
        return "empty"
    game_id, handle = turn
    try:
        return act(game_id, handle)
    except Exception:
        fair.push(account_of(ctx, game_id), game_id, handle)
        raise


# -- hearing turns -----------------------------------------------------------------
def turns_now(ctx: context.Context, handle: str, limit: int = RESYNC_GAMES) -> Iterator[str]:
    """The active games where ``handle`` is to act now, newest first, ``limit`` at most:
    the turns an account stream starts with (``service.views.turns_now``)."""
    for line in views.turns_now(ctx.redis, handle, limit):
        yield line["game_id"]


class Listener:
    """Hears the house bots' account streams and enqueues their turns."""

    def __init__(self, ctx: context.Context, queue: Queue):
        self.ctx, self.queue = ctx, queue
        self.bots = bootstrap.house_bots(ctx)
        # The live hub's pub/sub connections: SUBSCRIBE, or SSUBSCRIBE on a Redis Cluster,
        # where the projection announces with SPUBLISH (projections/publish.py).
        self.announcements = announcements(ctx.settings)

    def handles(self) -> list[str]:
        return [b.handle for b in self.bots.all()]

    def resync(self, handles: list[str]) -> int:
        """Ask for every turn the bots have now; the jobs enqueued."""
        n = 0
        for handle in handles:
            for gid in turns_now(self.ctx, handle):
                n += request_turn(self.ctx, self.queue, gid, handle, self.ctx.settings.bot_queue_max)
        return n

    def heard(self, channel: bytes | str, data: bytes | str) -> bool:
        """One account event: a turn of a bot enqueues its job."""
        name = channel.decode() if isinstance(channel, bytes) else channel
        handle = publish.account_of(name)
        try:
            event = json.loads(data)
        except (TypeError, ValueError):
            return False
        if handle is None or event.get("type") not in ("your_turn", "table_started"):
            return False
        return request_turn(self.ctx, self.queue, event["game_id"], handle, self.ctx.settings.bot_queue_max)

    def run(self, stop: threading.Event) -> None:
        """Subscribe, resync, then enqueue each turn heard; again after any Redis failure."""
        interval = self.ctx.settings.bot_resync_seconds
        while not stop.is_set():
            try:
                handles = self.handles()
                channels = self.announcements("qd-bot-listener")
                try:
                    if handles:
                        channels.subscribe([publish.account_channel(h) for h in handles])
                    # Subscribed before the resync: nothing falls in between.
                    self.resync(handles)
                    resync_at = time.monotonic() + interval
                    # Until the next resync (which also subscribes to bots provisioned since).
                    while not stop.is_set() and time.monotonic() < resync_at:
                        # With nothing subscribed this waits on ``stop`` (1 s at most).
                        message = channels.get_message(1.0, stop)
                        if message and message.get("type") in ("message", "smessage"):
                            self.heard(message["channel"], message["data"])
                finally:
                    channels.close()
            except Exception as exc:  # Redis or PostgreSQL away: try again shortly
                log.warning("bot listener failed (%s); retrying in 1s", type(exc).__name__)
                stop.wait(1.0)


def main(argv: list[str] | None = None) -> int:
    """``python -m workers.bots``: the listener thread and one RQ worker on the bots' queue."""
    import argparse

    from service.logs import configure_logging
    from workers.rq_worker import ProjectionWorker

    parser = argparse.ArgumentParser(prog="python -m workers.bots", description=__doc__.split("\n\n")[0])
    parser.add_argument("--burst", action="store_true", help="resync once, run the queued jobs, then exit")
    args = parser.parse_args(argv)
    ctx = context.get()
    settings = ctx.settings
    configure_logging(settings.log_level)
    if not settings.bot_key_secret:
        log.warning("no QD_BOT_SECRET nor ADMIN_TOKEN: house bots cannot act")
    # RQ's own connection, without the components' socket timeout (its dequeue blocks).
    conn = rq_connection(settings)
    queue = Queue(settings.bot_queue, connection=conn)
    listener = Listener(ctx, queue)
    stop = threading.Event()
    if args.burst:
        listener.resync(listener.handles())
    else:
        threading.Thread(target=listener.run, args=(stop,), daemon=True, name="bot-listener").start()
    log.info("bot worker on queue %s", settings.bot_queue)
    try:
        while True:
            try:
                # The projection workers' class: a stop does not wait out its pub/sub read.
                worker = ProjectionWorker([queue], connection=conn)
                worker.work(
                    burst=args.burst,
                    with_scheduler=not args.burst,
                    logging_level=settings.rq_log_level,
                )
                return 0
            except redis_roles.UNAVAILABLE as exc:
                log.warning("redis unavailable (%s); retrying in 1s", exc)
                time.sleep(1)
    finally:
        stop.set()


if __name__ == "__main__":
    raise SystemExit(main())
