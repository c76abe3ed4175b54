"""The audit, time travel and export on honest games (real PostgreSQL and Redis).

Games are played through the real command path (``GameService.submit``: decide,
seal, append) without HTTP in between, to keep full games cheap."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from typing import Any

import pytest
from support import auth

from projections.runner import project_game
from service.audit import checks as audit
from service.domain.replay import fold_stream
from service.games import registry


def play_fast(app: Any, created: dict[str, Any], seed: int = 0, stop_after: int | None = None) -> int:
    """Play ``created`` to the end (or ``stop_after`` intents) by random legal intents."""
    games = app.extensions["quarterdeck"].games
    gid = created["id"]
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    chooser = random.Random(seed)
    posted = 0
    while stop_after is None or posted < stop_after:
        loaded = games.load(gid)
        with loaded.lock:
            games.refresh(loaded)
            if loaded.finished:
                return posted
            seat = chooser.choice(loaded.engine.to_act(loaded.state))
            command = chooser.choice(loaded.engine.legal(loaded.state, seat))
        games.submit(gid, tokens[seat], command, None, None, f"h{posted}")
        posted += 1
    return posted


@pytest.fixture
def finished_game(app, ctx, new_game):
    def make(game: str = "nauticus", seed: int = 1) -> dict[str, Any]:
        created = new_game(game, ["ann", "bob"])
        play_fast(app, created, seed)
        project_game(ctx.redis, ctx.store, created["id"])
        return created

    return make


@pytest.mark.parametrize("game", registry.names())
def test_audit_passes_on_a_finished_game_of_every_engine(client, finished_game, game):
    created = finished_game(game)
    resp = client.get(f"/v1/games/{created['id']}/audit")  # no token: the game is over
    assert resp.status_code == 200
    report = resp.get_json()
    assert report["ok"] is True, report
    assert set(report["checks"]) == {"hash_chain", "seed", "redecide", "projection"}
    checks = report["checks"]
    assert all(c["ok"] and not c.get("skipped") for c in checks.values()), checks
    assert checks["hash_chain"]["details"]["digests_checked"] is True
    assert checks["hash_chain"]["details"]["first_broken_seq"] is None
    assert checks["seed"]["details"]["revealed_matches"] is True
    assert checks["seed"]["details"]["stored_matches"] is True
    assert checks["redecide"]["details"]["intents"] > 10
    assert checks["redecide"]["details"]["first_divergence"] is None
    assert report["status"] == "finished" and report["rules_version"] == registry.get(game).version


def test_running_game_audit_needs_the_organiser(client, app, new_game, settings):
    created = new_game("nauticus", ["ann", "bob"])
    play_fast(app, created, 3, stop_after=10)
    url = f"/v1/games/{created['id']}/audit"
    assert client.get(url).status_code == 401
    assert client.get(url, headers=auth(created["seats"][0]["token"])).status_code == 403
    report = client.get(url, headers=auth(settings.admin_token)).get_json()
    assert report["ok"] is True, report
    seed = report["checks"]["seed"]
    assert seed["details"]["revealed"] is False and seed["details"]["stored_matches"] is True
    assert report["checks"]["redecide"]["details"]["seed_source"] == "stored"
    assert report["status"] == "active"


def test_time_travel_rebuilds_any_version(client, app, ctx, new_game, settings):
    created = new_game("waters-of-nereus", ["ann", "bob"])
    gid = created["id"]
    play_fast(app, created, 5, stop_after=25)
    head = ctx.store.version(gid)
    url = f"/v1/games/{gid}/state"
    # While the game runs: organiser only, even for a seat.
    assert client.get(f"{url}?version=3").status_code == 401
    assert client.get(f"{url}?version=3", headers=auth(created["seats"][1]["token"])).status_code == 403
    engine = registry.get("waters-of-nereus")
    for version in (2, head // 2, head):
        body = client.get(f"{url}?version={version}&seat=1", headers=auth(settings.admin_token)).get_json()
        expected = fold_stream(engine, ctx.store.read(gid, upto=version))
        assert body["version"] == version and body["head"] == head
        assert body["state"] == expected
        assert body["view"] == engine.view(expected, 1)
        assert body["hash"] == ctx.store.read(gid, after=version - 1, upto=version)[0].hash
    bad = client.get(f"{url}?version={head + 1}", headers=auth(settings.admin_token))
    assert bad.status_code == 422 and bad.get_json()["error"]["code"] == "invalid_version"
    assert client.get(f"{url}?seat=7", headers=auth(settings.admin_token)).status_code == 422
    # Once finished: anyone, any version.
    play_fast(app, created, 5)
    body = client.get(f"{url}?version=2").get_json()
    assert body["version"] == 2 and body["finished"] is False
    final = client.get(url).get_json()
    assert final["finished"] is True and final["result"] is not None and final["to_act"] == []


def test_rules_version_is_pinned(client, finished_game, monkeypatch):
    created = finished_game("nauticus")
    gid = created["id"]
    engine = registry.get("nauticus")
    monkeypatch.setattr(engine, "version", "99.0.0-test")
    report = client.get(f"/v1/games/{gid}/audit").get_json()
    assert report["ok"] is False
    redecide = report["checks"]["redecide"]
    assert redecide["details"]["error"] == "rules_version_unavailable"
    assert "1.0.0" in redecide["summary"] and "99.0.0-test" in redecide["summary"]
    resp = client.get(f"/v1/games/{gid}/state?version=3")
    assert resp.status_code == 409 and resp.get_json()["error"]["code"] == "rules_version_unavailable"


def test_export_endpoint_and_cli_bundle_verify(client, finished_game, settings, tmp_path):
    created = finished_game("nauticus", seed=4)
    gid = created["id"]
    resp = client.get(f"/v1/games/{gid}/export")
    assert resp.status_code == 200 and "attachment" in resp.headers["Content-Disposition"]
    bundle = resp.get_json()
    assert bundle["format"] == "quarterdeck-audit-bundle" and bundle["status"] == "finished"
    assert bundle["game"]["rules_version"] == "1.0.0" and len(bundle["seed"]) == 64
    path = tmp_path / "api.json"
    path.write_bytes(resp.data)

    env = dict(os.environ, DATABASE_URL=settings.database_url, REDIS_URL=settings.redis_url)
    cli = [sys.executable, "-m", "service"]
    out = subprocess.run([*cli, "audit", gid], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "AUDIT OK" in out.stdout and "[ok  ] redecide" in out.stdout
    cli_path = tmp_path / "cli.json"
    out = subprocess.run([*cli, "export", gid, "--out", str(cli_path)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    out = subprocess.run([*cli, "replay", gid, "12", "--seat", "0"], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and "after 12 of" in out.stdout and "view of seat 0" in out.stdout, out.stderr
    for p in (path, cli_path):
        out = subprocess.run(
            [sys.executable, "-m", "service", "verify", str(p)], capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0 and "VERIFIED" in out.stdout, out.stdout + out.stderr


def test_running_game_export_needs_the_organiser_and_has_no_seed(client, app, new_game, settings):
    created = new_game("nauticus", ["ann", "bob"])
    play_fast(app, created, 2, stop_after=5)
    url = f"/v1/games/{created['id']}/export"
    assert client.get(url).status_code == 401
    bundle = client.get(url, headers=auth(settings.admin_token)).get_json()
    assert bundle["status"] == "active" and bundle["seed"] is None
    from service.audit import verify

    report = verify.verify_bundle(bundle, redecide=audit.redecide_dicts)
    assert report["ok"] is True
    assert report["checks"]["hash_chain"]["details"]["digests_checked"] is False
    assert report["checks"]["redecide"].get("skipped") is True


def test_audit_of_unknown_game_is_404(client):
    resp = client.get("/v1/games/00000000-0000-4000-8000-000000000000/audit")
    assert resp.status_code == 404


def test_openapi_describes_the_audit_endpoints(client):
    spec = client.get("/openapi.json").get_json()
    paths = spec["paths"]
    for suffix in ("events", "state", "audit", "export"):
        assert f"/v1/games/{{game_id}}/{suffix}" in paths
    feed = paths["/v1/games/{game_id}/events"]["get"]
    assert "application/x-ndjson" in feed["responses"]["200"]["content"]
    assert {p["name"] for p in feed["parameters"]} >= {"after", "follow", "timeout"}
    assert "AuditOut" in str(paths["/v1/games/{game_id}/audit"]["get"]["responses"]["200"])
    assert audit.CHECKS == ("hash_chain", "seed", "redecide", "projection")


def test_audit_without_redis_still_checks_the_stream(app, ctx, new_game):
    """Replay and audit need PostgreSQL only; the projection check says Redis is away."""
    import redis

    created = new_game("nauticus", ["ann", "bob"])
    play_fast(app, created, 6, stop_after=6)
    away = redis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2, socket_timeout=0.2)
    report = audit.audit_game(ctx.store, away, created["id"])
    assert report.checks["projection"].ok is False
    assert report.checks["projection"].details["error"] == "redis_unavailable"
    assert all(report.checks[c].ok for c in ("hash_chain", "seed", "redecide"))
    assert "[FAIL] projection" in report.render() and "AUDIT FAILED" in report.render()
