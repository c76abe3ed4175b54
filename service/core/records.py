"""The records the event store reads and writes: plain frozen data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

#: Cursor of the global feed: ``(tx_id as decimal text, position)``.
Cursor = tuple[str, int]
START: Cursor = ("0", 0)


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


#: What a projection reads of a stored event: ``[seq, type, data]`` (a list,
#: as orjson parses it: a fold builds one per event, and any object built per
#: event costs as much as the fold itself; ``make bench``: rebuild).
FoldRow = list[Any]
SEQ, TYPE, DATA = 0, 1, 2


@dataclass(frozen=True, slots=True)
class FoldBatch:
    """A stretch of a stream as a projection reads it (``read_for_fold``)."""

    rows: list[FoldRow]
    #: ``received_at`` of the GameCreated event, if it is in the stretch.
    created_at: str | None
    #: ``received_at`` of the stretch's last decision (for the lag metric).
    newest_at: str | None
    #: The clock recorded with the last event (``meta.clock``, service/core/clocks.py).
    clock: dict[str, Any] | None = None

    @classmethod
    def parse(cls, raw: tuple[Any, ...]) -> FoldBatch:
        """From the store's ``(rows text, GameCreated's received_at, the head's meta)``."""
        text, created_at, head_meta = raw
        head_meta = head_meta or {}
        return cls(orjson.loads(text) if text else [], created_at, head_meta.get("received_at"), head_meta.get("clock"))


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
