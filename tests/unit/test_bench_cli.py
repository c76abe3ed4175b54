"""``make bench`` as one package (docs/PERFORMANCE.md, "Running the benchmark"): its
command line, its phases, and the page's table generated from a run's JSON, never typed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.bench import report, run

ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_every_phase_and_needs_no_server():
    out = subprocess.run(
        [sys.executable, "-m", "scripts.bench", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "usage: python -m scripts.bench" in out.stdout
    for name in run.phase_names():
        assert name in out.stdout


def test_an_unknown_phase_is_refused_before_anything_runs():
    out = subprocess.run(
        [sys.executable, "-m", "scripts.bench", "no-such-phase"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2
    assert "unknown phase(s) ['no-such-phase']" in out.stderr


def test_phases_run_in_order_and_a_function_answers_to_each_of_its_names():
    names = run.phase_names()
    assert names[:3] == ["pg", "flask", "minimum"] and names[-2:] == ["rebuild", "bots"]
    assert len(names) == len(set(names))
    # The bots' strength runs only when named (an hour or more): never in a plain make bench.
    assert {"bots"} == run.OPT_IN and not run._phase("bots", set()) and run._phase("bots", {"bots"})
    assert run._phase("rebuild", set())
    by_name = {name: fn for names_of, fn in run.PHASES for name in names_of}
    assert by_name["api"] is by_name["lag"] is by_name["depth"] is run.phase_http


def test_the_pages_table_is_the_kept_run_as_bench_report_writes_it():
    page = report.PAGE.read_text(encoding="utf-8")
    kept = json.loads(report.KEPT.read_text(encoding="utf-8"))
    assert report.publish(page, kept) == page, (
        "docs/PERFORMANCE.md's table is not docs/bench/latest.json's: make bench-report"
    )


def test_a_changed_figure_changes_the_table_and_the_targets():
    kept = json.loads(report.KEPT.read_text(encoding="utf-8"))
    page = report.PAGE.read_text(encoding="utf-8")
    slower = dict(kept, cpu_ms_per_intent=9.87)
    changed = report.publish(page, slower)
    assert changed != page
    assert "cpu_ms_per_intent                    9.87" in changed
    targets = {t.name: t for t in report.Results.from_json(slower).targets()}
    assert targets["cpu_ms_per_intent / cpu_ms_per_minimum_intent"].met is False
    assert targets["cpu_ms_per_intent / cpu_ms_per_minimum_intent"].value == pytest.approx(
        9.87 / kept["cpu_ms_per_minimum_intent"]
    )


def test_a_page_without_markers_is_refused():
    with pytest.raises(ValueError, match="markers"):
        report.publish("# A page\n", {})


def test_boardgame_io_and_the_person_are_rows_of_the_targets():
    res = report.Results()
    for key, value in {
        "api_intents_16": 300.0,
        "bgio_moves_16": 200.0,
        "cpu_ms_per_intent": 3.0,
        "cpu_ms_per_bgio_move": 2.5,
        "click_move_p95_ms": 120.0,
        "click_reply_p95_ms": 310.0,
    }.items():
        res.put(key, value)
    targets = {t.name: t for t in res.targets()}
    assert targets["api_intents_16 / bgio_moves_16"].value == pytest.approx(1.5)
    assert targets["api_intents_16 / bgio_moves_16"].met is True
    assert targets["cpu_ms_per_intent / cpu_ms_per_bgio_move"].value == pytest.approx(1.2)
    assert targets["cpu_ms_per_intent / cpu_ms_per_bgio_move"].met is False
    assert targets["click_move_p95_ms"].met is True and targets["click_reply_p95_ms"].met is False
    printed = report.table(res)
    assert "bgio_moves_16" in printed and "click_reply_p95_ms" in printed
