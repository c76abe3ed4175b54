"""``make bench``'s ``bgio`` phase (scripts/bench/boardgameio.py, scripts/bench/bgio/):
boardgame.io with bgio-postgres on the machine's PostgreSQL, in a database of its own,
played by socket.io clients; its moves are counted, its Node process's and PostgreSQL's
CPU too, and without its npm packages the phase is skipped with the way to get them
(docs/PERFORMANCE.md, "What each figure means")."""

from __future__ import annotations

import os

import psycopg
import pytest
from psycopg.conninfo import make_conninfo
from support.bench_runs import bench

from scripts.bench import boardgameio


def test_boardgame_io_moves_are_measured_beside_ours(settings, private_redis_server, tmp_path):
    if boardgameio.missing():
        pytest.fail(f"the bgio phase cannot run: {boardgameio.missing()}")
    db = f"qd_bench_bgio_{os.getpid()}"
    result, database_url = bench(settings, private_redis_server, tmp_path, "--only", "bgio", "--db", db)
    figures, details = result, result["details"]
    moves = details["bgio_moves_16"]
    assert figures["bgio_moves_16"] > 0 and moves["moves"] > 0
    # Every move was answered with the state it made, and every match's row holds it.
    assert moves["errors"] == {}
    assert moves["stored_after_s"] < 60
    # Sized by our engine's playouts (Nautilus Industries: hundreds of intents a game, ~1 KB of state).
    assert 300 < moves["shape"]["moves_per_game"] < 3000 and 500 < moves["shape"]["state_bytes"] < 5000
    assert moves["versions"] == {"boardgame.io": "0.50.2", "bgio-postgres": "1.0.16"}
    cpu = details["cpu_ms_per_bgio_move"]
    assert cpu["counted"] == ["bgio", "postgres"] and cpu["requests"] == moves["moves"]
    assert cpu["bgio_ms_per_request"] > 0 and cpu["postgres_bench_db_only_ms_per_request"] > 0
    assert figures["cpu_ms_per_bgio_move"] == pytest.approx(
        (cpu["cpu_ms"]["bgio"] + cpu["cpu_ms"]["postgres"]) / moves["moves"]
    )
    # Its database is dropped afterwards, as the bench's own are.
    with psycopg.connect(make_conninfo(database_url, dbname="postgres"), autocommit=True) as conn:
        left = conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s", (f"{db}_bgio",)).fetchone()
    assert left == (0,)


def test_without_its_packages_the_phase_says_how_to_get_them(monkeypatch, tmp_path):
    monkeypatch.setattr(boardgameio, "DIR", tmp_path / "scripts" / "bench" / "bgio")
    why = boardgameio.missing()
    assert why is not None and "make bench-deps" in why
