"""``make backup`` / ``make restore`` (service/adapters/backup.py) as a round trip:
games of every kind, accounts, the lobby, idempotency keys, a kept audit and a
finished tournament are dumped, restored into a new database and rebuilt into
another Redis database; every read-model key comes out byte for byte as the
original's.  A damaged, truncated or altered file and a non-empty target are
refused, and leave the target as it was."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from types import SimpleNamespace

import psycopg
import pytest
import redis
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from support import auth, play_fast, wait_for_feed_horizon
from support.accounts import accept_invitations, organiser, register, unique
from support.databases import fresh_settings, redis_dbs

from projections import keys, leaderboards
from projections import tournaments as tview
from service import cli
from workers import jobs

GAMES = ("nauticus", "nautilus-industries", "waters-of-nereus")
#: Bookkeeping of the catch-up sweep, not a read model (a rebuild deletes it; the next sweep writes it).
NOT_READ_MODELS = {keys.SWEEP_CURSOR.encode()}
#: The global feeds' cursors: the only values a rebased restore changes (the order stays).
CURSORS = {k.encode() for k in (keys.SWEEP_CURSOR, leaderboards.CURSOR, tview.CURSOR)}


def _resign_all_but_one(client, gid: str, tokens: list[str]) -> None:
    for token in tokens[:-1]:
        resp = client.post(f"/v1/games/{gid}/intents", json={"intent": {"type": "resign"}}, headers=auth(token))
        assert resp.status_code == 201, resp.get_json()


def _populate(client, app, ctx, settings, run_worker) -> None:
    """A little of everything the source of truth holds."""
    for i, kind in enumerate(GAMES):
        for players, finish in ((["ann", "bob"], True), (["ann", "bob", "cy"], False)):
            resp = client.post("/v1/games", json={"game": kind, "players": players, "options": {}})
            assert resp.status_code == 201, resp.get_json()
            game = resp.get_json()
            play_fast(app, game, seed=i, stop_after=12, intent_prefix=f"bk-{kind}-")
            if finish:
                _resign_all_but_one(client, game["id"], [s["token"] for s in game["seats"]])
                run_worker()
                audit = client.get(f"/v1/games/{game['id']}/audit")  # kept (game_audits)
                assert audit.status_code == 200, audit.get_json()
    # An Idempotency-Key answer (intent_keys).
    game = client.post("/v1/games", json={"game": "nauticus", "players": ["ann", "bob"], "options": {}}).get_json()
    resp = client.post(
        f"/v1/games/{game['id']}/intents",
        json={"intent": {"type": "resign"}},
        headers={**auth(game["seats"][0]["token"]), "Idempotency-Key": "bk-1"},
    )
    assert resp.status_code == 201, resp.get_json()
    # Accounts and the lobby: a table that started its game, one still open.
    (_, ann_key), (_, bob_key) = register(client, unique("bka")), register(client, unique("bkb"))
    table = client.post("/v1/tables", json={"game": "nauticus", "seats": 2}, headers=auth(ann_key)).get_json()
    started = client.post(f"/v1/tables/{table['id']}/join", headers=auth(bob_key))
    assert started.status_code == 200 and started.get_json()["game_id"], started.get_json()
    assert client.post("/v1/tables", json={"game": "nauticus", "seats": 3}, headers=auth(ann_key)).status_code == 201
    # A finished tournament: one round, one table of four.
    _, okey = organiser(client, settings)
    keys = dict(register(client, unique("bkt")) for _ in range(4))
    terms = {"name": "Backup cup", "game": "nauticus", "table_size": 4, "rounds": 1}
    tid = client.post("/v1/tournaments", json=terms, headers=auth(okey)).get_json()["id"]
    resp = client.post(f"/v1/tournaments/{tid}/players", json={"handles": list(keys)}, headers=auth(okey))
    assert resp.status_code == 200, resp.get_json()
    accept_invitations(client, keys.values())
    assert client.post(f"/v1/tournaments/{tid}/start", headers=auth(okey)).status_code == 200
    run_worker()
    table_game = client.get(f"/v1/tournaments/{tid}/rounds/1").get_json()["tables"][0]["game_id"]
    seated = ctx.store.read(table_game, upto=1)[0].data["players"]
    for handle in seated[:-1]:
        resp = client.post(
            f"/v1/games/{table_game}/intents", json={"intent": {"type": "resign"}}, headers=auth(keys[handle])
        )
        assert resp.status_code == 201, resp.get_json()
    run_worker()
    run_worker()
    assert client.get(f"/v1/tournaments/{tid}").get_json()["status"] == "finished"
    # Everything projected, the global projections and sweeps at the feeds' end (as a quiet worker leaves them).
    wait_for_feed_horizon(settings.database_url)
    jobs.sweep()
    run_worker()


def _read_models(r: redis.Redis) -> dict[bytes, object]:
    """Every key of a Redis database by value (not DUMP: the encoding of equal
    values can differ with their history)."""
    out: dict[bytes, object] = {}
    for key in r.scan_iter(count=1000):
        kind = r.type(key)
        if kind == b"hash":
            out[key] = r.hgetall(key)
        elif kind == b"zset":
            out[key] = r.zrange(key, 0, -1, withscores=True)
        elif kind == b"set":
            out[key] = sorted(r.smembers(key))
        elif kind == b"list":
            out[key] = r.lrange(key, 0, -1)
        elif kind == b"string":
            out[key] = r.get(key)
    return out


def _free_redis_dbs(redis_url: str, n: int) -> list[str]:
    base = redis.Redis.from_url(redis_url)
    kw = base.connection_pool.connection_kwargs
    own = kw.get("db", 0)
    found = []
    # Only this test process's own share (under pytest-xdist another worker's may be empty now, in use later).
    for db in redis_dbs():
        if db == own:
            continue
        r = redis.Redis(host=kw.get("host", "127.0.0.1"), port=kw.get("port", 6379), db=db)
        if r.dbsize() == 0:
            found.append(f"redis://{kw.get('host', '127.0.0.1')}:{kw.get('port', 6379)}/{db}")
        r.close()
        if len(found) == n:
            break
    base.close()
    if len(found) < n:
        pytest.skip("no free Redis database numbers for the rebuilt copies")
    return found


@pytest.fixture
def own(servers) -> Iterator[SimpleNamespace]:
    """A service of this test's own (database, Redis database, app, worker): the
    round trip compares EVERY read model, so nothing of other tests may share
    them (a session's tournaments left running would move under it)."""
    from rq import Queue

    from service.bootstrap import bootstrap
    from service.http.app import create_app
    from workers import context
    from workers.rq_worker import ProjectionWorker

    (db,) = _free_redis_dbs(servers[1], 1)
    with fresh_settings(*servers, redis_db=int(db.rsplit("/", 1)[1])) as settings:
        app = create_app(settings, TESTING=True)
        ctx = bootstrap(settings)
        before = context._ctx
        context.set_context(ctx)

        def run_worker() -> None:
            queue = Queue(settings.queue_name, connection=ctx.redis)
            ProjectionWorker([queue], connection=ctx.redis).work(burst=True, logging_level="WARNING")

        try:
            yield SimpleNamespace(settings=settings, app=app, client=app.test_client(), ctx=ctx, run_worker=run_worker)
        finally:
            context.set_context(before)
            ctx.close()
            app.extensions["quarterdeck"].store.pool.close()


@pytest.fixture
def targets(own):
    settings = own.settings
    """Names of new databases (dropped afterwards) and free Redis databases (flushed afterwards)."""
    base = conninfo_to_dict(settings.database_url)["dbname"]
    made: list[str] = []
    redises = _free_redis_dbs(settings.redis_url, 2)

    def database() -> str:
        name = f"{base}_r{len(made)}"
        made.append(name)
        return make_conninfo(settings.database_url, dbname=name)

    yield database, redises
    for url in redises:
        redis.Redis.from_url(url).flushdb()
    admin = make_conninfo(settings.database_url, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in made:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _run(monkeypatch, database_url: str, redis_url: str, *argv: str) -> int:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("REDIS_URL", redis_url)
    return cli.main(list(argv))


def _tables(database_url: str) -> list[str]:
    with psycopg.connect(database_url) as conn:
        return [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]


def test_backup_restore_rebuild_gives_the_same_read_models(own, targets, tmp_path, monkeypatch, capsys):
    client, app, ctx, settings, run_worker = own.client, own.app, own.ctx, own.settings, own.run_worker
    database, (redis_keep, redis_rebased) = targets
    _populate(client, app, ctx, settings, run_worker)
    original = _read_models(ctx.redis)
    dump = tmp_path / "qd.qdb.gz"
    assert _run(monkeypatch, settings.database_url, settings.redis_url, "backup", "--out", str(dump)) == 0
    assert "wrote" in capsys.readouterr().out
    assert _run(monkeypatch, settings.database_url, settings.redis_url, "restore", str(dump), "--check") == 0

    # Into a new database of the same server: tx_ids are kept, the cursors too.
    kept = database()
    assert _run(monkeypatch, kept, redis_keep, "restore", str(dump)) == 0
    out = capsys.readouterr().out
    assert "kept as dumped" in out and "restored" in out, out
    with psycopg.connect(settings.database_url) as a, psycopg.connect(kept) as b:
        for table in ("events", "games", "accounts", "lobby_seats", "tournament_events", "intent_keys"):
            q = sql.SQL("SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM {} t").format(sql.Identifier(table))
            assert a.execute(q).fetchone() == b.execute(q).fetchone(), table
        q = "SELECT position FROM events ORDER BY position DESC LIMIT 1"
        assert a.execute(q).fetchone() == b.execute(q).fetchone()
    assert _run(monkeypatch, kept, redis_keep, "rebuild", "--processes", "1") == 0
    rebuilt = _read_models(redis.Redis.from_url(redis_keep))
    want = {k: v for k, v in original.items() if _is_read_model(k) and k not in NOT_READ_MODELS}
    assert set(want) <= set(rebuilt), set(want) - set(rebuilt)
    # Only the hashes of games whose read model had left Redis (retention: tests/integration/test_retention.py).
    assert all(k.startswith(b"g:{") for k in set(rebuilt) - set(want)), set(rebuilt) - set(want)
    assert sum(k.startswith(b"g:{") for k in want) >= 9 and leaderboards.CURSOR.encode() in want
    for key in want:
        assert rebuilt[key] == want[key], key

    # Forced rebase (what a fresh server needs): the same read models but for the feeds' cursors.
    rebased = database()
    assert _run(monkeypatch, rebased, redis_rebased, "restore", str(dump), "--rebase-feed", "yes") == 0
    assert "rebased" in capsys.readouterr().out
    with psycopg.connect(rebased) as conn:
        n, top, txs = conn.execute("SELECT count(*), max(position), count(DISTINCT tx_id) FROM events").fetchone()
        assert top == n and txs == 1
    assert _run(monkeypatch, rebased, redis_rebased, "rebuild", "--processes", "1") == 0
    again = _read_models(redis.Redis.from_url(redis_rebased))
    assert set(again) == set(rebuilt)
    for key in again:
        if key not in CURSORS:
            assert again[key] == rebuilt[key], key
    # Every restored event is visible to the feed readers, and any event written from now on sorts after them.
    with psycopg.connect(rebased) as conn:
        below, after = conn.execute(
            "SELECT max(tx_id) < pg_snapshot_xmin(pg_current_snapshot()), max(tx_id) < pg_current_xact_id() FROM events"
        ).fetchone()
    assert below and after


def _is_read_model(key: bytes) -> bool:
    if key.startswith(b"games:tmp:"):  # a game list's intersection, kept for 5 s
        return False
    return key.startswith((b"g:{", b"games:", b"lb:", b"t:{", b"tournaments:"))


def test_a_damaged_truncated_or_altered_file_and_a_non_empty_target_are_refused(
    own, targets, tmp_path, monkeypatch, capsys
):
    client, settings = own.client, own.settings
    database, (redis_url, _) = targets
    client.post("/v1/games", json={"game": "nauticus", "players": ["ann", "bob"], "options": {}})
    dump = tmp_path / "qd.qdb.gz"
    assert _run(monkeypatch, settings.database_url, settings.redis_url, "backup", "--out", str(dump)) == 0
    raw = dump.read_bytes()
    plain = gzip.decompress(raw)

    damaged = tmp_path / "damaged.qdb.gz"
    damaged.write_bytes(raw[: len(raw) // 2] + bytes([raw[len(raw) // 2] ^ 0xFF]) + raw[len(raw) // 2 + 1 :])
    truncated = tmp_path / "truncated.qdb.gz"
    truncated.write_bytes(raw[: len(raw) * 2 // 3])
    cut = tmp_path / "cut.qdb.gz"  # a whole gzip stream, ending in the middle of the events
    cut.write_bytes(gzip.compress(plain[: plain.index(b'{"table": "intent_keys"')]))
    altered = tmp_path / "altered.qdb.gz"  # one digit of one row changed, gzip'd again
    at = plain.index(b'{"table": "seat_tokens"') - 10
    digit = b"1" if plain[at : at + 1] != b"1" else b"2"
    altered.write_bytes(gzip.compress(plain[:at] + digit + plain[at + 1 :]))
    capsys.readouterr()
    for bad in (damaged, truncated, cut, altered):
        target = database()
        assert _run(monkeypatch, target, redis_url, "restore", str(bad)) == 2, bad.name
        err = capsys.readouterr().err
        assert "nothing was restored" in err and ("damaged" in err or "truncated" in err or "SHA-256" in err), err
        assert _tables(target) == [], bad.name  # one transaction: nothing left behind
        assert _run(monkeypatch, target, redis_url, "restore", str(bad), "--check") == 2

    # The original database is not empty: refused, untouched.
    assert _run(monkeypatch, settings.database_url, redis_url, "restore", str(dump)) == 2
    assert "not empty" in capsys.readouterr().err
