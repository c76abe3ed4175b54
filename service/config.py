"""Settings from the environment.  Nothing here connects to anything."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any


def _int(env: dict[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from exc


@dataclass(frozen=True)
class Settings:
    database_url: str = "postgresql://postgres@127.0.0.1:5432/quarterdeck"
    redis_url: str = "redis://127.0.0.1:6379/0"
    #: Organiser token; when unset, organiser-only endpoints are disabled (403).
    admin_token: str | None = None
    #: RQ queue that carries projection jobs.
    queue_name: str = "quarterdeck-projections"
    #: Largest request body accepted, in bytes.
    max_body_bytes: int = 64 * 1024
    #: Deepest JSON nesting accepted in a request body.
    max_json_depth: int = 32
    #: Upper bound for ``?min_version=`` waits, in seconds.
    max_wait_seconds: float = 10.0
    #: A state snapshot is stored every this many events (cold command path).
    snapshot_every: int = 200
    pool_min: int = 1
    pool_max: int = 10
    #: Seconds a request waits for a PostgreSQL connection before a 503.
    pool_timeout: float = 5.0
    #: States kept in the command path's in-process cache.
    state_cache_size: int = 2048
    log_level: str = "INFO"
    #: Projection shards: a drain job per shard, so at most this many workers
    #: project side by side (``projections/keys.py``).  Set it to the number
    #: of RQ workers; one worker needs one.
    projection_shards: int = 1
    #: Seconds a drain job stays on after draining, projecting new commits as
    #: they arrive instead of leaving each to a new RQ job (0: never).
    projection_linger: float = 1.0

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        return cls(
            database_url=env.get("DATABASE_URL") or cls.database_url,
            redis_url=env.get("REDIS_URL") or cls.redis_url,
            admin_token=env.get("ADMIN_TOKEN") or None,
            queue_name=env.get("QD_QUEUE") or cls.queue_name,
            max_body_bytes=_int(env, "QD_MAX_BODY_BYTES", cls.max_body_bytes),
            max_json_depth=_int(env, "QD_MAX_JSON_DEPTH", cls.max_json_depth),
            max_wait_seconds=float(env.get("QD_MAX_WAIT_SECONDS") or cls.max_wait_seconds),
            snapshot_every=_int(env, "QD_SNAPSHOT_EVERY", cls.snapshot_every),
            pool_min=_int(env, "QD_POOL_MIN", cls.pool_min),
            pool_max=_int(env, "QD_POOL_MAX", cls.pool_max),
            pool_timeout=float(env.get("QD_POOL_TIMEOUT") or cls.pool_timeout),
            state_cache_size=_int(env, "QD_STATE_CACHE", cls.state_cache_size),
            log_level=env.get("QD_LOG_LEVEL") or cls.log_level,
            projection_shards=max(1, _int(env, "QD_PROJECTION_SHARDS", cls.projection_shards)),
            projection_linger=float(env.get("QD_PROJECTION_LINGER") or cls.projection_linger),
        )

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **changes)
