"""CPU used per request across every server process of a phase.

A phase's figure is the CPU seconds its servers used (gunicorn's master and
workers, the RQ worker, PostgreSQL, Redis) divided by the requests accepted.
Each group is a process tree; its CPU is every live process's user+system time
*plus* what it has reaped from children that exited (``cutime``/``cstime``),
so PostgreSQL backends that close during a phase are still counted (their time
lands in the postmaster's ``cutime``).  PostgreSQL and Redis are shared with
whatever else runs on the machine: their share includes other users' work,
so the figure is only comparable between runs taken in one quiet run.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")

#: A snapshot: CPU seconds by pid (own + reaped children) within each group.
Snapshot = dict[str, dict[int, float]]


def _stat(pid: int) -> tuple[int, float] | None:
    """``(ppid, user + system + reaped children's CPU seconds)`` of a process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # After the command: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
    return int(fields[1]), sum(int(f) for f in fields[11:15]) / _TICK


def _comm(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/comm").read_text().strip()
    return ""


def _all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def tree(root: int) -> list[int]:
    """``root`` and every live descendant."""
    parents: dict[int, list[int]] = {}
    for pid in _all_pids():
        st = _stat(pid)
        if st is not None:
            parents.setdefault(st[0], []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += parents.get(pid, [])
    return out


def roots_named(command: str) -> list[int]:
    """Processes whose command (``/proc/<pid>/comm``) is exactly ``command`` and whose
    parent's is not: the postmaster of each PostgreSQL cluster, each ``redis-server``."""
    named = [pid for pid in _all_pids() if _comm(pid) == command]
    out = []
    for pid in named:
        st = _stat(pid)
        if st is not None and _comm(st[0]) != command:
            out.append(pid)
    return out


def trees_named(command: str) -> Callable[[], list[int]]:
    """A group: the process trees of every root called ``command`` (see :func:`roots_named`)."""
    return lambda: [pid for root in roots_named(command) for pid in tree(root)]


def snapshot(groups: dict[str, Callable[[], list[int]]]) -> Snapshot:
    """Each group's processes (found now) and their CPU seconds so far."""
    out: Snapshot = {}
    for name, pids in groups.items():
        out[name] = {}
        for pid in pids():
            st = _stat(pid)
            if st is not None:
                out[name][pid] = st[1]
    return out


def used(before: Snapshot, after: Snapshot, group: str, only: set[int] | None = None) -> float:
    """CPU seconds a group used between two snapshots.  A process that appeared
    since started from nothing; one that exited was reaped by its parent, whose
    ``cutime`` counts it (it is missed only if its parent is not in the group)."""
    b, a = before.get(group, {}), after.get(group, {})
    return sum(max(0.0, cpu - b.get(pid, 0.0)) for pid, cpu in a.items() if only is None or pid in only)
