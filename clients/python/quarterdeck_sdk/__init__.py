"""A small client for Quarterdeck's public HTTP API (docs/API.md), and a bot.

Standard library only, so it can be copied into any project as an example::

    from quarterdeck_sdk import Client, RandomBot

    api = Client("http://127.0.0.1:8000")
    created = api.create_game("nauticus", ["ann", "bob"])
    final = RandomBot(api, created).play()
    print(final["result"]["ranking"])

What a well-behaved client does, and this one shows:

* every intent carries an ``Idempotency-Key``, so a retry after a network
  error can never record the intent twice (the server answers the first
  result again);
* every intent carries ``expected_version`` (the version its ``/legal``
  answer reflected): if another seat moved first the server answers ``409``
  and the bot reads the game again instead of acting on a stale view;
* reads after a write ask for ``?min_version=`` so they see that write
  (read-your-writes over eventually consistent read models).

A ``Client`` keeps one keep-alive connection and is not thread-safe: use one
per thread.
"""

from __future__ import annotations

import http.client
import json
import random
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode, urlsplit


class ApiError(Exception):
    """An error answer: ``status`` and the stable ``code`` of docs/API.md's error body."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}


class Conflict(ApiError):
    """409: the game moved on since the version the intent expected.  Its
    details say where the game is now, so a client resyncs in one step."""

    @property
    def current_version(self) -> int | None:
        """The game's version now (a read with ``?min_version=`` this sees it)."""
        return self.details.get("current_version")

    @property
    def to_act(self) -> list[int] | None:
        """The seats to act at :attr:`current_version`."""
        return self.details.get("to_act")


#: Statuses worth retrying: the service is starting, restarting or briefly
#: without PostgreSQL/Redis (503 carries ``retry_after_seconds``), or a rate
#: limit (429 carries ``Retry-After``).  Nothing was written in either case.
_RETRY_STATUSES = frozenset({429, 502, 503, 504})
#: The longest wait a ``Retry-After`` may ask of a retry, in seconds.
_MAX_RETRY_AFTER = 30.0


def _error_from(status: int, payload: bytes) -> ApiError:
    """The :class:`ApiError` (or :class:`Conflict`) of an error answer."""
    try:
        decoded = json.loads(payload) if payload else None
    except ValueError:
        decoded = None
    err = decoded.get("error", {}) if isinstance(decoded, dict) else {}
    cls = Conflict if status == 409 else ApiError
    message = err.get("message", payload[:200].decode("utf-8", "replace"))
    return cls(status, err.get("code", "http_error"), message, err.get("details"))


def _retry_after(header: str | None, default: float) -> float:
    """The wait a ``Retry-After: <seconds>`` header asks for, bounded."""
    try:
        return min(max(float(header), 0.0), _MAX_RETRY_AFTER) if header else default
    except ValueError:
        return default


class Client:
    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        admin_token: str | None = None,
        timeout: float = 30.0,
        retries: int = 5,
    ):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.admin_token = admin_token
        self.timeout = timeout
        self.retries = retries
        self._parts = parts
        self._conn: http.client.HTTPConnection | None = None
        #: Requests sent (for progress reports and benchmarks).
        self.requests = 0

    # -- transport ----------------------------------------------------------
    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._parts.scheme == "https" else http.client.HTTPConnection
            self._conn = cls(self._parts.hostname, self._parts.port, timeout=self.timeout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def raw(
        self,
        method: str,
        path: str,
        token: str | None = None,
        body: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        resend: bool = True,
    ) -> tuple[int, bytes]:
        """One request, retried on 502/503/504 (the service refused it, so
        nothing was written) and, if ``resend``, on connection errors (the
        request may have been processed: only for requests that are safe to
        repeat, i.e. reads and intents with an Idempotency-Key).
        Returns ``(status, body bytes)``."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        url = self._parts.path.rstrip("/") + path + (f"?{urlencode(query)}" if query else "")
        send = {"Accept": "application/json", **(headers or {})}
        if token:
            send["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            send["Content-Type"] = "application/json"
        pause = 0.2
        for attempt in range(self.retries + 1):
            try:
                conn = self._connection()
                conn.request(method, url, body=data, headers=send)
                resp = conn.getresponse()
                payload = resp.read()
                self.requests += 1
                if resp.status in _RETRY_STATUSES and attempt < self.retries:
                    # A fresh connection for the retry: the server may close an
                    # idle kept-alive one during a long Retry-After, and a
                    # request written on a closed socket is not resent.
                    self.close()
                    time.sleep(_retry_after(resp.getheader("Retry-After"), pause))
                    pause = min(pause * 2, 5.0)
                    continue
                return resp.status, payload
            except (ConnectionError, http.client.HTTPException, TimeoutError, OSError):
                self.close()
                if attempt == self.retries or not resend:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 5.0)
        raise AssertionError("unreachable")  # pragma: no cover

    def call(self, method: str, path: str, token: str | None = None, body: Any = None, **kw: Any) -> Any:
        """A request whose answer is JSON; error answers raise :class:`ApiError`."""
        status, payload = self.raw(method, path, token, body, **kw)
        try:
            decoded = json.loads(payload) if payload else None
        except ValueError:
            decoded = None
        if status >= 400:
            err = (decoded or {}).get("error", {}) if isinstance(decoded, dict) else {}
            cls = Conflict if status == 409 else ApiError
            raise cls(
                status,
                err.get("code", "http_error"),
                err.get("message", payload[:200].decode("utf-8", "replace")),
                err.get("details"),
            )
        return decoded

    # -- the API ------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        return self.call("GET", "/healthz")

    def create_game(
        self,
        game: str,
        players: list[str],
        options: dict[str, Any] | None = None,
        *,
        key: str | None = None,
        accounts: bool = False,
        rated: bool = False,
    ) -> dict[str, Any]:
        """``POST /v1/games``.  The answer holds each seat's token (shown once).
        Not resent after a connection error: if the answer was lost the game
        may exist, and a resend would create a second one.  With an
        organiser's ``key`` and ``accounts=True`` the players are accounts
        (no tokens: each plays with its own key), and ``rated=True`` counts; the
        game then waits (``"status": "invited"``) until each account accepts
        (:meth:`accept_all` with its key)."""
        body: dict[str, Any] = {"game": game, "players": players, "options": options or {}}
        if accounts:
            body |= {"accounts": True, "rated": rated}
        return self.call("POST", "/v1/games", key, body=body, resend=False)

    def game(self, game_id: str, token: str | None = None, min_version: int | None = None) -> dict[str, Any]:
        """``GET /v1/games/{id}``: as the token's seat (or the public) sees it."""
        return self.call("GET", f"/v1/games/{game_id}", token, params={"min_version": min_version})

    def legal(self, game_id: str, token: str, min_version: int | None = None) -> dict[str, Any]:
        """``GET /v1/games/{id}/legal``: every intent this seat may post now."""
        return self.call("GET", f"/v1/games/{game_id}/legal", token, params={"min_version": min_version})

    def post_intent(
        self,
        game_id: str,
        token: str,
        intent: dict[str, Any],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/games/{id}/intents``.  A fresh Idempotency-Key is made
        if none is given, so the transport's retries are safe.  Raises
        :class:`Conflict` on 409 (re-read the game) and :class:`ApiError` on
        any other refusal."""
        body: dict[str, Any] = {"intent": intent}
        if expected_version is not None:
            body["expected_version"] = expected_version
        key = idempotency_key or str(uuid.uuid4())
        return self.call("POST", f"/v1/games/{game_id}/intents", token, body, headers={"Idempotency-Key": key})

    def stream(self, game_id: str, token: str | None = None, read_timeout: float = 60.0) -> Iterator[dict[str, Any]]:
        """``GET /v1/games/{id}/stream``: the caller's board (with ``legal``
        for a seat) now and each time it changes, as parsed JSON lines, pings
        left out, until the server's last line (``{"type": "end", "reason"}``,
        yielded too).  On its own connection (a stream holds one), closed
        when the iteration stops.  ``read_timeout`` must exceed the server's
        ping interval (15 s)."""
        cls = http.client.HTTPSConnection if self._parts.scheme == "https" else http.client.HTTPConnection
        headers = {"Accept": "application/x-ndjson"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        pause = 0.2
        for attempt in range(self.retries + 1):
            conn = cls(self._parts.hostname, self._parts.port, timeout=read_timeout)
            conn.request("GET", self._parts.path.rstrip("/") + f"/v1/games/{game_id}/stream", headers=headers)
            resp = conn.getresponse()
            self.requests += 1
            if resp.status in _RETRY_STATUSES and attempt < self.retries:
                # Refused before any line (busy, a read model being built): open it again.
                resp.read()
                conn.close()
                time.sleep(_retry_after(resp.getheader("Retry-After"), pause))
                pause = min(pause * 2, 5.0)
                continue
            break
        try:
            if resp.status != 200:
                raise _error_from(resp.status, resp.read())
            while line := resp.readline():
                obj = json.loads(line)
                if obj.get("type") != "ping":
                    yield obj
        finally:
            conn.close()

    def games(self, **filters: Any) -> dict[str, Any]:
        """``GET /v1/games?game=&status=&player=&limit=&offset=``, newest first."""
        return self.call("GET", "/v1/games", params=filters)

    def leaderboards(self) -> dict[str, Any]:
        """``GET /v1/leaderboards``: every registered game type."""
        return self.call("GET", "/v1/leaderboards")

    def leaderboard(self, game: str, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        """``GET /v1/leaderboards/{game}``: best rating first."""
        return self.call("GET", f"/v1/leaderboards/{game}", params={"limit": limit, "offset": offset})

    def player(self, handle: str) -> dict[str, Any]:
        """``GET /v1/players/{handle}``: ratings per game type, recent games."""
        return self.call("GET", f"/v1/players/{handle}")

    # -- accounts and the lobby (docs/API.md "Accounts and keys", "Tables") ----
    def register(self, handle: str, token: str | None = None) -> dict[str, Any]:
        """``POST /v1/accounts``: a player's account; ``key`` is shown once.
        Not resent after a connection error (the handle may be taken by then).
        ``token``: the operator's, to register many (it is never rate-limited;
        a client address may register 5 a minute and 20 a day)."""
        return self.call("POST", "/v1/accounts", token, body={"handle": handle}, resend=False)

    def create_organiser(self, handle: str, admin_token: str | None = None) -> dict[str, Any]:
        """``POST /v1/organisers`` with the operator token: an organiser's account."""
        return self.call(
            "POST", "/v1/organisers", admin_token or self.admin_token, body={"handle": handle}, resend=False
        )

    def account(self, key: str) -> dict[str, Any]:
        """``GET /v1/account``: whose key this is."""
        return self.call("GET", "/v1/account", key)

    def invitations(self, key: str) -> list[dict[str, Any]]:
        """``GET /v1/account/invitations``: the account's pending invitations (docs/API.md "Consent")."""
        return self.call("GET", "/v1/account/invitations", key)["invitations"]

    def answer_invitation(self, invitation_id: str, key: str, accept: bool = True) -> dict[str, Any]:
        """``POST /v1/invitations/{id}/accept`` (or ``/decline``) with the invited account's key."""
        return self.call("POST", f"/v1/invitations/{invitation_id}/{'accept' if accept else 'decline'}", key)

    def accept_all(self, key: str) -> list[dict[str, Any]]:
        """Accept every pending invitation of the account: a game of accounts starts
        once each of its players accepted; a tournament invitation registers."""
        return [self.answer_invitation(i["id"], key) for i in self.invitations(key)]

    def rotate_key(self, key: str) -> str:
        """``POST /v1/account/key``: a new key; the old one stops at once."""
        return self.call("POST", "/v1/account/key", key, body={}, resend=False)["key"]

    def open_table(
        self,
        key: str,
        game: str,
        seats: int,
        *,
        options: dict[str, Any] | None = None,
        rated: bool = False,
        clock: dict[str, Any] | None = None,
        join: bool | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/tables``: a player who opens a table sits at it."""
        body: dict[str, Any] = {"game": game, "seats": seats, "options": options or {}, "rated": rated, "clock": clock}
        if join is not None:
            body["join"] = join
        return self.call("POST", "/v1/tables", key, body=body, resend=False)

    def tables(self, game: str | None = None, status: str = "open", limit: int = 50) -> list[dict[str, Any]]:
        """``GET /v1/tables``: tables of one status, newest first."""
        return self.call("GET", "/v1/tables", params={"game": game, "status": status, "limit": limit})["tables"]

    def table(self, table_id: str) -> dict[str, Any]:
        return self.call("GET", f"/v1/tables/{table_id}")

    def join_table(self, key: str, table_id: str) -> dict[str, Any]:
        """``POST /v1/tables/{id}/join``.  Raises :class:`Conflict`
        (``table_full``, ``already_seated``...) when the seat went elsewhere."""
        return self.call("POST", f"/v1/tables/{table_id}/join", key, body={}, resend=False)

    def leave_table(self, key: str, table_id: str) -> dict[str, Any]:
        return self.call("POST", f"/v1/tables/{table_id}/leave", key, body={}, resend=False)

    def bots(self) -> list[dict[str, Any]]:
        """``GET /v1/bots``: the house bots (handle, game, level, budget_ms, rating)."""
        return self.call("GET", "/v1/bots")["bots"]

    def seat_bot(self, key: str, table_id: str, level: int) -> dict[str, Any]:
        """``POST /v1/tables/{id}/bots``: seat the house bot of ``level`` at the
        caller's table (the seat that fills it starts the game)."""
        return self.call("POST", f"/v1/tables/{table_id}/bots", key, body={"level": level}, resend=False)

    def wait_for_start(self, table_id: str, timeout: float = 60.0, poll: float = 0.2) -> str:
        """The ``game_id`` of a table once its last seat is taken."""
        deadline = time.monotonic() + timeout
        while True:
            table = self.table(table_id)
            if table["game_id"]:
                return table["game_id"]
            if table["status"] != "open" or time.monotonic() > deadline:
                raise RuntimeError(f"table {table_id} did not start ({table['status']})")
            time.sleep(poll)


class RandomBot:
    """Plays every seat of a game with uniformly random legal intents, by
    following ``/legal`` only: it knows nothing about any game's rules."""

    def __init__(
        self,
        client: Client,
        created: dict[str, Any],
        chooser: random.Random | None = None,
        keys: dict[str, str] | None = None,
    ):
        """``created``: the create answer (or ``{"id", "version", "seats": [{"seat",
        "player"}, ...]}``); ``keys``: the key of each account seated (by
        handle), for the seats that have no token."""
        self.client = client
        self.game_id: str = created["id"]
        keys = keys or {}
        self.tokens: dict[int, str] = {s["seat"]: s.get("token") or keys[s["player"]] for s in created["seats"]}
        self.version: int = created["version"]
        self.chooser = chooser or random.Random()
        #: Intents recorded, 409s met (another seat moved first), other refusals.
        self.intents = self.conflicts = self.refusals = 0

    @classmethod
    def seated(cls, client: Client, game_id: str, keys: dict[str, str], **kw: Any) -> RandomBot:
        """A bot for the seats that ``keys`` (handle -> key) hold in a game of
        accounts, e.g. one that a lobby table started (seats drawn at start)."""
        game = client.game(game_id)
        seats = [{"seat": i, "player": p} for i, p in enumerate(game["players"]) if p in keys]
        return cls(client, {"id": game_id, "version": game["version"], "seats": seats}, keys=keys, **kw)

    def step(self) -> dict[str, Any] | None:
        """Post one intent for one seat that is to act.  Returns the game
        when it has finished, else ``None``."""
        game = self.client.game(self.game_id, min_version=self.version)
        self.version = max(self.version, game["version"])
        if game["status"] == "finished":
            return game
        if not game["to_act"]:  # pragma: no cover - an active game always has someone to act
            time.sleep(0.05)
            return None
        mine = [seat for seat in game["to_act"] if seat in self.tokens]
        if not mine:
            # Another player's turn (a bot holding only its own seats): wait for it.
            self.version = game["version"] + 1
            return None
        seat = self.chooser.choice(mine)
        legal = self.client.legal(self.game_id, self.tokens[seat], min_version=self.version)
        if not legal["intents"] or legal["version"] < self.version:
            return None  # the read model is behind what we saw: read again
        intent = self.chooser.choice(legal["intents"])
        try:
            answer = self.client.post_intent(self.game_id, self.tokens[seat], intent, legal["version"])
        except Conflict:
            # Someone else's intent landed first; our view is stale.
            self.conflicts += 1
            return None
        except ApiError as err:
            if err.status != 422:
                raise
            self.refusals += 1
            if self.refusals > 100:
                raise
            return None
        self.version = answer["version"]
        self.intents += 1
        return None

    def play(self, max_intents: int = 100_000, progress: Callable[[RandomBot], None] | None = None) -> dict[str, Any]:
        """Play to the end; returns the finished game (``result`` included)."""
        while self.intents < max_intents:
            final = self.step()
            if final is not None:
                return final
            if progress:
                progress(self)
        raise RuntimeError(f"game {self.game_id} did not finish within {max_intents} intents")


# The seat-playing loop and the answers' types (``quarterdeck_sdk/play.py``,
# ``types.py``), importable from the package itself.
from quarterdeck_sdk.play import Seat, first_legal, random_legal  # noqa: E402
from quarterdeck_sdk.types import Board, Created, IntentAnswer, Legal  # noqa: E402

__all__ = [
    "ApiError",
    "Board",
    "Client",
    "Conflict",
    "Created",
    "IntentAnswer",
    "Legal",
    "RandomBot",
    "Seat",
    "first_legal",
    "random_legal",
]
