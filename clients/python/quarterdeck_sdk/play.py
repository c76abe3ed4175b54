"""Playing one seat: the loop every bot needs (docs/BOTS.md).

:class:`Seat` follows its game's stream (``GET /v1/games/{id}/stream``): the
board now, then each time it changes.  When the seat is in ``to_act`` it
posts the intent its ``choose`` function picks from the board's ``legal``
list, with ``expected_version`` (the board's version) and a fresh
``Idempotency-Key`` (so the client's retries after a lost connection are
safe).  A ``409`` means another seat moved first: the stream's next board is
newer, so it simply goes on.  It stops when the game has finished.  When the
server ends a stream early (shutting down, maximum duration), it opens a new
one, which starts with the whole board again.  A server without streams is
followed by polling (``GET /v1/games/{id}``, then ``/legal``), with backoff.

Simultaneous choices (Waters of Nereus' crew cards) need nothing special:
``to_act`` lists every seat still to choose, and each seat's bot posts its
own.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from quarterdeck_sdk import ApiError, Client, Conflict
from quarterdeck_sdk.types import Board, IntentAnswer

#: Picks an intent from a board whose ``legal`` list is not empty.
Chooser = Callable[[Board], dict[str, Any]]


def first_legal(board: Board) -> dict[str, Any]:
    """The simplest policy: the first legal intent.  Beware: a game may let a
    seat go round in a circle for ever (in Waters of Nereus, a gem taken out
    of storage and put back); :func:`random_legal` never gets stuck."""
    return board["legal"][0]


def random_legal(rng: random.Random | None = None) -> Chooser:
    """A policy picking a legal intent at random (seeded by ``rng``)."""
    chooser = rng or random.Random()

    def choose(board: Board) -> dict[str, Any]:
        return chooser.choice(board["legal"])

    return choose


class Seat:
    """One seat of one game, played through ``client``."""

    def __init__(self, client: Client, game_id: str, seat: int, token: str, poll: float = 0.5):
        self.client = client
        self.game_id = game_id
        self.seat = seat
        self.token = token
        #: Longest pause between two reads when following by polling.
        self.poll = poll
        #: Intents recorded, 409s met.
        self.intents = self.conflicts = 0

    def boards(self) -> Iterator[Board]:
        """This seat's board each time it changes, until the game has finished."""
        while True:
            try:
                for line in self.client.stream(self.game_id, self.token):
                    if line.get("type") == "end":
                        if line.get("reason") == "finished":
                            return
                        break  # ended early by the server: open a new stream
                    yield line  # type: ignore[misc]
                    if line.get("status") == "finished":
                        return
            except ApiError as err:
                if err.status != 404 or err.code != "not_found":
                    raise
                yield from self._polled()  # a server without streams
                return

    def _polled(self) -> Iterator[Board]:
        version, pause = -1, 0.05
        while True:
            board: Board = self.client.game(self.game_id, self.token, min_version=max(version, 0))  # type: ignore[assignment]
            if board["version"] != version:
                version, pause = board["version"], 0.05
                if self.seat in board["to_act"]:
                    legal = self.client.legal(self.game_id, self.token, min_version=version)
                    board["legal"] = legal["intents"] if legal["version"] == version else []
                yield board
                if board["status"] == "finished":
                    return
            else:
                time.sleep(pause)
                pause = min(pause * 2, self.poll)

    def act(self, board: Board, intent: dict[str, Any]) -> IntentAnswer | None:
        """Post ``intent`` against ``board``'s version; ``None`` after a 409."""
        try:
            answer = self.client.post_intent(
                self.game_id, self.token, intent, expected_version=board["version"], idempotency_key=str(uuid.uuid4())
            )
        except Conflict:
            self.conflicts += 1
            return None
        self.intents += 1
        return answer  # type: ignore[return-value]

    def play(self, choose: Chooser | None = None) -> Board:
        """Play to the end of the game with ``choose`` (default: a random
        legal intent); returns the last board (``result`` set)."""
        choose = choose or random_legal()
        last: Board | None = None
        for board in self.boards():
            last = board
            if board["status"] == "active" and self.seat in board["to_act"] and board.get("legal"):
                self.act(board, choose(board))
        if last is None or last["status"] != "finished":
            last = self.client.game(self.game_id, self.token)  # type: ignore[assignment]
        return last
