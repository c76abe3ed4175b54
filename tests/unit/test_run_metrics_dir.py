"""``make run`` gives each run its own Prometheus multiprocess directory
(``devtools/run.py``): two runs on one machine never count each other's
samples, and a run starts from an empty directory."""

from __future__ import annotations

import os
import subprocess
import sys

from devtools.run import metrics_dir_for_run


def test_each_run_gets_an_empty_directory_of_its_own_and_gone_runs_are_cleaned(tmp_path):
    root = tmp_path / "metrics"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)  # a process that has exited
    alive_pid = os.getppid()  # one that has not
    (root / f"run-{dead_pid}").mkdir(parents=True)
    (root / f"run-{dead_pid}" / "counter_1.db").write_bytes(b"old samples")
    (root / f"run-{alive_pid}").mkdir()
    (root / f"run-{alive_pid}" / "counter_2.db").write_bytes(b"another run's samples")
    (root / "counter_3.db").write_bytes(b"the old shared layout")
    mine = metrics_dir_for_run(root, pid=os.getpid())
    assert mine == (root / f"run-{os.getpid()}").resolve() and list(mine.iterdir()) == []
    assert not (root / f"run-{dead_pid}").exists()
    assert not (root / "counter_3.db").exists()
    assert (root / f"run-{alive_pid}" / "counter_2.db").exists(), "another live run's samples are left alone"
    (mine / "counter_4.db").write_bytes(b"this run")
    again = metrics_dir_for_run(root, pid=os.getpid())
    assert again == mine and list(again.iterdir()) == [], "a run starts empty"
