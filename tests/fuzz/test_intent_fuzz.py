"""Property-based fuzz (hypothesis) of intent bodies for every game: random
JSON and mutations of the intents ``/legal`` offers are refused with a 4xx
JSON error and change nothing.  (A mutation that gives back a listed intent is
not sent: the game must stay where it is for the examples to be replayable.)"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import auth

from projections.runner import project_game
from schemas.intents import load_intent
from service.games import registry

EXAMPLES = 60

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["", "\u0000", "\ud7ff", "\U0001f4a9", "\u202e", "../../etc/passwd", "' OR 1=1 --", "%s%n"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def mutations(legal: list[dict]):
    """A legal intent, then one or more edits to it."""
    base = st.sampled_from(legal)

    def mutate(draw_data):
        intent, edits = draw_data
        out = dict(intent)
        for kind, key, value in edits:
            fields = sorted(out)
            if kind == "drop" and fields:
                out.pop(fields[key % len(fields)])
            elif kind == "set" and fields:
                out[fields[key % len(fields)]] = value
            elif kind == "add":
                out[f"extra{key}"] = value
            elif kind == "type":
                out["type"] = value
        return out

    edit = st.tuples(st.sampled_from(["drop", "set", "add", "type"]), st.integers(0, 50), json_values)
    return st.tuples(base, st.lists(edit, min_size=1, max_size=3)).map(mutate)


def bodies(legal: list[dict]):
    intent = st.one_of(json_values, mutations(legal), mutations(legal))
    body = st.fixed_dictionaries({"intent": intent}, optional={"expected_version": json_values})
    return st.one_of(body, body, json_values, st.dictionaries(st.text(max_size=10), json_values, max_size=3))


def _canon(game: str, intent) -> str | None:
    try:
        return json.dumps(load_intent(game, intent).to_json(), sort_keys=True)
    except Exception:
        return None


@pytest.mark.parametrize("game_name", registry.names())
def test_random_and_mutated_intents_are_refused_cleanly(client, new_game, ctx, game_name):
    created = new_game(game=game_name, players=["ann", "bob"])
    gid = created["id"]
    project_game(ctx.redis, ctx.store, gid)
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    seen = {"refused": 0, "legal": 0}

    def current():
        view = client.get(f"/v1/games/{gid}").get_json()
        seat = view["to_act"][0]
        legal = client.get(f"/v1/games/{gid}/legal", headers=auth(tokens[seat])).get_json()
        return seat, legal

    seat, legal = current()

    @given(data=st.data())
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    def fuzz(data):
        body = data.draw(bodies(legal["intents"]))
        listed = {json.dumps(i, sort_keys=True) for i in legal["intents"]}
        if isinstance(body, dict) and _canon(game_name, body.get("intent")) in listed:
            seen["legal"] += 1  # the edits gave back a listed intent: not hostile, not sent
            return
        before = ctx.store.version(gid)
        resp = client.post(f"/v1/games/{gid}/intents", json=body, headers=auth(tokens[seat]))
        assert 400 <= resp.status_code < 500, (resp.status_code, body, resp.get_data()[:300])
        err = resp.get_json()["error"]
        assert set(err) == {"code", "message", "details"} and isinstance(err["code"], str)
        assert ctx.store.version(gid) == before, body
        seen["refused"] += 1

    fuzz()
    assert seen["refused"] >= EXAMPLES // 2, seen
