"""A client generated from the served ``/openapi.json`` plays every game.

``openapi-python-client`` (pinned in the dev extras) generates a Python
client from the document a real server on loopback serves, offline (from a
file; any attempt to reach the network would go to a dead proxy), and must
report no warning.  A bot that uses only that generated client then plays a
2-player game of each kind to the end: typed boards read from the game's
stream (its typed ``StreamLine``s over the generated operation's own request,
reopened with ``Last-Event-ID`` every :data:`RECONNECT_EVERY` boards and
resumed at the very next board; never polling), legal intents and answers,
an ``Idempotency-Key`` and ``expected_version`` on every intent, a replayed
retry, and a provoked ``409`` resynced from its details alone.  So a
change to the contract that breaks generated clients fails here.

The bot picks the FIRST legal intent of the seat to act (``to_act[0]``),
unless that seat's last four intents were the same two intents twice (it is
going round in a circle: in Waters of Nereus, taking a gem out of storage and
putting it back is legal for ever); then it picks the first legal intent not
among them.  So it ends a 2-player game of Nauticus in about 180 intents, of
Waters of Nereus in about 240 and of Nautilus Industries in about 300 (in 100
seeded games of Nautilus Industries the longest took 374).  But the game's
seed is the service's, and a Nautilus Industries game can go on for ever
when nobody buys stock (NIN-120: only a stock marker on 24 ends it; measured:
a seat that sells yellow and places subs round after round, never buying).
So after :data:`RESIGN_AFTER` intents the seat to act resigns — the typed
``ResignIntent`` of the generated client — and the game ends by forfeit, as a
player who gives up ends it.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support import serving

from schemas.games import prefix
from service.games import registry

#: The package name of the generated client (distinct from our SDK's).
PACKAGE = "quarterdeck_generated"
#: After this many intents the seat to act resigns (a game that can go on for ever ends).
RESIGN_AFTER = 1500
#: The bot reopens its stream with Last-Event-ID after this many boards.
RECONNECT_EVERY = 25


@pytest.fixture(scope="module")
def base_url(app) -> Iterator[str]:
    with serving(app) as url:
        yield url


@pytest.fixture(scope="module")
def generated(base_url: str, tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """The client generated from the served document, imported."""
    where = tmp_path_factory.mktemp("generated")
    with urllib.request.urlopen(f"{base_url}/openapi.json", timeout=30) as resp:
        (where / "openapi.json").write_bytes(resp.read())
    config = {"package_name_override": PACKAGE, "project_name_override": "quarterdeck-generated", "post_hooks": []}
    (where / "config.json").write_text(json.dumps(config))
    tool = Path(sys.executable).with_name("openapi-python-client")
    dead = "http://127.0.0.1:9"  # nothing listens there: generation must not fetch anything
    env = dict(os.environ, HTTP_PROXY=dead, HTTPS_PROXY=dead, ALL_PROXY=dead, NO_PROXY="")
    run = subprocess.run(
        [str(tool), "generate", "--path", "openapi.json", "--meta", "none", "--config", "config.json"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "warning" not in out.lower(), f"openapi-python-client warned:\n{out}"
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(where))  # undone on exit: the modules stay imported
        package = importlib.import_module(PACKAGE)
        api = SimpleNamespace(
            Client=package.Client,
            AuthenticatedClient=package.AuthenticatedClient,
            models=importlib.import_module(f"{PACKAGE}.models"),
            **{
                name: importlib.import_module(f"{PACKAGE}.api.games.{name}")
                for name in ("create_game", "get_game", "get_legal", "post_intent")
            },
            game_stream=importlib.import_module(f"{PACKAGE}.api.streams.game_stream"),
            events_feed=importlib.import_module(f"{PACKAGE}.api.audit.events_feed"),
        )
    return api


class Bot:
    """Plays every seat of one game with the generated client only."""

    def __init__(self, gen: SimpleNamespace, base_url: str, game: str, resign_after: int = RESIGN_AFTER):
        self.gen, self.game = gen, game
        m = gen.models
        self.m = m
        anonymous = gen.Client(base_url=base_url, raise_on_unexpected_status=True, timeout=30.0)
        tag = uuid.uuid4().hex[:6]
        body = m.CreateGameIn(game=m.CreateGameInGame(game), players=[f"ann-{tag}", f"bob-{tag}"])
        created = gen.create_game.sync(client=anonymous, body=body)
        assert isinstance(created, m.CreateGameOut), created
        self.game_id = created.id if isinstance(created.id, uuid.UUID) else uuid.UUID(created.id)
        self.seats = {
            s.seat: gen.AuthenticatedClient(base_url=base_url, token=s.token, raise_on_unexpected_status=True)
            for s in created.seats
        }
        self.version = created.version
        self.intents = self.conflicts = self.replays = 0
        self.intent_types: set[str] = set()
        #: Each seat's intents so far (as JSON), to notice a circle.
        self.recent: dict[int, list[dict[str, Any]]] = {seat: [] for seat in self.seats}
        #: The seat that resigned (after ``resign_after`` intents), if any.
        self.resigned: int | None = None
        self.resign_after = resign_after
        #: The game's stream (typed ``StreamLine``s), the last board it sent, and the
        #: newest board a resumed stream must not go past on its first line.
        self.stream: Iterator[Any] | None = None
        self.last_board = 0
        self.resuming = False
        self.boards = self.reconnects = 0
        #: The version each of the bot's writes made (each a decision's last event).
        self.written: list[int] = []

    def call(self, operation: Any, *args: Any, **kw: Any) -> Any:
        """``operation.sync`` as a careful client calls it: a 503 (a read model
        being built, a backing service away) or a 429 is retried after the
        wait it asks for (nothing was written), a bounded number of times."""
        for _ in range(10):
            answer = operation.sync(*args, **kw)
            if isinstance(answer, self.m.Error503):
                details = answer.error.details
                time.sleep(min(float(getattr(details, "retry_after_seconds", 1) or 1), 5.0))
                continue
            if isinstance(answer, self.m.Error429):
                time.sleep(1.0)
                continue
            return answer
        return answer

    def board(self) -> Any:
        """The first board of the game's stream at or past the bot's last write,
        read from the stream (SSE, the generated operation's own request) instead
        of polling; the stream is reopened with ``Last-Event-ID`` every
        :data:`RECONNECT_EVERY` boards, and must resume with the very next board."""
        while True:
            if self.stream is None:
                self._open()
            line = next(self.stream, None)
            if line is None:  # the server ended the stream (an end line, or it closed): resume
                self._close()
                continue
            if line.type_.value != "board":
                continue
            assert type(line.view).__name__ == f"{prefix(self.game)}View", type(line.view)
            # Seat 0's legal intents, typed as GET /legal's are.
            assert all(type(i).__name__.endswith("Intent") for i in line.legal), line.legal
            if self.resuming:
                # docs/API.md "Streams": a resumed stream starts with the first board newer
                # than Last-Event-ID: the bot's next write, if it wrote after that board.
                newer = [v for v in self.written if v > self.last_board]
                assert line.version == (min(newer) if newer else line.version), (self.last_board, line.version)
                assert line.version > self.last_board
                self.resuming = False
            self.last_board = line.version
            self.boards += 1
            if self.boards % RECONNECT_EVERY == 0:
                self._close()
                self.resuming = True
            if line.version >= self.version:
                return line

    def _open(self) -> None:
        m = self.m
        params: dict[str, Any] = {"accept": m.GameStreamAccept("text/event-stream")}
        if self.last_board:
            params["last_event_id"] = str(self.last_board)
        # The generated operation's own request (path, headers); read as a stream,
        # which its blocking ``sync`` cannot do.
        kwargs = self.gen.game_stream._get_kwargs(self.game_id, **params)
        self.response_cm = self.seats[0].get_httpx_client().stream(**kwargs)
        response = self.response_cm.__enter__()
        assert response.status_code == 200, response.read()
        self.reconnects += 1

        def lines() -> Iterator[Any]:
            for raw in response.iter_lines():
                if raw.startswith("data: "):
                    yield m.StreamLine.from_dict(json.loads(raw[6:]))

        self.stream = lines()

    def _close(self) -> None:
        if self.stream is not None:
            self.response_cm.__exit__(None, None, None)
        self.stream = None

    def post(self, seat: int, intent: Any, expected: int, key: str) -> Any:
        body = self.m.IntentIn(intent=intent, expected_version=expected)
        # A retried intent keeps its key: the service answers it at most once.
        return self.call(self.gen.post_intent, self.game_id, client=self.seats[seat], body=body, idempotency_key=key)

    def choose(self, seat: int, intents: list[Any]) -> Any:
        """The first legal intent, unless the seat is going round in a circle."""
        last = self.recent[seat][-4:]
        choice = intents[0]
        if len(last) == 4 and last[:2] == last[2:]:
            choice = next((i for i in intents if i.to_dict() not in last), intents[-1])
        self.recent[seat].append(choice.to_dict())
        return choice

    def step(self, board: Any) -> None:
        seat = board.to_act[0]
        legal = self.call(self.gen.get_legal, self.game_id, client=self.seats[seat], min_version=board.version)
        assert isinstance(legal, self.m.LegalOut), legal
        assert legal.intents, f"seat {seat} is to act but has no legal intent"
        intent = self.choose(seat, legal.intents)
        assert not isinstance(intent, dict), "intents are typed models"
        self.intent_types.add(type(intent).__name__)
        key = str(uuid.uuid4())
        answer = self.post(seat, intent, legal.version, key)
        if isinstance(answer, self.m.Error409):
            # Someone moved first: the details say where the game is now.
            self.conflicts += 1
            self.version = answer.error.details.current_version
            return
        assert isinstance(answer, self.m.IntentOut), answer
        if self.replays == 0:
            # A retry with the same key and body: the first answer again, nothing recorded.
            again = self.post(seat, intent, legal.version, key)
            assert isinstance(again, self.m.IntentOut) and again.replayed is True
            assert again.version == answer.version
            self.replays += 1
            # A stale expected_version now gets 409 with everything needed to resync.
            stale = self.post(seat, intent, legal.version, str(uuid.uuid4()))
            assert isinstance(stale, self.m.Error409), stale
            assert stale.error.code.value == "version_conflict"
            assert stale.error.details.current_version == answer.version
            assert isinstance(stale.error.details.to_act, list)
        self.version = answer.version
        self.written.append(answer.version)
        self.intents += 1

    def play(self) -> Any:
        try:
            while True:
                board = self.board()
                if board.status.value == "finished":
                    assert board.to_act == []
                    return board
                if self.intents >= self.resign_after:
                    self.resign(board.to_act[0])
                else:
                    self.step(board)
        finally:
            self._close()

    def resign(self, seat: int) -> None:
        intent = self.m.ResignIntent(type_=self.m.ResignIntentType.RESIGN)
        answer = self.post(seat, intent, self.version, str(uuid.uuid4()))
        assert isinstance(answer, self.m.IntentOut), answer
        self.version = answer.version
        self.written.append(answer.version)
        self.resigned = seat


@pytest.mark.parametrize("game", registry.registered())
def test_a_bot_on_the_generated_client_plays_the_game_to_the_end(generated, base_url, game):
    bot = Bot(generated, base_url, game)
    final = bot.play()
    assert sorted(final.result.ranking) == [0, 1]
    if bot.resigned is None:
        assert type(final.result).__name__ == f"{prefix(game)}Result"
    else:
        # Ended by the resignation: the other seat first (docs/API.md "Forfeits and the result").
        assert final.result.ranking == [1 - bot.resigned, bot.resigned]
        assert final.result.reason.value == "forfeit" and final.result.forfeited == [bot.resigned]
    assert bot.intents > 10 and bot.replays == 1
    assert all(name.endswith("Intent") for name in bot.intent_types)
    # It followed the stream (typed lines, resumed with Last-Event-ID), never polled the board.
    assert bot.boards >= bot.intents and bot.reconnects >= 2


def test_a_bot_that_gives_up_resigns_with_the_typed_intent_and_the_game_ends_by_forfeit(generated, base_url):
    """The path a game that would go on for ever takes, every time: a resignation after 20 intents."""
    bot = Bot(generated, base_url, "nautilus-industries", resign_after=20)
    final = bot.play()
    assert bot.resigned is not None and bot.intents == 20
    assert final.result.ranking == [1 - bot.resigned, bot.resigned]
    assert final.result.reason.value == "forfeit" and final.result.forfeited == [bot.resigned]


def test_the_generated_stream_operations_answer_their_text(generated, base_url):
    """The generated ``game_stream`` and ``events_feed`` return their bodies as text (their
    SSE and JSON-lines bodies were declared as JSON objects, so the generated code called
    ``from_dict`` on the text and raised on every 200), and each line or event's data is
    one typed ``StreamLine`` / ``FeedLine``."""
    gen, m = generated, generated.models
    bot = Bot(gen, base_url, "nauticus", resign_after=6)
    final = bot.play()
    seat = bot.seats[0]
    # A finished game's stream sends its last board and ends: the blocking call returns.
    text = gen.game_stream.sync(bot.game_id, client=seat)
    assert isinstance(text, str), text
    lines = [m.StreamLine.from_dict(json.loads(raw)) for raw in text.splitlines() if raw]
    boards = [line for line in lines if line.type_.value == "board"]
    assert boards and boards[-1].version == final.version and boards[-1].status.value == "finished"
    sse = gen.game_stream.sync(bot.game_id, client=seat, accept=m.GameStreamAccept("text/event-stream"))
    assert isinstance(sse, str) and "event: board" in sse, sse
    data = [m.StreamLine.from_dict(json.loads(raw[6:])) for raw in sse.splitlines() if raw.startswith("data: ")]
    assert any(line.version == final.version for line in data)
    feed = gen.events_feed.sync(bot.game_id, client=seat)
    assert isinstance(feed, str), feed
    events = [m.FeedLine.from_dict(json.loads(raw)) for raw in feed.splitlines() if raw]
    assert [e.seq for e in events] == list(range(1, final.version + 1))
    assert events[-1].type_ == "GameFinished"
    sse_feed = gen.events_feed.sync(bot.game_id, client=seat, accept=m.EventsFeedAccept("text/event-stream"))
    assert isinstance(sse_feed, str) and "event: GameFinished" in sse_feed, sse_feed
