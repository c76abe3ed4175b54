"""A tournament end to end, through gunicorn (as ``make run`` starts it) and an
RQ worker: the tournament demo (``scripts.tournament_demo``) makes an
organiser and bot accounts, creates a Swiss tournament with a short clock,
registers and starts it; the worker pairs and starts every round by itself;
the bots play their own seats, except one that never moves and times out in
every game; the standings are published after each round; the audit is ok
and the exported bundle verifies offline, pairings included."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import requests
from support.live import ROOT, live_service, service_env

from service.audit import verify
from service.audit.checks import redecide_dicts
from service.audit.tournament_audit import repair_dicts


@pytest.fixture(scope="module")
def live(settings) -> Iterator[tuple[str, dict[str, str]]]:
    with live_service(settings, QD_RATE_LIMITS="off") as url:
        yield url, service_env(settings, QD_RATE_LIMITS="off")


def test_trn_040_bots_play_a_swiss_one_times_out_audit_ok_bundle_verifies(live, tmp_path):
    url, env = live
    out = tmp_path / "bundle.json"
    started = time.monotonic()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.tournament_demo",
            "--players=8",
            "--rounds=2",
            "--clock-s=2",
            "--idle=1",
            "--withdraw=8",
            f"--out={out}",
            "--round-timeout=120",
        ],
        cwd=ROOT,
        env=env | {"QD_URL": url},
        capture_output=True,
        text=True,
        timeout=300,
    )
    elapsed = time.monotonic() - started
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["audit_ok"] and summary["verified"]
    assert "Standings after round 1" in run.stdout and "Standings after round 2" in run.stdout

    bundle = verify.load_bundle(str(out))
    assert bundle["status"] == "finished" and len(bundle["games"]) == 4
    report = verify.verify_tournament_bundle(bundle, redecide=redecide_dicts, repair=repair_dicts)
    assert report["ok"], report["checks"]
    idle = bundle["events"][1]["data"]["player"]  # the first registered: the demo's --idle=1
    # TRN-060: the 8th bot withdrew itself during round 1: it played round 1, not round 2.
    leaver = bundle["events"][8]["data"]["player"]
    gone = next(e["data"] for e in bundle["events"] if e["type"] == "PlayerWithdrawn")
    assert gone == {"player": leaver, "by": leaver, "reason": None, "round": 1}
    paired = {e["data"]["round"]: e["data"] for e in bundle["events"] if e["type"] == "RoundPaired"}
    assert leaver in [p for t in paired[1]["tables"] for p in t["players"]]
    assert leaver not in [p for t in paired[2]["tables"] for p in t["players"]] + paired[2]["byes"]
    assert f"{leaver} withdraws" in run.stdout
    # The idle bot (the first registered) timed out in each of its games and ranked last there.
    for game in bundle["games"]:
        seats = game["game"]["players"]
        if idle in seats:
            types = [e["type"] for e in game["events"]]
            assert "SeatTimedOut" in types
            closing = game["events"][-1]["data"]["result"]
            assert seats.index(idle) in closing["forfeited"]
    standings = requests.get(f"{url}/v1/tournaments/{summary['tournament']}/standings", timeout=10).json()
    assert standings["round"] == 2
    assert next(r for r in standings["standings"] if r["player"] == idle)["points"] == 0
    print(run.stdout[-6000:])
    print(f"tournament e2e: {elapsed:.1f}s")
