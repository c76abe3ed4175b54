"""How a long-lived response frames what it sends: NDJSON lines, Server-Sent
Events and HTTP/1.1 chunks.  The game and account streams (``streams.py``) and
the live events feed (``audit.py``) frame with these; what goes inside a line
is each one's own (a board, an account event, a feed line)."""

from __future__ import annotations

import json
from typing import Any

import orjson


def ndjson(obj: Any) -> bytes:
    """One NDJSON line (``orjson``: the streams' boards and events)."""
    return orjson.dumps(obj) + b"\n"


def json_line(obj: Any) -> bytes:
    """One NDJSON line by the standard library's serialiser: a feed line carries an
    event's data as it was recorded, whose integers may exceed 64 bits (``orjson``
    refuses them)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def sse(event: str, data: bytes, event_id: int | None = None) -> bytes:
    """One SSE event; ``data`` is one line of JSON (with or without its newline)."""
    head = b"id: %d\n" % event_id if event_id is not None else b""
    return head + b"event: " + event.encode() + b"\ndata: " + data.rstrip(b"\n") + b"\n\n"


def sse_retry(milliseconds: int) -> bytes:
    """The SSE ``retry:`` field (how soon an EventSource reconnects), to lead the
    first event's block; followed by a blank line it is a block of its own."""
    return b"retry: %d\n" % milliseconds


def sse_comment(text: str) -> bytes:
    """An SSE comment block (a ping an EventSource ignores)."""
    return b": " + text.encode() + b"\n\n"


def http_chunk(data: bytes) -> bytes:
    """``data`` as one HTTP/1.1 chunk (the framing of a response without a length)."""
    return b"%X\r\n%s\r\n" % (len(data), data)
