"""A finished game's analysis on its page, in a real browser (headless Chromium, see conftest.py): a person
opens a finished game, asks for the analysis, waits while the analysis worker computes it (the page polls
after each ``Retry-After``), and sees each seat's value line and the mistakes with the move the level-3 bot
preferred in ``[data-role=analysis]``.  A running game's page has no analysis section."""

from __future__ import annotations

from typing import Any

import pytest
from rq import Queue
from support import finished_and_running
from support.browser import by, wait_for

from service.bootstrap import analyses
from workers.rq_worker import ProjectionWorker


@pytest.fixture(scope="module")
def games(app, ctx) -> dict[str, dict[str, Any]]:
    """The finished Nauticus game this file analyses (only that one: playing the others out through the
    API is most of the file's time) and a running one."""
    return finished_and_running(
        app, ctx, 90, "browser-analysis", "nauticus", running_seed=5, stop_after=10, finished=["nauticus"]
    )


def test_the_analysis_shows_on_a_finished_games_page(browser, games, ctx):
    gid = games["nauticus"]["id"]
    queue = Queue(ctx.settings.analysis_queue, connection=ctx.queue_redis)
    queue.empty()
    # The browser's address may have spent its day on other tests' tournament audits (which ask for
    # their games' analyses): this test starts its day afresh.
    for key in ctx.redis.scan_iter(match=analyses(ctx).quota_key("a:127.0.0.1", "*")):
        ctx.redis.delete(key)
    d = browser.driver
    browser.open(f"/games/{gid}")
    section = wait_for(lambda: d.find_element(*by("[data-role=analysis]")), message="the analysis section")
    assert section.find_element(*by("[data-analysis-body]")).get_attribute("hidden") is not None
    section.find_element(*by("[data-action=analyse]")).click()
    wait_for(lambda: queue.count == 1, message="the analysis job enqueued")
    wait_for(
        lambda: "computed" in section.find_element(*by("[data-analysis-status]")).text,
        message="the page says the analysis is being computed",
    )
    kept = ctx.settings
    ctx.settings = kept.with_(analysis_search_cpu_s=0.002)  # the page is tested here, not the bot's strength
    try:
        # The worker's job, here (the page is served from another thread meanwhile).
        ProjectionWorker([queue], connection=ctx.queue_redis).work(burst=True, logging_level="WARNING")
    finally:
        ctx.settings = kept
    wait_for(
        lambda: section.find_element(*by("[data-analysis-body]")).get_attribute("hidden") is None,
        timeout=30,
        message="the analysis drawn",
    )
    lines = section.find_elements(*by("[data-analysis-chart] polyline"))
    assert [line.get_attribute("data-seat") for line in lines] == ["0", "1"]
    events = len(ctx.store.read(gid, after=0))
    assert all(len(line.get_attribute("points").split()) == events for line in lines)
    mistakes = section.find_elements(*by("[data-analysis-mistakes] li"))
    assert mistakes
    marked = [m for m in mistakes if m.get_attribute("data-seq")]
    assert marked, "a random player's game has mistakes"
    assert all("the bot preferred" in m.text and m.text.startswith("Event ") for m in marked)
    agreement = section.find_elements(*by("[data-analysis-agreement] li"))
    assert len(agreement) == 2 and all("decisions were the bot's first choice" in a.text for a in agreement)


def test_a_running_games_page_has_no_analysis(browser, games):
    browser.open(f"/games/{games['running']['id']}")
    wait_for(lambda: browser.driver.find_element(*by("#board")), message="the board")
    assert not browser.driver.find_elements(*by("[data-role=analysis]"))
