"""What the projection worker publishes, so that followers are pushed to
rather than polling (docs/API.md "Streams and waits").

* A game's read model changed: ``PUBLISH g:{<id>}:changed <version>``.  It is
  queued inside the same atomic write as the one it announces
  (``projections/runner.py``), so a subscriber that hears version N can read N
  (or later) from the game's hash at once, and a write that failed announces
  nothing.  The payload is the version the hash now holds.
* The board of that version: ``PUBLISH g:{<id>}:board <json>``, just before
  the announcement, in the same atomic write: every field of the write that a
  board shows (views, legal lists, status, clock...; not the engine's state nor
  the seats' token hashes).  Only a process that streams the game subscribes
  to it (``service/http/live/hub.py``), so a follower gets every version, in
  order, even the ones the hash has already moved past when it is served; a
  channel nobody listens to costs Redis next to nothing.
* An account's events (``PUBLISH a:{<handle>}:events <json>``, one line of
  the account stream each), from the same write, for the seats of the game
  that are accounts: ``table_started`` (the first write of a game opened by a
  table, or by a tournament's round: then with ``tournament_id``, ``round``
  and ``table``), ``your_turn`` (each write after which the seat is to act) and
  ``game_finished``.  Only for news: a write whose newest event is older
  than ``FRESH_SECONDS`` (a rebuild, or catching up after an outage) announces
  the game's version but tells no account anything.

Channels carry the game id (or handle) in a hash tag, like the keys of
``projections/keys.py``: the same slot as the data they announce.  On one
Redis server they are published with ``PUBLISH``; on a Redis Cluster with
``SPUBLISH`` (sharded pub/sub: ``projections.runner.cluster_plan``), so an
announcement stays on its slot's node.  The API subscribes to the channels of
the games and accounts it has waiters for, and to nothing else
(``service/http/live/hub.py``).

Pub/sub is fire and forget: a subscriber that is disconnected misses
messages.  Followers therefore never trust it alone: on reconnecting, and on a
long safety timer, they re-read the versions from the hashes themselves.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any

import orjson

#: Every game's changes and every account's events, as patterns: for tools that
#: watch everything on one server (``scripts/bench_*``); the API never subscribes by pattern.
GAME_PATTERN = "g:{*}:changed"
ACCOUNT_PATTERN = "a:{*}:events"

_GAME_PREFIX, _GAME_SUFFIX = "g:{", "}:changed"
_BOARD_SUFFIX = "}:board"
#: Fields of a write that no board shows: the engine's whole state (hidden
#: information: only views leave the projection) and the seats' token hashes.
_NOT_BOARD = frozenset({"state", "auth"})


def _game_in(channel: str, suffix: str) -> str | None:
    """The game id of a game channel name ending with ``suffix``, or None."""
    if channel.startswith(_GAME_PREFIX) and channel.endswith(suffix):
        return channel[len(_GAME_PREFIX) : -len(suffix)]
    return None


def game_channel(game_id: str) -> str:
    """The channel announcing ``game_id``'s read model changes."""
    return f"{_GAME_PREFIX}{game_id}{_GAME_SUFFIX}"


def game_of(channel: str) -> str | None:
    """The game id of a :func:`game_channel` name, or None."""
    return _game_in(channel, _GAME_SUFFIX)


def board_channel(game_id: str) -> str:
    """The channel carrying each new board of ``game_id`` (see the module's doc)."""
    return f"{_GAME_PREFIX}{game_id}{_BOARD_SUFFIX}"


def board_game_of(channel: str) -> str | None:
    """The game id of a :func:`board_channel` name, or None."""
    return _game_in(channel, _BOARD_SUFFIX)


def board_payload(fields: dict[str, Any]) -> bytes:
    """What :func:`board_channel` carries of a write's ``fields`` (the game's
    hash fields as written): all but :data:`_NOT_BOARD`, as a JSON header
    ``[[name, length], ...]``, a newline, then the values' bytes one after the
    other.  The values stay the bytes the hash holds (most are JSON texts):
    a subscriber slices them out, as it would read them with ``HMGET``,
    without parsing them (:func:`parse_board`)."""
    names, values = [], []
    for name, value in fields.items():
        if name in _NOT_BOARD:
            continue
        raw = value if isinstance(value, bytes) else str(value).encode()
        names.append((name, len(raw)))
        values.append(raw)
    return orjson.dumps(names) + b"\n" + b"".join(values)


def parse_board(payload: bytes) -> dict[str, bytes]:
    """The fields of a :func:`board_payload`, each as the bytes ``HMGET`` gives."""
    head, _, body = payload.partition(b"\n")
    out, at = {}, 0
    for name, size in orjson.loads(head):
        out[name] = body[at : at + size]
        at += size
    return out


def game_changed(pipe: Any, game_id: str, version: int | str) -> None:
    """Queue the announcement of ``game_id`` at ``version`` on ``pipe`` (inside
    the projection's atomic write, after the fields it announces)."""
    pipe.publish(game_channel(game_id), str(version))


#: Account events are news only within this many seconds of their game's event.
FRESH_SECONDS = 300.0


def game_written(
    pipe: Any, info: dict[str, Any], fields: dict[str, Any], finished_now: bool, newest_at: str | None
) -> None:
    """Everything one projection write announces, queued on ``pipe`` (inside
    its atomic write): the game's new version, and its account seats' events.
    ``fields`` are the hash's new fields (``"auth"`` among them only on the
    hash's first write); ``newest_at``: when its newest event was received."""
    gid, version = info["id"], int(fields["version"])
    # The board before the announcement: a follower woken by the announcement
    # finds the board of that version already heard.
    pipe.publish(board_channel(gid), board_payload(fields))
    game_changed(pipe, gid, version)
    flags = info.get("accounts")
    if not flags or not any(flags) or not _fresh(newest_at):
        return
    players = info["players"]
    seats = [seat for seat, is_account in enumerate(flags) if is_account and seat < len(players)]
    if "auth" in fields and info.get("table"):
        for seat in seats:
            account_event(pipe, players[seat], {"type": "table_started", "table_id": info["table"], "game_id": gid})
    elif "auth" in fields and isinstance(info.get("tournament"), dict):
        # A tournament's table (service/service_layer/tournament_rounds.py): which tournament, round and table.
        where = info["tournament"]
        started = {
            "type": "table_started",
            "tournament_id": where.get("id"),
            "round": where.get("round"),
            "table": where.get("table"),
            "game_id": gid,
        }
        for seat in seats:
            account_event(pipe, players[seat], started)
    if finished_now:
        for seat in seats:
            account_event(pipe, players[seat], {"type": "game_finished", "game_id": gid, "version": version})
        return
    to_act = set(orjson.loads(fields["to_act"])) if fields.get("to_act") else set()
    for seat in seats:
        if seat in to_act:
            account_event(pipe, players[seat], {"type": "your_turn", "game_id": gid, "version": version})


def _fresh(received_at: str | None) -> bool:
    if not received_at:
        return False
    at = datetime.fromisoformat(received_at.replace("Z", "+00:00")).timestamp()
    return time.time() - at <= FRESH_SECONDS


def account_channel(handle: str) -> str:
    """The channel of one account's events (handles are compared ignoring case)."""
    return f"a:{{{handle.lower()}}}:events"


def account_of(channel: str) -> str | None:
    if channel.startswith("a:{") and channel.endswith("}:events"):
        return channel[3:-8]
    return None


def account_event(r: Any, handle: str, event: dict[str, Any]) -> None:
    """Announce one account event, e.g. ``{"type": "your_turn", "game_id": ...,
    "version": ...}``, ``{"type": "table_started", "table_id": ..., "game_id": ...}``
    or ``{"type": "game_finished", "game_id": ...}`` (docs/API.md, "Streams"),
    with ``r`` a Redis client or a pipeline (or recorder) inside the projection's atomic write."""
    r.publish(account_channel(handle), json.dumps(event, separators=(",", ":")))
