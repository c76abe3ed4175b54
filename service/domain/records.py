"""The records the event store reads and writes: plain frozen data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from service.domain.clocks import to_iso, to_us

#: Cursor of the global feed: ``(tx_id as decimal text, position)``.
Cursor = tuple[str, int]
START: Cursor = ("0", 0)


def compact_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A meta as the store writes it, without what :func:`full_meta` puts back
    exactly (docs/SCALING.md, "Storage per event"), from a decision's clock
    (``service/domain/clocks.py``):

    * its time ``at`` when it is the decision's ``received_at`` (nearly always;
      38 bytes);
    * each seat's ``deadline`` that is ``at`` plus that seat's ``remaining_us``
      (clocks.advance keeps remaining = deadline - at for every seat to act)
      is stored as null (28 bytes a seat to act);
    * ``timed_out`` when no seat has timed out (15 bytes).

    Only storage: digests and hashes cover the full meta.  A clock without
    ``at`` or ``timed_out`` (clocks.py writes both, always) is refused: it
    could not be told apart from a compacted one."""
    clock = meta.get("clock")
    if not isinstance(clock, dict):
        return meta
    if "at" not in clock or "timed_out" not in clock:
        raise ValueError("a meta's clock must carry its time ('at') and its 'timed_out' list")
    keys = list(clock)
    out = dict(clock)
    deadlines, remaining = clock.get("deadline"), clock.get("remaining_us")
    if isinstance(deadlines, dict) and isinstance(remaining, dict):
        at = to_us(clock["at"])
        derivable = {
            s: None if isinstance(remaining.get(s), int) and d == to_iso(at + remaining[s]) else d
            for s, d in deadlines.items()
        }
        if derivable != deadlines:
            out["deadline"] = derivable
    if keys[0] == "at" and clock["at"] == meta.get("received_at"):
        del out["at"]
    if keys[-1] == "timed_out" and clock["timed_out"] == []:
        del out["timed_out"]
    return meta if out == clock else {**meta, "clock": out}


def full_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A stored meta as it was sealed (:func:`compact_meta` undone, each key
    back in its place); updated in place."""
    clock = meta.get("clock")
    if not isinstance(clock, dict):
        return meta
    if "at" not in clock:
        clock = {"at": meta["received_at"], **clock}
    if "timed_out" not in clock:
        clock = {**clock, "timed_out": []}
    deadlines = clock.get("deadline")
    if isinstance(deadlines, dict) and None in deadlines.values():
        at = to_us(clock["at"])
        remaining = clock["remaining_us"]
        clock["deadline"] = {s: to_iso(at + remaining[s]) if d is None else d for s, d in deadlines.items()}
    meta["clock"] = clock
    return meta


@dataclass(frozen=True, slots=True)
class NewEvent:
    type: str
    data: dict[str, Any]
    meta: dict[str, Any]
    schema_version: int = 1


@dataclass(frozen=True, slots=True)
class StoredEvent:
    game_id: str
    seq: int
    type: str
    schema_version: int
    data: dict[str, Any]
    meta: dict[str, Any]
    data_digest: str
    meta_digest: str
    prev_hash: str
    hash: str

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "type": self.type,
            "schema_version": self.schema_version,
            "data": self.data,
            "meta": self.meta,
            "data_digest": self.data_digest,
            "meta_digest": self.meta_digest,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }


@dataclass(frozen=True, slots=True)
class FoldBatch:
    """A stretch of a stream as a projection reads it (``read_for_fold``): the
    events' types and data as two lists, the n-th event being seq
    ``first_seq + n`` (a stream is dense).  Two flat lists, not an object or a
    list per event: any object built per event costs as much as the fold
    itself (``make bench``: rebuild, docs/PERFORMANCE.md)."""

    #: The seq of the first event (0 when the stretch is empty).
    first_seq: int
    types: list[str]
    datas: list[Any]
    #: ``received_at`` of the GameCreated event, if it is in the stretch.
    created_at: str | None
    #: ``received_at`` of the stretch's last decision (for the lag metric).
    newest_at: str | None
    #: The clock recorded with the last event (``meta.clock``, service/domain/clocks.py).
    clock: dict[str, Any] | None = None

    @property
    def last_seq(self) -> int:
        return self.first_seq + len(self.types) - 1

    def after(self, version: int) -> FoldBatch:
        """The events with seq > ``version`` (a projection that moved on since the read)."""
        skip = version - self.first_seq + 1
        if skip <= 0 or not self.types:
            return self
        return FoldBatch(self.first_seq + skip, self.types[skip:], self.datas[skip:], None, self.newest_at, self.clock)

    @classmethod
    def parse(cls, raw: tuple[Any, ...]) -> FoldBatch:
        """From the store's ``(data array text, types joined by commas, first seq,
        GameCreated's received_at, the head's meta)``."""
        datas_text, types_text, first_seq, created_at, head_meta = raw
        if not types_text:
            return cls(0, [], [], None, None, None)
        head_meta = full_meta(head_meta) if head_meta else {}
        # An event type is a plain name (a CHECK constraint): a comma never occurs in one.
        return cls(
            first_seq,
            types_text.split(","),
            orjson.loads(datas_text),
            created_at,
            head_meta.get("received_at"),
            head_meta.get("clock"),
        )


@dataclass(frozen=True, slots=True)
class FinishedRow:
    """A ``GameFinished`` of the global feed as the leaderboards fold it
    (``EventStore.read_finished``): no digests, and the stream's opening with it."""

    cursor: Cursor
    game_id: str
    #: The GameFinished's data (``result``).
    data: dict[str, Any]
    #: ``received_at`` of the decision that finished the game (its meta, or the meta in force).
    received_at: str | None
    #: Type and data of the stream's first event (a GameCreated in every stream the service writes).
    opening_type: str
    opening: dict[str, Any]
    #: ``received_at`` of the stream's opening: when the game began.
    opened_at: str | None = None


@dataclass(frozen=True, slots=True)
class GameRecord:
    game_id: str
    game: str
    rules_version: str
    players: list[str]
    options: dict[str, Any]
    seed_commitment: str
    created_at: str


@dataclass(frozen=True, slots=True)
class IdempotentWrite:
    key: str
    seat: int
    request_hash: str
    response: dict[str, Any]
