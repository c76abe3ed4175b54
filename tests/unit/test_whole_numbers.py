"""Whole numbers are whole (docs/API.md, "Intents" and "Errors"): every integer field of
every request body -- each endpoint's JSON body schema, walked from the app's routes, and
each game's intents -- refuses a float and a numeric string, naming the field, rather than
truncating it (``"corner": 2.9`` was recorded as corner 2).  Query strings are text and
stay out of it.  The app is built without servers (nothing connects until a request
needs it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from marshmallow import Schema, ValidationError, fields

from schemas.intents import schemas_for
from service.config import Settings
from service.games import registry


def _bodies() -> dict[str, Schema]:
    from service.http.app import create_app

    app = create_app(Settings(database_url="postgresql://nobody@127.0.0.1:1/none", redis_url="redis://127.0.0.1:1/0"))
    try:
        out = {}
        for endpoint, view in app.view_functions.items():
            for parameter in getattr(view, "_apidoc", {}).get("arguments", {}).get("parameters", []):
                if parameter.get("in", "json") == "json":
                    out[endpoint] = parameter["schema"]
        return out
    finally:
        app.extensions["quarterdeck"].store.pool.close()


def _integers(schema: Schema, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], fields.Integer]]:
    """Every integer field reachable in ``schema``: its path (a list's items are ``"0"``;
    a dict's values are under the key ``"4"``) and the field."""
    for name, field in schema.fields.items():
        yield from _walk(field, (*path, field.data_key or name))


def _walk(field: fields.Field, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], fields.Integer]]:
    if isinstance(field, fields.Integer):
        yield path, field
    elif isinstance(field, fields.Nested):
        yield from _integers(field.schema, path)
    elif isinstance(field, fields.List):
        yield from _walk(field.inner, (*path, "0"))
    elif isinstance(field, fields.Dict) and field.value_field is not None:
        yield from _walk(field.value_field, (*path, "4"))


def _body(path: tuple[str, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    return [_body(rest, value)] if head == "0" else {head: _body(rest, value)}


def _error_at(messages: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        if not isinstance(messages, dict):
            return None
        messages = messages.get(int(step) if step.isdigit() and int(step) in messages else step)
        if isinstance(messages, dict) and "value" in messages and len(messages) == 1:
            messages = messages["value"]  # a dict's value errors
    return messages


def _cases() -> list[Any]:
    schemas = {f"body {endpoint}": schema for endpoint, schema in _bodies().items()}
    for game in registry.names():
        schemas |= {f"intent {game} {kind}": schema for kind, schema in schemas_for(game).items()}
    cases = [
        pytest.param(schema, path, id=f"{where} {'.'.join(path)}")
        for where, schema in sorted(schemas.items())
        for path, _ in _integers(schema)
    ]
    assert len(cases) > 20, "the walk found the integer fields"
    return cases


@pytest.mark.parametrize(("schema", "path"), _cases())
@pytest.mark.parametrize("value", [2.9, 2.0, "2"], ids=["float", "whole-float", "string"])
def test_every_integer_field_of_a_request_refuses_what_is_not_an_integer(schema, path, value):
    with pytest.raises(ValidationError) as refused:
        schema.load(_body(path, value))
    assert _error_at(refused.value.messages, path) == ["Not a valid integer."], refused.value.messages
