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
to the page): a click, and every version the page shows (the drawn board's
``#board-body[data-version]``).  A long group of moves is chosen in steps
(``button[data-choice]``); those clicks come first, and the time starts at the click
on the move itself.  Figures:

* ``click_move_p50_ms`` / ``click_move_p95_ms``: from the click to the page showing
  a version at least the one the intent's answer gave;
* ``click_reply_p50_ms`` / ``click_reply_p95_ms``: from there to the page showing the
  bot's first intent after it (only moves after which the bot was to act).
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
FOLLOWERS = 2000
GAMES = 50
CLIENTS = 16
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
#: Seconds to wait for the page to show a move or a reply before the sample is counted lost.
PATIENCE = 10.0

#: Added to the page: the moments of clicks on a move's button and of each version shown,
#: and the versions the intents' answers gave (the page's own fetch, wrapped).
PROBE = """
if (!window.__qd) {
  const qd = (window.__qd = { clicks: [], shown: [], answered: [] });
  document.addEventListener('click', (e) => {
    if (e.target.closest && e.target.closest('#actions button[data-intent]')) qd.clicks.push(performance.now());
  }, true);
  let last = null;
  const note = () => {
    const root = document.getElementById('board-body') || document.getElementById('game');
    const v = root ? Number(root.dataset.version) : null;
    if (v !== null && v !== last) { last = v; qd.shown.push([v, performance.now()]); }
  };
  note();
  new MutationObserver(note).observe(document.body,
    { subtree: true, childList: true, attributes: true, attributeFilter: ['data-version'] });
  const fetch0 = window.fetch;
  window.fetch = async (...args) => {
    const resp = await fetch0(...args);
    const url = String(args[0] && args[0].url ? args[0].url : args[0]);
    if (url.includes('/intents') && resp.ok) {
      resp.clone().json().then((b) => qd.answered.push([b.version, performance.now()]), () => {});
    }
    return resp;
  };
}
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
        """Click while ``keep_going()`` and the game runs; each sample's times go in
        :attr:`moves` and :attr:`replies` (ms)."""
        # (the click's index, the move's version, when it was shown, when it was clicked)
        shown_moves: list[tuple[int, int, float, float]] = []
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
            probe = self._probe()
            clicks, shown0, answered0 = len(probe["clicks"]), len(probe["shown"]), len(probe["answered"])
            self.rng.choice(buttons).click()

            def answered(clicks: int = clicks, answered0: int = answered0) -> Any:
                p = self._probe()
                return p if len(p["clicks"]) > clicks and p["answered"][answered0:] else None

            # The intent's 201 gives the version its events reached (the page's fetch, wrapped);
            # a move refused (a 409 when the bot moved first) has none and counts as lost.
            got = self._until(answered)
            if got is None:
                self.lost += 1
                continue
            clicked = got["clicks"][clicks]
            mine = got["answered"][answered0][0]
            seen = self._until(lambda: next((t for v, t in self._probe()["shown"][shown0:] if v >= mine), None))  # noqa: B023
            if seen is None:
                self.lost += 1
                continue
            self.moves.append(seen - clicked)
            shown_moves.append((clicks, mine, seen, clicked))
        self._replies(shown_moves)

    def _replies(self, shown_moves: list[tuple[int, int, float, float]]) -> None:
        """The bot's replies, from the page's record: after a move shown, the first version
        shown beyond the move's before this seat's next click (only the bot, or a clock,
        moves the game then); a move followed by this seat's next click had no reply."""
        probe = self._probe()
        clicks, shown = probe["clicks"], probe["shown"]
        for n, mine, seen, clicked in shown_moves:
            until = clicks[n + 1] if n + 1 < len(clicks) else float("inf")
            reply = next((t for v, t in shown if v > mine and t >= seen and t < until), None)
            if reply is not None:
                self.replies.append(reply - seen)
                self.click_to_reply.append(reply - clicked)

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
    say(f"click: a browser plays the level-{LEVEL} house bot; {FOLLOWERS} followers on {GAMES} other games")
    followed = bench_delivery._create(svc, ctx, 8500, GAMES, steps)
    key, game_id = _person(url)
    follow_out = OUT / "click-followers.json"
    followers = None
    person = None
    load: dict[str, LoadResult] = {}
    try:
        ids = ",".join(g.game_id for g in followed)
        tokens = ",".join(g.tokens[1] for g in followed)
        argv = ["--url", url, f"--games={ids}", f"--tokens={tokens}", "--streams", str(FOLLOWERS)]
        followers = bench_delivery._start([*argv, "--seconds", "900", "--out", str(follow_out)], "click-followers")
        bench_delivery._ready(followers, "click-followers")
        person = Person(url, key, game_id)
        person.open()
        intents = threading.Thread(
            target=lambda: load.setdefault("r", bench_api.api_intents(url, followed, CLIENTS, load_seconds)),
            daemon=True,
        )
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
    details = {
        "moves": len(person.moves),
        "replies": len(person.replies),
        "lost": person.lost,
        "no_controls": person.no_controls,
        "intents_rate": r.rate if r else None,
        "intents_errors": r.errors if r else None,
        "click_to_reply_p50_ms": percentile(person.click_to_reply, 50) if person.click_to_reply else None,
        "click_to_reply_p95_ms": percentile(person.click_to_reply, 95) if person.click_to_reply else None,
        "followers": FOLLOWERS,
        "bot_level": LEVEL,
    }
    for name, samples in (("move", person.moves), ("reply", person.replies)):
        p50 = percentile(samples, 50) if samples else None
        p95 = percentile(samples, 95) if samples else None
        res.put(f"click_{name}_p50_ms", p50)
        res.put(f"click_{name}_p95_ms", p95, **details)
        if samples:
            say(f"  {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms over {len(samples)} samples")
    say(
        f"  {len(person.moves)} clicks, {len(person.replies)} bot replies, {person.lost} lost;"
        f" intents meanwhile {r.rate if r else 0:,.0f}/s"
    )
