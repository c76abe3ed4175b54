"""schemathesis against ``/openapi.json``: every operation, generated
(and negated) parameters and bodies, as a stranger, as a seat, as the
organiser, with a forged token, and with a player's and an organiser's key; for half the cases the path names a real
game, so the deep paths run too.  Checks: no 5xx, and every answer's status,
content type and body match the spec."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis.errors import Unsatisfiable
from openapi_schema_validator import OAS30Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from projections.runner import project_game

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES = 15
#: Valid inputs, and inputs the spec says are invalid (which must be refused cleanly).
MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]


@pytest.fixture(scope="module")
def real_game(fuzz_app, ctx):
    client = fuzz_app.test_client()
    resp = client.post("/v1/games", json={"game": "nauticus", "players": ["ann", "bob"]})
    assert resp.status_code == 201
    game = resp.get_json()
    project_game(ctx.redis, ctx.store, game["id"])
    return game


@pytest.fixture(scope="module")
def fuzz_app(settings):
    """The app with a short ``?min_version=`` wait: generated versions are
    mostly in the future, and waiting for them proves nothing here.  Streams
    end after a moment for the same reason (their first line is the check)."""
    from service.http.app import create_app

    application = create_app(settings.with_(max_wait_seconds=0.05, stream_max_seconds=0.2), TESTING=True)
    yield application
    application.extensions["quarterdeck"].store.pool.close()


@pytest.fixture(scope="module")
def account_keys(fuzz_app, settings) -> dict[str, str]:
    """A player's key and an organiser's key, sent like the tokens above."""
    from support.accounts import organiser, register

    client = fuzz_app.test_client()
    return {"player_key": register(client)[1], "organiser_key": organiser(client, settings)[1]}


@pytest.fixture(scope="module")
def api_schema(fuzz_app):
    return schemathesis.openapi.from_wsgi("/openapi.json", fuzz_app)


def sse_lines_conform(spec: dict[str, Any], case: Any, text: str) -> None:
    """Each ``data:`` of an SSE answer is one JSON value of the operation's ``x-line-schema``."""
    operation = spec["paths"][case.operation.path][case.operation.method.lower()]
    line = operation["responses"]["200"]["content"]["text/event-stream"]["x-line-schema"]
    uri = "urn:quarterdeck:openapi"
    spec = _nullable(spec)
    registry = Registry().with_resource(uri, Resource.from_contents(spec, default_specification=DRAFT4))
    validator = OAS30Validator({"$ref": uri + line["$ref"]}, registry=registry)
    for raw in text.splitlines():
        if raw.startswith("data: "):
            validator.validate(json.loads(raw[6:]))


def _nullable(schema: Any) -> Any:
    """OpenAPI 3.0's ``nullable`` beside ``anyOf``/``oneOf``/``$ref`` (no ``type``) as JSON
    Schema says it: null, or the rest."""
    if isinstance(schema, list):
        return [_nullable(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _nullable(v) for k, v in schema.items()}
    if out.get("nullable") is True and "type" not in out:
        out.pop("nullable")
        return {"anyOf": [out, {"enum": [None]}]}
    return out


def test_every_operation_conforms(api_schema, real_game, settings, account_keys):
    """Each operation in turn, ``EXAMPLES`` generated cases each."""
    who_rng = random.Random(9)
    tried: dict[str, int] = {}
    operations = 0
    for result, mode in itertools.product(api_schema.get_all_operations(), MODES):
        operation = result.ok()
        operations += mode is GenerationMode.POSITIVE

        @given(case=operation.as_strategy(generation_mode=mode))
        @hsettings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
        def run(case):
            if "game_id" in (case.path_parameters or {}) and who_rng.random() < 0.5:
                case.path_parameters["game_id"] = real_game["id"]
            if case.query and "follow" in case.query:
                case.query["follow"] = "false"  # a long poll proves nothing here and costs seconds
            headers = dict(case.headers or {})
            who = who_rng.choice(["none", "seat", "admin", "forged", "player_key", "organiser_key"])
            if who == "seat":
                headers["Authorization"] = "Bearer " + real_game["seats"][who_rng.randrange(2)]["token"]
            elif who == "admin":
                headers["Authorization"] = "Bearer " + settings.admin_token
            elif who == "forged":
                headers["Authorization"] = "Bearer " + "A" * 43
            elif who in account_keys:
                headers["Authorization"] = "Bearer " + account_keys[who]
            response = case.call(headers=headers)
            checks = CHECKS
            if response.headers.get("content-type", [""])[0].startswith("text/event-stream"):
                # An SSE body is text in the spec (generated clients read it so); each event's
                # data is checked against the line schema declared beside it.
                checks = [c for c in CHECKS if c is not response_schema_conformance]
                sse_lines_conform(api_schema.raw_schema, case, response.text)
            case.validate_response(response, checks=checks)
            tried[case.operation.label] = tried.get(case.operation.label, 0) + 1

        try:
            run()
        except Unsatisfiable:
            # Nothing in this operation can be made invalid (no parameters, no body).
            assert mode is GenerationMode.NEGATIVE
    assert len(tried) == operations and operations >= 10, tried
    print(f"schemathesis: {sum(tried.values())} cases over {operations} operations")
