"""The ``click`` phase of ``make bench``: what a person feels.

A headless Chromium (Debian's ``/usr/bin/chromium`` through ``/usr/bin/chromedriver``,
Selenium) opens a game's page as a player's seat (the account's key in
``sessionStorage["qd-key"]``, as the sign-in page leaves it) against the game's
level-1 house bot, and plays: it clicks one of the page's legal-move buttons
(``#actions button[data-intent]``) whenever its seat is to act.  Meanwhile 2,000
followers watch 50 other games and 16 clients post intents to them
(``scripts/bench/followers.py`` and the ``api`` phase's clients, as in the
``followers`` phase), under ``make run``'s gunicorn, RQ worker and bot worker.

The times are the page's own (``performance.now()``, noted by a script the bench adds
to the page, :data:`PROBE`): the click event, each intent posted and its answer, and the
frame that first shows each version of the drawn board (``#board-body[data-version]``).
A long group of moves is chosen in steps (``button[data-choice]``); those clicks come
first, and the time starts at the click on the move itself.  Figures:

* ``click_move_p50_ms`` / ``click_move_p95_ms``: from the click to the first frame
  showing a version at least the one the intent's ``201`` gave;
* ``click_reply_p50_ms`` / ``click_reply_p95_ms``: from that ``201`` reaching the page
  to the first frame showing the bot's reply (only moves after which the bot was to act);
* ``details["parts_ms"]``: where the move's time went (:meth:`Person._samples`).

``BENCH_CLICK_FOLLOWERS`` and ``BENCH_CLICK_CLIENTS`` set the load (0 and 0: none).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scripts.bench import api as bench_api
from scripts.bench import delivery as bench_delivery
from scripts.bench.env import OUT, ROOT, BenchEnv
from scripts.bench.load import LoadResult, percentile
from scripts.bench.report import Results
from service.service_layer.commands import GameService

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
#: The load meanwhile; ``BENCH_CLICK_FOLLOWERS`` and ``BENCH_CLICK_CLIENTS`` change it (0 and
#: 0: a quiet machine, the click's own path alone).
FOLLOWERS = int(os.environ.get("BENCH_CLICK_FOLLOWERS") or 2000)
GAMES = 50
CLIENTS = int(os.environ.get("BENCH_CLICK_CLIENTS") or 16)
GAME = "nautilus-industries"
LEVEL = 1
#: The page's hooks: the seat's legal moves as buttons that post their intent, and the
#: steps that narrow a long group of them.
BUTTONS = "#actions button[data-intent]"
CHOICES = "#actions button[data-choice]"
#: Chromium's flags, as the browser tests launch it: headless, no sandbox (root), no traffic of its own.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
]
#: The parts of a click's time to the move shown (:meth:`Person._samples`).
PARTS = ("script", "post", "post_server", "to_board", "board", "board_server", "draw")
#: The parts of the bot's reply (from the move's 201 to the reply shown).
REPLY_PARTS = ("reply_line", "reply_board", "reply_draw")
#: Seconds to wait for the page to show a move or a reply before the sample is counted lost.
PATIENCE = 10.0

#: Added to the page: what the page did, each moment from its own clock (``performance.now()``,
#: the timebase of ``Event.timeStamp`` and of Resource Timing).
#:
#: * ``posts``: each intent the page posted (its own ``fetch``, wrapped): the click that
#:   sent it (the click event's ``timeStamp``, when the input reached the page), the fetch's
#:   start, its answer's headers, and the version its ``201`` gave (none for a refusal);
#: * ``shown``: each version the drawn board (``#board-body[data-version]``) took: the moment
#:   the DOM changed, and the start of the next frame after it (``requestAnimationFrame``:
#:   that frame's style, layout and paint follow at once), which is when it is *shown*;
#: * the Resource Timing entries of the intents' ``POST`` and the boards' ``GET``, read at
#:   the end (:data:`TIMING`), name where a click's time went.
PROBE = """
if (!window.__qd) {
  const qd = (window.__qd = { clicks: [], shown: [], posts: [] });
  performance.setResourceTimingBufferSize(100000);
  document.addEventListener('click', (e) => {
    if (e.target.closest && e.target.closest('#actions button[data-intent]')) {
      qd.clicks.push(Math.min(e.timeStamp, performance.now()));
    }
  }, true);
  let last = null;
  const note = () => {
    const root = document.getElementById('board-body');
    const v = root ? Number(root.dataset.version) : null;
    if (v === null || v === last) return;
    last = v;
    const entry = [v, performance.now(), null];
    qd.shown.push(entry);
    requestAnimationFrame(() => { entry[2] = performance.now(); });
  };
  note();
  new MutationObserver(note).observe(document.body,
    { subtree: true, childList: true, attributes: true, attributeFilter: ['data-version'] });
  const fetch0 = window.fetch;
  window.fetch = async (...args) => {
    const url = String(args[0] && args[0].url ? args[0].url : args[0]);
    if (!/\\/intents$/.test(url)) return fetch0(...args);
    const post = { click: qd.clicks.length ? qd.clicks[qd.clicks.length - 1] : null,
                   clicks: qd.clicks.length, start: performance.now(), answered: null, version: null };
    qd.posts.push(post);
    const resp = await fetch0(...args);
    post.answered = performance.now();
    if (resp.status === 201) {
      resp.clone().json().then((b) => { post.version = b.version; }, () => { post.version = -1; });
    } else {
      post.version = -1;
    }
    return resp;
  };
}
"""

#: The Resource Timing of the intents' POSTs and the live boards' and log's GETs (ms, the page's clock).
TIMING = """
return performance.getEntriesByType('resource')
  .filter((e) => /\\/intents$|\\/board\\?min_version=|\\/log\\?after=/.test(e.name))
  .map((e) => ({ name: e.name, start: e.startTime, request: e.requestStart,
                 response: e.responseStart, end: e.responseEnd }));
"""


def missing() -> str | None:
    """Why the phase cannot run here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (Path(path).exists() and os.access(path, os.X_OK)):
            return f"{path} is missing: run `make browser` (as root it installs chromium and chromium-driver)"
    return None


def _call(url: str, method: str, path: str, body: Any = None, key: str | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if key:
        req.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def _person(url: str) -> tuple[str, str]:
    """A player's account and a running game of it against the level-1 house bot: (key, game id)."""
    key = _call(url, "POST", "/v1/accounts", {"handle": f"bench-person-{secrets.token_hex(3)}"})["key"]
    table = _call(url, "POST", "/v1/tables", {"game": GAME, "seats": 2, "rated": False}, key)
    table = _call(url, "POST", f"/v1/tables/{table['id']}/bots", {"level": LEVEL}, key)
    if not table.get("game_id"):
        raise SystemExit(f"bench: the table with the house bot did not start a game: {table}")
    return key, table["game_id"]


class Person:
    """The browser on the game's page, clicking for its seat."""

    def __init__(self, url: str, key: str, game_id: str):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.url, self.key, self.game_id = url, key, game_id
        self.profile = tempfile.mkdtemp(prefix="qd-bench-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in [*FLAGS, f"--user-data-dir={self.profile}"]:
            options.add_argument(flag)
        self.driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
        self.driver.set_page_load_timeout(60)
        self.moves: list[float] = []
        self.replies: list[float] = []
        #: From the click to the bot's reply shown (a reply drawn with the move counts 0 above).
        self.click_to_reply: list[float] = []
        self.replies_with_move = 0
        #: The board and log requests the page made, a click.
        self.requests: dict[str, float] = {}
        #: Where each move's and reply's time went (:meth:`_samples`), ms.
        self.parts: dict[str, list[float]] = {k: [] for k in (*PARTS, *REPLY_PARTS)}
        self.lost = 0
        self.no_controls = False
        self.rng = random.Random(7)

    def open(self) -> None:
        self.driver.get(self.url + "/")
        self.driver.execute_script("sessionStorage.setItem('qd-key', arguments[0]);", self.key)
        self.driver.get(f"{self.url}/games/{self.game_id}")
        self.driver.execute_script(PROBE)

    def _js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def _until(self, check: Callable[[], Any], timeout: float = PATIENCE) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (got := check()) is not None:
                return got
            time.sleep(0.01)
        return None

    def _probe(self) -> dict[str, Any]:
        got = self._js("return window.__qd || null")
        if got is None:  # the page was replaced (a navigation): probe it again
            self._js(PROBE)
            got = self._js("return window.__qd")
        return got

    def _enabled(self, css: str) -> list[Any]:
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By

        try:
            return [b for b in self.driver.find_elements(By.CSS_SELECTOR, css) if b.is_enabled()]
        except StaleElementReferenceException:  # the panel was drawn again meanwhile
            return []

    def _buttons(self) -> list[Any] | None:
        """The move buttons, after taking random steps (``data-choice``) to reach them."""
        for _ in range(8):
            if moves := self._enabled(BUTTONS):
                return moves
            steps = self._enabled(CHOICES)
            if not steps:
                return None
            self.rng.choice(steps).click()
        return None

    def _seat_to_act(self, version: int) -> bool | None:
        game = _call(self.url, "GET", f"/v1/games/{self.game_id}?min_version={version}", key=self.key)
        if game["status"] != "active":
            return None
        return game["seat"] in game["to_act"]

    def play(self, keep_going: Callable[[], bool]) -> None:
        """Click while ``keep_going()`` and the game runs, then read the samples from the
        page's record (:meth:`_samples`)."""
        from selenium.common.exceptions import (
            ElementClickInterceptedException,
            ElementNotInteractableException,
            StaleElementReferenceException,
        )

        # (the index of the click's post in the page's record, the move's version)
        clicked: list[tuple[int, int]] = []
        while keep_going():
            probe = self._probe()
            shown = probe["shown"][-1][0] if probe["shown"] else 0
            to_act = self._seat_to_act(shown)
            if to_act is None:
                break  # the game is over
            if not to_act:  # the bot's turn: wait for the page to show what it did
                self._until(lambda: (self._probe()["shown"] or [[0]])[-1][0] > shown or None)  # noqa: B023
                continue
            buttons = self._until(self._buttons)
            if not buttons:
                if self._js("return !!document.getElementById('play-data')"):
                    continue  # the page has its controls but is behind the game: a slow board
                self.no_controls = True
                break
            posts = len(self._probe()["posts"])
            try:
                self.rng.choice(buttons).click()
            except (StaleElementReferenceException, ElementNotInteractableException, ElementClickInterceptedException):
                continue  # the panel was drawn again between finding the button and the click

            def answered(n: int = posts) -> Any:
                p = self._probe()["posts"]
                return p[n]["version"] if len(p) > n and p[n]["version"] is not None else None

            # The intent's 201 gives the version its events reached; a click that posted
            # nothing, or a move refused (a 409 when the bot moved first), counts as lost.
            mine = self._until(answered)
            if mine is None or mine < 0:
                self.lost += 1
                continue

            def drawn(n: int = posts, mine: int = mine) -> Any:
                p = self._probe()
                start = p["posts"][n]["start"]
                return next((s for s in p["shown"] if s[0] >= mine and s[1] >= start and s[2] is not None), None)

            if self._until(drawn) is None:
                self.lost += 1
                continue
            clicked.append((posts, mine))
        self._samples(clicked)

    def _samples(self, clicked: list[tuple[int, int]]) -> None:
        """Each click's times, from the page's record.

        The move is shown at the first frame drawn after the board reached the move's
        version.  The bot's reply is the first version beyond the move's drawn before the
        seat's next post (only the bot, or a clock, moves the game then), timed from the
        move's ``201`` reaching the page (the move made: the bot's turn starts at its
        commit).  Not from the move shown: a board drawn late for the move may already hold
        the reply (``replies_with_move``), which would count 0 and hide the bot's time.

        The parts of the move's time: the page's script from the click to the ``POST``
        (``script``), the ``POST``'s round trip (``post``; ``post_server`` from its request
        sent to its answer's first byte), the wait from the ``201`` to the start of the
        board's ``GET`` that drew the move (``to_board``: the page's own after the ``201``,
        or the stream's), that ``GET`` (``board``, ``board_server``), and from its last
        byte to the frame (``draw``).  The reply's, where it was drawn apart from the move:
        from the ``201`` to the start of the board's ``GET`` that drew it (``reply_line``:
        the bot's turn heard, its job, its intent and both projections, until the stream's
        line reached the page), that ``GET`` (``reply_board``) and the draw (``reply_draw``)."""
        probe = self._probe()
        posts, shown = probe["posts"], probe["shown"]
        timing = self._js(TIMING)
        boards = sorted((t for t in timing if "/board?" in t["name"]), key=lambda t: t["end"])
        # The page's requests a move (each move is followed by the bot's reply or the next move).
        if clicked:
            self.requests = {
                kind: round(sum(1 for t in timing if part in t["name"]) / len(clicked), 2)
                for kind, part in (("boards", "/board?"), ("logs", "/log?"))
            }
        for n, mine in clicked:
            post = posts[n]
            start = post["start"]
            seen = next(s for s in shown if s[0] >= mine and s[1] >= start and s[2] is not None)
            self.moves.append(seen[2] - post["click"])
            later = posts[n + 1]["start"] if n + 1 < len(posts) else float("inf")
            reply = next((s for s in shown if s[0] > mine and s[1] >= seen[1] and s[1] < later and s[2]), None)
            if reply is not None:
                self.replies.append(reply[2] - post["answered"])
                self.click_to_reply.append(reply[2] - post["click"])
                self.replies_with_move += reply is seen
                got = next((t for t in reversed(boards) if t["end"] <= reply[1] + 0.5), None)
                if reply is not seen and got is not None and got["start"] >= post["answered"]:
                    # The stream's line asked for this board: the bot's turn, its intent and
                    # the projections until the line reached the page, then the GET and the draw.
                    self.parts["reply_line"].append(got["start"] - post["answered"])
                    self.parts["reply_board"].append(got["end"] - got["start"])
                    self.parts["reply_draw"].append(reply[2] - got["end"])
            rt = next((t for t in timing if t["name"].endswith("/intents") and abs(t["start"] - start) < 5), None)
            # The board that drew the move: the last GET to finish before its DOM changed.
            board = next((t for t in reversed(boards) if t["end"] <= seen[1] + 0.5), None)
            if rt is None or board is None or board["start"] < rt["start"]:
                continue
            self.parts["script"].append(start - post["click"])
            self.parts["post"].append(rt["end"] - rt["start"])
            self.parts["post_server"].append(rt["response"] - rt["request"])
            self.parts["to_board"].append(max(0.0, board["start"] - rt["end"]))
            self.parts["board"].append(board["end"] - board["start"])
            self.parts["board_server"].append(board["response"] - board["request"])
            self.parts["draw"].append(seen[2] - board["end"])

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.driver.quit()
        shutil.rmtree(self.profile, ignore_errors=True)


def run(env: BenchEnv, res: Results, svc: GameService, ctx: Any, seconds: float, say: Callable[[str], None]) -> None:
    # The house bots' keys come from a secret of this run; their jobs go to a queue of its own.
    bots = {"QD_BOT_SECRET": secrets.token_urlsafe(24), "QD_BOT_QUEUE": f"{env.queue}-bots"}
    subprocess.run(
        [sys.executable, "-m", "service", "bots"], cwd=ROOT, env=env.env() | bots, check=True, capture_output=True
    )
    url = env.start_gunicorn("api-click", extra_env=bots)
    env.start_process("worker", [sys.executable, "-m", "workers"], extra_env=bots)
    env.start_process("bot_worker", [sys.executable, "-m", "workers.bots"], extra_env=bots)
    load_seconds = max(20.0, 2 * seconds)
    steps = max(120, int(1500 * (load_seconds + 1) / GAMES))
    say(
        f"click: a browser plays the level-{LEVEL} house bot; {FOLLOWERS} followers on {GAMES} other games,"
        f" {CLIENTS} intent clients"
    )
    followed = bench_delivery._create(svc, ctx, 8500, GAMES, steps) if FOLLOWERS or CLIENTS else []
    key, game_id = _person(url)
    follow_out = OUT / "click-followers.json"
    followers = None
    person = None
    load: dict[str, LoadResult] = {}
    try:
        if FOLLOWERS:
            ids = ",".join(g.game_id for g in followed)
            tokens = ",".join(g.tokens[1] for g in followed)
            argv = ["--url", url, f"--games={ids}", f"--tokens={tokens}", "--streams", str(FOLLOWERS)]
            followers = bench_delivery._start([*argv, "--seconds", "900", "--out", str(follow_out)], "click-followers")
            bench_delivery._ready(followers, "click-followers")
        person = Person(url, key, game_id)
        person.open()
        if CLIENTS:
            intents = threading.Thread(
                target=lambda: load.setdefault("r", bench_api.api_intents(url, followed, CLIENTS, load_seconds)),
                daemon=True,
            )
        else:
            intents = threading.Thread(target=time.sleep, args=(load_seconds,), daemon=True)
        intents.start()
        person.play(intents.is_alive)
        intents.join()
    finally:
        if person is not None:
            person.close()
        if followers is not None:
            bench_delivery._stop(followers)
        env.stop("api-click")
        env.stop("worker")
        env.stop("bot_worker")
    r = load.get("r")
    if person.no_controls:
        say(f"  WARNING: the game's page shows no {BUTTONS}: its play controls are missing; nothing measured")
    # Where the move's time went (Person._samples), p50 and p95 of each part.
    parts = {k: [round(percentile(v, 50), 1), round(percentile(v, 95), 1)] for k, v in person.parts.items() if v}
    details: dict[str, Any] = {
        "moves": len(person.moves),
        "replies": len(person.replies),
        "lost": person.lost,
        "no_controls": person.no_controls,
        "intents_rate": r.rate if r else None,
        "intents_errors": r.errors if r else None,
        "click_to_reply_p50_ms": percentile(person.click_to_reply, 50) if person.click_to_reply else None,
        "click_to_reply_p95_ms": percentile(person.click_to_reply, 95) if person.click_to_reply else None,
        "replies_with_move": person.replies_with_move,
        "requests_a_click": person.requests,
        "parts_ms": parts,
        "followers": FOLLOWERS,
        "clients": CLIENTS,
        "load_average": os.getloadavg()[0],
        "bot_level": LEVEL,
    }
    for name, samples in (("move", person.moves), ("reply", person.replies)):
        p50 = percentile(samples, 50) if samples else None
        p95 = percentile(samples, 95) if samples else None
        res.put(f"click_{name}_p50_ms", p50)
        res.put(f"click_{name}_p95_ms", p95, **details)
        if samples:
            say(f"  {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms over {len(samples)} samples")
    say("  parts (p50/p95 ms): " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in parts.items()))
    say(
        f"  {len(person.moves)} clicks, {len(person.replies)} bot replies"
        f" ({person.replies_with_move} drawn with the move), {person.lost} lost; load average {os.getloadavg()[0]:.1f};"
        f" intents meanwhile {r.rate if r else 0:,.0f}/s"
    )
