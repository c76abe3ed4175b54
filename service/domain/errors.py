"""What the command side and the audit refuse, as domain errors.

Each carries a stable machine ``code`` (clients branch on it), a sentence a
person understands and JSON ``details``.  They know nothing of HTTP: the HTTP
layer (``service.http.errors``) maps each class to a status, the CLI to a
message and an exit code.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}


class NotFound(DomainError):
    """The thing asked for does not exist."""


class Unauthenticated(DomainError):
    """A credential is needed and none was sent."""


class Forbidden(DomainError):
    """The credential sent does not give this right."""


class Conflicting(DomainError):
    """The request cannot apply to the current state of the stream
    (a stale expected version, a rules version this server lacks)."""


class Refused(DomainError):
    """The request is well-formed but not acceptable: a rule, an invalid
    intent, a finished game, an unknown game type."""


class Unavailable(DomainError):
    """A backing service (PostgreSQL, Redis) cannot be reached, or a read
    model is not there yet: try again shortly."""


def game_not_found() -> NotFound:
    return NotFound("game_not_found", "No such game.")


def tournament_not_found() -> NotFound:
    return NotFound("tournament_not_found", "No such tournament.")


def version_conflict(expected: int | None, current: int | None = None) -> Conflicting:
    details: dict[str, Any] = {"expected_version": expected}
    if current is not None:
        details["current_version"] = current
    return Conflicting("version_conflict", "Another intent was recorded first; fetch the game and try again.", details)
