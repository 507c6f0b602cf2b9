"""How a command logs: on stderr, masked and plain, one message per endpoint failure.

Every line goes through `agents.client.redact.RedactingFilter` (no credential in any log line, the
HTTP library's own included) and `agents.terminal_text.plain` (no terminal control from a
server or a model). An endpoint's retries are logged under -v only (logger
``agents.client.retries``); a wait for a slow endpoint always shows
(``agents.client.retries.waiting``).
"""

from __future__ import annotations

import logging

from agents.client.redact import RedactingFilter, Redactor
from agents.terminal_text import plain


def configure_logging(verbose: bool) -> RedactingFilter:
    """Log lines on stderr, masked (`agents.client.redact`) and plain (no terminal control from a
    server or a model); the returned filter's redactor is set once the settings are known.
    One endpoint failure is one message: its retries are logged under -v, waits always."""
    masking = RedactingFilter(Redactor())
    handler = logging.StreamHandler()
    handler.setFormatter(PlainFormatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(masking)
    if not verbose:
        handler.addFilter(_quiet_retries)
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, handlers=[handler], force=True
    )
    return masking


def _quiet_retries(record: logging.LogRecord) -> bool:
    """Whether the handler shows `record` without -v: not a retry line (its failure ends in
    one message), but a wait for the endpoint, which a user must see. A filter on this
    command's handler, so other handlers (a test's log capture) still get every record."""
    return record.name != "agents.client.retries"


class PlainFormatter(logging.Formatter):
    """Formats a record, then drops the control sequences any part of it carries."""

    def format(self, record: logging.LogRecord) -> str:
        return plain(super().format(record))
