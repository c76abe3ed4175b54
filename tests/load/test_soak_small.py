"""The soak (``scripts.soak``) at a small size, against the real processes
(gunicorn + an RQ worker) on private PostgreSQL and Redis: every accepted
intent in its stream exactly once, no gap, zero 5xx, every finished game
passes its audit, and nothing secret in the processes' logs.

Games of the two shorter engines, so the run stays around a minute; the full
soak (``make soak``) plays every engine."""

from __future__ import annotations

import secrets

from support.bots import assert_logs_clean, load_soak, soak_config
from support.servers import stack


def test_small_soak_loses_nothing():
    soak = load_soak()
    admin = "soak-admin-" + secrets.token_hex(8)
    # Feed pages of 40 events, so that the soak's check reads every stream across
    # several pages, as it must for a long game (1,000 events a page by default).
    with stack(admin, QD_FEED_PAGE_DEFAULT="40") as st:
        cfg = soak_config(st, admin, games=4, clients=4, seed=11)
        report = soak.Report()
        soak.play_all(cfg, report, ["nauticus", "waters-of-nereus"])
        soak.verify(cfg, report)
        print(report.summary())
        assert report.ok, report.summary()
        assert len(report.games) == 4 and all(g.finished for g in report.games)
        assert report.audited == 4
        assert not any(status >= 500 for status in report.statuses)
        assert report.intents > 0
        assert_logs_clean(st.service.log_text(), st.pg.url(), [admin])
