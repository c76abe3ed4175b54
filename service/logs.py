"""Logging set-up, with a filter that masks anything that looks like a
bearer token or a seed, so neither ever reaches a log line."""

from __future__ import annotations

import logging
import re

_SECRETS = [
    (re.compile(r"(Bearer\s+)[A-Za-z0-9_\-\.=]+", re.I), r"\1***"),
    (re.compile(r"(\"?(?:token|seed|admin_token|key)\"?\s*[:=]\s*\"?)[A-Za-z0-9_\-\.=]{8,}", re.I), r"\1***"),
    # An account key wherever it appears (service.domain.identity.KEY_PREFIX).
    (re.compile(r"qdk_[A-Za-z0-9_\-]{8,}"), "qdk_***"),
]


class RedactSecrets(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        clean = msg
        for pattern, repl in _SECRETS:
            clean = pattern.sub(repl, clean)
        if clean != msg:
            record.msg, record.args = clean, None
        return True


def configure_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
