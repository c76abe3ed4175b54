"""The hand-written SDK (``clients/python``, docs/BOTS.md) and a client that
``openapi-python-client`` generates from our spec with its defaults must be
installable side by side: the SDK was ``quarterdeck-client`` /
``quarterdeck_client``, exactly the generator's default, so installing a
generated client uninstalled the SDK."""

from __future__ import annotations

import tomllib
from pathlib import Path

from openapi_python_client import strings

from service.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_sdk_is_not_named_as_a_generated_client_is_by_default():
    from service.http.app import create_app

    app = create_app(Settings(database_url="postgresql://nobody@127.0.0.1:1/none", redis_url="redis://127.0.0.1:1/0"))
    try:
        title = app.test_client().get("/openapi.json").get_json()["info"]["title"]
    finally:
        app.extensions["quarterdeck"].store.pool.close()
    # openapi_python_client.Project: its default project and package names.
    generated_project = f"{strings.kebab_case(title).lower()}-client"
    generated_package = generated_project.replace("-", "_")
    sdk = tomllib.loads((ROOT / "clients" / "python" / "pyproject.toml").read_text())
    assert sdk["project"]["name"] != generated_project
    packages = {p.name for p in (ROOT / "clients" / "python").iterdir() if (p / "__init__.py").exists()}
    assert packages and generated_package not in packages
    assert generated_project == "quarterdeck-client"  # what the generator makes of our title today
