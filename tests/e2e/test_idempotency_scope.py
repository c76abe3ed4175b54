"""Idempotency keys belong to the caller and bind the request's meaning
(docs/BOTS.md, "Idempotency keys"); a 409 says how to resync in one step.

* A key is scoped to one seat of one game: another seat using the same key
  is a new request (never ``idempotency_key_reused``, which would tell it the
  key was taken), and cannot claim a key before its owner.
* The same request with other whitespace or key order is the same request
  (canonical JSON), answered from the record; another request is refused.
* ``409 version_conflict`` carries ``current_version`` and ``to_act``.
"""

from __future__ import annotations

import json
from typing import Any

from support import auth, project_job


def _count(ctx: Any, gid: str) -> int:
    return ctx.store.version(gid)


def _legal(client: Any, gid: str, token: str) -> dict[str, Any]:
    return client.get(f"/v1/games/{gid}/legal", headers=auth(token)).get_json()


def _post(client: Any, gid: str, token: str, raw: str, key: str):
    headers = auth(token) | {"Idempotency-Key": key, "Content-Type": "application/json"}
    return client.post(f"/v1/games/{gid}/intents", data=raw, headers=headers)


def test_a_key_is_scoped_to_its_seat(client, new_game, ctx):
    # Waters of Nereus: both seats choose a crew card at the same time, so
    # both may post at once; a corner first for each.
    game = new_game("waters-of-nereus", ["ann", "bob"])
    gid = game["id"]
    tokens = {s["seat"]: s["token"] for s in game["seats"]}
    for turn in (0, 1):  # the corners, in turn
        seat = client.get(f"/v1/games/{gid}").get_json()["to_act"][0]
        legal = _legal(client, gid, tokens[seat])
        body = {"intent": legal["intents"][0], "expected_version": legal["version"]}
        resp = _post(client, gid, tokens[seat], json.dumps(body), f"corner-{turn}")
        assert resp.status_code == 201, resp.get_json()
        project_job(ctx, gid)
    # Seat 1 uses "shared-key" first, for its own intent.
    first = _legal(client, gid, tokens[1])
    assert first["intents"], "seat 1 chooses its crew now"
    taken = _post(client, gid, tokens[1], json.dumps({"intent": first["intents"][0]}), "shared-key")
    assert taken.status_code == 201
    length = _count(ctx, gid)
    # Seat 0 sends a different intent under the same key: its own, new request.
    mine = _legal(client, gid, tokens[0])
    other = _post(client, gid, tokens[0], json.dumps({"intent": mine["intents"][-1]}), "shared-key")
    assert other.status_code == 201, other.get_json()
    assert other.get_json().get("replayed") is not True
    assert _count(ctx, gid) > length
    # And seat 1's key still answers seat 1 only, from the record.
    again = _post(client, gid, tokens[1], json.dumps({"intent": first["intents"][0]}), "shared-key")
    assert again.status_code == 201 and again.get_json()["replayed"] is True
    assert again.get_json()["version"] == taken.get_json()["version"]


def test_the_same_request_in_other_spacing_and_key_order_is_the_same_request(client, new_game, ctx):
    game = new_game("nauticus", ["ann", "bob"])
    gid = game["id"]
    view = client.get(f"/v1/games/{gid}").get_json()
    token = game["seats"][view["to_act"][0]]["token"]
    legal = _legal(client, gid, token)
    intent = legal["intents"][0]
    compact = json.dumps({"intent": intent, "expected_version": legal["version"]}, separators=(",", ":"))
    first = _post(client, gid, token, compact, "same-meaning")
    assert first.status_code == 201
    length = _count(ctx, gid)
    reordered = {"expected_version": legal["version"], "intent": dict(reversed(list(intent.items())))}
    spaced = json.dumps(reordered, indent=4)
    again = _post(client, gid, token, spaced, "same-meaning")
    assert again.status_code == 201, again.get_json()
    assert again.get_json()["replayed"] is True and again.get_json()["version"] == first.get_json()["version"]
    assert _count(ctx, gid) == length
    changed = json.dumps({"intent": intent, "expected_version": legal["version"] + 1})
    refused = _post(client, gid, token, changed, "same-meaning")
    assert refused.status_code == 422 and refused.get_json()["error"]["code"] == "idempotency_key_reused"
    assert _count(ctx, gid) == length


def test_a_conflict_carries_the_version_and_who_is_to_act(client, new_game, ctx, run_worker):
    game = new_game("nautilus-industries", ["ann", "bob"])
    gid = game["id"]
    view = client.get(f"/v1/games/{gid}").get_json()
    token = game["seats"][view["to_act"][0]]["token"]
    legal = _legal(client, gid, token)
    body = {"intent": legal["intents"][0], "expected_version": legal["version"]}
    ok = client.post(f"/v1/games/{gid}/intents", json=body, headers=auth(token))
    assert ok.status_code == 201
    stale = client.post(f"/v1/games/{gid}/intents", json=body, headers=auth(token))
    assert stale.status_code == 409
    error = stale.get_json()["error"]
    assert error["code"] == "version_conflict"
    assert error["details"]["expected_version"] == legal["version"]
    assert error["details"]["current_version"] == ok.get_json()["version"] == ctx.store.version(gid)
    run_worker()
    now = client.get(f"/v1/games/{gid}?min_version={ok.get_json()['version']}").get_json()
    assert error["details"]["to_act"] == now["to_act"]
