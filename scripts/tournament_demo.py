"""``make tournament-demo``: a Swiss tournament of bot accounts, played to the end
against a running service (docs/TOURNAMENTS.md).

With the operator token it makes an organiser; the organiser creates a
12-player, 3-round Swiss of 4-player Nauticus, registers 12 bot accounts and
starts it.  The worker pairs each round and starts its tables' games; each bot
plays its own seat with its own key (a random legal intent, through the Python
client), one thread per table.  While round 1 is played, one bot withdraws
itself with its own key (``--withdraw``; its round-1 game goes on, and it is
paired no more).  After each round the standings are printed;
at the end the tournament is audited, exported and the bundle verified
offline (``python -m service verify``).

Settings: ``QD_URL`` (else ``QD_API_URL`` from ``.devdata/env``, else
http://127.0.0.1:8000) and ``ADMIN_TOKEN`` (env or ``.devdata/env``), as
``scripts/demo.py``.  Options: ``--players``, ``--rounds``, ``--table-size``,
``--game``, ``--clock-s`` (a per-decision deadline for every game) and
``--idle N`` (the N-th bot never plays: it times out on the clock, which
needs ``--clock-s``); ``--withdraw N`` (the N-th bot withdraws during round 1;
default the last, 0 nobody); ``--out`` the bundle's path.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from quarterdeck_sdk import ApiError, Client, RandomBot

from scripts.demo import devdata_env, setting

ROOT = Path(__file__).resolve().parent.parent


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def suffix() -> str:
    return f"{random.SystemRandom().randrange(16**4):04x}"


def wait_for(what: str, probe: Any, timeout: float, pause: float = 0.2) -> Any:
    """Poll ``probe()`` until it returns something true; a clear exit otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise SystemExit(f"tournament-demo: {what} did not happen within {timeout:.0f}s")
        time.sleep(pause)


def play_table(url: str, table: dict[str, Any], keys: dict[str, str], idle: str | None, seed: int) -> dict[str, Any]:
    """Every seat of one table but the idle bot's, each with its own key, until the game ends."""
    api = Client(url, timeout=60)
    try:
        playing = {h: keys[h] for h in table["players"] if h != idle}
        bot = RandomBot.seated(api, table["game_id"], playing, chooser=random.Random(seed))
        return bot.play()
    finally:
        api.close()


def play_round(url: str, rnd: dict[str, Any], keys: dict[str, str], idle: str | None) -> list[dict[str, Any]]:
    """Every table of a round at once, one thread each; the finished games."""
    with ThreadPoolExecutor(len(rnd["tables"]), thread_name_prefix="table") as pool:
        futures = [
            pool.submit(play_table, url, table, keys, idle, random.SystemRandom().randrange(2**32))
            for table in rnd["tables"]
        ]
        return [f.result() for f in futures]


def print_standings(title: str, standings: dict[str, Any]) -> None:
    print(f"\n  {title}")
    print(f"  {'rank':>4}  {'player':<22}{'points':>7}  {'opp. pts':>8}  {'score':>6}  games")
    for row in standings["standings"]:
        tb = row["tiebreaks"]
        print(
            f"  {row['rank']:>4}  {row['player']:<22}{row['points']:>7}  {tb['opponents_points']:>8.2f}"
            f"  {tb['game_score']:>6}  {row['games']}{' +bye' * row['byes']}{'  withdrawn' * row['withdrawn']}"
        )
    print(flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--table-size", type=int, default=4)
    parser.add_argument("--game", default="nauticus")
    parser.add_argument("--clock-s", type=int, default=None, help="per-decision deadline of every game, in seconds")
    parser.add_argument("--idle", type=int, default=None, help="this bot (1-based) never plays: it times out")
    parser.add_argument(
        "--withdraw",
        type=int,
        default=-1,
        help="this bot (1-based) withdraws during round 1 (default the last; 0 none)",
    )
    parser.add_argument("--out", default=None, help="the bundle's path (default exports/tournament-<id>.json)")
    parser.add_argument("--round-timeout", type=float, default=600.0)
    parser.add_argument("--play", metavar="TOURNAMENT", help="play a started tournament made elsewhere (with curl)")
    parser.add_argument("--keys", metavar="FILE", help="with --play: lines 'handle key', one per player")
    args = parser.parse_args(argv)
    env = devdata_env()
    url = setting("QD_URL", env) or setting("QD_API_URL", env) or "http://127.0.0.1:8000"
    admin = setting("ADMIN_TOKEN", env)
    if not admin:
        raise SystemExit("tournament-demo: needs ADMIN_TOKEN (env or a running 'make run') to make an organiser")
    api = Client(url, admin_token=admin)
    say(f"service {url}: {api.health()}")
    if args.play:
        # The organiser made, registered and started it (README, "A tournament with curl").
        if not args.keys:
            raise SystemExit("tournament-demo: --play needs --keys (lines 'handle key')")
        keys = dict(line.split()[:2] for line in Path(args.keys).read_text().splitlines() if line.strip())
        found = api.call("GET", f"/v1/tournaments/{args.play}")
        say(f"tournament {found['id']} ({found['name']}): {found['status']}, {len(found['players'])} players")
        return play_out(api, url, found["id"], found["rounds"], keys, None, args, leaver=None)

    tag = suffix()
    organiser = api.create_organiser(f"cup-{tag}")
    okey = organiser["key"]
    say(f"organiser {organiser['handle']} created")
    keys: dict[str, str] = {}
    for i in range(1, args.players + 1):
        handle = f"bot{tag}-{i:02d}"
        # With the operator token: a client address may register only a few accounts a day.
        keys[handle] = api.register(handle, admin)["key"]
    handles = list(keys)
    idle = handles[args.idle - 1] if args.idle else None
    leaver = handles[args.withdraw - 1] if args.withdraw else None  # -1: the last
    say(f"{len(keys)} bot accounts registered{f' ({idle} will never play)' if idle else ''}")

    clock = {"type": "deadline", "per_decision_s": args.clock_s} if args.clock_s else None
    terms = {
        "name": f"Demo Cup {tag}",
        "game": args.game,
        "table_size": args.table_size,
        "format": "swiss",
        "rounds": args.rounds,
        "clock": clock,
        "rated": True,
    }
    t = api.call("POST", "/v1/tournaments", okey, terms)
    tid = t["id"]
    size = f"{args.players}-player, {args.rounds}-round Swiss of {args.table_size}-player {args.game}"
    say(f"tournament {tid} created: {size}")
    say(f"  seed commitment {t['seed_commitment']}")
    api.call("POST", f"/v1/tournaments/{tid}/players", okey, {"handles": handles})
    # The organiser invites; each bot accepts with its own key (docs/API.md, "Consent").
    for key in keys.values():
        api.accept_all(key)
    started = api.call("POST", f"/v1/tournaments/{tid}/start", okey)
    say(f"registered {len(started['players'])} players; started (lot drawn, round 1 paired)")
    return play_out(api, url, tid, args.rounds, keys, idle, args, leaver=leaver)


def play_out(
    api: Client,
    url: str,
    tid: str,
    rounds: int,
    keys: dict[str, str],
    idle: str | None,
    args: argparse.Namespace,
    leaver: str | None,
) -> int:
    """Play every round of a started tournament with the players' keys (``leaver``
    withdraws itself during round 1), print the standings after each, then audit,
    export and verify it offline."""
    for n in range(1, rounds + 1):
        rnd = wait_for(
            f"round {n}'s games",
            lambda n=n: _round_if(api, tid, n, lambda r: all(t["game_id"] for t in r["tables"])),
            args.round_timeout,
        )
        for table in rnd["tables"]:
            say(f"round {n} table {table['table']}: {', '.join(table['players'])}  game {table['game_id']}")
        if rnd["byes"]:
            say(f"round {n} byes: {', '.join(rnd['byes'])}")
        if n == 1 and leaver is not None and rounds > 1:
            # With its own key, while its round-1 game is in play: that game goes on.
            api.call("POST", f"/v1/tournaments/{tid}/withdraw", keys[leaver], {})
            say(f"{leaver} withdraws: it plays its round-1 game and is paired no more")
        started_at = time.perf_counter()
        for final in play_round(url, rnd, keys, idle):
            result = final["result"]
            winner = final["players"][result["ranking"][0]] if result.get("ranking") else "nobody"
            left = f", forfeited seats {result['forfeited']}" if result.get("forfeited") else ""
            say(f"round {n}: game {final['id'][:8]} {result.get('reason', 'completed')}, won by {winner}{left}")
        done = wait_for(
            f"round {n}'s results",
            lambda n=n: _round_if(api, tid, n, lambda r: r["status"] == "finished"),
            args.round_timeout,
        )
        say(f"round {n} finished in {time.perf_counter() - started_at:.1f}s ({len(done['tables'])} tables)")
        print_standings(
            f"Standings after round {n}", api.call("GET", f"/v1/tournaments/{tid}/standings", params={"round": n})
        )

    final = wait_for("the tournament's end", lambda: _finished(api, tid), args.round_timeout)
    say(f"tournament finished; seed revealed {final['seed']}")
    audit = api.call("GET", f"/v1/tournaments/{tid}/audit")
    for name, check in audit["checks"].items():
        say(f"  audit {name:<10} {'ok' if check['ok'] else ('skipped' if check['ok'] is None else 'FAILED')}")
    for w in audit["withdrawals"]:
        say(f"  withdrawn: {w['player']} after round {w['round']} (by {w['by'] or 'the operator'})")
    say(f"audit {'ok' if audit['ok'] else 'FAILED'}")
    status, body = api.raw("GET", f"/v1/tournaments/{tid}/export")
    if status != 200:
        raise SystemExit(f"tournament-demo: export answered {status}")
    out = Path(args.out or ROOT / "exports" / f"tournament-{tid}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(body)
    say(f"exported {out} ({len(body)} bytes)")
    verified = subprocess.run([sys.executable, "-m", "service", "verify", str(out)], cwd=ROOT, check=False)
    ok = audit["ok"] and verified.returncode == 0
    say("DONE: audit ok, bundle verified offline" if ok else "FAILED")
    print(json.dumps({"tournament": tid, "audit_ok": audit["ok"], "verified": verified.returncode == 0}))
    return 0 if ok else 1


def _round_if(api: Client, tid: str, n: int, ready: Any) -> dict[str, Any] | None:
    try:
        rnd = api.call("GET", f"/v1/tournaments/{tid}/rounds/{n}")
    except ApiError as err:
        if err.status == 404:
            return None
        raise
    return rnd if ready(rnd) else None


def _finished(api: Client, tid: str) -> dict[str, Any] | None:
    found = api.call("GET", f"/v1/tournaments/{tid}")
    return found if found["status"] == "finished" else None


if __name__ == "__main__":
    raise SystemExit(main())
