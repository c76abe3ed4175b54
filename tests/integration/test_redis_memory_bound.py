"""docs/SCALING.md "Redis memory": the embedded Valkey of ``make run``
(``devtools/devservices.py``) and compose's Redis are bounded by
``maxmemory`` with ``noeviction`` (a full Redis refuses writes; it never
evicts read models, queues or nudge marks silently)."""

from __future__ import annotations

from pathlib import Path

import redis
import yaml

from devtools import devservices

ROOT = Path(__file__).resolve().parents[2]


def test_the_embedded_valkey_is_bounded_and_never_evicts(tmp_path, monkeypatch):
    monkeypatch.setenv("QD_REDIS_MAXMEMORY", "64mb")
    vdir = tmp_path / "valkey"
    port = devservices._valkey_start(vdir)
    try:
        r = redis.Redis(port=port)
        assert r.config_get("maxmemory") == {"maxmemory": str(64 * 1024 * 1024)}
        assert r.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
    finally:
        devservices._valkey_stop(vdir)


def test_compose_bounds_redis_and_never_evicts():
    command = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["redis"]["command"]
    assert command[command.index("--maxmemory-policy") + 1] == "noeviction"
    assert command[command.index("--maxmemory") + 1] == "${QD_REDIS_MAXMEMORY:-1gb}"
