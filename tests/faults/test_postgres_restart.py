"""PostgreSQL restarted under load: intents during the outage get 503
``postgres_unavailable``, none is half-written, the service recovers without a
restart, and every stream's seqs and hash chain are intact afterwards.

Clients retry a 503 with the same ``Idempotency-Key`` (what a careful client
does: an intent whose commit succeeded just before the connection dropped is
then answered from its key, never written twice)."""

from __future__ import annotations

import secrets
import threading
import time

import redis
import requests
from support.bots import assert_logs_clean, create, load_soak, soak_config, store_for
from support.servers import stack

from service.audit.checks import audit_game


def test_postgres_crash_restart_under_load():
    soak = load_soak()
    admin = "fault-admin-" + secrets.token_hex(8)
    with stack(admin) as st:
        url = st.service.url
        api_pid = st.service.api.pid
        cfg = soak_config(st, admin, games=6, clients=6, seed=3, tolerate_503=True)
        report = soak.Report()
        engines = ["nauticus", "waters-of-nereus"]
        # Enough intents that the players are still at it when PostgreSQL
        # crashes, however fast the machine: the crash comes once some have
        # committed, not after a fixed sleep.
        players = threading.Thread(target=soak.play_all, args=(cfg, report, engines, 400))
        players.start()
        deadline = time.monotonic() + 60
        while report.intents < 60 and players.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert players.is_alive() and report.intents >= 60, report.failures[:3]
        # "immediate" is a crash: in-flight transactions are cut off mid-commit,
        # the harder case than a clean ("fast") shutdown.
        st.pg.stop(mode="immediate")
        # While it is down, a write must be refused cleanly.  (The players may
        # all be waiting on reads at this moment -- queries need only Redis --
        # so probe directly rather than hope one of them writes now.)
        probe = requests.post(f"{url}/v1/games", json={"game": "nauticus", "players": ["p", "q"]}, timeout=30)
        assert probe.status_code == 503, probe.text
        assert probe.json()["error"]["code"] == "postgres_unavailable"
        assert probe.headers.get("Retry-After") == "1", probe.headers  # when to come back, as a header too
        time.sleep(3)
        st.pg.start()
        players.join(300)
        assert not players.is_alive()

        assert not report.server_errors, report.server_errors[:5]
        assert not report.failures, report.failures[:5]
        # Whatever the players met during the outage was a clean 503, never another 5xx.
        codes_5xx = {code for (status, code) in report.error_codes if status >= 500}
        assert codes_5xx <= {"postgres_unavailable"}, report.error_codes
        assert {status for (status, _) in report.error_codes} <= {503}, report.error_codes
        assert st.service.api.poll() is None and st.service.api.pid == api_pid  # never restarted

        # Exactly once, no gap, every link; then the full audit of each stream.
        soak.verify(cfg, report)
        assert not report.failures, report.failures[:5]
        with store_for(st.pg.url()) as store:
            r = redis.Redis.from_url(st.redis.url())
            for run in report.games:
                result = audit_game(store, r, run.game_id)
                assert result.ok, result.render()
            r.close()

        # The service serves new work as if nothing happened.
        fresh = create(url, "nauticus")
        assert requests.get(f"{url}/v1/games/{fresh['id']}?min_version={fresh['version']}", timeout=10).ok
        assert_logs_clean(st.service.log_text(), st.pg.url(), [admin, *(s["token"] for s in fresh["seats"])])
