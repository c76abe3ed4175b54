"""``make demo``: one full game of every registered game over HTTP, played by
random legal-intent bots (``quarterdeck_sdk.RandomBot``) against the house
bots of several levels, then the results and the leaderboards.

The random bots play as a third party would, through the lobby: each registers
an account (its key shown once), the first opens a rated table and seats house
bots at it (``POST /v1/tables/{id}/bots``; levels rotate from game to game),
the others find it in ``GET /v1/tables`` and join the seats left, and the last
seat taken starts the game (seats drawn from the game's seed); each random bot
then plays its seat with its own key, and the house bots play theirs through
the bot worker (docs/BOTS.md "House bots").  ``--no-house-bots``, or a server
without house bots, plays random bots only.

Needs the service from ``make run``.  Settings: ``QD_URL`` (else
``QD_API_URL`` from ``.devdata/env``, else http://127.0.0.1:8000),
``ADMIN_TOKEN`` (env or ``.devdata/env``; only used to show each game's
audit when the audit endpoint exists).

``--check-rebuild`` (``make demo ARGS=--check-rebuild``) then waits until the
live leaderboards have folded every finished game, fetches every leaderboard
page, runs ``python -m service rebuild`` (drops every read model and folds it
again from PostgreSQL), fetches the pages again and compares them byte for
byte; it exits 1 if they differ.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from quarterdeck_sdk import ApiError, Client, RandomBot

ROOT = Path(__file__).resolve().parent.parent

#: Bot handles, one per seat.
CREW = ["ahab", "ishmael", "queequeg", "starbuck", "stubb", "flask"]


def devdata_env() -> dict[str, str]:
    """``export K=V`` lines written by a running ``make run``."""
    path = ROOT / ".devdata" / "env"
    out: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            words = shlex.split(line, comments=True)
            if len(words) == 2 and words[0] == "export" and "=" in words[1]:
                key, value = words[1].split("=", 1)
                out[key] = value
    return out


def setting(name: str, env: dict[str, str]) -> str | None:
    return os.environ.get(name) or env.get(name) or None


class Progress:
    """One line per game, rewritten in place on a terminal."""

    def __init__(self, label: str):
        self.label = label
        self.started = time.perf_counter()
        self.shown = 0.0
        self.tty = sys.stdout.isatty()

    def __call__(self, bot: RandomBot) -> None:
        now = time.perf_counter()
        if self.tty and now - self.shown > 0.2:
            self.shown = now
            print(f"\r{self.label}  {bot.intents:5d} intents  {now - self.started:6.1f}s", end="", flush=True)

    def done(self, bot: RandomBot, final: dict[str, Any]) -> None:
        elapsed = time.perf_counter() - self.started
        ranking = final["result"]["ranking"]
        # An aborted game (its length cap, or an organiser) has no ranking.
        ended = f"finished, winner {final['players'][ranking[0]]}" if ranking else f"{final['result'].get('reason')}"
        rate = bot.intents / elapsed if elapsed else 0.0
        print(
            f"\r{self.label}  {bot.intents:5d} intents  {elapsed:6.1f}s  ({rate:.0f}/s, {bot.conflicts} conflicts)"
            f"  {ended}",
            flush=True,
        )


#: The bots' keys, kept between demos against the same ``make run`` (a key is
#: shown once; registering anew each time would spend the accounts budget of
#: the rate limits and crowd the leaderboards with new names).
ACCOUNTS_FILE = ROOT / ".devdata" / "demo-accounts.json"


def _kept_keys(url: str, env: dict[str, str]) -> dict[str, str] | None:
    """The kept keys of the bots at ``url``, or ``None`` when ``url`` is not
    the running ``make run`` (then nothing is kept: a test's server, say)."""
    if not env.get("QD_API_URL") or env["QD_API_URL"].rstrip("/") != url.rstrip("/"):
        return None
    try:
        return dict(json.loads(ACCOUNTS_FILE.read_text()).get(url.rstrip("/"), {}))
    except (OSError, ValueError):
        return {}


def _keep_keys(url: str, keys: dict[str, str]) -> None:
    try:
        kept = json.loads(ACCOUNTS_FILE.read_text())
    except (OSError, ValueError):
        kept = {}
    kept[url.rstrip("/")] = keys
    fd = os.open(ACCOUNTS_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(kept, fh, indent=1)


def register_crew(api: Client, count: int, kept: dict[str, str] | None = None) -> dict[str, str]:
    """An account (handle -> key) for each of the first ``count`` bots: a
    kept one whose key still works, else a new one.  A handle already taken
    gets a short random suffix (an old account's key is not ours to use)."""
    keys: dict[str, str] = {}
    for base in CREW[:count]:
        reuse = next((h for h in (kept or {}) if h == base or h.startswith(f"{base}-")), None)
        if reuse is not None:
            try:
                api.account(kept[reuse])  # type: ignore[index]
                keys[reuse] = kept[reuse]  # type: ignore[index]
                continue
            except ApiError:
                pass  # rotated or gone: register anew
        handle = base
        while True:
            try:
                # With the operator token when we have it: a client address may
                # register only 20 accounts a day.
                keys[handle] = api.register(handle, api.admin_token)["key"]
                break
            except ApiError as err:
                if err.code != "handle_taken":
                    raise
                handle = f"{base}-{random.SystemRandom().randrange(16**4):04x}"
    return keys


def play_one(
    api: Client,
    game: str,
    keys: dict[str, str],
    chooser: random.Random,
    index: int,
    total: int,
    house_levels: list[int] | None = None,
) -> dict[str, Any]:
    """One rated game through the lobby: the first bot opens a table and seats the
    house bots of ``house_levels`` (as many as the seats left allow), the others
    find it and join the seats left (fewer seats if the game allows fewer), then
    every bot plays its own seat with its own key."""
    handles = list(keys)
    for n in range(len(handles), 0, -1):
        try:
            table = api.open_table(keys[handles[0]], game, n, rated=True)
            break
        except ApiError as err:
            if err.code != "invalid_player_count" or n == 1:
                raise
    house = (house_levels or [])[: n - 1]
    for level in house:
        table = api.seat_bot(keys[handles[0]], table["id"], level)
    joining = handles[1 : n - len(house)]
    for handle in joining:
        found = [t for t in api.tables(game) if t["id"] == table["id"]]
        if not found:
            raise SystemExit(f"demo: table {table['id']} is not in the lobby")
        table = api.join_table(keys[handle], table["id"])
    game_id = table["game_id"] or api.wait_for_start(table["id"])
    bot = RandomBot.seated(api, game_id, {h: keys[h] for h in [handles[0], *joining]}, chooser=chooser)
    against = f" vs house bots {', '.join(map(str, house))}" if house else ""
    progress = Progress(f"[{index}/{total}] {game:<20} {n}p{against}  game {game_id[:8]}")
    final = bot.play(progress=progress)
    progress.done(bot, final)
    return final


def house_levels(api: Client, game: str, index: int) -> list[int]:
    """The levels of ``game``'s house bots, best first, rotated by ``index`` (so that
    successive games meet different levels); none when the server has none."""
    levels = sorted((b["level"] for b in api.bots() if b["game"] == game), reverse=True)
    if not levels:
        return []
    shift = index % len(levels)
    return levels[shift:] + levels[:shift]


def print_results(finals: list[dict[str, Any]]) -> None:
    print("\nResults")
    for final in finals:
        result = final["result"]
        print(f"  {final['game']} ({final['id']}, {final['version']} events, {result.get('reason', 'completed')})")
        for seat in result["ranking"]:
            rank = result["ranks"][str(seat)]
            score = result["scores"].get(str(seat))
            print(f"    {rank}. {final['players'][seat]:<24} {score}")


def wait_for_leaderboards(api: Client, finals: list[dict[str, Any]], timeout: float) -> None:
    """Leaderboards are folded by the worker, in the store's commit order, a
    moment after a game ends: wait until every demo game shows up."""
    deadline = time.monotonic() + timeout
    for final in finals:
        if not final["result"]["ranking"]:
            continue  # aborted: unrated, and on no page
        for player in final["players"]:
            while True:
                try:
                    recent = api.player(player)["recent"]
                except ApiError as err:
                    if err.status != 404:
                        raise
                    recent = []
                if any(g["game_id"] == final["id"] for g in recent):
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"demo: leaderboards did not show game {final['id']} within {timeout:.0f}s")
                time.sleep(0.2)


def print_leaderboards(api: Client, top: int, ours: list[str] | None = None) -> None:
    """The top of each leaderboard, and the lines of ``ours`` (this run's
    bots) wherever they stand."""
    print("\nLeaderboards (openskill Plackett-Luce; rating = mu - 3 sigma)")
    for entry in api.leaderboards()["games"]:
        board = api.leaderboard(entry["game"], limit=top)
        print(f"  {board['game']}: {board['total']} player(s), {board['finished_games']} finished game(s)")
        print(f"    {'#':>3} {'player':<24} {'rating':>10} {'mu':>8} {'sigma':>7}", end="")
        print(f" {'games':>5} {'wins':>4} {'avg':>8} {'best':>6}")
        shown = {e["player"] for e in board["entries"]}
        below = []
        for handle in ours or []:
            if handle in shown:
                continue
            try:
                rating = next((r for r in api.player(handle)["ratings"] if r["game"] == board["game"]), None)
            except ApiError:
                rating = None
            if rating is not None:
                below.append(rating)
        for e in board["entries"] + sorted(below, key=lambda r: r["position"] or 0):
            avg = "-" if e["average_score"] is None else f"{e['average_score']:.2f}"
            # A provisional rating has no place yet (docs/LEADERBOARDS.md, "Trust").
            position = "p" if e.get("position") is None else e["position"]
            print(
                f"    {position:>3} {e['player']:<24} {e['rating']:>10.4f} {e['mu']:>8.3f} {e['sigma']:>7.3f}"
                f" {e['games']:>5} {e['wins']:>4} {avg:>8} {e['best_score']!s:>6}"
            )


def all_pages(api: Client) -> dict[str, bytes]:
    """Raw bodies of every leaderboard page, for a byte-for-byte comparison."""
    pages: dict[str, bytes] = {}
    status, body = api.raw("GET", "/v1/leaderboards")
    pages["/v1/leaderboards"] = body
    for entry in api.leaderboards()["games"]:
        offset = 0
        while True:
            path = f"/v1/leaderboards/{entry['game']}"
            status, body = api.raw("GET", path, params={"limit": 100, "offset": offset})
            if status != 200:
                raise SystemExit(f"demo: {path} answered {status}")
            pages[f"{path}?offset={offset}"] = body
            offset += 100
            if offset >= api.leaderboard(entry["game"], limit=1)["total"]:
                break
    return pages


def wait_until_folded(api: Client, timeout: float) -> None:
    """Until the leaderboards count every finished rated game the game lists know."""
    deadline = time.monotonic() + timeout
    while True:
        folded = sum(g["finished_games"] for g in api.leaderboards()["games"])
        finished = api.games(status="finished", rated="true", limit=1)["total"]
        if folded >= finished:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"demo: leaderboards folded {folded} of {finished} finished games after {timeout:.0f}s")
        time.sleep(0.5)


def check_rebuild(api: Client, env: dict[str, str], timeout: float) -> bool:
    print("\nCheck: leaderboards live versus after 'python -m service rebuild'")
    wait_until_folded(api, timeout)
    live = all_pages(api)
    child_env = dict(os.environ)
    for key in ("DATABASE_URL", "REDIS_URL"):
        if not child_env.get(key) and env.get(key):
            child_env[key] = env[key]
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "service", "rebuild"], cwd=ROOT, env=child_env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        print(proc.stdout + proc.stderr, file=sys.stderr)
        raise SystemExit("demo: rebuild failed")
    print(f"  rebuild: {proc.stdout.strip().splitlines()[-1]} ({time.perf_counter() - started:.1f}s)")
    wait_until_folded(api, timeout)
    rebuilt = all_pages(api)
    same = live == rebuilt
    size = sum(len(b) for b in live.values())
    if same:
        print(f"  identical: {len(live)} page(s), {size} bytes")
    else:
        for path in sorted(set(live) | set(rebuilt)):
            if live.get(path) != rebuilt.get(path):
                print(f"  DIFFERENT: {path}\n    live:    {live.get(path)!r}\n    rebuilt: {rebuilt.get(path)!r}")
    return same


def main(argv: list[str] | None = None) -> int:
    env = devdata_env()
    parser = argparse.ArgumentParser(prog="python -m scripts.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--url", default=setting("QD_URL", env) or setting("QD_API_URL", env) or "http://127.0.0.1:8000"
    )
    parser.add_argument("--players", type=int, default=3, help="seats per game (fewer if a game allows fewer)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the bots' choices (default: random)")
    parser.add_argument("--games", nargs="*", help="game types to play (default: every registered game)")
    parser.add_argument("--top", type=int, default=10, help="leaderboard lines shown per game")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the leaderboards")
    parser.add_argument("--check-rebuild", action="store_true", help="compare leaderboards with a full rebuild")
    parser.add_argument("--no-house-bots", action="store_true", help="random bots only, no house bots")
    args = parser.parse_args(argv)

    api = Client(args.url, admin_token=setting("ADMIN_TOKEN", env), retries=3)
    try:
        api.health()
    except (OSError, ApiError) as exc:
        print(f"demo: no Quarterdeck API at {args.url} ({exc}); start 'make run' first", file=sys.stderr)
        return 1
    games = args.games or [g["game"] for g in api.leaderboards()["games"]]
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"Quarterdeck demo at {args.url}: {len(games)} game(s), bots' seed {seed}")
    chooser = random.Random(seed)
    started = time.perf_counter()
    kept = _kept_keys(args.url, env)
    keys = register_crew(api, args.players, kept)
    if kept is not None:
        _keep_keys(args.url, keys)
        print(f"Accounts: {', '.join(keys)} (their keys are kept in {ACCOUNTS_FILE.relative_to(ROOT)})")
    else:
        print(f"Accounts: {', '.join(keys)} (keys shown once, kept in memory for this run)")
    finals = [
        play_one(api, g, keys, chooser, i + 1, len(games), [] if args.no_house_bots else house_levels(api, g, i))
        for i, g in enumerate(games)
    ]
    print(f"{len(finals)} game(s) played in {time.perf_counter() - started:.1f}s, {api.requests} requests")
    print_results(finals)
    wait_for_leaderboards(api, finals, args.timeout)
    print_leaderboards(api, args.top, list(keys))
    if args.check_rebuild and not check_rebuild(api, env, args.timeout):
        return 1
    api.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
