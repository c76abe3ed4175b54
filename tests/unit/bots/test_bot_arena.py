"""The strength measurement (``service/bots/arena.py``; docs/BOTS.md, "House bots")."""

from __future__ import annotations

import pytest

from service.bots.arena import main, percentile, run_strength, wilson


def test_wilson_interval() -> None:
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    low, high = wilson(100, 100)
    assert high == pytest.approx(1.0) and low == pytest.approx(0.963, abs=1e-3)
    assert wilson(0, 0) == (0.0, 1.0)


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile([], 0.5) == 0.0


def test_run_strength_reports_what_the_bench_prints() -> None:
    """docs/BOTS.md in miniature: level 1 beats random in 2-player Nauticus, seats rotated."""
    report = run_strength("nauticus", 1, "random", games=4, seats=2, seed=100)
    assert report["games"] == 4 and report["a"] == "1" and report["b"] == "random"
    assert report["wins"] >= 3, report
    assert report["win_rate"] == report["wins"] / 4
    low, high = report["interval95"]
    assert 0 <= low <= report["win_rate"] <= high <= 1
    cpu = report["cpu_per_decision"]["1"]
    assert cpu["decisions"] > 0 and 0 <= cpu["p50"] <= cpu["p99"] <= cpu["max"]
    assert cpu["budget"] == 0.01
    assert report["games_per_minute"] > 0 and report["unfinished"] == 0


def test_the_cli_prints_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--game", "waters-of-nereus", "--a", "1", "--b", "random", "--games", "2"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("waters-of-nereus 2p: 1 vs random: ") and "level 1: CPU/decision p50" in captured.out
    # progress on stderr, a line a game, so that --json's stdout stays one document
    assert [line.split(",")[0] for line in captured.err.splitlines()] == ["1/2 games", "2/2 games"]


def test_an_unknown_player_is_refused() -> None:
    with pytest.raises(ValueError):
        run_strength("nauticus", 7, "random", games=1)
