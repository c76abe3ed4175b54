"""Point-in-time recovery (docs/RELIABILITY.md, "Point-in-time recovery"): a private
PostgreSQL archives its WAL continuously with pgBackRest into a local repository; a
full backup is taken; a game is played, three intents before a known moment and
three after; ``make restore-pitr`` (``scripts/restore_pitr.py``) brings the event
store back to that moment in a new data folder and rebuilds the read models.

Checked: exactly the intents before the moment are in the restored stream (their
Idempotency-Keys answer as first answered; the later ones are gone and may be
decided anew), the read model shows the restored version, the game audits ok."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import pytest
from support.cluster_servers import Processes
from support.ha_servers import binaries
from support.live import free_port
from support.servers import PostgresServer, RedisServer, _pg_bin

from service.config import Settings

ROOT = Path(__file__).resolve().parents[2]
STANZA = "qd"
ADMIN = "pitr-admin-" + uuid.uuid4().hex[:8]

pytestmark = pytest.mark.timeout(300)


def _as_postgres(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@pytest.fixture
def archived(tmp_path_factory):
    binaries()
    if not shutil.which("pgbackrest"):
        pytest.fail("pgbackrest is missing: run 'make ha-packages' as root", pytrace=False)
    base = Path(tempfile.mkdtemp(prefix="qd-pitr-"))
    os.chmod(base, 0o755)
    repo = base / "backrest"
    for sub in ("repo", "log", "lock", "spool"):
        (repo / sub).mkdir(parents=True)
    conf = repo / "pgbackrest.conf"
    pg = PostgresServer(base / "pg")
    conf.write_text(
        "[global]\n"
        f"repo1-path={repo / 'repo'}\nrepo1-retention-full=2\nlog-path={repo / 'log'}\n"
        f"lock-path={repo / 'lock'}\nspool-path={repo / 'spool'}\nstart-fast=y\nlog-level-console=warn\n"
        f"[{STANZA}]\npg1-path={pg.data}\npg1-port={pg.port}\npg1-socket-path={pg.data}\npg1-user=postgres\n"
    )
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        for path in [repo, conf, *repo.iterdir()]:
            os.chown(path, pw.pw_uid, pw.pw_gid)
    redis_server = RedisServer(base / "redis")
    restored = base / "restored"
    env = {**os.environ, "PGBACKREST_CONFIG": str(conf), "PGBACKREST_STANZA": STANZA}
    try:
        pg.init()
        with (pg.data / "postgresql.conf").open("a") as f:
            # Continuous archiving: every WAL segment goes to the repository.
            f.write(
                f"archive_mode = on\narchive_command = 'pgbackrest --config={conf} --stanza={STANZA} archive-push %p'\n"
            )
        pg.start()
        redis_server.start()
        for step in ("stanza-create", "check"):
            subprocess.run(_as_postgres(["pgbackrest", f"--config={conf}", f"--stanza={STANZA}", step]), check=True)
        yield {"base": base, "pg": pg, "redis": redis_server, "conf": conf, "env": env, "restored": restored}
    finally:
        if (restored / "postmaster.pid").exists():
            subprocess.run(_as_postgres([_pg_bin("pg_ctl"), "-D", str(restored), "-m", "immediate", "stop"]))
        with contextlib.suppress(Exception):
            redis_server.kill()
        pg.stop("immediate")
        shutil.rmtree(base, ignore_errors=True)


def _post(client, gid: str, token: str, key: str, version: int):
    legal = client.get(
        f"/v1/games/{gid}/legal?min_version={version}", headers={"Authorization": f"Bearer {token}"}
    ).get_json()
    intent = next(i for i in legal["intents"] if i["type"] != "resign")
    body = {"intent": intent, "expected_version": legal["version"]}
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": key}
    resp = client.post(f"/v1/games/{gid}/intents", json=body, headers=headers)
    assert resp.status_code == 201, resp.get_data(as_text=True)
    return body, resp.get_json()


def test_restore_to_a_moment_between_two_intents(archived):
    from service.adapters.migrate import migrate
    from service.http.app import create_app

    pg, env = archived["pg"], archived["env"]
    settings = Settings(
        database_url=pg.url("quarterdeck"), redis_url=archived["redis"].url(), rate_limits=False, admin_token=ADMIN
    )
    migrate(settings.database_url)
    subprocess.run(
        _as_postgres(["pgbackrest", f"--config={archived['conf']}", f"--stanza={STANZA}", "--type=full", "backup"]),
        check=True,
    )
    worker = Processes(
        archived["base"] / "processes", {"DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url}
    )
    worker.start_worker()  # the read models the clients read
    app = create_app(settings, TESTING=True)
    client = app.test_client()
    made = client.post("/v1/games", json={"game": "nauticus", "players": ["ann", "bob"]}).get_json()
    gid, tokens = made["id"], {s["seat"]: s["token"] for s in made["seats"]}

    version = [made["version"]]

    def play(n: int, label: str) -> list[tuple[str, dict, dict]]:
        out = []
        for i in range(n):
            state = client.get(f"/v1/games/{gid}?min_version={version[0]}").get_json()
            seat = state["to_act"][0]
            key = f"{label}-{i}-{uuid.uuid4().hex[:6]}"
            body, answer = _post(client, gid, tokens[seat], key, version[0])
            out.append((key, body, answer | {"seat": seat}))
            version[0] = answer["version"]
        return out

    before = play(3, "before")
    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        moment = conn.execute("SELECT clock_timestamp()::text").fetchone()[0]
    time.sleep(1.0)  # commit times on either side of the moment, well apart
    after = play(3, "after")
    version_before, version_after = before[-1][2]["version"], after[-1][2]["version"]
    # The WAL of the later intents reaches the repository (``check`` switches WAL and waits).
    subprocess.run(
        _as_postgres(["pgbackrest", f"--config={archived['conf']}", f"--stanza={STANZA}", "check"]), check=True
    )
    app.extensions["quarterdeck"].store.pool.close()
    worker.stop()

    port = free_port()
    started = time.monotonic()
    restored = subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.restore_pitr",
            "--time",
            moment,
            "--data",
            str(archived["restored"]),
            "--port",
            str(port),
            "--no-archive",
        ],
        cwd=ROOT,
        env={**env, "DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url},
        capture_output=True,
        text=True,
        timeout=240,
    )
    took = time.monotonic() - started
    assert restored.returncode == 0, restored.stdout[-3000:] + restored.stderr[-3000:]

    url = f"postgresql://postgres@127.0.0.1:{port}/quarterdeck"
    with psycopg.connect(url, autocommit=True) as conn:
        head = conn.execute("SELECT coalesce(max(seq), 0) FROM events WHERE game_id = %s", (gid,)).fetchone()[0]
        keys = {r[0] for r in conn.execute("SELECT key FROM intent_keys WHERE game_id = %s", (gid,))}
    print(
        f"\nPITR: restored to {moment} in {took:.1f} s (restore, recovery, rebuild); stream at {head} "
        f"(was {version_after}; {version_before} at the moment); keys kept {len(keys)} of "
        f"{len(before) + len(after)} ({len(before)} before the moment)"
    )
    assert head == version_before
    assert keys == {key for key, _, _ in before}

    restored_app = create_app(settings.with_(database_url=url), TESTING=True)
    try:
        rclient = restored_app.test_client()
        board = rclient.get(f"/v1/games/{gid}").get_json()
        assert board["version"] == version_before  # the rebuilt read model, not the lost head
        # The earlier intents answer as they first did; the later ones are decided anew.
        key, body, answer = before[-1]
        again = rclient.post(
            f"/v1/games/{gid}/intents",
            json=body,
            headers={"Authorization": f"Bearer {tokens[answer['seat']]}", "Idempotency-Key": key},
        )
        assert again.status_code == 201 and again.get_json().get("replayed") is True, again.get_data(as_text=True)
        key, body, answer = after[0]
        anew = rclient.post(
            f"/v1/games/{gid}/intents",
            json=body,
            headers={"Authorization": f"Bearer {tokens[answer['seat']]}", "Idempotency-Key": key},
        )
        assert anew.status_code == 201 and not anew.get_json().get("replayed"), anew.get_data(as_text=True)
        assert anew.get_json()["version"] == after[0][2]["version"]
        audit = rclient.get(f"/v1/games/{gid}/audit", headers={"Authorization": f"Bearer {ADMIN}"})
        assert audit.status_code == 200 and audit.get_json()["ok"], audit.get_data(as_text=True)
    finally:
        restored_app.extensions["quarterdeck"].store.pool.close()
