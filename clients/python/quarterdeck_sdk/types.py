"""The shapes of the answers a bot reads (docs/API.md; the exact schema is
``/openapi.json``), as ``TypedDict``s: a type checker sees the fields, and at
run time they are the plain dicts the JSON decoder makes.

Each game's ``view``, ``result``, intents and events are typed in
``/openapi.json`` (``<Game>View``, ``<Game>Result``, ``Intent``,
``<Game>Event``); here they are ``dict[str, Any]``: a bot that only follows
``legal`` needs nothing of them.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class SeatCredential(TypedDict):
    seat: int
    player: str
    #: The seat's secret (shown once); absent for an account's seat (its key acts).
    token: NotRequired[str]


class Created(TypedDict):
    """``POST /v1/games``."""

    id: str
    game: str
    version: int
    rules_version: str
    seed_commitment: str
    seats: list[SeatCredential]


class Board(TypedDict):
    """``GET /v1/games/{id}``, and each board line of the game's stream."""

    id: str
    game: str
    version: int
    #: "active" | "finished"; a game of accounts before it starts: "invited" | "declined" | "expired".
    status: str
    players: list[str]
    #: Seats that may post an intent now (with simultaneous choices, only those still to choose).
    to_act: list[int]
    #: The caller's seat, or None.
    seat: int | None
    view: dict[str, Any]
    result: dict[str, Any] | None
    #: Stream board lines for a seat: its legal intents at ``version``.
    legal: NotRequired[list[dict[str, Any]]]


class Legal(TypedDict):
    """``GET /v1/games/{id}/legal``: the list and the version it belongs to."""

    version: int
    seat: int
    intents: list[dict[str, Any]]


class Event(TypedDict):
    seq: int
    type: str
    data: dict[str, Any]


class IntentAnswer(TypedDict):
    """``POST /v1/games/{id}/intents`` (201)."""

    version: int
    events: list[Event]
    #: True when answered from the Idempotency-Key's record (nothing new was written).
    replayed: NotRequired[bool]
