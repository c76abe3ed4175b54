"""Logs never contain tokens or seeds.

In-process: every record logged (at DEBUG, before any redaction filter) while
games are created, played to the end (seed revealed), refused with bad and
foreign tokens, hostile bodies and organiser calls.  The real processes'
logs (gunicorn, workers) are checked by the fault tests, which keep them."""

from __future__ import annotations

import logging
import random

from support import auth, play

from service import nudge
from service.logs import RedactSecrets


def test_nothing_logged_carries_a_token_or_seed(client, ctx, new_game, settings, caplog, run_worker):
    caplog.set_level(logging.DEBUG)
    # No drain job left queued by an earlier test: ours are enqueued (and
    # logged, with their arguments) and then run here.
    run_worker()
    ctx.redis.delete(*(nudge.drain_pending(s) for s in range(settings.projection_shards)))
    game = new_game(game="nauticus", players=["ann", "bob"])
    other = new_game(game="waters-of-nereus", players=["cy", "di"])
    gid = game["id"]
    tokens = [s["token"] for g in (game, other) for s in g["seats"]]
    play(client, ctx, game, random.Random(2))  # to the end: the seed is revealed in the stream
    for token in tokens:
        client.post(f"/v1/games/{gid}/intents", json={"intent": {"type": "x"}}, headers=auth(token))
        client.post(f"/v1/games/{other['id']}/intents", json={"token": token, "seed": token}, headers=auth(token))
        client.get(f"/v1/games/{gid}/legal", headers=auth(token + "x"))
    for suffix in ["/audit", "/export", "/events", "/state"]:
        client.get(f"/v1/games/{other['id']}{suffix}", headers=auth(settings.admin_token))
        client.get(f"/v1/games/{other['id']}{suffix}", headers=auth(settings.admin_token + "x"))
    client.post("/v1/games", data=b'{"game": ' + tokens[0].encode(), headers={"Content-Type": "application/json"})
    run_worker()

    seeds = [bytes(ctx.store.secrets(g["id"])[0]).hex() for g in (game, other)]
    text = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "rq.queue" in {r.name for r in caplog.records}, "expected the enqueue logs at least"
    for secret in [*tokens, *seeds, settings.admin_token]:
        assert secret not in text


def test_the_redaction_filter_masks_what_slips_through():
    """Belt and braces: the handler's filter masks bearer tokens and seeds."""
    record = logging.LogRecord(
        "x",
        logging.INFO,
        __file__,
        1,
        "auth %s body %s",
        ("Bearer abcDEF123_-xyz", '{"seed": "00ff00ff00ff00ff00ff", "token": "tok_1234567890"}'),
        None,
    )
    assert RedactSecrets().filter(record)
    msg = record.getMessage()
    assert "abcDEF123_-xyz" not in msg and "00ff00ff00ff00ff00ff" not in msg and "tok_1234567890" not in msg
