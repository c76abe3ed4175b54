"""The one error shape: ``{"error": {"code", "message", "details"}}``.

:class:`ApiError` is an answer the HTTP layer itself gives (a body too large,
a missing header); domain errors from the command side and the audit
(``service.domain.errors``) are mapped to their status here, and nowhere else.
"""

from __future__ import annotations

from typing import Any

from service.domain import errors as domain


class ApiError(Exception):
    """An answer that is not a success.  ``code`` is stable; clients branch on it."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}

    def to_json(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


#: Domain error class -> HTTP status (the most specific class listed wins).
STATUS: dict[type[domain.DomainError], int] = {
    domain.NotFound: 404,
    domain.Unauthenticated: 401,
    domain.Forbidden: 403,
    domain.Conflicting: 409,
    domain.Refused: 422,
    domain.Unavailable: 503,
}


def from_domain(err: domain.DomainError) -> ApiError:
    status = next((STATUS[cls] for cls in type(err).__mro__ if cls in STATUS), 500)
    return ApiError(status, err.code, err.message, err.details)


def not_found(what: str = "game") -> ApiError:
    return ApiError(404, f"{what}_not_found", f"No such {what}.")


def unavailable(component: str, detail: str = "") -> ApiError:
    names = {
        "postgres": "The event store (PostgreSQL)",
        "redis": "The read models (Redis)",
        "read_model": "The game's read model",
    }
    return ApiError(
        503,
        f"{component}_unavailable",
        f"{names.get(component, component)} cannot be reached; try again shortly.",
        {"retry_after_seconds": 1} | ({"reason": detail[:200]} if detail else {}),
    )
