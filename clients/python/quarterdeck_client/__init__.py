"""A small client for Quarterdeck's public HTTP API (docs/API.md), and a bot.

Standard library only, so it can be copied into any project as an example::

    from quarterdeck_client import Client, RandomBot

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
from collections.abc import Callable
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
    """409: the game moved on since the version the intent expected."""


#: Statuses worth retrying: the service is starting, restarting or briefly
#: without PostgreSQL/Redis (503 carries ``retry_after_seconds``).
_RETRY_STATUSES = frozenset({502, 503, 504})


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
                    time.sleep(pause)
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

    def create_game(self, game: str, players: list[str], options: dict[str, Any] | None = None) -> dict[str, Any]:
        """``POST /v1/games``.  The answer holds each seat's token (shown once).
        Not resent after a connection error: if the answer was lost the game
        may exist, and a resend would create a second one."""
        body = {"game": game, "players": players, "options": options or {}}
        return self.call("POST", "/v1/games", body=body, resend=False)

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


class RandomBot:
    """Plays every seat of a game with uniformly random legal intents, by
    following ``/legal`` only: it knows nothing about any game's rules."""

    def __init__(self, client: Client, created: dict[str, Any], chooser: random.Random | None = None):
        self.client = client
        self.game_id: str = created["id"]
        self.tokens: dict[int, str] = {s["seat"]: s["token"] for s in created["seats"]}
        self.version: int = created["version"]
        self.chooser = chooser or random.Random()
        #: Intents recorded, 409s met (another seat moved first), other refusals.
        self.intents = self.conflicts = self.refusals = 0

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
        seat = self.chooser.choice(game["to_act"])
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
