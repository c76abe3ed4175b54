"""In-process ceilings and the rebuild: ``fold_ceiling``, ``rebuild_rate``
(with the rebuild process's peak RSS) and ``playout.<game>``."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from projections.boards import info_from, is_finished, render_board_fields
from scripts.bench.env import ROOT
from service.adapters.eventstore import EventStore
from service.domain.records import StoredEvent
from service.domain.replay import fold_stream
from service.games import registry
from service.games.simulate import random_playout


def load_streams(store: EventStore, game_ids: list[str]) -> list[list[StoredEvent]]:
    return [list(store.iter_stream(gid)) for gid in game_ids]


def fold_ceiling(streams: list[list[StoredEvent]], repeat_until: float = 2.0) -> dict[str, Any]:
    """Events/s of what a projection does with a stream, minus all I/O:
    ``evolve`` every event, then ``render_board_fields`` (every view and legal list,
    serialised) once per game — exactly the work of one game's rebuild."""
    events = done = 0
    started = time.perf_counter()
    while True:
        for stream in streams:
            info = info_from(stream, None)
            assert info is not None
            engine = registry.get(info["game"], info["rules_version"])
            state = fold_stream(engine, stream, None)
            render_board_fields(engine, info, state, stream[-1].seq, is_finished(stream, False))
            events += len(stream)
        done += 1
        if time.perf_counter() - started >= repeat_until:
            break
    elapsed = time.perf_counter() - started
    return {"rate": events / elapsed, "events": events, "passes": done}


def _hwm_kib(pid: int) -> int:
    """Peak RSS of a running process (``VmHWM``), in KiB; 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except OSError:
            pass
    return out


def rebuild(env: dict[str, str]) -> dict[str, Any]:
    """``python -m service rebuild`` (what ``make rebuild`` runs) against the
    bench database: its own timing, wall time and peak RSS.  The peak is
    ``VmHWM`` polled from /proc for the process and the processes it forks
    (``rss_kib``: their peaks added up; ``rss_max_kib``: the largest one):
    ``wait4``'s ``ru_maxrss`` would also count the pages the child inherited
    from this (large) process before its exec."""
    started = time.perf_counter()
    peaks: dict[int, int] = {}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "service", "rebuild"], cwd=ROOT, env=env, stdout=out, stderr=err)
        while proc.poll() is None:
            for pid in _descendants(proc.pid):
                peaks[pid] = max(peaks.get(pid, 0), _hwm_kib(pid))
            time.sleep(0.01)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"rebuild failed ({proc.returncode}): {stderr.decode()[-2000:]}")
    m = re.search(rb"rebuilt (\d+) game\(s\) in ([0-9.]+)s", stdout)
    inner = float(m.group(2)) if m else wall
    return {
        "seconds": inner,
        "wall_seconds": wall,
        "games": int(m.group(1)) if m else 0,
        "processes": len(peaks),
        "rss_kib": sum(peaks.values()),
        "rss_max_kib": max(peaks.values(), default=0),
    }


def playouts(seconds_per_game: float) -> dict[str, dict[str, Any]]:
    """Random 2-player playouts in process for every registered engine."""
    out: dict[str, dict[str, Any]] = {}
    for name in registry.names():
        engine = registry.get(name)
        intents = games = 0
        wall = 0.0
        cpu0 = time.process_time()
        while wall < seconds_per_game or games < 2:
            p = random_playout(engine, 2, {}, games.to_bytes(32, "big"), random.Random(games))
            intents += p.step_count
            wall += p.seconds
            games += 1
        cpu = time.process_time() - cpu0
        out[name] = {"rate": intents / wall, "per_cpu_second": intents / cpu, "games": games, "intents": intents}
    return out
