"""Settings from the environment.  Nothing here connects to anything."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any

#: The rate limits' budgets (docs/API.md "Rate limits"): each has its settings
#: ``limit_<budget>`` and ``limit_<budget>_key`` below.
ACCOUNTS, CREATION, INTENTS, READS, EXPENSIVE = "accounts", "creation", "intents", "reads", "expensive"
BUDGETS = (ACCOUNTS, CREATION, INTENTS, READS, EXPENSIVE)


def _int(env: dict[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from exc


#: Settings whose variable is not ``QD_`` + the upper-cased name.
_ENV_NAMES = {
    "database_url": "DATABASE_URL",
    "redis_url": "REDIS_URL",
    "admin_token": "ADMIN_TOKEN",
    "queue_name": "QD_QUEUE",
    "state_cache_size": "QD_STATE_CACHE",
}
#: Counts that are raised to 1 when set lower (0 would mean "nothing ever runs").
_AT_LEAST_ONE = ("expensive_concurrency", "projection_shards", "redis_pool_max")


def env_name(setting: str) -> str:
    """The environment variable of a setting: ``pool_max`` -> ``QD_POOL_MAX``."""
    return _ENV_NAMES.get(setting, f"QD_{setting.upper()}")


def _parse(name: str, raw: str, default: Any) -> Any:
    """``raw`` as the type of the setting's default (a switch: off/0/false/no)."""
    if isinstance(default, bool):
        return raw.strip().lower() not in ("off", "0", "false", "no")
    if isinstance(default, int):
        return _int({name: raw}, name, default)
    if isinstance(default, float):
        try:
            return float(raw)
        except ValueError as exc:
            raise ValueError(f"{name} must be a number, got {raw!r}") from exc
    return raw


def _deadline(raw: str | None) -> int | None:
    """``QD_DEFAULT_DEADLINE_S``: seconds, or ``0``/``none`` for no default clock."""
    if raw is None or raw.strip() == "":
        return Settings.default_deadline_s
    if raw.strip().lower() in ("0", "none", "off"):
        return None
    value = _int({"QD_DEFAULT_DEADLINE_S": raw}, "QD_DEFAULT_DEADLINE_S", 0)
    if value < 0:
        raise ValueError(f"QD_DEFAULT_DEADLINE_S must be a number of seconds, 0 or none, got {raw!r}")
    return value


@dataclass(frozen=True)
class Settings:
    database_url: str = "postgresql://postgres@127.0.0.1:5432/quarterdeck"
    redis_url: str = "redis://127.0.0.1:6379/0"
    #: Redis by role (docs/SCALING.md, "Redis by role"): the RQ queue and the projection
    #: nudge on one plain Redis (``QD_QUEUE_REDIS_URL``), and the read models,
    #: announcements, rate limits and stream leases on another (``QD_READ_REDIS_URL``),
    #: which may be a Redis Cluster (``?cluster=1`` on the URL: the cluster is discovered
    #: from that node).  Unset or empty: ``redis_url``, everything on one server.
    queue_redis_url: str = ""
    read_redis_url: str = ""
    #: The operator token; when unset, the operator-only endpoints answer 403 (organiser_disabled).
    admin_token: str | None = None
    #: RQ queue that carries projection jobs.
    queue_name: str = "quarterdeck-projections"
    #: Largest request body accepted, in bytes.
    max_body_bytes: int = 64 * 1024
    #: Deepest JSON nesting accepted in a request body.
    max_json_depth: int = 32
    #: Upper bound for ``?min_version=`` waits, in seconds.
    max_wait_seconds: float = 10.0
    #: Streams and live feeds (``service/http/streams.py``, docs/API.md "Streams"):
    #: how many one client address may hold open at once (429 ``too_many_streams``
    #: beyond), and how many one account key may.
    streams_per_address: int = 256
    streams_per_key: int = 16
    #: A stream ends after this long (the client reconnects; the board comes first).
    stream_max_seconds: float = 3600.0
    #: A stream of a game that has not changed for this long ends.
    stream_idle_seconds: float = 900.0
    #: Seconds between pings on a quiet stream.
    stream_ping_seconds: float = 15.0
    #: A request body must arrive within this many seconds (408 beyond), so a
    #: client that announces a body and sends it slowly cannot hold a request.
    body_read_seconds: float = 10.0
    #: Rate limits (``service/http/limits.py``, docs/API.md "Rate limits"):
    #: ``QD_RATE_LIMITS=off`` turns every limit off.  Each budget has a limit
    #: per client address (``QD_LIMIT_<BUDGET>``) and per credential sent
    #: (``QD_LIMIT_<BUDGET>_KEY``), in the ``limits`` notation ("10/minute;
    #: 200/day"; "none" for no limit).  The defaults protect a public deployment.
    rate_limits: bool = True
    limit_accounts: str = "5/minute;20/day"
    limit_accounts_key: str = "10/hour"
    limit_creation: str = "20/minute;500/day"
    limit_creation_key: str = "20/minute;500/day"
    #: A bot that answers at once sends a whole turn in well under a second (the
    #: longest turns of the games' playouts are 15 intents): the second's burst holds
    #: that with room, and the minute's bounds what it may spend.
    limit_intents: str = "60/second;1200/minute"
    limit_intents_key: str = "40/second;600/minute"
    limit_reads: str = "60/second;2400/minute"
    limit_reads_key: str = "30/second;1200/minute"
    limit_expensive: str = "10/minute;100/hour"
    limit_expensive_key: str = "10/minute;100/hour"
    #: Refused requests (a ``4xx`` answer) one client address gets taken back from
    #: their budget's windows; beyond, a refusal counts like an accepted request.
    limit_refunds: str = "10/second;600/minute"
    #: Proxies in front of the API that set ``X-Forwarded-For`` (0: none; the
    #: client address is the socket's).
    trusted_proxies: int = 0
    #: Open tables one account may sit at (a player) or have opened (an organiser).
    max_open_tables: int = 10
    #: Games with house bots a player's tables may have running at once: its open tables
    #: with a bot seated and its started ones whose game has not finished (docs/BOTS.md).
    max_bot_games: int = 3
    #: The same bound for an organiser's tables (tournaments have their own bounds).
    max_bot_games_organiser: int = 50
    #: Seconds an invitation to a game or a tournament stays open (docs/API.md, "Consent").
    invitation_ttl_s: int = 86400
    #: Invitations one organiser (or the operator) may have pending at once.
    max_pending_invitations: int = 200
    #: A game whose stream reaches this many events ends, aborted and unrated
    #: (recorded in its stream; 0: no cap).  Recorded in each new game's
    #: ``GameCreated``, so changing it changes only games created afterwards.
    max_game_events: int = 20000
    #: Events in one page of ``GET /v1/games/{id}/events`` (``limit``): the
    #: default and the most a client may ask for.
    feed_page_default: int = 1000
    feed_page_max: int = 5000
    #: Expensive computations (audits, time travel, exports) one API process
    #: runs at once; others wait up to ``expensive_wait_seconds``, then 503.
    expensive_concurrency: int = 2
    expensive_wait_seconds: float = 10.0
    #: The clock of a game created without one (``"clock"`` absent or null): a deadline of this
    #: many seconds per decision (``QD_DEFAULT_DEADLINE_S``; ``0`` or ``none``: no clock), so
    #: abandoned games end too (``service/domain/clocks.py``, docs/CLOCKS.md).
    default_deadline_s: int | None = 3 * 24 * 3600
    #: Seconds between two looks of the worker for clocks that ran out (``workers/timeouts.py``).
    timeout_tick_seconds: float = 0.25
    #: A state snapshot is stored every this many events (cold command path).
    snapshot_every: int = 200
    pool_min: int = 1
    pool_max: int = 10
    #: Seconds a request waits for a PostgreSQL connection before a 503.
    pool_timeout: float = 5.0
    #: Redis connections one process opens at most.  Its requests share them: a crowd of
    #: waiters woken by one announcement queues for a connection instead of opening one
    #: each (hundreds at once, which a busy server was slow to accept), and no client can
    #: make a process hold more than this many.
    redis_pool_max: int = 64
    #: Seconds a request waits for a Redis connection before a 503.
    redis_pool_timeout: float = 5.0
    #: States kept in the command path's in-process cache.
    state_cache_size: int = 2048
    log_level: str = "INFO"
    #: RQ's own log level in the workers: RQ logs two lines per job at INFO, and
    #: projection jobs are many and short, so it speaks only of problems unless asked.
    rq_log_level: str = "WARNING"
    #: Seconds between the projection worker's sweeps for lagging games (``workers/__main__.py``).
    sweep_seconds: float = 5.0
    #: Processes ``make rebuild`` folds games with side by side (0: one per CPU).
    rebuild_processes: int = 0
    #: Projection shards: a drain job per shard, so at most this many workers
    #: project side by side (``projections/keys.py``).  Set it to the number
    #: of RQ workers; one worker needs one.
    projection_shards: int = 1
    #: Seconds a finished game's read model (its Redis hash: views, legal lists,
    #: checkpoint) stays in Redis after it finishes; a read after that brings it
    #: back through the normal catch-up (``projections/runner.py``).  0: for ever.
    finished_retention_s: int = 7 * 24 * 3600
    #: Seconds a drain job stays on after draining, projecting new commits as
    #: they arrive instead of leaving each to a new RQ job (0: never).
    projection_linger: float = 1.0
    #: Seconds a lingering drain job waits after projecting a batch before it looks
    #: for the next, so that commits arriving meanwhile share one batch's round trips
    #: (0: look at once); it only delays commits that arrive while the job is busy.
    projection_gather: float = 0.002
    #: Games whose last projection a worker keeps in memory (checkpoint and folded state),
    #: so that projecting each again reads neither back from Redis (0: none); each a few
    #: kB to tens of kB (``projections.runner.Checkpoints``).
    projection_cache: int = 1024
    #: The secret house bots' keys are derived from (``QD_BOT_SECRET``; unset: ``ADMIN_TOKEN``).
    #: ``make bots`` keys the bots with it and the bot worker derives the same keys; a new
    #: secret re-keys them at the next ``make bots``.  Neither set: no bot can act.
    bot_secret: str | None = None
    #: The bot worker's RQ queue (``workers/bots.py``).
    bot_queue: str = "bots"
    #: Bot jobs waiting at most; beyond it a turn is left to the worker's next resync.
    bot_queue_max: int = 1000
    #: Seconds between two resyncs of the bot worker: each bot's turns now, as an
    #: account stream starts with them (what pub/sub may have dropped).
    bot_resync_seconds: float = 30.0

    #: Analyses of finished games (docs/API.md "Analysis"; ``workers/analysis.py``): the RQ
    #: queue, the jobs waiting at most (503 ``busy`` beyond), the new analyses one account
    #: may ask for in a UTC day and one address without an account (429
    #: ``analysis_quota`` beyond; asking for one computed or being computed is free),
    #: seconds an analysis is kept in Redis, and the CPU seconds of the level-3 search at
    #: each decision.
    analysis_queue: str = "analysis"
    analysis_queue_max: int = 100
    analysis_per_day: int = 20
    analysis_per_day_address: int = 5
    analysis_ttl_s: int = 30 * 24 * 3600
    analysis_search_cpu_s: float = 0.05

    @property
    def bot_key_secret(self) -> str | None:
        """What house bots' keys are derived from (``bot_secret``, else ``admin_token``)."""
        return self.bot_secret or self.admin_token

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        """Every setting from its variable (:func:`env_name`); unset or empty
        keeps the default.  A value of the wrong type is a clear error."""
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = env_name(f.name)
            raw = env.get(name)
            if f.name == "default_deadline_s":
                values[f.name] = _deadline(raw)
            elif raw is not None and raw.strip() != "":
                values[f.name] = _parse(name, raw, f.default)
        for name in _AT_LEAST_ONE:
            if name in values:
                values[name] = max(1, values[name])
        return cls(**values)

    @property
    def queue_url(self) -> str:
        """The Redis of the RQ queue and the projection nudge."""
        return self.queue_redis_url or self.redis_url

    @property
    def read_url(self) -> str:
        """The Redis (or Redis Cluster) of the read models, announcements and limits."""
        return self.read_redis_url or self.redis_url

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **changes)
