"""The served OpenAPI document as a contract (``schemas/openapi.py``).

It passes ``openapi-spec-validator`` with no warnings; every operation has a
human ``operationId``, ``security`` and an error schema for each status it can
answer, whose code enum is exactly the codes of that status; the game types
are typed (intents discriminated on ``type``, events, views, results) and real
engine output validates against the published JSON Schemas; request bodies
have examples that validate; the error catalogue and docs/BOTS.md's error
table are current with the code (``python -m devtools.error_codes --write``).

The app is built without servers (nothing connects until a request needs it).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest
from openapi_schema_validator import OAS30Validator
from openapi_spec_validator import validate as validate_spec
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from devtools import error_codes
from schemas import error_codes as catalogue
from schemas.games import PLATFORM_EVENTS, contract, prefix
from schemas.intents import load_intent, schemas_for
from schemas.openapi import platform_intents
from service.config import Settings
from service.games import registry
from service.games.base import ADMIN, fold
from service.games.rng import Rng

SPEC_URI = "urn:quarterdeck:openapi"
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    from service.http.app import create_app

    settings = Settings(database_url="postgresql://nobody@127.0.0.1:1/none", redis_url="redis://127.0.0.1:1/0")
    app = create_app(settings)
    try:
        resp = app.test_client().get("/openapi.json")
        assert resp.status_code == 200
        return resp.get_json()
    finally:
        app.extensions["quarterdeck"].store.pool.close()


def _operations(spec: dict[str, Any]):
    for path, item in spec["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method], item.get("parameters", [])


def _validator(spec: dict[str, Any], name: str) -> OAS30Validator:
    registry_ = Registry().with_resource(SPEC_URI, Resource.from_contents(spec, default_specification=DRAFT4))
    return OAS30Validator({"$ref": f"{SPEC_URI}#/components/schemas/{name}"}, registry=registry_)


def test_the_spec_passes_the_validator_with_no_warnings(spec):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        validate_spec(spec)
    assert [str(w.message) for w in caught] == []
    assert spec["info"]["description"] and spec["servers"]


def test_every_operation_has_a_human_operation_id_and_security(spec):
    ids = []
    for path, method, op, _ in _operations(spec):
        assert re.fullmatch(r"[a-z][a-z0-9_]*", op.get("operationId", "")), (method, path)
        assert not op["operationId"].startswith(f"{method}_v1"), "a generator's name, not a human's"
        assert "security" in op, (method, path)
        ids.append(op["operationId"])
    assert len(ids) == len(set(ids))
    ops = {op["operationId"]: op for _, _, op, _ in _operations(spec)}
    assert ops["post_intent"]["security"] == [{"bearer": []}]
    assert ops["get_legal"]["security"] == [{"bearer": []}]
    assert ops["get_game"]["security"] == [{"bearer": []}, {}]
    assert ops["list_leaderboards"]["security"] == []


def test_every_status_an_operation_can_answer_has_its_error_codes(spec):
    schemas = spec["components"]["schemas"]
    for status, codes in catalogue.CODES.items():
        body = schemas[f"Error{status}Body"]
        assert body["properties"]["code"]["enum"] == sorted(codes)
    assert set(schemas["ErrorCode"]["enum"]) == {c for codes in catalogue.CODES.values() for c in codes}
    for path, method, op, path_params in _operations(spec):
        responses = op["responses"]
        must = set()
        if path.startswith("/v1/"):
            must |= {"429", "503"}
        if "requestBody" in op:
            must |= {"400", "413", "415", "422"}
        if path_params or "{" in path:
            must.add("404")
        if op["security"]:
            must.add("403")
        if op["security"] == [{"bearer": []}]:
            must.add("401")
        assert must <= set(responses), (method, path, must - set(responses))
        for status, response in responses.items():
            # (/readyz answers its 503 with its own body, the health checks.)
            if status.isdigit() and int(status) >= 400 and path.startswith("/v1/"):
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": f"#/components/schemas/Error{status}"}, (method, path, status)
    conflict = next(op for _, _, op, _ in _operations(spec) if op["operationId"] == "post_intent")["responses"]["409"]
    assert conflict["content"]["application/json"]["schema"]["$ref"].endswith("Error409")
    details = schemas["ConflictDetails"]["properties"]
    assert {"current_version", "to_act"} <= set(details)


def test_the_intent_post_takes_an_idempotency_key_and_the_feed_is_a_stream(spec):
    ops = {op["operationId"]: op for _, _, op, _ in _operations(spec)}
    header = [p for p in ops["post_intent"]["parameters"] if p["in"] == "header"]
    assert [p["name"] for p in header] == ["Idempotency-Key"]
    assert header[0]["schema"] == {"type": "string", "minLength": 1, "maxLength": 200}
    feed = ops["events_feed"]["responses"]["200"]["content"]
    assert set(feed) == {"application/x-ndjson", "text/event-stream"}
    assert feed["application/x-ndjson"]["x-line-schema"] == {"$ref": "#/components/schemas/FeedLine"}
    assert feed["application/x-ndjson"]["schema"]["type"] == "string"  # a text body: generators keep it
    # SSE is a text body too (an object schema made generated clients parse the text as
    # JSON and raise on every 200); its events' data follow the same line schema.
    assert feed["text/event-stream"]["schema"]["type"] == "string"
    assert feed["text/event-stream"]["x-line-schema"] == {"$ref": "#/components/schemas/FeedLine"}
    schemas = spec["components"]["schemas"]
    # A stream line's legal intents are GET /legal's, typed alike.
    assert (
        schemas["StreamLine"]["properties"]["legal"]["items"] == schemas["LegalOut"]["properties"]["intents"]["items"]
    )


def test_every_request_body_has_examples_that_validate(spec):
    for path, method, op, _ in _operations(spec):
        if "requestBody" not in op:
            continue
        media = op["requestBody"]["content"]["application/json"]
        examples = [e["value"] for e in media.get("examples", {}).values()]
        if "example" in media:
            examples.append(media["example"])
        assert examples, f"{method} {path}: a request body without an example"
        name = media["schema"]["$ref"].rsplit("/", 1)[-1]
        for example in examples:
            _validator(spec, name).validate(example)
    posted = next(op for _, _, op, _ in _operations(spec) if op["operationId"] == "post_intent")
    for game, example in posted["requestBody"]["content"]["application/json"]["examples"].items():
        load_intent(game, example["value"]["intent"])  # the engine's own schema accepts it


def test_formats_are_consistent(spec):
    for name, schema in spec["components"]["schemas"].items():
        for prop, value in (schema.get("properties") or {}).items():
            if value.get("type") != "string":
                continue
            if prop.endswith("_at"):
                assert value.get("format") == "date-time", (name, prop)
            if prop == "game_id":
                assert value.get("format") == "uuid", (name, prop)
    for name in ("GameOut", "CreateGameOut", "GameSummaryOut"):
        assert spec["components"]["schemas"][name]["properties"]["id"]["format"] == "uuid"
    summary, full = (spec["components"]["schemas"][n]["properties"]["status"] for n in ("GameSummaryOut", "GameOut"))
    assert summary["enum"] == full["enum"]


def test_intents_are_one_discriminated_union_of_every_game(spec):
    schemas = spec["components"]["schemas"]
    union = schemas["Intent"]
    # Every game's intents, and the platform's that a client may post in any game (resign).
    platform = set(platform_intents())
    every = {wire for game in registry.registered() for wire in schemas_for(game)} | platform
    assert set(union["discriminator"]["mapping"]) == every
    assert schemas["IntentIn"]["properties"]["intent"]["$ref"] == "#/components/schemas/Intent"
    assert schemas["LegalOut"]["properties"]["intents"]["items"] == {"$ref": "#/components/schemas/Intent"}
    for game in registry.registered():
        mapping = schemas[f"{prefix(game)}Intent"]["discriminator"]["mapping"]
        assert set(mapping) == set(schemas_for(game)) | platform
        for wire, target in mapping.items():
            if wire in platform:
                continue
            component = schemas[target.rsplit("/", 1)[-1]]
            assert component["properties"]["type"]["enum"] == [wire]
            assert set(component["properties"]) == {"type", *schemas_for(game)[wire].fields}


def test_real_engine_output_validates_against_the_published_schemas(spec):
    """What the engines produce (intents, events, views) validates against
    the JSON Schemas in the document, not only against the marshmallow
    schemas they are made from (tests/property/test_contract_schemas.py)."""
    for game in registry.registered():
        engine = registry.get(game)
        p = prefix(game)
        events = engine.setup(2, {}, Rng(bytes(range(32)), domain=1))
        state = fold(engine, events)
        for seq, e in enumerate(events, start=2):
            _validator(spec, f"{p}Event").validate({"seq": seq, "type": e.type, "data": e.data})
        for viewer in (ADMIN, None, 0, 1):
            _validator(spec, f"{p}View").validate(engine.view(state, viewer))
        for seat in engine.to_act(state):
            for command in engine.legal(state, seat):
                _validator(spec, "Intent").validate(command.to_json())
        for wire in platform_intents():
            _validator(spec, "Intent").validate({"type": wire})
        events_union = spec["components"]["schemas"][f"{p}Event"]["discriminator"]["mapping"]
        assert set(events_union) == set(contract(game).events) | set(PLATFORM_EVENTS)


def test_the_error_catalogue_and_the_bots_guide_table_are_current():
    codes, rules = error_codes.catalogue(error_codes.scan())
    hint = "run: python -m devtools.error_codes --write"
    assert codes == catalogue.CODES, hint
    assert rules == catalogue.RULE_CODES, hint
    assert error_codes.current_table() == error_codes.render_table(codes, rules), hint
    # Every status a code is raised with is one the spec describes.
    from schemas.openapi import STATUS_TEXT

    assert set(codes) <= set(STATUS_TEXT)


def _raised_literals() -> set[str]:
    """Every code written as the first argument of an error anywhere in the
    scanned packages (platform or game), found without the catalogue's
    scanner, so a code its rules miss fails here."""
    import ast

    makers = {"ApiError", "RuleViolation", "_refuse", *error_codes.DOMAIN}
    found = set()
    for top in error_codes.SCANNED:
        for path in sorted((error_codes.ROOT / top).rglob("*.py")):
            if path == error_codes.CATALOGUE:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.Call) or error_codes._name(node.func) not in makers:
                    continue
                args = node.args[1:] if error_codes._name(node.func) == "ApiError" else node.args
                if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
                    found.add(args[0].value)
    return found


def test_every_code_the_server_raises_is_in_the_spec_and_the_bots_guide(spec):
    """docs/BOTS.md "Errors" says its table is complete, and a generated client
    refuses a code its enum lacks (``ValueError: 'seat_forfeited' is not a valid
    Error422BodyCode``): ``seat_forfeited`` and ``clock_expired``, raised by the
    platform's pipeline, were in neither."""
    raised = _raised_literals()
    assert {"seat_forfeited", "clock_expired"} <= raised
    published = set(spec["components"]["schemas"]["ErrorCode"]["enum"])
    assert raised - published == set()
    table = error_codes.current_table()
    assert {c for c in raised if f"`{c}`" not in table} == set()
    assert {"seat_forfeited", "clock_expired"} <= set(
        spec["components"]["schemas"]["Error422Body"]["properties"]["code"]["enum"]
    )


def test_the_game_stream_line_lists_every_field_it_sends_and_its_parameters(spec):
    """docs/API.md "Streams": a board line is the body of ``GET /v1/games/{id}``
    plus ``type`` and ``legal``.  ``StreamLine`` listed only ``type``, ``version``
    and ``legal`` (closed to others), so a generated client dropped ``to_act``,
    ``status`` and ``view``; nor were ``Last-Event-ID`` and ``Accept`` parameters."""
    schemas = spec["components"]["schemas"]
    line = schemas["StreamLine"]["properties"]
    assert set(schemas["GameOut"]["properties"]) | {"type", "legal", "reason"} <= set(line)
    assert schemas["StreamLine"]["required"] == ["type"]
    for path in ("/v1/games/{game_id}/stream", "/v1/games/{game_id}/events"):
        params = {p["name"]: p for p in spec["paths"][path]["get"]["parameters"] if p["in"] == "header"}
        assert {"Accept", "Last-Event-ID"} <= set(params), path
        assert "text/event-stream" in params["Accept"]["schema"]["enum"]
    account = spec["paths"]["/v1/account/stream"]["get"]["parameters"]
    assert [p["name"] for p in account if p["in"] == "header"] == ["Accept"]
