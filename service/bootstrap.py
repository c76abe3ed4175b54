"""The composition root: the one place where Quarterdeck is wired.

:func:`bootstrap` builds, from :class:`~service.config.Settings`, the
PostgreSQL pool and event store, the Redis connection, the RQ queue, the
projection nudge and the ordered list of projections; the app
(``service.http.app.create_app``), the worker (``workers``) and the CLI
(``service.cli``) all take their connections from it.  Nothing in Quarterdeck
connects or registers anything at import time: it all happens here, when a
process asks for it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import orjson
import redis
from psycopg.types.json import set_json_loads
from psycopg_pool import ConnectionPool
from redis import Redis
from rq import Queue

from projections import leaderboards
from projections import tournaments as tournament_standings
from projections.runner import Checkpoints, GlobalConsumer
from service import redis_roles
from service.adapters.accounts import AccountStore
from service.adapters.analyses import Analyses
from service.adapters.announcements import PubSubOpener
from service.adapters.bot_turns import FairLine, PendingTurns
from service.adapters.eventstore import EventStore, check_if_idle, configure_connection
from service.adapters.house_bots import HouseBots
from service.adapters.invitations import Invitations
from service.adapters.kept_audits import KeptAudits
from service.adapters.lobby import Limits, Lobby
from service.adapters.rate_limits import RateLimits
from service.adapters.stream_slots import StreamSlots
from service.adapters.tournament_store import TournamentStore
from service.config import Settings
from service.games import registry
from service.nudge import ProjectionQueue
from service.service_layer.commands import GameService
from service.service_layer.invitations import InvitationService
from service.service_layer.lobby import LobbyService
from service.service_layer.tournament_rounds import RoundRunner
from service.service_layer.tournaments import TournamentService
from service.service_layer.unit_of_work import UnitOfWork


def global_projections(tournament_store: TournamentStore) -> tuple[GlobalConsumer, ...]:
    """The projections that read the global feed, in the order a sweep and a
    rebuild run them (after the per-game boards, which they may read).  The
    tournaments' standings read their own streams' feed (migration 0007)."""
    return (leaderboards.consume, partial(tournament_standings.consume, tstore=tournament_store))


@dataclass
class Components:
    """Everything a process of Quarterdeck talks to."""

    settings: Settings
    store: EventStore
    #: The read side's Redis (``Settings.read_url``; a ``RedisCluster`` for a cluster URL).
    redis: redis.Redis
    queue: Queue
    #: The one nudge, told of every commit: a game's, a tournament's (``service/nudge.py``).
    nudge: ProjectionQueue
    #: Tournament streams (migration 0007).
    tournament_store: TournamentStore
    #: :func:`global_projections` over ``tournament_store``.
    global_projections: tuple[GlobalConsumer, ...] = ()
    #: The projection worker's last writes (``Settings.projection_cache`` games; its drain
    #: jobs run one at a time in the worker's process, the only user).
    checkpoints: Checkpoints = field(default_factory=lambda: Checkpoints(0))
    #: The queue's plain Redis (``Settings.queue_url``: RQ and the projection nudge); the
    #: read side's client itself when both roles share one server.
    queue_redis: Redis | None = None

    def ping_redis(self) -> None:
        """PING every Redis role (the read side's and, when apart, the queue's): a
        readiness check; raises what the client raises."""
        self.redis.ping()
        if self.queue_redis is not None and self.queue_redis is not self.redis:
            self.queue_redis.ping()

    def close(self) -> None:
        self.store.pool.close()
        self.redis.close()
        if self.queue_redis is not None and self.queue_redis is not self.redis:
            self.queue_redis.close()


def freeze_startup_heap() -> None:
    """Called once a long-running process (a gunicorn worker, the projection
    worker) has built what it keeps for life: its modules, the app, its
    components.  Those objects are moved out of the cyclic garbage collector's
    sight (``gc.freeze``): a full collection walked all of them, 30-85 ms on
    our 2-core machine, a pause in which the process answers nothing and
    projects nothing, and the largest outliers of ``lag_p99_ms`` and of
    ``/healthz`` (docs/PERFORMANCE.md, "Engines imported and the heap frozen").  They are
    never freed anyway; whatever is created later is collected as usual."""
    gc.collect()
    gc.freeze()


def configure_process() -> None:
    """Process-wide settings of the libraries, once per process: psycopg
    parses json/jsonb with orjson (same values, same key order as the text;
    reading a stream was dominated by the standard library's parser, ``make
    bench``: rebuild and cold loads, docs/PERFORMANCE.md)."""
    set_json_loads(orjson.loads)


def game_service(
    components: Components, *, cache_size: int | None = None, on_conflict: Callable[[], None] | None = None
) -> GameService:
    """The command side over ``components``, on the configured terms for a new game
    (default clock, length cap).  ``cache_size``: the game states it keeps (default
    ``Settings.state_cache_size``, the API's; a worker that touches few games keeps
    fewer).  Each process builds one per use and keeps it for life."""
    settings = components.settings
    return GameService(
        components.store,
        components.nudge,
        cache_size=settings.state_cache_size if cache_size is None else cache_size,
        snapshot_every=settings.snapshot_every,
        on_conflict=on_conflict,
        default_deadline_s=settings.default_deadline_s,
        max_game_events=settings.max_game_events,
    )


def unit_of_work(components: Components) -> UnitOfWork:
    """One transaction on the components' pool, with its committed hook
    (``service/service_layer/unit_of_work.py``); use cases take this as their factory."""
    return UnitOfWork(components.store.pool, components.settings.pool_timeout)


def tournament_service(components: Components) -> TournamentService:
    """The tournaments' command side; each commit enqueues its projection (and,
    after a pairing, the worker's advance)."""
    return TournamentService(components.tournament_store, components.nudge.tournament)


def round_runner(components: Components, tournaments: TournamentService, games: GameService) -> RoundRunner:
    """The tournaments' rounds: their tables' games, each created in a unit of work."""
    return RoundRunner(tournaments, games, partial(unit_of_work, components))


def lobby_service(components: Components, games: GameService) -> LobbyService:
    """Open tables (docs/API.md "Tables"); the join that fills one starts its game."""
    settings = components.settings
    store = Lobby(
        components.store.pool,
        settings.pool_timeout,
        Limits(
            open_tables_per_account=settings.max_open_tables,
            bot_games_per_account=settings.max_bot_games,
            bot_games_per_organiser=settings.max_bot_games_organiser,
        ),
    )
    return LobbyService(store, games, partial(unit_of_work, components))


def invitation_service(
    components: Components, games: GameService, register: Callable[[str, str], None]
) -> InvitationService:
    """Organisers invite, players accept (docs/API.md, "Consent"); ``register(tournament_id,
    handle)`` registers an account whose tournament invitation it accepted."""
    settings = components.settings
    store = Invitations(
        components.store.pool,
        settings.pool_timeout,
        ttl_s=settings.invitation_ttl_s,
        max_pending=settings.max_pending_invitations,
    )
    return InvitationService(store, games, register, partial(unit_of_work, components))


def accounts(components: Components) -> AccountStore:
    """The accounts and their keys (docs/API.md "Accounts")."""
    return AccountStore(components.store.pool, components.settings.pool_timeout)


def house_bots(components: Components) -> HouseBots:
    """The house bots' accounts (docs/BOTS.md "House bots")."""
    return HouseBots(components.store.pool, components.settings.pool_timeout)


def pending_turns(components: Components) -> PendingTurns:
    """The marks of the house bots' turns that have a job waiting, on the read side's Redis
    (``service/adapters/bot_turns.py``)."""
    return PendingTurns(components.redis)


def fair_line(queue: Queue) -> FairLine:
    """The house bots' turns waiting on ``queue``, one line per account, on the queue's own
    Redis (``service/adapters/bot_turns.py``): its scripts and the queue's jobs share a server."""
    return FairLine(queue.connection, queue.name)


def kept_audits(components: Components) -> KeptAudits:
    """The audit reports kept per game and version (``service/audit``)."""
    return KeptAudits(components.store.pool, components.settings.pool_timeout)


def stream_slots(components: Components, lease_seconds: float) -> StreamSlots:
    """One stream's slots (``service/adapters/stream_slots.py``), leased for ``lease_seconds``."""
    return StreamSlots(components.redis, lease_seconds=lease_seconds)


def rq_connection(settings: Settings) -> redis.Redis:
    """An RQ worker's own connection to the queue's Redis, without the components'
    socket timeout: its blocking dequeue waits far longer than a query ever should."""
    return redis.Redis.from_url(settings.queue_url)


def rate_limits(settings: Settings, prefix: str = "qd:rl") -> RateLimits:
    """The rate limits' counters (``service/http/limits.py``) on the read side's Redis,
    with short timeouts: a limit must not hold a request for long when Redis is away."""
    client = redis_roles.connect_one(settings.read_url, socket_connect_timeout=0.5, socket_timeout=0.5)
    return RateLimits(settings, client, prefix)


def analyses(components: Components) -> Analyses:
    """Analyses of finished games: kept on the read side's Redis, their jobs on the analysis queue
    (on the queue's Redis)."""
    settings = components.settings
    queue_r = components.queue_redis if components.queue_redis is not None else components.redis
    return Analyses(settings, components.redis, Queue(settings.analysis_queue, connection=queue_r))


def announcements(settings: Settings) -> PubSubOpener:
    """What opens the live hub's pub/sub connections (``service/http/live/hub.py``)
    to the read side's Redis: ``opener(name)``, at the hub's start and after a failover."""

    def connect(name: str) -> Any:
        # No socket timeout: the listener blocks on its socket by design
        # (get_message's own timeout bounds each wait).
        return redis_roles.connect_one(
            settings.read_url, socket_connect_timeout=2, socket_keepalive=True, client_name=name
        )

    return PubSubOpener(connect)


def bootstrap(settings: Settings | None = None) -> Components:
    """Build every component from ``settings`` (default: the environment).

    The pool opens in the background, so a process starts even while
    PostgreSQL is still down (its requests answer 503 until it is up)."""
    settings = settings or Settings.from_env()
    configure_process()
    pool = ConnectionPool(
        settings.database_url,
        min_size=settings.pool_min,
        max_size=settings.pool_max,
        open=False,
        check=check_if_idle,
        configure=configure_connection,
        # Autocommit: a read is one round trip (no BEGIN, no COMMIT on return to
        # the pool); writes that need a transaction open one explicitly.
        kwargs={"autocommit": True},
        reconnect_timeout=0,
    )
    pool.open(wait=False)
    options = {"socket_connect_timeout": 1, "socket_timeout": 5}
    r = redis_roles.connect(settings.read_url, settings.redis_pool_max, settings.redis_pool_timeout, **options)
    # RQ keeps a queue's and its jobs' keys in different slots: its Redis is a plain one.
    queue_r = (
        r
        if settings.queue_url == settings.read_url
        else redis_roles.connect(settings.queue_url, settings.redis_pool_max, settings.redis_pool_timeout, **options)
    )
    if redis_roles.is_cluster(queue_r):
        raise ValueError("QD_QUEUE_REDIS_URL must be one Redis server, not a cluster (RQ does not run on one)")
    redis_roles.check_role(r, settings.read_url, "QD_READ_REDIS_URL" if settings.read_redis_url else "REDIS_URL")
    queue = Queue(settings.queue_name, connection=queue_r)
    # Every engine imported now rather than by the first request or job that
    # needs one (which would take ~100 ms longer than the rest; ``make bench``:
    # lag_p99_ms).
    registry.names()
    tournament_store = TournamentStore(pool, settings.pool_timeout)
    return Components(
        settings=settings,
        store=EventStore(pool, settings.pool_timeout),
        redis=r,
        queue=queue,
        nudge=ProjectionQueue(queue_r, queue, settings.projection_shards),
        tournament_store=tournament_store,
        global_projections=global_projections(tournament_store),
        checkpoints=Checkpoints(settings.projection_cache),
        queue_redis=queue_r,
    )
