"""Hand-made hostile inputs: oversized bodies, deep JSON, huge numbers, unicode
edge cases, path traversal in ids, odd headers.  Each gets a clean 4xx with the
one JSON error shape, and nothing is written."""

from __future__ import annotations

import json

import pytest
from support import auth

from projections.runner import project_game


def _is_clean_refusal(resp, statuses: set[int] | None = None) -> dict:
    assert 400 <= resp.status_code < 500, (resp.status_code, resp.get_data()[:300])
    if statuses:
        assert resp.status_code in statuses, (resp.status_code, resp.get_data()[:300])
    body = resp.get_json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] and body["error"]["message"]
    return body["error"]


@pytest.fixture
def game(client, new_game, ctx):
    created = new_game(game="nauticus", players=["ann", "bob"])
    project_game(ctx.redis, ctx.store, created["id"])
    view = client.get(f"/v1/games/{created['id']}").get_json()
    seat = view["to_act"][0]
    return created, created["seats"][seat]["token"]


def _post_raw(client, path: str, raw: bytes | str, token: str | None = None, **headers: str):
    h = {"Content-Type": "application/json", **headers}
    if token:
        h |= auth(token)
    return client.post(path, data=raw, headers=h)


BAD_BODIES = {
    "oversized": b'{"intent": {"type": "x", "pad": "' + b"a" * 200_000 + b'"}}',
    "deep_json": b'{"intent": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "deep_objects": b'{"intent": ' + b'{"a":' * 2000 + b"1" + b"}" * 2000 + b"}",
    "huge_int_literal": b'{"intent": {"type": "pass"}, "expected_version": ' + b"9" * 5000 + b"}",
    "big_int": b'{"intent": {"type": "pass"}, "expected_version": 99999999999999999999999999}',
    "float_version": b'{"intent": {"type": "pass"}, "expected_version": 1e400}',
    "nan": b'{"intent": {"type": "pass"}, "expected_version": NaN}',
    "infinity_field": b'{"intent": {"type": "pass", "x": Infinity}}',
    "negative_version": b'{"intent": {"type": "pass"}, "expected_version": -1}',
    "lone_surrogate": b'{"intent": {"type": "\\ud800"}}',
    "nul_char": b'{"intent": {"type": "a\\u0000b"}}',
    "nul_key": b'{"intent": {"type": "pass", "\\u0000": 1}}',
    "invalid_utf8": b'{"intent": {"type": "\xff\xfe"}}',
    "bom": b'\xef\xbb\xbf{"intent": {"type": "pass"}}',
    "rtl_and_zero_width": '{"intent": {"type": "pa\u200bss\u202e"}}'.encode(),
    "not_an_object": b"[1, 2, 3]",
    "scalar": b'"intent"',
    "empty": b"",
    "trailing_garbage": b'{"intent": {"type": "pass"}} xx',
    "duplicate_keys": b'{"intent": {"type": "pass"}, "intent": 5}',
    "intent_is_list": b'{"intent": [{"type": "pass"}]}',
    "intent_null": b'{"intent": null}',
    "unknown_top_field": b'{"intent": {"type": "pass"}, "admin": true}',
    "type_is_number": b'{"intent": {"type": 12}}',
    "type_is_object": b'{"intent": {"type": {"$ne": null}}}',
    "proto_pollution": b'{"intent": {"type": "pass", "__proto__": {"admin": true}, "constructor": 1}}',
    "long_string": json.dumps({"intent": {"type": "x" * 60_000}}).encode(),
}


@pytest.mark.parametrize("name", sorted(BAD_BODIES))
def test_bad_intent_bodies_are_refused_and_write_nothing(client, ctx, game, name):
    created, token = game
    gid = created["id"]
    before = ctx.store.version(gid)
    resp = _post_raw(client, f"/v1/games/{gid}/intents", BAD_BODIES[name], token)
    err = _is_clean_refusal(resp)
    if name == "oversized":
        assert resp.status_code == 413 and err["code"] == "body_too_large"
    if name.startswith("deep"):
        assert resp.status_code == 400 and err["code"] == "json_too_deep"
    assert ctx.store.version(gid) == before


CREATE_BODIES = {
    "nul_in_option_value": b'{"game": "nauticus", "players": ["a", "b"], "options": {"x": "\\u0000"}}',
    "surrogate_in_option": b'{"game": "nauticus", "players": ["a", "b"], "options": {"x": "\\udfff"}}',
    "surrogate_option_key": b'{"game": "nauticus", "players": ["a", "b"], "options": {"\\ud800": 1}}',
    "huge_option_number": b'{"game": "nauticus", "players": ["a", "b"], "options": {"x": 1e400}}',
    "nan_option": b'{"game": "nauticus", "players": ["a", "b"], "options": {"x": NaN}}',
    "deep_option": b'{"game": "nauticus", "players": ["a", "b"], "options": {"x": ' + b"[" * 31 + b"]" * 31 + b"}}",
    "unicode_player": '{"game": "nauticus", "players": ["ａｎｎ", "bob"]}'.encode(),
    "traversal_player": b'{"game": "nauticus", "players": ["../../etc/passwd", "bob"]}',
    "nul_player": b'{"game": "nauticus", "players": ["a\\u0000", "bob"]}',
    "too_many_players": json.dumps({"game": "nauticus", "players": [f"p{i}" for i in range(100)]}).encode(),
    "same_player_twice": b'{"game": "nauticus", "players": ["ann", "ann"]}',
    "traversal_game": b'{"game": "../nauticus", "players": ["a", "b"]}',
    "game_case": b'{"game": "NAUTICUS", "players": ["a", "b"]}',
    "players_not_list": b'{"game": "nauticus", "players": "ab"}',
    "options_list": b'{"game": "nauticus", "players": ["a", "b"], "options": []}',
}


@pytest.mark.parametrize("name", sorted(CREATE_BODIES))
def test_bad_create_bodies_are_refused(client, ctx, name):
    before = len(ctx.store.game_ids(limit=100_000))
    resp = _post_raw(client, "/v1/games", CREATE_BODIES[name])
    _is_clean_refusal(resp)
    assert len(ctx.store.game_ids(limit=100_000)) == before


TRAVERSAL_IDS = [
    "..",
    "../..",
    "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f%2e%2e%2f",
    "00000000-0000-0000-0000-000000000000",
    "not-a-uuid",
    "' OR 1=1 --",
    "%00",
    "x" * 5000,
    "%F0%9F%92%A9",
    "%ED%A0%80",  # an encoded lone surrogate
]


@pytest.mark.parametrize("gid", TRAVERSAL_IDS)
@pytest.mark.parametrize("suffix", ["", "/legal", "/events", "/state", "/audit", "/export"])
def test_odd_game_ids_are_clean_404s(client, gid, suffix, settings):
    resp = client.get(f"/v1/games/{gid}{suffix}", headers=auth(settings.admin_token))
    _is_clean_refusal(resp, {404})


@pytest.mark.parametrize("path", ["/v1/leaderboards/..%2F..%2Fetc", "/v1/leaderboards/%00", "/v1/players/..%2Fx"])
def test_odd_names_elsewhere_are_clean_refusals(client, path):
    _is_clean_refusal(client.get(path))


@pytest.mark.parametrize(
    "query", ["min_version=-1", "min_version=1e99", "min_version=abc", "min_version=" + "9" * 400, "min_version=%00"]
)
def test_bad_query_values_are_422(client, game, query):
    created, _ = game
    _is_clean_refusal(client.get(f"/v1/games/{created['id']}?{query}"), {422})


@pytest.mark.parametrize(
    "header",
    [
        {"Idempotency-Key": "k" * 5000},
        {"Idempotency-Key": "\x00"},
        {"Idempotency-Key": ""},
        {"Authorization": "Bearer " + "A" * 100_00},
        {"Authorization": "Bearer \u00e9\u00e8"},
        {"Authorization": "Basic YWRtaW46YWRtaW4="},
        {"Authorization": "Bearer"},
    ],
)
def test_odd_headers_are_clean_refusals(client, ctx, game, header):
    created, token = game
    gid = created["id"]
    before = ctx.store.version(gid)
    headers = {"Content-Type": "application/json"}
    if "Authorization" not in header:
        headers |= auth(token)
    headers |= header
    resp = client.post(f"/v1/games/{gid}/intents", data=b'{"intent": {"type": "nothing"}}', headers=headers)
    _is_clean_refusal(resp)
    assert ctx.store.version(gid) == before


def test_wrong_content_type_is_415(client, game):
    created, token = game
    resp = client.post(
        f"/v1/games/{created['id']}/intents",
        data=b'{"intent": {"type": "pass"}}',
        headers={"Content-Type": "text/plain", **auth(token)},
    )
    _is_clean_refusal(resp, {415})


def test_a_body_less_post_with_a_json_content_type_and_an_empty_body_is_served(client):
    """``join`` takes no body; a client library that always sends
    ``Content-Type: application/json`` sent an empty one and got ``400 malformed_json``."""
    from support.accounts import register

    _, ann = register(client)
    _, bob = register(client)
    table = client.post("/v1/tables", json={"game": "nauticus", "seats": 3}, headers=auth(ann)).get_json()
    resp = client.post(
        f"/v1/tables/{table['id']}/join", data=b"", headers={"Content-Type": "application/json", **auth(bob)}
    )
    assert resp.status_code == 200, resp.get_json()
    # A body that must be there is still asked for: the schema's 422, not a 400.
    resp = client.post("/v1/games", data=b"", headers={"Content-Type": "application/json"})
    assert _is_clean_refusal(resp, {422})["code"] == "validation_error"


def test_a_utf8_byte_order_mark_before_the_json_is_ignored(client, ctx):
    """RFC 8259 lets a parser ignore a BOM; it got ``400 bad_request``, a code no list had."""
    body = b"\xef\xbb\xbf" + json.dumps({"game": "nauticus", "players": ["ann", "bob"]}).encode()
    resp = client.post("/v1/games", data=body, headers={"Content-Type": "application/json"})
    assert resp.status_code == 201, resp.get_json()
    assert ctx.store.version(resp.get_json()["id"]) >= 1


@pytest.mark.parametrize("corner", [2.9, 2.0, "2"], ids=["float", "whole-float", "string"])
def test_a_whole_number_sent_as_a_float_or_a_string_is_refused_and_nothing_recorded(client, ctx, new_game, corner):
    """``"corner": 2.9`` was recorded as corner 2 (and ``"2"`` as 2); each schema's
    integers are walked in tests/unit/test_whole_numbers.py, this is the answer over HTTP."""
    created = new_game(game="waters-of-nereus", players=["ann", "bob"])
    project_game(ctx.redis, ctx.store, created["id"])
    seat = client.get(f"/v1/games/{created['id']}").get_json()["to_act"][0]
    before = ctx.store.version(created["id"])
    resp = client.post(
        f"/v1/games/{created['id']}/intents",
        json={"intent": {"type": "choose_corner", "corner": corner}},
        headers=auth(created["seats"][seat]["token"]),
    )
    error = _is_clean_refusal(resp, {422})
    assert error["code"] == "invalid_intent" and error["details"]["fields"] == {"corner": ["Not a valid integer."]}
    assert ctx.store.version(created["id"]) == before
