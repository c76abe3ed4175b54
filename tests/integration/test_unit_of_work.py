"""The unit of work (service/service_layer/unit_of_work.py) against real PostgreSQL:
one transaction, and its committed hook, which runs only after a COMMIT that
succeeded (so another connection already sees what it wrote) and never after a
rollback."""

from __future__ import annotations

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from service.adapters.pooled import StoreUnavailable
from service.bootstrap import unit_of_work
from service.service_layer.commands import GameService
from service.service_layer.unit_of_work import UnitOfWork


class Refusal(Exception):
    pass


def status_of(conn: psycopg.Connection, xid: int) -> str:
    """What ``conn`` (another connection) knows of transaction ``xid``."""
    return conn.execute("SELECT txid_status(%s)", (xid,)).fetchone()[0]


def games_rows(conn: psycopg.Connection, game_id: str) -> int:
    return conn.execute("SELECT count(*) FROM games WHERE game_id = %s", (game_id,)).fetchone()[0]


def test_the_committed_hook_runs_after_the_commit_in_order(ctx, settings):
    told: list[tuple[str, str]] = []
    with psycopg.connect(settings.database_url, autocommit=True) as other, unit_of_work(ctx) as uow:
        xid = uow.conn.execute("SELECT txid_current()").fetchone()[0]
        uow.on_committed(lambda: told.append(("first", status_of(other, xid))))
        uow.on_committed(lambda: told.append(("second", status_of(other, xid))))
        assert told == [] and status_of(other, xid) == "in progress"
        uow.commit()
    assert told == [("first", "committed"), ("second", "committed")]


@pytest.mark.parametrize("leave", ["by an error", "without commit"])
def test_a_unit_of_work_that_rolls_back_runs_no_committed_callback(ctx, settings, leave):
    told: list[str] = []
    with psycopg.connect(settings.database_url, autocommit=True) as other:
        try:
            with unit_of_work(ctx) as uow:
                xid = uow.conn.execute("SELECT txid_current()").fetchone()[0]
                uow.on_committed(lambda: told.append("committed"))
                if leave == "by an error":
                    raise Refusal()
        except Refusal:
            pass
        assert told == [] and status_of(other, xid) == "aborted"


def test_a_commit_that_fails_runs_no_committed_callback(ctx):
    told: list[str] = []
    with pytest.raises(psycopg.errors.UniqueViolation), unit_of_work(ctx) as uow:
        # A deferred constraint is checked at COMMIT: the commit itself fails.
        uow.conn.execute("CREATE TEMP TABLE uow_probe (k int UNIQUE DEFERRABLE INITIALLY DEFERRED) ON COMMIT DROP")
        uow.conn.execute("INSERT INTO uow_probe VALUES (1), (1)")
        uow.on_committed(lambda: told.append("committed"))
        uow.commit()
    assert told == []
    # Its connection went back to the pool in working order.
    with unit_of_work(ctx) as uow:
        assert uow.conn.execute("SELECT 1").fetchone() == (1,)
        uow.commit()


def test_a_unit_of_work_waits_a_bounded_time_for_a_connection(settings):
    pool = ConnectionPool(settings.database_url, min_size=1, max_size=1, kwargs={"autocommit": True}, open=True)
    try:
        with pool.connection(), pytest.raises(StoreUnavailable), UnitOfWork(pool, pool_timeout=0.2):
            pass
    finally:
        pool.close()


def test_a_unit_of_work_is_closed_after_its_commit(ctx):
    with unit_of_work(ctx) as uow:
        uow.commit()
        with pytest.raises(RuntimeError):
            uow.conn.execute("SELECT 1")
        with pytest.raises(RuntimeError):
            uow.on_committed(lambda: None)


def test_a_game_created_in_a_unit_of_work_is_nudged_after_its_commit_only(ctx, settings):
    """``GameService.create_game(uow=...)`` joins the unit of work's transaction and
    nudges through its committed hook: after the commit, when another connection
    sees the game; never for a game rolled back."""
    told: list[tuple[str, int]] = []
    with psycopg.connect(settings.database_url, autocommit=True) as other:
        games = GameService(ctx.store, nudge=lambda gid: told.append((gid, games_rows(other, gid))))
        with unit_of_work(ctx) as uow:
            created = games.create_game("nauticus", ["ann", "bob"], {}, uow=uow)
            assert told == [] and games_rows(other, created["id"]) == 0
            assert games_rows(uow.conn, created["id"]) == 1
            uow.commit()
        assert told == [(created["id"], 1)]

        told.clear()
        with pytest.raises(Refusal), unit_of_work(ctx) as uow:
            dropped = games.create_game("nauticus", ["ann", "bob"], {}, uow=uow)
            raise Refusal()
        assert told == [] and games_rows(other, dropped["id"]) == 0
