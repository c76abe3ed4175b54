"""The event store: one append-only stream per game in PostgreSQL.

* ``append`` writes at exactly ``expected_version + 1``: the insert of the first
  row is guarded by the stream's current head, and the primary key
  ``(game_id, seq)`` makes a concurrent writer of the same seq fail, so a
  stream can neither fork nor gain a gap.  Either way the loser gets
  :class:`Conflict`.
* ``read_all`` is the global feed in ``(tx_id, position)`` order, limited to
  transactions older than the oldest one still running: no reader can skip an
  event that commits late (docs/DEVELOPING.md, "The global feed and the late-commit gap").
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import orjson
import psycopg
from psycopg.types.json import Json, Jsonb
from psycopg_pool import ConnectionPool

from service.adapters.pooled import Pooled, StoreUnavailable
from service.domain import canonical
from service.domain.counting import is_decision
from service.domain.records import (
    START,
    Cursor,
    FinishedRow,
    GameRecord,
    IdempotentWrite,
    StoredEvent,
    compact_meta,
    full_meta,
)


class Conflict(Exception):
    """Someone else appended first: the expected version is stale."""

    def __init__(self, expected: int, actual: int | None = None):
        super().__init__(f"expected version {expected}, stream is at {actual}")
        self.expected = expected
        self.actual = actual


class DuplicateKey(Exception):
    """An Idempotency-Key was stored by a concurrent request."""


_EVENT_COLS = "game_id, seq, type, schema_version, data, meta, hash"
# The hash is stored as 32 raw bytes and travels as hex (migration 0008).  The
# digests and prev_hash are not stored: the readers derive them (migration 0009).
#: One row's values; ``{}``: its placeholders, in :func:`event_params` order.
_ROW_TEMPLATE = "({}::uuid, {}::int, {}::text, {}::smallint, {}::json, {}::json, decode({}::text, 'hex'))"
#: Insert parameters per event row (``_EVENT_COLS``).
_PARAMS_PER_ROW = 7
_ROW = _ROW_TEMPLATE.format(*["%s"] * _PARAMS_PER_ROW)


def event_columns(stream: str = "game_id", meta: str = "meta", table: str = "events", seeds: str = "game_seeds") -> str:
    """The select list of a stored event, stream id first (as text): what
    :func:`rows_to_events` turns into :class:`StoredEvent` s.  ``meta``: the
    expression that reads the meta column; ``table``/``seeds``: a game's
    events (default) or a tournament's (``tournament_events``, ``tournament_seeds``).

    Besides the stored columns: the hash of the event before (one primary-key
    probe: it is that event's ``prev_hash``; NULL for seq 1) and the stream's
    seed, from which the reader derives the digests (migration 0009)."""
    return (
        f"{table}.{stream}::text, {table}.seq, {table}.type, {table}.schema_version, {table}.data, {meta},"
        f" encode({table}.hash, 'hex'),"
        f" encode((SELECT p.hash FROM {table} p WHERE p.{stream} = {table}.{stream}"
        f" AND p.seq = {table}.seq - 1), 'hex'),"
        f" (SELECT k.seed FROM {seeds} k WHERE k.{stream} = {table}.{stream})"
    )


#: A stream's events after a seq as a projection reads them (``read_for_fold``):
#: their data as ONE JSON array text (``data`` is json, migration 0008: its
#: text is the stored text, joined as it is), their types joined by commas,
#: the first seq, and the arrival time a read model needs.  Events are aliased
#: ``e``.
_FOLD_COLUMNS = (
    "'[' || string_agg(e.data::text, ',') || ']', string_agg(e.type, ','), min(e.seq),"
    # seq 1 is always the platform's opening event (GameCreated), which carries its meta.
    " max(e.meta->>'received_at') FILTER (WHERE e.seq = 1)"
)
#: The rows those aggregates read, in seq order: a sorted subquery is sorted
#: once for both aggregates, where each ``string_agg(... ORDER BY seq)`` sorted
#: its own input (PostgreSQL 15): 0.81-0.96 -> 0.65-0.70 µs of PostgreSQL an
#: event (docs/PERFORMANCE.md, "Rebuild reads").  An aggregate over a sorted
#: subquery with nothing between them reads the rows in that order
#: (PostgreSQL's documentation of aggregate expressions);
#: tests/integration/test_eventstore.py checks the order against ``read``.
_FOLD_ROWS = "(SELECT x.seq, x.type, x.data, x.meta FROM events x WHERE x.game_id = {} AND x.seq > {} ORDER BY x.seq) e"
#: The meta of the stream's head (arrival time, clock: service/domain/clocks.py):
#: the last row that stores one (a decision's later events store NULL: "the
#: one before"), one backward index probe in the same snapshot as the rows.
_HEAD_META = "(SELECT x.meta FROM events x WHERE x.game_id = {} AND x.meta IS NOT NULL ORDER BY x.seq DESC LIMIT 1)"
#: The fold read of several games: one index range scan per game (LATERAL), and a
#: game with nothing new gives no row.  A join grouped by game let the planner
#: scan the whole events table instead (a parallel hash join: ~200 ms a call
#: at a million events, whatever the games asked and however few their new
#: events).
_FOLD_QUERY = (
    "SELECT c.game_id::text, f.* FROM unnest(%s::uuid[], %s::int[]) AS c(game_id, after)"
    f" CROSS JOIN LATERAL (SELECT {_FOLD_COLUMNS}, {_HEAD_META.format('c.game_id')}"
    f" FROM {_FOLD_ROWS.format('c.game_id', 'c.after')} HAVING count(*) > 0) f"
)

_GUARDED_ROWS = 1000


@functools.lru_cache(maxsize=256)
def insert_guarded(n: int, table: str = "events", stream: str = "game_id") -> str:
    """All ``n`` rows of one append in ONE statement, inserted only if the
    stream's head is still the expected version (the last parameter): one
    round trip, and atomic on its own, so an autocommit connection needs no
    BEGIN/COMMIT round trips either.  ``table``/``stream``: a game's events
    (default) or a tournament's (``tournament_events``, ``tournament_id``).

    Built once per row count (cached)."""
    cols = _EVENT_COLS.replace("game_id", stream, 1)
    rows = ", ".join([_ROW] * n)
    return (
        f"INSERT INTO {table} ({cols}) SELECT * FROM (VALUES {rows}) AS v"
        f" WHERE (SELECT coalesce(max(seq), 0) FROM {table} WHERE {stream} = %s) = %s"
    )


def insert_plain(table: str = "events", stream: str = "game_id") -> str:
    """One row, unguarded (inside a transaction whose first statement was guarded)."""
    return f"INSERT INTO {table} ({_EVENT_COLS.replace('game_id', stream, 1)}) VALUES {_ROW}"


_INSERT = insert_plain()
_SELECT = f"SELECT {event_columns()} FROM events"


def json_text(obj: Any) -> str:
    """An event's ``data`` or ``meta`` as the JSON text stored in its ``json``
    column: compact (no blank after ``,`` and ``:``, which the standard library
    puts there by default: 21 bytes an event, docs/PERFORMANCE.md), written by
    orjson.  Only storage: digests and hashes are computed over the canonical
    form (service/domain/canonical.py), never over this text, and readers parse
    it back to the same values.

    An integer beyond 64 bits is refused (``ValueError``): the store's readers
    parse with orjson, which returns a float for one, so its digest would no
    longer check.  The intents' schemas bound every integer a client sends; an
    engine that produced one would fail loudly here instead.  Anything else
    orjson refuses (a key that is not a string) is written as the standard
    library writes it."""
    try:
        return orjson.dumps(obj).decode()
    except orjson.JSONEncodeError:
        if _has_huge_int(obj):
            raise ValueError("an integer beyond 64 bits cannot be stored: the store reads it back as a float") from None
        return json.dumps(obj, separators=(",", ":"))


def _has_huge_int(obj: Any) -> bool:
    if isinstance(obj, int) and not isinstance(obj, bool):
        return not -(2**63) <= obj < 2**64
    if isinstance(obj, dict):
        return any(_has_huge_int(k) or _has_huge_int(v) for k, v in obj.items())
    if isinstance(obj, list | tuple):
        return any(_has_huge_int(v) for v in obj)
    return False


def event_params(stream_id: uuid.UUID, events: Sequence[StoredEvent]) -> list[Any]:
    """The insert parameters of sealed events, row after row (a game's or a
    tournament's stream).  An event whose meta is its predecessor's in the same
    batch (a decision's events share one) stores NULL: "the meta of the event
    before" (migration 0008); the first row of a batch always stores its own.
    Only the hash of the chain is stored: the readers derive the rest (migration 0009)."""
    params: list[Any] = []
    prev: dict[str, Any] | None = None
    for e in events:
        same = prev is not None and (e.meta is prev or e.meta == prev)
        params += (
            stream_id,
            e.seq,
            e.type,
            e.schema_version,
            json_text(e.data),
            None if same else json_text(compact_meta(e.meta)),
            e.hash,
        )
        prev = e.meta
    return params


def param_rows(params: list[Any]) -> list[list[Any]]:
    """:func:`event_params`' flat list cut into one list per row (for ``executemany``)."""
    return [params[i : i + _PARAMS_PER_ROW] for i in range(0, len(params), _PARAMS_PER_ROW)]


MetaBefore = Callable[[str, int], dict[str, Any]]


def rows_to_events(
    rows: Sequence[Sequence[Any]], meta_before: MetaBefore, last: dict[str, dict[str, Any]] | None = None
) -> list[StoredEvent]:
    """Stored events from rows of :func:`event_columns`, in stream order per
    stream: a NULL meta is the meta of the event before in the same stream;
    ``meta_before(stream_id, seq)`` finds it when that event is not among the
    rows (a read that starts inside a decision).  ``last``: each stream's
    latest meta, carried from one batch of a read to the next (updated).

    The digests are derived here, as the writer sealed them
    (``canonical.digests_text``: the salt from the stream's seed and the seq), and
    ``prev_hash`` is the hash of the event before (GENESIS for seq 1; empty if
    that event is missing, which the audit reports as a gap)."""
    last = {} if last is None else last
    out = []
    meta_obj: Any = None
    meta_text = b""
    for r in rows:
        stream, seq, meta = r[0], r[1], r[5]
        if meta is not None:
            meta = full_meta(meta)
        else:
            meta = last.get(stream)
            if meta is None:
                meta = full_meta(meta_before(stream, seq))
        last[stream] = meta
        if meta is not meta_obj:  # a decision's events share one meta: serialised once
            meta_obj, meta_text = meta, canonical.canonical(meta)
        if r[8] is None:  # every stream is created with its seed, in one transaction
            raise LookupError(f"stream {stream}: no seed is stored, its digests cannot be derived")
        dd, md = canonical.digests_text(bytes(r[8]), seq, r[4], meta_text)
        prev = r[7] if r[7] is not None else canonical.GENESIS if seq == 1 else ""
        out.append(StoredEvent(stream, seq, r[2], r[3], r[4], meta, dd, md, prev, r[6]))
    return out


def meta_before_query(table: str = "events", stream: str = "game_id") -> str:
    """The meta in force at a seq: the nearest row at or before it that stores one."""
    return f"SELECT meta FROM {table} WHERE {stream} = %s AND seq <= %s AND meta IS NOT NULL ORDER BY seq DESC LIMIT 1"


_META_BEFORE = meta_before_query()
_META_BEFORE_ROW = (
    "SELECT m.meta FROM events m WHERE m.game_id = events.game_id AND m.seq < events.seq"
    " AND m.meta IS NOT NULL ORDER BY m.seq DESC LIMIT 1"
)


#: A pooled connection checked out less than this many seconds ago is not
#: pinged again before reuse (see :func:`check_if_idle`).
RECHECK_AFTER = 2.0


def check_if_idle(conn: psycopg.Connection) -> None:
    """The pools' ``check``: ping a connection before reuse only if it has not
    been used for :data:`RECHECK_AFTER` seconds.  Pinging on every checkout
    cost one round trip per query — a third of an intent's round trips
    (``make bench``).  A connection that broke within that window (a restarted
    server) fails its query: the request answers 503, nothing is written, and
    the pool discards the broken connection, as it would for one that broke
    between a ping and its use."""
    now = time.monotonic()
    if now - getattr(conn, "_qd_used_at", float("-inf")) >= RECHECK_AFTER:
        ConnectionPool.check_connection(conn)
    conn._qd_used_at = now  # type: ignore[attr-defined]  # our mark on the pool's connection


def configure_connection(conn: psycopg.Connection) -> None:
    """The pools' ``configure``: a new connection runs without PostgreSQL's JIT
    compiler.  Our queries are short; JIT is chosen by estimated cost, and the
    fold read of several games (one index range per game, each estimated at
    thousands of rows) crossed its threshold and spent 10-40 ms compiling what
    then ran in 0.3 ms."""
    conn.execute("SET jit = off")


class EventStore(Pooled):
    """Thin, explicit SQL over a psycopg pool.  Every method is one transaction."""

    # -- writing ----------------------------------------------------------
    def create_game(
        self,
        record: GameRecord,
        seed: bytes,
        token_hashes: Sequence[bytes],
        sealed: Sequence[StoredEvent],
        *,
        conn: psycopg.Connection | None = None,
    ) -> None:
        """Record a new game: its identity, its secrets and its sealed opening
        events (``service.domain.pipeline.open_game``), in one transaction.
        ``conn``: join that connection's open transaction instead (a unit of
        work's: a table's game starts in the transaction that fills its last seat)."""
        gid = uuid.UUID(record.game_id)
        try:
            with contextlib.nullcontext(conn) if conn is not None else self._conn() as conn, conn.transaction():
                conn.execute(
                    "INSERT INTO games (game_id, game, rules_version, players, options, seed_commitment,"
                    " created_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    (
                        gid,
                        record.game,
                        record.rules_version,
                        Jsonb(record.players),
                        Jsonb(record.options),
                        record.seed_commitment,
                        record.created_at,
                    ),
                )
                conn.execute("INSERT INTO game_seeds (game_id, seed) VALUES (%s, %s)", (gid, seed))
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO seat_tokens (game_id, seat, player, token_hash) VALUES (%s, %s, %s, %s)",
                        [(gid, i, p, h) for i, (p, h) in enumerate(zip(record.players, token_hashes, strict=True))],
                    )
                with conn.cursor() as raw:
                    raw.execute(insert_guarded(len(sealed)), [*event_params(gid, sealed), gid, 0])
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc

    def append(
        self,
        game_id: str,
        expected_version: int,
        sealed: Sequence[StoredEvent],
        idempotent: IdempotentWrite | None = None,
        snapshot: tuple[int, dict[str, Any]] | None = None,
    ) -> None:
        """Append ``sealed`` events (``service.domain.pipeline``: numbered from
        ``expected_version + 1`` and chained) atomically, with the idempotency
        record and an optional state snapshot in the same transaction.
        Raises :class:`Conflict` if the stream moved."""
        gid = uuid.UUID(game_id)
        # One guarded statement for the first rows (at most _GUARDED_ROWS:
        # _PARAMS_PER_ROW a row, and PostgreSQL takes 65535); the rest, if any,
        # in the same transaction.
        head = sealed[:_GUARDED_ROWS]
        every = event_params(gid, sealed)
        params = [*every[: len(head) * _PARAMS_PER_ROW], gid, expected_version]
        try:
            with self._conn() as conn, conn.cursor() as raw:
                if idempotent is None and snapshot is None and len(sealed) == len(head):
                    # The common case: one statement, no explicit transaction.
                    raw.execute(insert_guarded(len(head)), params)
                    if raw.rowcount != len(head):
                        raise Conflict(expected_version)
                    return
                with conn.transaction(), conn.cursor() as cur:
                    raw.execute(insert_guarded(len(head)), params)
                    if raw.rowcount != len(head):
                        raise Conflict(expected_version)
                    if len(sealed) > len(head):
                        cur.executemany(_INSERT, param_rows(every[len(head) * _PARAMS_PER_ROW :]))
                    if idempotent is not None:
                        cur.execute(
                            "INSERT INTO intent_keys (game_id, key, seat, request_hash, response)"
                            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                            (gid, idempotent.key, idempotent.seat, idempotent.request_hash, Jsonb(idempotent.response)),
                        )
                        if cur.rowcount != 1:
                            raise DuplicateKey(idempotent.key)
                    if snapshot is not None:
                        cur.execute(
                            "INSERT INTO snapshots (game_id, version, state) VALUES (%s, %s, %s)"
                            " ON CONFLICT DO NOTHING",
                            (gid, snapshot[0], Json(snapshot[1])),
                        )
        except psycopg.errors.UniqueViolation as exc:
            raise Conflict(expected_version) from exc
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(str(exc)) from exc

    # -- reading ----------------------------------------------------------
    def game(self, game_id: str) -> GameRecord | None:
        rows = self._fetch(
            "SELECT game_id::text, game, rules_version, players, options, seed_commitment,"
            " to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
            " FROM games WHERE game_id = %s",
            (uuid.UUID(game_id),),
        )
        return GameRecord(*rows[0]) if rows else None

    def token_hashes(self, game_id: str) -> list[bytes]:
        """The per-seat token hashes (seat order): what a read model needs to
        tell seats apart, without the seed."""
        rows = self._fetch("SELECT token_hash FROM seat_tokens WHERE game_id = %s ORDER BY seat", (uuid.UUID(game_id),))
        return [bytes(t[0]) for t in rows]

    def token_hashes_many(self, game_ids: Sequence[str]) -> dict[str, list[bytes]]:
        """:meth:`token_hashes` for several games in one round trip."""
        rows = self._fetch(
            "SELECT game_id::text, array_agg(token_hash ORDER BY seat) FROM seat_tokens"
            " WHERE game_id = ANY(%s) GROUP BY game_id",
            ([uuid.UUID(g) for g in game_ids],),
        )
        return {r[0]: [bytes(h) for h in r[1]] for r in rows}

    def decided_seats(self, game_ids: Sequence[str]) -> dict[str, set[int]]:
        """For each game of ``game_ids``, the seats that made at least one decision of
        their own (``service.domain.counting.is_decision``), in one round trip.  Only a
        decision's first event stores its meta; the distinct (seat, intent type) pairs
        are few per game."""
        # The seat as text, parsed here: a stream altered by hand must not stop the
        # leaderboards with a cast error (a seat that is no integer is no decision).
        rows = self._fetch(
            "SELECT DISTINCT game_id::text, meta->>'seat', meta->'intent'->>'type', meta->>'auto'"
            " FROM events WHERE game_id = ANY(%s) AND meta IS NOT NULL AND meta->>'seat' IS NOT NULL",
            ([uuid.UUID(g) for g in game_ids],),
        )
        out: dict[str, set[int]] = {g: set() for g in game_ids}
        for gid, raw_seat, kind, auto in rows:
            if not raw_seat.isascii() or not raw_seat.isdigit():
                continue
            seat = int(raw_seat)
            meta = {"seat": seat, "intent": {"type": kind}, "auto": auto == "true"}
            if is_decision(meta) is not None:
                out.setdefault(gid, set()).add(seat)
        return out

    def secrets(self, game_id: str) -> tuple[bytes, list[bytes]]:
        """The seed and the per-seat token hashes (seat order)."""
        gid = uuid.UUID(game_id)
        seed = self._fetch("SELECT seed FROM game_seeds WHERE game_id = %s", (gid,))
        tokens = self._fetch("SELECT token_hash FROM seat_tokens WHERE game_id = %s ORDER BY seat", (gid,))
        if not seed:
            raise KeyError(game_id)
        return bytes(seed[0][0]), [bytes(t[0]) for t in tokens]

    def read(self, game_id: str, after: int = 0, upto: int | None = None) -> list[StoredEvent]:
        """Events of one stream with ``after < seq <= upto``, in order."""
        q = _SELECT + " WHERE game_id = %s AND seq > %s"
        params: list[Any] = [uuid.UUID(game_id), after]
        if upto is not None:
            q += " AND seq <= %s"
            params.append(upto)
        return rows_to_events(self._fetch(q + " ORDER BY seq", params), self._meta_before)

    def read_for_fold(self, afters: dict[str, int]) -> dict[str, tuple[Any, ...]]:
        """What a projection reads, never feeds, exports or audits: the events of
        each game of ``{game: after}`` after its checkpoint, in one round trip,
        games with nothing new left out.  Each game's stretch comes as ONE JSON
        array text and its types joined (``FoldBatch.parse`` turns it into lists,
        with one ``orjson.loads``): decoding row by row in the client bounded a
        rebuild (docs/PERFORMANCE.md, "Rebuild reads").  Unparsed, so that a
        rebuild's reader threads fetch without holding the GIL for long and the
        folding thread parses one game at a time."""
        ids = list(afters)
        # The arrays travel as text literals ('{...}'), cast by the query: psycopg dumps a
        # list of UUIDs element by element in Python, which cost more than the query's own
        # round trip (111-118 µs a call for two games, 68 µs so; docs/PERFORMANCE.md "Only
        # what can change is written").  A UUID's canonical text and an integer need no quoting in a literal.
        game_ids = "{" + ",".join(str(uuid.UUID(g)) for g in ids) + "}"
        seqs = "{" + ",".join(str(int(afters[g])) for g in ids) + "}"
        rows = self._fetch(_FOLD_QUERY, (game_ids, seqs))
        return {r[0]: tuple(r[1:]) for r in rows}

    def iter_stream(self, game_id: str, after: int = 0, batch: int = 1000) -> Iterator[StoredEvent]:
        """The stream in batches, without holding it all in memory."""
        last: dict[str, dict[str, Any]] = {}  # the meta in force, from one batch to the next
        while True:
            rows = self._fetch(
                _SELECT + " WHERE game_id = %s AND seq > %s ORDER BY seq LIMIT %s",
                (uuid.UUID(game_id), after, batch),
            )
            yield from rows_to_events(rows, self._meta_before, last)
            if len(rows) < batch:
                return
            after = rows[-1][1]

    def _meta_before(self, game_id: str, seq: int) -> dict[str, Any]:
        rows = self._fetch(_META_BEFORE, (uuid.UUID(game_id), seq))
        if not rows:
            raise LookupError(f"game {game_id}: no meta at or before seq {seq}")
        return rows[0][0]

    def version(self, game_id: str) -> int:
        rows = self._fetch("SELECT coalesce(max(seq), 0) FROM events WHERE game_id = %s", (uuid.UUID(game_id),))
        return rows[0][0]

    def read_all(
        self, after: Cursor = START, limit: int = 1000, types: Sequence[str] | None = None
    ) -> list[tuple[Cursor, StoredEvent]]:
        """The global feed after ``after``, in ``(tx_id, position)`` order,
        only from transactions that can no longer be joined by an earlier one."""
        q = (
            # The feed's rows hop between streams: a NULL meta is filled in here, by one
            # backward index probe (COALESCE evaluates it only for those rows).
            f"SELECT {event_columns(meta=f'coalesce(meta, ({_META_BEFORE_ROW}))')},"
            " tx_id::text, position FROM events"
            " WHERE (tx_id, position) > (%s::xid8, %s)"
            " AND tx_id < pg_snapshot_xmin(pg_current_snapshot())"
        )
        params: list[Any] = [after[0], after[1]]
        if types:
            q += " AND type = ANY(%s)"
            params.append(list(types))
        # Qualified: a bare "tx_id" here would name the text output column and
        # sort 100115 before 96498.
        q += " ORDER BY events.tx_id, events.position LIMIT %s"
        params.append(limit)
        rows = self._fetch(q, params)
        return [((r[9], r[10]), e) for r, e in zip(rows, rows_to_events(rows, self._meta_before), strict=True)]

    def read_finished(self, after: Cursor = START, limit: int = 1000) -> list[FinishedRow]:
        """:meth:`read_all` of the ``GameFinished`` events only, each with its
        stream's opening, in one round trip and without digests: what the
        leaderboards fold.  Through ``read_all`` they paid the derived digests
        of every row and a round trip per game for its opening: for the 36
        games of the bench's rebuild, 46-56 ms of CPU against 15
        (docs/PERFORMANCE.md, "Rebuild reads")."""
        q = (
            "SELECT events.tx_id::text, events.position, events.game_id::text, events.data,"
            f" coalesce(events.meta, ({_META_BEFORE_ROW}))->>'received_at', o.type, o.data, o.meta->>'received_at'"
            " FROM events JOIN events o ON o.game_id = events.game_id AND o.seq = 1"
            " WHERE (events.tx_id, events.position) > (%s::xid8, %s)"
            " AND events.tx_id < pg_snapshot_xmin(pg_current_snapshot())"
            # The literal type: the partial index events_finished serves it.
            " AND events.type = 'GameFinished'"
            " ORDER BY events.tx_id, events.position LIMIT %s"
        )
        rows = self._fetch(q, (after[0], after[1], limit))
        return [FinishedRow((r[0], r[1]), r[2], r[3], r[4], r[5], r[6], r[7]) for r in rows]

    def feed_positions(self, after: Cursor = START, limit: int = 1000) -> list[tuple[Cursor, str, int]]:
        """:meth:`read_all` reduced to ``(cursor, game_id, seq)``: all a
        catch-up sweep needs to find the games that moved, at a fraction of
        the bytes (it runs every few seconds beside the live projection)."""
        q = (
            "SELECT tx_id::text, position, game_id::text, seq FROM events"
            " WHERE (tx_id, position) > (%s::xid8, %s)"
            " AND tx_id < pg_snapshot_xmin(pg_current_snapshot())"
            " ORDER BY events.tx_id, events.position LIMIT %s"
        )
        return [((r[0], r[1]), r[2], r[3]) for r in self._fetch(q, (after[0], after[1], limit))]

    def finished_rows(self, game_ids: Sequence[str]) -> dict[str, tuple[dict[str, Any], str | None, int, Any]]:
        """For the games of ``game_ids`` whose stream is finished, in one round
        trip: ``{game: (GameCreated data, its received_at, head seq, the result
        GameFinished records)}``; what a game list shows of a game whose read
        model has left Redis (``projections/game_lists.py``)."""
        rows = self._fetch(
            "SELECT g.id::text, f.data, f.meta->>'received_at', l.seq, l.data->'result'"
            " FROM unnest(%s::uuid[]) AS g(id)"
            " JOIN events f ON f.game_id = g.id AND f.seq = 1"
            " JOIN LATERAL (SELECT x.seq, x.type, x.data FROM events x WHERE x.game_id = g.id"
            " ORDER BY x.seq DESC LIMIT 1) l ON l.type = 'GameFinished'",
            ([uuid.UUID(g) for g in game_ids],),
        )
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}

    def game_ids(self, after: str | None = None, limit: int = 1000) -> list[str]:
        """All game ids in id order (for rebuilds), paged."""
        rows = self._fetch(
            "SELECT game_id::text FROM games WHERE game_id > %s ORDER BY game_id LIMIT %s",
            (uuid.UUID(after) if after else uuid.UUID(int=0), limit),
        )
        return [r[0] for r in rows]

    def stored_response(self, game_id: str, key: str, seat: int) -> tuple[int, str, dict[str, Any]] | None:
        """The answer recorded under ``seat``'s Idempotency-Key ``key`` in this
        game, if any: ``(seat, request_hash, response)``.  Keys are scoped to
        the seat (migration 0006): another seat's keys are invisible."""
        rows = self._fetch(
            "SELECT seat, request_hash, response FROM intent_keys WHERE game_id = %s AND seat = %s AND key = %s",
            (uuid.UUID(game_id), seat, key),
        )
        return (rows[0][0], rows[0][1], rows[0][2]) if rows else None

    def latest_snapshot(self, game_id: str, upto: int | None = None) -> tuple[int, dict[str, Any]] | None:
        q = "SELECT version, state FROM snapshots WHERE game_id = %s"
        params: list[Any] = [uuid.UUID(game_id)]
        if upto is not None:
            q += " AND version <= %s"
            params.append(upto)
        rows = self._fetch(q + " ORDER BY version DESC LIMIT 1", params)
        return (rows[0][0], rows[0][1]) if rows else None

    def ping(self) -> None:
        self._fetch("SELECT 1", ())
