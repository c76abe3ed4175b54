"""A ``DATABASE_URL`` naming several servers (docs/RELIABILITY.md, "Failover"), and
connections lost under the pool, against the real PostgreSQL: the service's own
components, the migrations and the store work through a multi-host URL whose
first server is dead; a read on a connection the server dropped is tried again
on a new one; a write on one is a clean :class:`StoreUnavailable`, never a
reported success."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from support.live import free_port

from service.adapters.migrate import migrate
from service.adapters.pooled import StoreUnavailable
from service.bootstrap import bootstrap
from service.service_layer.unit_of_work import UnitOfWork

#: The application name of this module's connections: the failover it plays ends these alone,
#: never those of the other tests sharing the test session's database.
APPLICATION = f"qd-multihost-{uuid.uuid4().hex[:8]}"


def _multi_host(url: str) -> str:
    """``url`` with a dead server first: libpq moves on to the next, which is the primary."""
    params = conninfo_to_dict(url)
    host, port = params.get("host", "127.0.0.1"), params.get("port", "5432")
    return make_conninfo(
        url,
        host=f"127.0.0.1,{host}",
        port=f"{free_port()},{port}",
        target_session_attrs="read-write",
        application_name=APPLICATION,
    )


@pytest.fixture
def components(settings):
    made = bootstrap(settings.with_(database_url=_multi_host(settings.database_url), pool_max=2))
    made.store.pool.wait(10)
    yield made
    made.close()


def test_a_multi_host_url_reaches_the_primary_past_a_dead_server(settings, components):
    assert migrate(_multi_host(settings.database_url)) == []  # the session's schema is up to date
    components.store.is_primary()
    assert components.store.game_ids(limit=1) is not None


def _drop_connections(components) -> None:
    """What a failover does to a pool: the server ends every connection of it."""
    admin = make_conninfo(components.settings.database_url, dbname="postgres", application_name="")
    with psycopg.connect(admin, autocommit=True) as conn:
        ended = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
            (APPLICATION,),
        ).fetchone()
    assert ended is not None and ended[0] >= 1, "the pool had no connection to end"


def test_a_read_on_a_dropped_connection_is_tried_again_on_a_new_one(components):
    store = components.store
    store.ping()  # a pooled connection, used just now: the pool will not ping it again
    _drop_connections(components)
    store.ping()  # would be StoreUnavailable (a 503) without the second try
    store.is_primary()


def test_a_write_on_a_dropped_connection_is_unavailable_and_the_next_one_works(components):
    store = components.store
    store.ping()
    _drop_connections(components)
    with pytest.raises(StoreUnavailable), UnitOfWork(store.pool, 2.0) as uow:
        uow.conn.execute("SELECT 1")
        uow.commit()
    with UnitOfWork(store.pool, 2.0) as uow:
        assert uow.conn.execute("SELECT 1").fetchone() == (1,)
        uow.commit()


def test_a_write_on_a_server_that_takes_no_writes_is_unavailable(settings):
    """A demoted primary (a standby) refuses writes with ReadOnlySqlTransaction: a 503, not a 500."""
    from psycopg_pool import ConnectionPool

    from service.adapters.eventstore import EventStore

    def read_only(conn: psycopg.Connection) -> None:
        conn.execute("SET default_transaction_read_only = on")  # what a standby's sessions are

    pool = ConnectionPool(
        settings.database_url, min_size=1, max_size=2, configure=read_only, kwargs={"autocommit": True}, open=True
    )
    try:
        store = EventStore(pool, 2.0)
        write = "INSERT INTO schema_migrations (name) VALUES ('never')"
        with pytest.raises(StoreUnavailable), store._conn() as conn:
            conn.execute(write)
        with pytest.raises(StoreUnavailable), UnitOfWork(pool, 2.0) as uow:
            uow.conn.execute(write)
        assert store._fetch("SELECT 1", ()) == [(1,)]  # reads still work
    finally:
        pool.close()
