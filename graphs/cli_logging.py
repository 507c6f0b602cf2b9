"""How a command logs: on stderr, masked and plain, one message per endpoint failure.

Every line goes through `agents.redact.RedactingFilter` (no credential in any log line, the
HTTP library's own included) and `agents.terminal_text.plain` (no terminal control from a
server or a model). An endpoint's retries are logged under -v only (logger
``agents.retries``); a wait for a slow endpoint always shows (``agents.retries.waiting``).
"""

from __future__ import annotations

import logging

from agents.redact import RedactingFilter, Redactor
from agents.terminal_text import plain


def configure_logging(verbose: bool) -> RedactingFilter:
    """Log lines on stderr, masked (`agents.redact`) and plain (no terminal control from a
    server or a model); the returned filter's redactor is set once the settings are known.
    One endpoint failure is one message: its retries are logged under -v, waits always."""
    masking = RedactingFilter(Redactor())
    handler = logging.StreamHandler()
    handler.setFormatter(PlainFormatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(masking)
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, handlers=[handler], force=True
    )
    logging.getLogger("agents.retries").setLevel(logging.INFO if verbose else logging.ERROR)
    logging.getLogger("agents.retries.waiting").setLevel(logging.WARNING)
    return masking


class PlainFormatter(logging.Formatter):
    """Formats a record, then drops the control sequences any part of it carries."""

    def format(self, record: logging.LogRecord) -> str:
        return plain(super().format(record))
