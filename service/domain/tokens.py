"""Seat tokens: random secrets shown once, stored only as sha256 hashes."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token() -> str:
    """A fresh 256-bit token, URL-safe text."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def rate_credential(token: str | None) -> str:
    """The credential a request sent, as the rate limits count it: hashed (never the
    credential itself in Redis); "" for none."""
    return "k:" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:32] if token else ""


def seat_for_token(token: str | None, token_hashes: list[bytes]) -> int | None:
    """The seat whose token this is, comparing against every seat in constant
    time (no early exit that would tell which seat came close)."""
    if not token:
        return None
    presented = hash_token(token)
    found = None
    for seat, h in enumerate(token_hashes):
        if hmac.compare_digest(presented, h):
            found = seat
    return found
