"""Helpers for tests of accounts, organisers and the lobby (over the Flask test client)."""

from __future__ import annotations

import uuid

from support import auth


def unique(base: str = "ann") -> str:
    """A handle no other test of the session uses (the database is shared)."""
    return f"{base}{uuid.uuid4().hex[:8]}"


def register(client, handle: str | None = None) -> tuple[str, str]:
    """A player's account: ``(handle, key)``."""
    handle = handle or unique()
    resp = client.post("/v1/accounts", json={"handle": handle})
    assert resp.status_code == 201, resp.get_json()
    body = resp.get_json()
    assert body["handle"] == handle and body["kind"] == "player"
    return handle, body["key"]


def organiser(client, settings, handle: str | None = None) -> tuple[str, str]:
    """An organiser's account made with the operator token: ``(handle, key)``."""
    handle = handle or unique("cup")
    resp = client.post("/v1/organisers", json={"handle": handle}, headers=auth(settings.admin_token))
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["kind"] == "organiser"
    return handle, resp.get_json()["key"]


def accept_invitations(client, keys) -> list[dict]:
    """Each account (by key) accepts every invitation it has pending (docs/API.md,
    "Consent"): the organiser's games of accounts start, its registrations count."""
    answers = []
    for key in keys:
        listed = client.get("/v1/account/invitations", headers=auth(key))
        assert listed.status_code == 200, listed.get_json()
        for invitation in listed.get_json()["invitations"]:
            resp = client.post(f"/v1/invitations/{invitation['id']}/accept", headers=auth(key))
            assert resp.status_code == 200, resp.get_json()
            answers.append(resp.get_json())
    return answers
