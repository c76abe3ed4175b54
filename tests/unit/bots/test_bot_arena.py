"""The strength measurement (``service/bots/arena.py``; docs/BOTS.md, "House bots")."""

from __future__ import annotations

import pytest

from service.bots.arena import (
    TABLE_END,
    TABLE_START,
    goal,
    join_reports,
    main,
    percentile,
    run_strength,
    table_row,
    wilson,
    write_table,
)


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
    its = report["iterations_per_decision"]["1"]
    assert its["cap"] == 4 and 1 <= its["p50"] <= 4 and 1 <= its["mean"] <= 4  # greedy: determinizations


def test_runs_with_other_first_seeds_join_into_one_row() -> None:
    """docs/BOTS.md, the table's footnote: the wins add up, the interval is the joined games', the CPU
    and iteration figures and games per minute are the worst run's."""
    one = run_strength("nauticus", 1, "random", games=2, seats=2, seed=100)
    two = run_strength("nauticus", 1, "random", games=3, seats=2, seed=1000)
    joined = join_reports([one, two])
    assert (joined["games"], joined["wins"], joined["runs"]) == (5, one["wins"] + two["wins"], 2)
    assert joined["interval95"] == [round(x, 3) for x in wilson(joined["wins"], 5)]
    cpu = joined["cpu_per_decision"]["1"]
    assert cpu["max"] == max(one["cpu_per_decision"]["1"]["max"], two["cpu_per_decision"]["1"]["max"])
    assert cpu["decisions"] == one["cpu_per_decision"]["1"]["decisions"] + two["cpu_per_decision"]["1"]["decisions"]
    assert joined["games_per_minute"] == min(one["games_per_minute"], two["games_per_minute"])
    assert "| 5 ¹ |" in table_row(joined) and "¹" not in table_row(one)
    with pytest.raises(ValueError, match="one pairing"):
        join_reports([one, run_strength("nauticus", 1, "random", games=1, seats=3, seed=1)])


def test_the_cli_prints_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--game", "waters-of-nereus", "--a", "1", "--b", "random", "--games", "2"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("waters-of-nereus 2p: 1 vs random: ") and "level 1: CPU/decision p50" in captured.out
    # progress on stderr, a line a game, so that --json's stdout stays one document
    assert [line.split(",")[0] for line in captured.err.splitlines()] == ["1/2 games", "2/2 games"]


def test_an_unknown_player_is_refused() -> None:
    with pytest.raises(ValueError):
        run_strength("nauticus", 7, "random", games=1)


def test_the_goals_follow_the_seats() -> None:
    assert goal({"a": "1", "b": "random", "seats": 2}) == 0.9
    assert goal({"a": "3", "b": "1", "seats": 2}) == 0.75
    assert goal({"a": "2", "b": "1", "seats": 2}) == 0.6
    assert goal({"a": "3", "b": "2", "seats": 4}) == 0.4
    assert goal({"a": "2", "b": "1", "seats": 6}) == pytest.approx(1 / 6 + 0.15, abs=1e-3)
    assert goal({"a": "1", "b": "random", "seats": 3}) is None


def test_the_table_is_written_from_reports_and_keeps_the_rows_not_measured_again() -> None:
    report = run_strength("nauticus", 1, "random", games=2, seats=2, seed=7)
    old = (
        f"before\n{TABLE_START}\n| game | seats | ... |\n|---|\n"
        "| nauticus | 2 | level 1 | random | 100 | 99 | 99% (95%–100%) | 1.0 / 4.0 / 6.6 ms (10) | — | 256.8 |\n"
        "| nauticus | 2 | level 3 | level 1 | 100 | 66 | 66% (56%–74%) | 50.4 / 51.2 / 52.6 ms (50) | 1.0 ms | 4.1 |\n"
        f"{TABLE_END}\nafter\n"
    )
    new = write_table(old, [report])
    assert new.startswith("before\n") and new.endswith(f"{TABLE_END}\nafter\n")
    rows = [line for line in new.splitlines() if line.startswith("| nauticus")]
    assert len(rows) == 2
    measured, kept = rows
    assert measured.split(" | ")[4] == "2"  # the new measurement replaced the 100-game row
    assert "✓" in measured or "?" in measured or "✗" in measured
    assert kept.split(" | ")[7] == "75% ✗"  # 56%-74% is below the goal of 75%
    assert write_table(new, [report]) == new  # written again: the same table
