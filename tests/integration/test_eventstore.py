"""The event store against a real PostgreSQL: concurrency, density, append-only,
the global feed's late-commit safety, hashing."""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
import pytest
from psycopg.types.json import Jsonb
from support import wait_for_feed_horizon

from service.adapters.eventstore import Conflict
from service.domain import canonical
from service.domain.pipeline import created_data, seal
from service.domain.records import FoldBatch, GameRecord, NewEvent
from service.service_layer.commands import now_iso

SEED = bytes(range(32))


def _database(settings, suffix: str):
    """A database of its own (dropped afterwards): (url, store)."""
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    from psycopg_pool import ConnectionPool

    from service.adapters.eventstore import EventStore
    from service.adapters.migrate import migrate

    name = conninfo_to_dict(settings.database_url)["dbname"] + suffix
    url = make_conninfo(settings.database_url, dbname=name)
    migrate(url)
    pool = ConnectionPool(url, min_size=1, max_size=10, open=True)
    yield url, EventStore(pool)
    pool.close()
    with psycopg.connect(make_conninfo(settings.database_url, dbname="postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="module")
def private_db(settings):
    """A database of its own: these tests write raw streams (events no engine
    knows) that a session-wide rebuild must never meet."""
    yield from _database(settings, "_es")


@pytest.fixture(scope="module")
def bulk_store(settings):
    """Another: the long appends below would push the other tests' events past
    the first page of the global feed they read."""
    yield from _database(settings, "_es_bulk")


@pytest.fixture
def store(private_db):
    return private_db[1]


def _game(store) -> str:
    """A real game's opening (so sweeps and rebuilds in the same session can
    project it), without the engine's setup events."""
    gid = str(uuid.uuid4())
    record = GameRecord(gid, "nautilus-industries", "1.0.0", ["a", "b"], {}, "c" * 64, now_iso())
    meta = {"seat": None, "received_at": record.created_at}
    opening = created_data(record.players, record.game, record.rules_version, {}, record.seed_commitment)
    store.create_game(
        record,
        SEED,
        [b"x" * 32, b"y" * 32],
        seal(SEED, gid, 1, canonical.GENESIS, [NewEvent("GameCreated", opening, meta)]),
    )
    return gid


def _event(i: int) -> NewEvent:
    return NewEvent("Thing", {"i": i}, {"seat": 0})


def test_eight_writers_same_expected_version_exactly_one_wins(store):
    """Optimistic concurrency: the primary key (game_id, seq) lets one writer win."""
    gid = _game(store)
    head = store.read(gid)[-1]
    barrier = threading.Barrier(8)
    outcomes: list[str] = []
    lock = threading.Lock()

    def writer(i: int) -> None:
        barrier.wait()
        try:
            store.append(gid, 1, seal(SEED, gid, 1 + 1, head.hash, [_event(i), _event(i + 100)]))
            result = "won"
        except Conflict:
            result = "conflict"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict"] * 7 + ["won"]
    seqs = [e.seq for e in store.read(gid)]
    assert seqs == [1, 2, 3], "dense, no gap, no duplicate"
    # The two events of the winner are both there and belong together.
    events = store.read(gid)
    assert events[1].data["i"] + 100 == events[2].data["i"]


def test_append_at_a_stale_or_future_version_is_a_conflict(store):
    gid = _game(store)
    head = store.read(gid)[-1]
    with pytest.raises(Conflict):
        store.append(gid, 0, seal(SEED, gid, 0 + 1, canonical.GENESIS, [_event(1)]))
    with pytest.raises(Conflict):
        store.append(gid, 5, seal(SEED, gid, 5 + 1, head.hash, [_event(1)]))  # would leave a gap
    assert store.version(gid) == 1


@pytest.mark.parametrize("size", [1, 7, 8, 50, 1000, 1003])
def test_an_append_of_any_size_stores_every_event_in_order_and_guards_the_head(bulk_store, size):
    """Appends of 7 events and more (past psycopg's 50-parameter cache of
    converted queries) and past one statement's 1,000 rows store every event,
    in order, and the head guard still refuses a stale append of the same size."""
    store = bulk_store[1]
    gid = _game(store)
    head = store.read(gid)[-1]
    store.append(gid, 1, seal(SEED, gid, 2, head.hash, [_event(i) for i in range(size)]))
    events = store.read(gid)
    assert [e.seq for e in events] == list(range(1, size + 2))
    assert [e.data["i"] for e in events[1:]] == list(range(size))
    with pytest.raises(Conflict):
        store.append(gid, 1, seal(SEED, gid, 2, head.hash, [_event(i) for i in range(size)]))
    assert store.version(gid) == size + 1


def test_events_are_append_only(store, private_db):
    gid = _game(store)
    with psycopg.connect(private_db[0]) as conn:
        with pytest.raises(psycopg.DatabaseError, match="append-only"):
            conn.execute("UPDATE events SET data = '{}' WHERE game_id = %s", (uuid.UUID(gid),))
        conn.rollback()
        with pytest.raises(psycopg.DatabaseError, match="append-only"):
            conn.execute("DELETE FROM events WHERE game_id = %s", (uuid.UUID(gid),))
        conn.rollback()
    assert store.version(gid) == 1


def test_hash_chain_links_every_event(store):
    gid = _game(store)
    head = store.read(gid)[-1]
    store.append(gid, 1, seal(SEED, gid, 1 + 1, head.hash, [_event(1), _event(2)]))
    events = store.read(gid)
    prev = canonical.GENESIS
    for e in events:
        dd, md, h = canonical.seal(SEED, gid, e.seq, e.type, e.schema_version, e.data, e.meta, prev)
        assert (e.prev_hash, e.data_digest, e.meta_digest, e.hash) == (prev, dd, md, h)
        prev = e.hash


def test_global_feed_never_skips_a_late_commit(store, private_db):
    """The late-commit gap: a transaction that took its position early but
    commits late must still be read by a consumer that already moved on."""
    gid_slow, gid_fast = _game(store), _game(store)
    cursor = store.read_all()[-1][0] if store.read_all() else ("0", 0)
    # Drain everything already committed.
    while rows := store.read_all(after=cursor):
        cursor = rows[-1][0]

    slow = psycopg.connect(private_db[0])
    head_slow = store.read(gid_slow)[-1]
    _dd, _md, h = canonical.seal(SEED, gid_slow, 2, "Late", 1, {}, {}, head_slow.hash)
    slow.execute(
        "INSERT INTO events (game_id, seq, type, data, meta, hash) VALUES (%s, 2, 'Late', '{}', '{}', %s)",
        (uuid.UUID(gid_slow), bytes.fromhex(h)),
    )  # open transaction: holds an xid and a position, not committed
    head_fast = store.read(gid_fast)[-1]
    store.append(
        gid_fast, 1, seal(SEED, gid_fast, 1 + 1, head_fast.hash, [_event(7)])
    )  # commits after the slow one began

    # (The openings may still come: the horizon is server-wide, and another session's
    # transaction, open while we drained, may have held them back.)
    seen = [(c, e) for c, e in store.read_all(after=cursor) if e.seq > 1]
    assert [e.type for _, e in seen] == [], "nothing may be read past an open transaction"
    slow.commit()
    slow.close()
    # The horizon is server-wide: another session's open transaction may hold
    # it back a little longer, never let it skip.  Wait for it to pass.
    deadline = time.monotonic() + 30
    while (
        len(seen := [(c, e) for c, e in store.read_all(after=cursor) if e.seq > 1]) < 2 and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert [(e.game_id, e.type) for _, e in seen][:2] == [(gid_slow, "Late"), (gid_fast, "Thing")]


def _fold(store, gid, after=0):
    """One game's stretch as a projection reads it, parsed."""
    return FoldBatch.parse(store.read_for_fold({gid: after})[gid])


def test_read_for_fold_gives_what_read_gives(store):
    """Projections read types and data joined from the stored
    json text (migration 0008): the same values, in the same key order, as the
    full rows, with the arrival times a read model needs."""
    gid = _game(store)
    awkward = {"quote": 'a"b', "backslash": "c\\d", "unicode": "Nereus ⚓ é", "nested": {"z": [1, {"y": None}]}}
    awkward["n"] = -3
    head = store.read(gid)[-1]
    late = NewEvent("Thing", awkward, {"seat": 1, "received_at": "2100-01-01T00:00:01Z"})
    store.append(gid, 1, seal(SEED, gid, 1 + 1, head.hash, [_event(1), late]))
    full = store.read(gid)
    batch = _fold(store, gid)
    assert (batch.first_seq, batch.types, batch.datas) == (1, [e.type for e in full], [e.data for e in full])
    assert [list(d) for d in batch.datas] == [list(e.data) for e in full]  # key order too
    assert batch.last_seq == 3
    assert batch.created_at == full[0].meta["received_at"]
    assert batch.newest_at == "2100-01-01T00:00:01Z"
    later = _fold(store, gid, after=2)
    assert (later.first_seq, later.types, later.datas) == (3, ["Thing"], [awkward]) and later.created_at is None
    assert store.read_for_fold({gid: 3}) == {}
    # A projection that moved on since its read folds only what it lacks.
    assert batch.after(2).types == ["Thing"] and batch.after(2).first_seq == 3 and batch.after(2).created_at is None
    assert batch.after(0) is batch and batch.after(3).types == []


def test_fold_reads_give_every_stream_in_seq_order(store):
    """The fold reads aggregate a sorted subquery (one sort for both aggregates):
    two streams appended in turns, so their rows interleave in the table, each
    read back in seq order by both fold reads, as ``read`` gives it."""
    gids = [_game(store), _game(store)]
    for n in range(40):
        for gid in gids:
            head = store.read(gid)[-1]
            events = [NewEvent(f"Thing{n % 3}", {"n": n, "i": i}, {"seat": 0}) for i in range(1 + n % 4)]
            store.append(gid, head.seq, seal(SEED, gid, head.seq + 1, head.hash, events))
    many = store.read_for_fold(dict.fromkeys(gids, 0))
    for gid in gids:
        full = store.read(gid)
        for batch in (_fold(store, gid), FoldBatch.parse(many[gid])):
            assert (batch.types, batch.datas) == ([e.type for e in full], [e.data for e in full])
        tail = _fold(store, gid, after=57)
        assert (tail.first_seq, tail.datas) == (58, [e.data for e in full[57:]])


def test_data_and_meta_are_stored_as_compact_json_text(store, private_db):
    """Storage only (docs/PERFORMANCE.md, "PostgreSQL bytes per event"): the json
    columns hold compact text, non-ASCII as it is; every reader gets the same
    values back, and the stored digests still check.  A key that is not a
    string is written as the standard library writes it, as before."""
    gid = _game(store)
    data = {"text": "Nereus ⚓ é", "list": [1, 2], "nested": {"a": None}, "big": 2**63 - 1}
    keyed = {1: "é", 2: "two"}
    meta = {"seat": 0, "received_at": now_iso(), "intent": {"type": "x", "tile": 3}}
    events = [NewEvent("Thing", data, meta), NewEvent("Thing", keyed, meta)]
    store.append(gid, 1, seal(SEED, gid, 2, store.read(gid)[-1].hash, events))
    with psycopg.connect(private_db[0]) as conn:
        rows = conn.execute(
            "SELECT data::text, meta::text FROM events WHERE game_id = %s AND seq > 1 ORDER BY seq", (uuid.UUID(gid),)
        ).fetchall()
    assert rows == [
        (
            '{"text":"Nereus ⚓ é","list":[1,2],"nested":{"a":null},"big":9223372036854775807}',
            f'{{"seat":0,"received_at":"{meta["received_at"]}","intent":{{"type":"x","tile":3}}}}',
        ),
        ('{"1":"\\u00e9","2":"two"}', None),  # the decision's meta is stored once
    ]
    read = store.read(gid)[1:]
    assert [(e.data, e.meta) for e in read] == [(data, meta), ({"1": "é", "2": "two"}, meta)]
    assert _fold(store, gid, after=1).datas == [data, {"1": "é", "2": "two"}]
    for e in read:
        salt = canonical.event_salt(SEED, e.seq)
        assert (canonical.digest(salt, e.data), canonical.digest(salt, e.meta)) == (e.data_digest, e.meta_digest)


def test_an_integer_beyond_64_bits_is_refused_not_stored(store):
    """The store's readers parse with orjson, which returns a float for an
    integer beyond 64 bits: its digest would no longer check, so the append
    refuses it and writes nothing."""
    gid = _game(store)
    head = store.read(gid)[-1]
    for huge in (2**64, -(2**63) - 1):
        with pytest.raises(ValueError, match="64 bits"):
            event = NewEvent("Thing", {"n": [1, {"x": huge}]}, {"seat": 0})
            store.append(gid, 1, seal(SEED, gid, 2, head.hash, [event]))
    assert store.version(gid) == 1


def test_an_event_type_is_a_name(store):
    """The type goes into the fold rows' JSON text unescaped, so the database
    refuses any type that is not a plain name."""
    gid = _game(store)
    with pytest.raises(psycopg.errors.CheckViolation):
        store.append(gid, 1, seal(SEED, gid, 1 + 1, store.read(gid)[-1].hash, [NewEvent('Bad"Type', {}, {"seat": 0})]))
    assert store.version(gid) == 1


def _decision(n: int, seat: int = 0) -> list[NewEvent]:
    """``n`` events of one decision: they share one meta, as the pipeline seals them."""
    clock = {"at": "x", "timed_out": []}
    meta = {"seat": seat, "received_at": now_iso(), "intent_id": str(uuid.uuid4()), "clock": clock}
    return [NewEvent("Thing", {"n": i}, meta) for i in range(n)]


def test_a_decisions_meta_is_stored_once(store, private_db):
    """Migration 0008: the events of one decision store their meta once (the
    first row; the others NULL, "the one before"), and every reader gives each
    event its full meta, also when a read starts inside a decision."""
    gid = _game(store)
    first, second = _decision(3), _decision(2, seat=1)
    store.append(gid, 1, seal(SEED, gid, 2, store.read(gid)[-1].hash, first))
    store.append(gid, 4, seal(SEED, gid, 5, store.read(gid)[-1].hash, second))
    with psycopg.connect(private_db[0]) as conn:
        stored = conn.execute(
            "SELECT seq FROM events WHERE game_id = %s AND meta IS NOT NULL ORDER BY seq", (uuid.UUID(gid),)
        ).fetchall()
    assert [r[0] for r in stored] == [1, 2, 5]
    expected = [store.read(gid)[0].meta] + [e.meta for e in first + second]
    assert [e.meta for e in store.read(gid)] == expected
    assert [e.meta for e in store.read(gid, after=2)] == expected[2:]  # starts inside the first decision
    assert [e.meta for e in store.read(gid, after=3, upto=5)] == expected[3:5]
    assert [e.meta for e in store.iter_stream(gid, after=2, batch=2)] == expected[2:]
    wait_for_feed_horizon(private_db[0])  # the global feed holds this stream's events
    feed = [e for _, e in store.read_all() if e.game_id == gid]
    assert [e.meta for e in feed] == expected
    assert [e.meta for _, e in store.read_all(types=["Thing"]) if e.game_id == gid] == expected[1:]
    # The chain is over the full meta: the stored digests still check.
    for e in store.read(gid):
        salt = canonical.event_salt(SEED, e.seq)
        assert canonical.digest(salt, e.meta) == e.meta_digest
    batch = _fold(store, gid, after=5)
    assert batch.newest_at == second[0].meta["received_at"] and batch.clock == {"at": "x", "timed_out": []}


def test_only_the_hash_is_stored_and_every_reader_derives_the_rest(store, private_db):
    """Migration 0009: a row keeps the event and its hash; the digests and
    prev_hash are derived by every reader exactly as they were sealed, from the
    middle of a stream too, and a clock's time (when it is the decision's
    arrival) and its empty timed_out list are left out of the stored meta and
    put back (docs/SCALING.md, "Storage per event")."""
    from service.domain import clocks

    gid = _game(store)
    now = now_iso()
    clock = clocks.start({"type": "deadline", "per_decision_s": 60}, 2, now, [0])
    meta = {"intent_id": str(uuid.uuid4()), "seat": 0, "received_at": now, "intent": {"type": "x"}, "clock": clock}
    sealed = seal(SEED, gid, 2, store.read(gid)[-1].hash, [NewEvent("Thing", {"n": i}, meta) for i in range(3)])
    store.append(gid, 1, sealed)
    with psycopg.connect(private_db[0]) as conn:
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'events' ORDER BY ordinal_position"
        ).fetchall()
        stored = conn.execute("SELECT meta::text FROM events WHERE game_id = %s AND seq = 2", (uuid.UUID(gid),))
        text = stored.fetchone()[0]
    assert [c[0] for c in columns] == [
        "game_id", "seq", "tx_id", "position", "type", "schema_version", "data", "meta", "hash"
    ]  # fmt: skip
    assert '"at"' not in text and "timed_out" not in text and '"deadline":{"0":null}' in text and now in text
    assert store.read(gid)[1:] == sealed
    assert store.read(gid, after=2) == sealed[1:]  # prev_hash of the first row read: one probe
    assert list(store.iter_stream(gid, after=1, batch=2)) == sealed
    wait_for_feed_horizon(private_db[0])
    assert [e for _, e in store.read_all() if e.game_id == gid][1:] == sealed
    assert _fold(store, gid, after=1).clock == clock


def _digests(e) -> tuple[str, ...]:
    return e.data_digest, e.meta_digest, e.prev_hash, e.hash


@pytest.fixture
def old_format(settings):
    """A database migrated up to 0007 only, holding one stream written as the
    store wrote it before migration 0008 (jsonb, hex text, every event's meta):
    ``(url, admin url, game id, the events)``; dropped afterwards with every
    database named after it."""
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from service.adapters.migrate import MIGRATIONS

    name = conninfo_to_dict(settings.database_url)["dbname"] + "_m8"
    admin = make_conninfo(settings.database_url, dbname="postgres")
    url = make_conninfo(settings.database_url, dbname=name)

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as conn:
            for db in (name, name + "_restored"):
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db)))

    drop()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    gid = str(uuid.uuid4())
    meta0 = {"seat": None, "received_at": now_iso()}
    events = seal(SEED, gid, 1, canonical.GENESIS, [NewEvent("GameCreated", {"players": ["a"]}, meta0)])
    events += seal(SEED, gid, 2, events[-1].hash, _decision(3))
    events += seal(SEED, gid, 5, events[-1].hash, _decision(1, seat=1))
    with psycopg.connect(url) as conn:
        conn.execute(
            "CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for path in sorted(MIGRATIONS.glob("*.sql")):
            if path.name >= "0008":
                break
            conn.execute(path.read_text())
            conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (path.name,))
        conn.execute(
            "INSERT INTO games (game_id, game, rules_version, players, options, seed_commitment)"
            " VALUES (%s, 'nauticus', '1', '[]', '{}', '')",
            (uuid.UUID(gid),),
        )
        conn.execute("INSERT INTO game_seeds (game_id, seed) VALUES (%s, %s)", (uuid.UUID(gid), SEED))
        for e in events:
            conn.execute(
                "INSERT INTO events (game_id, seq, type, schema_version, data, meta, data_digest, meta_digest,"
                " prev_hash, hash) VALUES (%s, %s, %s, %s, %s::jsonb, %s::jsonb, %s, %s, %s, %s)",
                (uuid.UUID(gid), e.seq, e.type, 1, Jsonb(e.data), Jsonb(e.meta), *_digests(e)),
            )
    try:
        yield url, admin, gid, events
    finally:
        drop()


def _read_back(url: str, gid: str) -> tuple[list, list[int]]:
    """The stream as the store reads it, and the seqs whose row stores a meta."""
    from psycopg_pool import ConnectionPool

    from service.adapters.eventstore import EventStore

    with ConnectionPool(url, min_size=1, max_size=2) as pool:
        with pool.connection() as conn:
            stored = conn.execute("SELECT seq FROM events WHERE meta IS NOT NULL ORDER BY seq").fetchall()
        return EventStore(pool).read(gid), [r[0] for r in stored]


def since_0008() -> list[str]:
    """The migrations a store from before 0008 still needs: 0008 and every later one."""
    from service.adapters.migrate import MIGRATIONS

    return sorted(p.name for p in MIGRATIONS.glob("*.sql") if p.name >= "0008")


def test_migration_0008_keeps_every_event(old_format):
    """A store written in the format before migration 0008 reads back, event
    for event, exactly as it was; each decision's meta is then stored once."""
    from service.adapters.migrate import migrate

    url, _, gid, events = old_format
    assert migrate(url) == since_0008()
    assert _read_back(url, gid) == (events, [1, 2, 5])


def test_a_backup_from_before_0008_restores_into_the_compact_format(old_format, tmp_path):
    """``make backup`` of a store not yet migrated to 0008, restored by this
    version: loaded under the file's own migrations, then 0008 runs over it."""
    from psycopg.conninfo import make_conninfo

    from service.adapters import backup

    url, _, gid, events = old_format
    path = tmp_path / "old.qdb.gz"
    with path.open("wb") as f:
        backup.backup(url, f)
    target = make_conninfo(url, dbname=psycopg.conninfo.conninfo_to_dict(url)["dbname"] + "_restored")
    report = backup.restore(target, path)
    assert report.migrations_after == since_0008()
    assert _read_back(target, gid) == (events, [1, 2, 5])
