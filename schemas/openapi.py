"""The typed contract in ``/openapi.json``, applied in one call: :func:`document`.

flask-smorest generates the paths and the body schemas from the blueprints;
this module adds what generated clients need and that a route should not have
to repeat (``docs/BOTS.md`` explains the contract to people):

* **typed games**: each game's intents (one component per intent type, built
  from the very schemas that validate them, ``schemas/intents/<game>.py``),
  gathered in a ``oneOf`` with a ``discriminator`` on ``type`` (``Intent``, and
  ``<Game>Intent`` per game); each game's events (``<Game>Event``: a ``oneOf``
  of ``{seq, type, data}`` envelopes, discriminated on ``type``), view and
  result (``schemas/games/<game>.py``, the schemas the property suite loads
  every event, view and result with);
* **errors**: the error-code enum of each status (``Error<status>``), from the
  catalogue ``schemas/error_codes.py`` that ``devtools/error_codes.py``
  generates from the code that raises them;
* **operations**, by rules applied to every route, so routes added later come
  out right too: an ``operationId`` (the view function's name), ``security``
  (:func:`auth`, else: a declared 401 means a credential is required, a game's
  path takes one optionally, anything else takes none), every status the
  operation can answer with its error schema, the ``Idempotency-Key`` header
  (:func:`idempotent`), and a stream's media types (:func:`stream`);
* ``servers``, a description, and formats (``date-time`` for ``*_at``,
  ``uuid`` for ``game_id``).

Markers are set with decorators placed under ``@blp.route`` (like
``@blp.doc``, whose mechanism they use); a field may name the component that
types it with :func:`typed`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from apispec import APISpec, BasePlugin
from flask_smorest import Api, Blueprint
from marshmallow import Schema, fields, validate

from schemas.error_codes import CODES
from schemas.games import PLATFORM_EVENTS, contract, prefix
from schemas.intents import schemas_for
from service.games import registry

REF = "#/components/schemas/"
SECURITY_SCHEME = "bearer"
#: ``auth(kind)`` -> the operation's ``security`` requirement.
SECURITY: dict[str, list[dict[str, list[str]]]] = {
    "none": [],
    "optional": [{SECURITY_SCHEME: []}, {}],
    "required": [{SECURITY_SCHEME: []}],
}
_AUTH = "x-qd-auth"
_IDEMPOTENT = "x-qd-idempotent"
_STREAM = "x-qd-stream"
_TYPED = "x-qd-schema"
_STATUSES = "x-qd-statuses"

DESCRIPTION = """\
Quarterdeck hosts games of Nauticus, Nautilus Industries and Waters of Nereus.
Clients play by posting intents; every accepted intent becomes events in an
append-only, hash-chained stream, and reads are served from read models a few
milliseconds behind it (`?min_version` waits for your own write).

* Bot authors: docs/BOTS.md (lifecycle, credentials, idempotency, errors, a
  complete bot); the HTTP reference is docs/API.md.
* Each game's intents, events, view and result are typed here: `Intent`
  (discriminated on `type`), `<Game>Event`, `<Game>View`, `<Game>Result`.
* Errors have one shape, `{"error": {"code", "message", "details"}}`; each
  status lists the codes it can carry (`Error<status>`).
"""

SERVERS = [
    {"url": "/", "description": "This server"},
    {"url": "http://127.0.0.1:8000", "description": "`make run` on this machine"},
]

#: What each status means for any operation (the codes are in its schema).
STATUS_TEXT = {
    400: "Malformed request: not JSON, too deep, or a bad Idempotency-Key",
    401: "A credential is needed and none was sent",
    403: "The credential sent gives no right here",
    404: "No such resource",
    405: "The path does not take this method",
    408: "The request did not arrive in time",
    409: "Conflict with the current state: `details` says how to resync",
    413: "The body is too large",
    415: "The body is not application/json",
    422: "Well-formed but refused: schema, rules or state (the code says which)",
    429: "Too many requests: retry after `Retry-After` seconds",
    500: "Something went wrong on our side",
    503: "A backing service is unavailable; nothing was written: retry after `details.retry_after_seconds`",
}


# -- markers for routes -----------------------------------------------------------
def auth(kind: str) -> Callable:
    """The credential an operation takes: ``"none"``, ``"optional"`` (a game's
    reads: a seat token, the operator token or nothing) or ``"required"``."""
    if kind not in SECURITY:
        raise ValueError(f"auth kind {kind!r}: one of {sorted(SECURITY)}")
    return Blueprint.doc(**{_AUTH: kind})


def idempotent() -> Callable:
    """The operation takes an ``Idempotency-Key`` header (docs/BOTS.md)."""
    return Blueprint.doc(**{_IDEMPOTENT: True})


def statuses(*codes: int) -> Callable:
    """Statuses the operation can answer besides those the rules add."""
    return Blueprint.doc(**{_STATUSES: list(codes)})


def stream(line: str, description: str, sse: str = "") -> Callable:
    """The operation answers a stream: JSON lines (``application/x-ndjson``),
    or Server-Sent Events with ``Accept: text/event-stream``.  ``line`` names
    the component each line follows; ``sse`` says how the lines map to SSE
    events.  Generators keep the SSE form (a ``text/*`` body, a string)."""
    return Blueprint.doc(**{_STREAM: {"line": line, "description": description, "sse": sse}})


def typed(schema: dict[str, Any]) -> dict[str, Any]:
    """Field metadata: in the spec, the field's schema is ``schema`` (a
    ``$ref`` or a ``oneOf``), its description kept.  For fields whose runtime
    validation is done elsewhere (an intent, by ``schemas/intents``)."""
    return {_TYPED: schema}


def ref(name: str) -> dict[str, str]:
    return {"$ref": REF + name}


def one_of(*names: str, nullable: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"oneOf": [ref(n) for n in names]}
    if nullable:
        out["nullable"] = True
    return out


def views() -> dict[str, Any]:
    return one_of(*(f"{prefix(g)}View" for g in registry.registered()))


def results(nullable: bool = True) -> dict[str, Any]:
    # anyOf, not oneOf: the result of a game ended by forfeits or an abort is the platform's
    # (no scores, no breakdown: docs/API.md "Forfeits and the result") and fits every game's.
    out = one_of(*(f"{prefix(g)}Result" for g in registry.registered()), nullable=nullable)
    out["anyOf"] = out.pop("oneOf")
    return out


# -- request examples -----------------------------------------------------------------
def create_examples() -> dict[str, Any]:
    """``POST /v1/games`` bodies, one per game (flask-smorest's ``examples``)."""
    out: dict[str, Any] = {}
    for game in registry.registered():
        options = {"neutral": True} if game == "waters-of-nereus" else {}
        body = {"game": game, "players": ["ann", "bob"], "options": options}
        out[game] = {"summary": f"A 2-player game of {game}", "value": body}
    return out


def intent_examples() -> dict[str, Any]:
    """``POST /v1/games/{id}/intents`` bodies, one per game: the first legal
    intent of a new 2-player game, as ``GET /legal`` lists it, so the examples
    cannot fall behind the engines."""
    from service.games.base import fold
    from service.games.rng import Rng

    out: dict[str, Any] = {}
    for game in registry.registered():
        engine = registry.get(game)
        state = fold(engine, engine.setup(2, {}, Rng(bytes(32), domain=1)))
        seat = engine.to_act(state)[0]
        intent = engine.legal(state, seat)[0].to_json()
        version = 1 + len(engine.setup(2, {}, Rng(bytes(32), domain=1)))
        out[game] = {
            "summary": f"The first intent of a {game} game",
            "value": {"intent": intent, "expected_version": version},
        }
    return out


# -- the one call -------------------------------------------------------------------
def document(api: Api) -> None:
    """Type ``api``'s OpenAPI document: call it after creating the ``Api`` and
    before registering blueprints (their operations pass through the rules)."""
    spec = api.spec
    spec.options.setdefault("info", {})["description"] = DESCRIPTION
    spec.options["servers"] = SERVERS
    _errors(spec)
    _intents(spec)
    _games(spec)
    plugin = _ContractPlugin()
    plugin.init_spec(spec)
    spec.plugins.append(plugin)
    # Schemas registered before this call (flask-smorest's error schema) get
    # the same treatment as those registered after.
    for name, component in spec.components.schemas.items():
        plugin.schema_helper(name, component)


def _errors(spec: APISpec) -> None:
    every = sorted({code for table in CODES.values() for code in table})
    spec.components.schema(
        "ErrorCode", {"type": "string", "enum": every, "description": "Every error code (docs/BOTS.md)."}
    )
    body = spec.components.schemas.get("ErrorBody")
    if body is not None:
        body["properties"]["code"] = ref("ErrorCode")
    conflict = {
        "type": "object",
        "description": "How to resync in one step: the version now and who is to act.",
        "properties": {
            "expected_version": {"type": "integer", "nullable": True},
            "current_version": {"type": "integer"},
            "to_act": {"type": "array", "items": {"type": "integer"}},
            "rules_version": {"type": "string"},
        },
    }
    retry = {
        "type": "object",
        "properties": {"retry_after_seconds": {"type": "number"}, "reason": {"type": "string"}},
    }
    spec.components.schema("ConflictDetails", conflict)
    spec.components.schema("RetryDetails", retry)
    for status, table in CODES.items():
        details: dict[str, Any] = {"type": "object", "additionalProperties": True}
        if status == 409:
            details = {"allOf": [ref("ConflictDetails")]}
        elif status == 503:
            details = {"allOf": [ref("RetryDetails")]}
        spec.components.schema(
            f"Error{status}Body",
            {
                "type": "object",
                "required": ["code", "message", "details"],
                "properties": {
                    "code": {"type": "string", "enum": sorted(table)},
                    "message": {"type": "string", "description": "A sentence for people; clients branch on `code`."},
                    "details": details,
                },
            },
        )
        spec.components.schema(
            f"Error{status}",
            {
                "type": "object",
                "required": ["error"],
                "properties": {"error": ref(f"Error{status}Body")},
                "description": STATUS_TEXT.get(status, ""),
            },
        )


def _component(spec: APISpec, name: str, schema: type[Schema] | Schema, description: str = "") -> None:
    if name in spec.components.schemas:
        return
    spec.components.schema(name, {"description": description} if description else None, schema=schema)


def _intents(spec: APISpec) -> None:
    """One component per intent type, from the schema that validates it plus
    its ``type``; a type several games share (with the same fields) is one
    component, named without a game."""
    by_type: dict[str, list[tuple[str, Schema]]] = {}
    for game in registry.registered():
        for wire, schema in schemas_for(game).items():
            by_type.setdefault(wire, []).append((game, schema))
    names: dict[tuple[str, str], str] = {}
    for wire, owners in sorted(by_type.items()):
        shared = len(owners) > 1 and len({tuple(sorted(s.fields)) for _, s in owners}) == 1
        for game, schema in owners:
            base = type(schema).__name__.removesuffix("Schema")
            name = f"{base}Intent" if shared else f"{prefix(game)}{base}Intent"
            names[(game, wire)] = name
            declared: dict[str, fields.Field[Any]] = {
                "type": fields.String(required=True, validate=validate.OneOf([wire]))
            }
            declared |= {k: copy.deepcopy(f) for k, f in type(schema)._declared_fields.items()}
            cls = Schema.from_dict(declared, name=name)
            command = registry.get(game).commands.get(wire)
            doc = (command.__doc__ or "").strip().split("\n\n")[0] if command else ""
            _component(spec, name, cls, " ".join(doc.split()))
    # The platform's intents a client may post, in every game (service/domain/pipeline.py).
    platform: dict[str, str] = {}
    for wire, command in platform_intents().items():
        name = f"{command.__name__}Intent"
        platform_declared: dict[str, fields.Field[Any]] = {
            "type": fields.String(required=True, validate=validate.OneOf([wire]))
        }
        doc = " ".join((command.__doc__ or "").strip().split("\n\n")[0].split())
        _component(spec, name, Schema.from_dict(platform_declared, name=name), doc)
        platform[wire] = REF + name
    every: dict[str, str] = dict(platform)
    for game in registry.registered():
        mapping = {wire: REF + names[(game, wire)] for wire in sorted(schemas_for(game))} | platform
        every |= mapping
        spec.components.schema(
            f"{prefix(game)}Intent",
            {
                "oneOf": [{"$ref": r} for r in dict.fromkeys(mapping.values())],
                "discriminator": {"propertyName": "type", "mapping": mapping},
                "description": f"An intent of {game}: one element of GET /legal, posted as is.",
            },
        )
    spec.components.schema(
        "Intent",
        {
            "oneOf": [{"$ref": r} for r in dict.fromkeys(every.values())],
            "discriminator": {"propertyName": "type", "mapping": dict(sorted(every.items()))},
            "description": "An intent of any game (its `type` says which); see `<Game>Intent` for one game's.",
        },
    )


#: The platform's intents that a client may post (the others, a timeout or an
#: abort, are the platform's own).
CLIENT_PLATFORM_INTENTS = ("resign",)


def platform_intents() -> dict[str, type]:
    from service.domain import pipeline

    commands = getattr(pipeline, "PLATFORM_COMMANDS", {})
    return {wire: commands[wire] for wire in CLIENT_PLATFORM_INTENTS if wire in commands}


def _games(spec: APISpec) -> None:
    """Each game's events, view and result; its events as a ``oneOf`` of
    envelopes discriminated on ``type``."""
    for event_type, schema in PLATFORM_EVENTS.items():
        _component(spec, f"{event_type}Data", schema, (schema.__doc__ or "").strip())
        _envelope(spec, f"{event_type}Event", event_type, f"{event_type}Data")
    for game in registry.registered():
        typed_game = contract(game)
        p = typed_game.prefix
        _component(spec, f"{p}View", typed_game.view, (typed_game.view.__doc__ or "").strip())
        _component(spec, f"{p}Result", typed_game.result, (typed_game.result.__doc__ or "").strip())
        mapping = {t: REF + f"{t}Event" for t in PLATFORM_EVENTS}
        for event_type, schema in sorted(typed_game.events.items()):
            # The schema's own name: an event's data may be another component
            # (Waters of Nereus writes its result as GameEnded's data).
            data_name = schema.__name__
            _component(spec, data_name, schema, (schema.__doc__ or "").strip())
            _envelope(spec, f"{p}{event_type}Event", event_type, data_name)
            mapping[event_type] = REF + f"{p}{event_type}Event"
        spec.components.schema(
            f"{p}Event",
            {
                "oneOf": [{"$ref": r} for r in mapping.values()],
                "discriminator": {"propertyName": "type", "mapping": mapping},
                "description": f"An event of {game} as a client receives it (`data` redacted while the game"
                " runs, as each data schema says).",
            },
        )


def _envelope(spec: APISpec, name: str, event_type: str, data: str) -> None:
    spec.components.schema(
        name,
        {
            "type": "object",
            "required": ["seq", "type", "data"],
            "properties": {
                "seq": {"type": "integer", "description": "Position in the game's stream (1, 2, ...)."},
                "type": {"type": "string", "enum": [event_type]},
                "data": ref(data),
            },
        },
    )


# -- the rules applied to every schema and operation ----------------------------------
class _ContractPlugin(BasePlugin):
    def init_spec(self, spec: APISpec) -> None:
        self.spec = spec

    def schema_helper(self, name: str, definition: dict, **kwargs: Any) -> dict | None:
        """Replace fields marked with :func:`typed`; give ``*_at`` fields the
        ``date-time`` format and ``game_id`` the ``uuid`` format."""
        _retype(definition)
        _ecma_patterns(definition)
        if name == "StreamLine":
            # A board line's ``legal`` is what ``GET /legal`` lists: the same typed intents.
            legal = definition["properties"]["legal"]
            legal["items"] = ref("Intent")
        return None

    def operation_helper(self, path: str | None = None, operations: dict | None = None, **kwargs: Any) -> None:
        rule = kwargs.get("rule")
        endpoint = rule.endpoint.rsplit(".", 1)[-1] if rule is not None else None
        path_params = bool(rule.arguments) if rule is not None else "{" in (path or "")
        ops = operations or {}
        for method, op in ops.items():
            if not isinstance(op, dict):
                continue
            if endpoint and "operationId" not in op:
                op["operationId"] = endpoint if len(ops) == 1 else f"{method}_{endpoint}"
            _operation(op, method, path or "", path_params)
            _ecma_patterns(op)


def _ecma_patterns(obj: Any) -> None:
    """Published patterns are ECMA-262 regular expressions (JSON Schema's):
    Python's end-of-text ``\\Z`` (stricter than its ``$``, which lets a
    trailing newline through) is ECMA's ``$``, and ``\\A`` is ``^``."""
    if isinstance(obj, dict):
        pattern = obj.get("pattern")
        if isinstance(pattern, str):
            obj["pattern"] = pattern.replace("\\Z", "$").replace("\\A", "^")
        for value in obj.values():
            _ecma_patterns(value)
    elif isinstance(obj, list):
        for value in obj:
            _ecma_patterns(value)


def _retype(schema: dict[str, Any]) -> None:
    for name, prop in (schema.get("properties") or {}).items():
        _retype_property(name, prop)


def _retype_property(name: str, prop: dict[str, Any]) -> None:
    if _TYPED in prop:
        replacement = prop.pop(_TYPED)
        description = prop.get("description")
        prop.clear()
        prop.update(copy.deepcopy(replacement))
        if description:
            prop["description"] = description
        return
    if prop.get("type") == "string" and "format" not in prop:
        if name.endswith("_at"):
            prop["format"] = "date-time"
        elif name == "game_id":
            prop["format"] = "uuid"
    items = prop.get("items")
    if isinstance(items, dict):
        _retype_property("", items)


def _is_error_schema(response: Any) -> bool:
    if not isinstance(response, dict):
        return False
    schema = response.get("content", {}).get("application/json", {}).get("schema")
    return schema == "ErrorOut" or schema == ref("ErrorOut")


def _error_response(status: int, description: str | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description or STATUS_TEXT.get(status, "Error"),
        "content": {"application/json": {"schema": ref(f"Error{status}")}},
    }
    if status == 429:
        response["headers"] = {
            "Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}}
        }
    return response


def _operation(op: dict[str, Any], method: str, path: str, path_params: bool) -> None:
    responses = op.setdefault("responses", {})
    for status in [k for k in responses if not isinstance(k, str)]:
        responses[str(status)] = responses.pop(status)  # flask-smorest may key them by int
    declared = {int(s) for s in responses if s.isdigit()}
    kind = op.pop(_AUTH, None)
    if kind is None:
        kind = "required" if 401 in declared else "optional" if path.startswith("/v1/games/{") else "none"
    op["security"] = copy.deepcopy(SECURITY[kind])
    wanted = set(op.pop(_STATUSES, []))
    if path.startswith("/v1/"):
        wanted |= {429, 503}
    if "requestBody" in op:
        wanted |= {400, 413, 415, 422}
    if any(p.get("in") == "query" for p in op.get("parameters", []) if isinstance(p, dict)):
        wanted.add(422)
    if path_params:
        wanted.add(404)
    if kind != "none":
        wanted.add(403)
    if kind == "required":
        wanted.add(401)
    for status in sorted(wanted | declared):
        if status not in CODES:
            continue
        current = responses.get(str(status))
        if current is None or _is_error_schema(current) or isinstance(current, str):
            described = current.get("description") if isinstance(current, dict) else None
            responses[str(status)] = _error_response(status, described)
    if op.pop(_IDEMPOTENT, False):
        op.setdefault("parameters", []).append(
            {
                "in": "header",
                "name": "Idempotency-Key",
                "required": False,
                "description": "Makes a retry safe: 1-200 printable characters, unique per seat and game"
                " (a UUID is ideal).  The same key with the same request (compared as canonical JSON) returns"
                " the first answer with `replayed: true` and records nothing; with another request it is refused"
                " (422 idempotency_key_reused).",
                "schema": {"type": "string", "minLength": 1, "maxLength": 200},
                "example": "2f1c9a52-5d2e-4b8e-9a51-0d6c4f7e9b11",
            }
        )
    marked = op.pop(_STREAM, None)
    ok = responses.get("200")
    if not marked and isinstance(ok, dict) and "application/x-ndjson" in ok.get("content", {}):
        # A route declared with flask-smorest's ``content_type="application/x-ndjson"``:
        # the same stream form as :func:`stream`, its line schema kept.
        line = ok["content"]["application/x-ndjson"].get("schema")
        if isinstance(line, dict):
            name = line.get("$ref", "").removeprefix(REF)
        elif isinstance(line, str):
            name = line
        else:  # a schema not yet resolved to its component
            name = type(line).__name__.removesuffix("Schema") if line is not None else ""
        marked = {"line": name or "object", "description": ok.get("description", ""), "sse": ""}
    if marked:
        params = op.setdefault("parameters", [])
        params.append(
            {
                "in": "header",
                "name": "Accept",
                "required": False,
                "description": "`text/event-stream` for Server-Sent Events; anything else: JSON lines.",
                "schema": {"type": "string", "enum": ["application/x-ndjson", "text/event-stream"]},
            }
        )
        if "Last-Event-ID" in marked["sse"]:
            params.append(
                {
                    "in": "header",
                    "name": "Last-Event-ID",
                    "required": False,
                    "description": "SSE: the `id:` of the last event received; the stream resumes after it"
                    " (400 invalid_last_event_id if it is not a whole number).",
                    "schema": {"type": "string", "pattern": "^[0-9]{1,10}$"},
                }
            )
        ok = responses.setdefault("200", {})
        ok["description"] = marked["description"]
        ok["content"] = {
            "application/x-ndjson": {
                "schema": {
                    "type": "string",
                    "description": f"JSON lines: each line is one `{marked['line']}` object.",
                },
                "x-line-schema": ref(marked["line"]),
            },
            "text/event-stream": {
                # A text body, as the JSON lines: a generated client hands it over as a
                # string (an object schema made generators parse the text as one JSON object).
                "schema": {
                    "type": "string",
                    "description": (marked["sse"] or "Server-Sent Events.")
                    + f" Each event's `data:` is one `{marked['line']}` as JSON (`x-line-schema`).",
                },
                "x-line-schema": ref(marked["line"]),
            },
        }
    # The spec validator wants a description on every response.
    for response in responses.values():
        if isinstance(response, dict) and "$ref" not in response:
            response.setdefault("description", "")
