"""Apply the SQL migrations in ``service/adapters/migrations`` in order, idempotently,
creating the database first if it does not exist."""

from __future__ import annotations

import logging
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).with_name("migrations")
_LOCK_ID = 0x51D_0001  # advisory lock: one migrator at a time


def ensure_database(database_url: str) -> bool:
    """Create the database named in ``database_url`` if missing.  True if created."""
    params = conninfo_to_dict(database_url)
    name = str(params.get("dbname") or "postgres")  # parsed from the URL: text
    admin = make_conninfo(database_url, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists:
            return False
        try:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except psycopg.errors.DuplicateDatabase:
            return False  # created by a concurrent migrator
        return True


def pending(conn: psycopg.Connection) -> list[Path]:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    done = {r[0] for r in conn.execute("SELECT name FROM schema_migrations")}
    return [p for p in sorted(MIGRATIONS.glob("*.sql")) if p.name not in done]


def migrate(database_url: str, echo: bool = False) -> list[str]:
    """Bring the schema up to date; returns the names of migrations applied."""
    created = ensure_database(database_url)
    if created and echo:
        print(f"created database {conninfo_to_dict(database_url).get('dbname')}")
    applied: list[str] = []
    with psycopg.connect(database_url) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_ID,))
        try:
            conn.commit()
            for path in pending(conn):
                with conn.transaction():
                    conn.execute(path.read_text())
                    conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (path.name,))
                applied.append(path.name)
                if echo:
                    print(f"applied {path.name}")
            conn.commit()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_ID,))
            conn.commit()
    if echo and not applied:
        print("schema up to date")
    return applied
