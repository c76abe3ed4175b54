"""The one error shape: ``{"error": {"code", "message", "details"}}``."""

from __future__ import annotations

from typing import Any


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


def not_found(what: str = "game") -> ApiError:
    return ApiError(404, f"{what}_not_found", f"No such {what}.")


def unavailable(component: str, detail: str = "") -> ApiError:
    names = {"postgres": "The event store (PostgreSQL)", "redis": "The read models (Redis)"}
    return ApiError(
        503,
        f"{component}_unavailable",
        f"{names.get(component, component)} cannot be reached; try again shortly.",
        {"retry_after_seconds": 1} | ({"reason": detail[:200]} if detail else {}),
    )
