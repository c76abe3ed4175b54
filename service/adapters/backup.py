"""``make backup`` / ``make restore``: the source of truth in one file, and back.

What is the source of truth (``TABLES``, in the order a restore loads them,
parents before children) and what is not (``EXCLUDED``) is decided here, table
by table (docs/RELIABILITY.md "Backups").  A table the migrations create that
is in neither list stops a backup: a new table must be decided, not forgotten.

The file is a gzip stream of lines::

    {"format": "quarterdeck-backup", "version": 1, ...}   the header (JSON)
    {"table": "games", "columns": [...]}                   one section per table:
    <COPY text rows>                                       PostgreSQL's COPY text format,
    \\.                                                    one row a line
    ...
    {"manifest": {...}, "sha256": "..."}                   the trailer (JSON)

The whole dump is ONE ``REPEATABLE READ`` read-only transaction (one
snapshot), so the tables agree with each other even while the service runs.
The header carries each table's row count and the dump's applied migrations;
the trailer each table's row count and SHA-256 and the SHA-256 of every byte
before it.  A restore checks all of them: a truncated or altered file is
refused, and as everything is loaded in ONE transaction, a refused file leaves
the target database as empty as it was.

Generated columns (``accounts.handle_key``) are not
dumped: PostgreSQL computes them again on load.  Identity columns
(``events.position``...) are dumped and their sequences set past them.

The global feed's order ``(tx_id, position)`` (migration 0001) is kept.  A
``tx_id`` is a transaction id of the server that wrote the row: restored into
a server whose transaction counter has passed the dump's highest ``tx_id``
(the same server, or a busy one), the values are loaded as they are, and a
rebuild's feed cursors come out byte for byte as the original's.  Into a newer
server (a fresh ``initdb``), rows whose ``tx_id`` lies ahead of the counter
would stay invisible to every feed reader (``tx_id < pg_snapshot_xmin``) and
events written after the restore would sort before them; so there the feed is
*rebased*: every restored row takes the restore's own transaction id and
``position`` is renumbered 1, 2, ... in the original ``(tx_id, position)``
order.  The order is the same, only the numbers differ (and with them the
feed cursors kept in Redis, which ``make rebuild`` writes again).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import psycopg
from psycopg import sql

from service.adapters.migrate import MIGRATIONS, ensure_database
from service.adapters.rows import one

FORMAT = "quarterdeck-backup"
VERSION = 1

#: The source of truth, in load order (foreign keys: parents first), with
#: the order rows are dumped in (the feed's tables in feed order, so that a
#: rebased restore renumbers ``position`` by line number).
TABLES: dict[str, str] = {
    "games": "game_id",
    "game_seeds": "game_id",
    "seat_tokens": "game_id, seat",
    "events": "tx_id, position",
    # Idempotency-Key answers: a client that retries across a restore gets the same answer.
    "intent_keys": "game_id, seat, key",
    # Kept audits: computed once (their ``computed_at`` is shown), cheap to keep.
    "game_audits": "game_id",
    "accounts": "account_id",
    "lobby_tables": "table_id",
    "lobby_seats": "table_id, account_id",
    "tournaments": "tournament_id",
    "tournament_seeds": "tournament_id",
    "tournament_events": "tx_id, position",
    "tournament_games": "game_id",
}

#: Tables the migrations create that are NOT backed up, and why.
EXCLUDED: dict[str, str] = {
    "snapshots": "derived: state snapshots of the cold command path, made again as games are played",
    "schema_migrations": "the applied migrations are in the header; a restore applies them itself",
    # What consent produced is in the streams (GameCreated's "invited", PlayerRegistered).
    "pending_games": "transient: games waiting for their invitations, which expire within QD_INVITATION_TTL_S",
    "invitations": "transient: they expire within QD_INVITATION_TTL_S; a restore drops the pending ones",
    # The bots' accounts are backed up (``accounts``, kind ``bot``); their game and level are
    # what their handles say, and ``make bots`` (run by ``make run`` and compose) writes them again.
    "house_bots": "derived: each house bot's game and level, made again from its account by make bots",
}

#: Tables of the global feed: ``(tx_id, position)`` may be rebased on restore.
FEED_TABLES = ("events", "tournament_events")

#: Lines of COPY text sent to PostgreSQL at a time during a restore.
_CHUNK = 1 << 20
_END = b"\\.\n"

Progress = Callable[[str], None]


class BackupError(RuntimeError):
    """A backup that cannot be taken, or a file / target that a restore refuses."""


@dataclass(frozen=True)
class RestoreReport:
    tables: dict[str, int]
    rebased: bool
    migrations_after: list[str]
    seconds: float


# -- backup ------------------------------------------------------------------------
def _columns(conn: psycopg.Connection, table: str) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = %s AND is_generated = 'NEVER'"
        " ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [r[0] for r in rows]


def _user_tables(conn: psycopg.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
    ).fetchall()
    return [r[0] for r in rows]


def _every_seconds(progress: Progress | None, seconds: float = 2.0) -> Callable[[str, bool], None]:
    last = [time.monotonic()]

    def say(msg: str, force: bool = False) -> None:
        now = time.monotonic()
        if progress and (force or now - last[0] >= seconds):
            last[0] = now
            progress(msg)

    return say


def backup(database_url: str, out: IO[bytes], progress: Progress | None = None, level: int = 1) -> dict[str, Any]:
    """Dump the source of truth of ``database_url`` into ``out`` (a binary
    file, gzip'd here at ``level``).  Returns the trailer's manifest."""
    started = time.perf_counter()
    say = _every_seconds(progress)
    digest = hashlib.sha256()
    gz = gzip.GzipFile(fileobj=out, mode="wb", compresslevel=level, mtime=0)

    def emit(data: bytes) -> None:
        digest.update(data)
        gz.write(data)

    with psycopg.connect(database_url) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        with conn.transaction():
            conn.execute("SET LOCAL TimeZone = 'UTC'")
            conn.execute("SET LOCAL DateStyle = 'ISO, YMD'")
            conn.execute("SET LOCAL extra_float_digits = 3")
            present = _user_tables(conn)
            unknown = sorted(set(present) - set(TABLES) - set(EXCLUDED))
            if unknown:
                raise BackupError(
                    f"table(s) {', '.join(unknown)} are neither backed up nor excluded:"
                    " decide each in service/adapters/backup.py (TABLES or EXCLUDED)"
                )
            missing = sorted(set(TABLES) - set(present))
            if missing:
                raise BackupError(f"table(s) {', '.join(missing)} are missing: run 'make migrate' first")
            migrations = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
            columns = {t: _columns(conn, t) for t in TABLES}
            counts = {
                t: one(conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(t))))[0] for t in TABLES
            }
            feed = {
                t: one(
                    conn.execute(sql.SQL("SELECT max(tx_id)::text, max(position) FROM {}").format(sql.Identifier(t)))
                )
                for t in FEED_TABLES
            }
            header = {
                "format": FORMAT,
                "version": VERSION,
                "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "server_version": conn.info.server_version,
                "migrations": migrations,
                "counts": counts,
                "feed": {t: {"max_tx_id": v[0], "max_position": v[1]} for t, v in feed.items()},
                "excluded": EXCLUDED,
            }
            emit(json.dumps(header, sort_keys=True).encode() + b"\n")
            total = sum(counts.values())
            done = 0
            manifest: dict[str, Any] = {}
            for table, order in TABLES.items():
                cols = columns[table]
                emit(json.dumps({"table": table, "columns": cols}).encode() + b"\n")
                h = hashlib.sha256()
                rows = 0
                query = sql.SQL("COPY (SELECT {} FROM {} ORDER BY {}) TO STDOUT").format(
                    sql.SQL(", ").join(map(sql.Identifier, cols)), sql.Identifier(table), sql.SQL(order)
                )
                with conn.cursor() as cur, cur.copy(query) as copy:
                    for block in copy:
                        data = bytes(block)
                        h.update(data)
                        emit(data)
                        n = data.count(b"\n")
                        rows += n
                        done += n
                        say(f"backup: {table} {rows}/{counts[table]} rows ({done}/{total} in all)", False)
                emit(_END)
                if rows != counts[table]:
                    raise BackupError(f"{table}: counted {counts[table]} rows but dumped {rows}")
                manifest[table] = {"rows": rows, "sha256": h.hexdigest()}
                say(f"backup: {table}: {rows} rows", True)
    trailer = {"manifest": manifest, "sha256": digest.hexdigest()}
    gz.write(json.dumps(trailer, sort_keys=True).encode() + b"\n")
    gz.close()
    say(f"backup: {done} rows in {time.perf_counter() - started:.1f}s", True)
    return trailer


# -- reading a file ------------------------------------------------------------------
def _lines(f: Iterable[bytes]) -> Iterator[bytes]:
    """The file's lines; a damaged gzip stream is a :class:`BackupError`."""
    try:
        yield from f
    except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as exc:
        raise BackupError(f"the backup file is damaged or truncated ({exc})") from exc


def _json_line(line: bytes, what: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise BackupError(f"the backup file is damaged: expected {what}")
    return value


class _Reader:
    """Walks a backup file section by section, checking as it goes."""

    def __init__(self, f: Iterable[bytes]):
        self.lines = _lines(f)
        self.digest = hashlib.sha256()
        first = next(self.lines, b"")
        self.digest.update(first)
        self.header = _json_line(first, "a Quarterdeck backup header")
        if self.header.get("format") != FORMAT:
            raise BackupError("not a Quarterdeck backup file")
        if self.header.get("version") != VERSION:
            raise BackupError(f"backup format version {self.header.get('version')} is not {VERSION}")
        self.manifest: dict[str, Any] = {}

    def sections(self) -> Iterator[tuple[str, list[str], Iterator[bytes]]]:
        """``(table, columns, rows)`` per section; ``rows`` must be consumed."""
        expected = list(TABLES)
        for table in expected:
            line = next(self.lines, b"")
            self.digest.update(line)
            head = _json_line(line, f"the section of table {table}")
            if head.get("table") != table:
                raise BackupError(f"the backup file is damaged: expected table {table}, found {head.get('table')!r}")
            yield table, list(head["columns"]), self._rows(table)

    def _rows(self, table: str) -> Iterator[bytes]:
        h = hashlib.sha256()
        n = 0
        for line in self.lines:
            self.digest.update(line)
            if line == _END:
                self.manifest[table] = {"rows": n, "sha256": h.hexdigest()}
                return
            if not line.endswith(b"\n"):
                break
            h.update(line)
            n += 1  # noqa: SIM113 (kept past the loop's end)
            yield line
        raise BackupError(f"the backup file is truncated (in table {table})")

    def finish(self) -> dict[str, Any]:
        """Check the trailer against what was read."""
        line = next(self.lines, b"")
        if not line:
            raise BackupError("the backup file is truncated (no trailer)")
        trailer = _json_line(line, "the trailer")
        if next(self.lines, None) is not None:
            raise BackupError("the backup file has data after its trailer")
        if trailer.get("sha256") != self.digest.hexdigest():
            raise BackupError("the backup file does not match its SHA-256: it was altered or damaged")
        if trailer.get("manifest") != self.manifest:
            raise BackupError("the backup file's tables do not match its manifest")
        counts = self.header.get("counts", {})
        for table, entry in self.manifest.items():
            if counts.get(table) != entry["rows"]:
                raise BackupError(f"{table}: {entry['rows']} rows, the header says {counts.get(table)}")
        return trailer


def check(path: str | Path, progress: Progress | None = None) -> dict[str, Any]:
    """Read a backup file through and check it (sizes, digests); no database."""
    with gzip.open(path, "rb") as f:
        reader = _Reader(f)
        for _table, _cols, rows in reader.sections():
            for _ in rows:
                pass
        trailer = reader.finish()
    if progress:
        progress(f"{path}: OK, " + ", ".join(f"{t} {e['rows']}" for t, e in trailer["manifest"].items()))
    return {"header": reader.header, **trailer}


# -- restore ---------------------------------------------------------------------------
def _refuse_unless_empty(conn: psycopg.Connection, migrations: list[str]) -> list[str]:
    """The target's applied migrations; refuse a database with any row in
    any table, or migrated past (or beside) the backup's schema."""
    tables = _user_tables(conn)
    full = [
        t
        for t in tables
        if t != "schema_migrations"
        and one(conn.execute(sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(sql.Identifier(t))))[0]
    ]
    if full:
        raise BackupError(
            f"the target database is not empty (rows in {', '.join(full[:5])}{'...' if len(full) > 5 else ''}):"
            " restore only into an empty database (e.g. a new DATABASE_URL name; the restore creates it)"
        )
    applied: list[str] = []
    if "schema_migrations" in tables:
        applied = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    elif tables:
        raise BackupError(f"the target database has tables but no schema_migrations ({', '.join(tables[:5])})")
    beyond = [m for m in applied if m not in migrations]
    if beyond:
        raise BackupError(
            f"the target database is migrated past the backup ({', '.join(beyond)}): restore into a new, empty database"
        )
    return applied


def _apply(conn: psycopg.Connection, names: list[str], applied: list[str], progress: Progress | None) -> None:
    """Apply the migrations in ``names`` not yet in ``applied``, in this transaction."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    for name in names:
        if name in applied:
            continue
        path = MIGRATIONS / name
        if not path.exists():
            raise BackupError(f"the backup needs migration {name}, which this version of Quarterdeck lacks")
        conn.execute(path.read_text())
        conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (name,))
        applied.append(name)
        if progress:
            progress(f"restore: applied {name}")


def _rebase(lines: Iterator[bytes], cols: list[str]) -> Iterator[bytes]:
    """Drop ``tx_id`` (the restore's own transaction id fills it) and number
    ``position`` by line: rows come in feed order."""
    tx, pos = cols.index("tx_id"), cols.index("position")
    for n, line in enumerate(lines, start=1):
        fields = line[:-1].split(b"\t")
        fields[pos] = str(n).encode()
        del fields[tx]
        yield b"\t".join(fields) + b"\n"


def restore(
    database_url: str,
    path: str | Path,
    progress: Progress | None = None,
    rebase: bool | None = None,
) -> RestoreReport:
    """Load a backup file into the EMPTY database of ``database_url`` (created
    if missing): the backup's migrations, the rows, the identity sequences,
    then any newer migration, all in ONE transaction.  ``rebase``: None
    decides (module docstring), True / False forces it."""
    started = time.perf_counter()
    ensure_database(database_url)
    try:
        return _restore(database_url, path, progress, rebase, started)
    except (psycopg.DataError, psycopg.IntegrityError) as exc:
        # A row the file's digests would also have refused, met first by PostgreSQL.
        reason = str(exc).splitlines()[0]
        raise BackupError(f"the backup file is damaged: PostgreSQL refused a row ({reason})") from exc


def _restore(
    database_url: str, path: str | Path, progress: Progress | None, rebase: bool | None, started: float
) -> RestoreReport:
    say = _every_seconds(progress)
    loaded: dict[str, int] = {}
    with gzip.open(path, "rb") as f, psycopg.connect(database_url) as conn:
        reader = _Reader(f)
        header = reader.header
        migrations = list(header["migrations"])
        total = sum(header["counts"].values())
        with conn.transaction():
            conn.execute("SET LOCAL TimeZone = 'UTC'")
            conn.execute("SET LOCAL DateStyle = 'ISO, YMD'")
            # One restore at a time into a database (the migrator's lock number, held to commit).
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (0x51D_0001,))
            applied = _refuse_unless_empty(conn, migrations)
            _apply(conn, migrations, applied, progress)
            for t in TABLES:
                conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(sql.Identifier(t)))
            current = int(one(conn.execute("SELECT pg_current_xact_id()::text"))[0])
            highest = max((int(v["max_tx_id"]) for v in header["feed"].values() if v["max_tx_id"]), default=0)
            if rebase is None:
                rebase = highest >= current
            if progress:
                progress(
                    f"restore: feed {'rebased' if rebase else 'kept as dumped'}"
                    f" (highest tx_id in the backup {highest}, this server's {current})"
                )
            done = 0
            for table, cols, rows in reader.sections():
                missing = set(cols) - set(_columns(conn, table))
                if missing:
                    raise BackupError(f"{table}: column(s) {', '.join(sorted(missing))} are not in the schema")
                lines = _rebase(rows, cols) if rebase and table in FEED_TABLES else rows
                target = [c for c in cols if not (rebase and table in FEED_TABLES and c == "tx_id")]
                query = sql.SQL("COPY {} ({}) FROM STDIN").format(
                    sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, target))
                )
                n = 0
                with conn.cursor() as cur, cur.copy(query) as copy:
                    buf: list[bytes] = []
                    size = 0
                    for line in lines:
                        buf.append(line)
                        size += len(line)
                        n += 1
                        if size >= _CHUNK:
                            copy.write(b"".join(buf))
                            buf.clear()
                            size = 0
                            say(
                                f"restore: {table} {n}/{header['counts'][table]} rows ({done + n}/{total} in all)",
                                False,
                            )
                    if buf:
                        copy.write(b"".join(buf))
                loaded[table] = n
                done += n
                say(f"restore: {table}: {n} rows", True)
            reader.finish()
            _set_sequences(conn)
            newer = sorted(p.name for p in MIGRATIONS.glob("*.sql") if p.name not in applied)
            _apply(conn, newer, applied, progress)
    seconds = time.perf_counter() - started
    say(f"restore: {done} rows in {seconds:.1f}s", True)
    return RestoreReport(loaded, bool(rebase), newer, seconds)


def _set_sequences(conn: psycopg.Connection) -> None:
    """Every identity column's sequence past the largest value loaded."""
    rows = conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND is_identity = 'YES'"
    ).fetchall()
    for table, column in rows:
        conn.execute(
            sql.SQL(
                "SELECT setval(pg_get_serial_sequence({t}, {c}), coalesce(max({col}), 1), max({col}) IS NOT NULL)"
                " FROM {tab}"
            ).format(t=sql.Literal(table), c=sql.Literal(column), col=sql.Identifier(column), tab=sql.Identifier(table))
        )
