"""gunicorn's own refusals (a request it cannot parse: a control character
in a header value, a request line too long...) in our one JSON error shape
(``service/http/errors.py``), instead of its HTML page: a client gets the
same body whoever refused it.

``gunicorn_conf.post_fork`` installs :func:`write_error` in each worker.
Imports nothing of ours beyond this module (the worker has not applied
gevent's patches yet when it is installed)."""

from __future__ import annotations

import json
from typing import Any

#: What gunicorn's refusals mean, by status, in the app's codes (``service/http/app.py``).
_HTTP_CODES = {400: "bad_request", 403: "forbidden"}


def body(status: int, reason: str, message: str) -> bytes:
    """The JSON error of one of gunicorn's refusals."""
    code = _HTTP_CODES.get(status, "bad_request" if status < 500 else "internal_error")
    text = f"{reason}: {message}" if message else reason
    return json.dumps({"error": {"code": code, "message": text, "details": {}}}).encode()


def write_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """``gunicorn.util.write_error`` with a JSON body."""
    from gunicorn import util

    payload = body(status_int, reason, mesg)
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode("latin-1")
    util.write_nonblock(sock, head + payload)


def install() -> None:
    """Replace gunicorn's HTML refusal in this process (its workers call
    ``util.write_error`` by attribute, so they find this one)."""
    from gunicorn import util

    util.write_error = write_error
