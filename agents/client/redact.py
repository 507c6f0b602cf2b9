"""Credentials never leave memory: URLs and text as they may be printed, logged or stored.

An endpoint URL may carry a user and password (``http://user:secret@host/v1``) or a key in
its query; the client's API key travels in an ``Authorization`` header. Whatever is shown,
logged, stored on the board, checkpointed or exported goes through here first: a URL's
password becomes ``***`` (``user:***@``), and so does every known secret and every
``Authorization`` value in text (a server may echo the request it refused).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

MASK = "***"
#: Query parameters that carry a credential (Azure's api-key, signed URLs' sig, ...).
_SECRET_PARAMS = re.compile(r"(key|token|secret|password|passwd|pwd|sig|signature|auth)", re.I)
#: A URL's userinfo in free text: scheme://user:password@ (the password is masked).
_USERINFO = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://)(?P<user>[^\s/@:]*):(?P<pw>[^\s/@]+)@")
#: An Authorization (or proxy) header's value in free text, as a server may echo it.
_AUTH_VALUE = re.compile(
    r"(?P<name>(?:proxy-)?authorization)(?P<sep>[\"']?\s*[:=]\s*[\"']?)"
    r"(?P<scheme>(?:bearer|basic|token)\s+)?(?P<value>[^\s\"',;}]+)",
    re.I,
)
#: Values that are not secrets, whatever field they sit in.
_NOT_SECRET = {"", "EMPTY", "none", "None", "null", "sk-no-key-required"}


def redact_url(url: str) -> str:
    """``url`` with its password and credential query values masked.

    >>> redact_url("http://user:secret@host:8000/v1?api-key=k&x=1")
    'http://user:***@host:8000/v1?api-key=***&x=1'
    >>> redact_url("https://token@host/v1")
    'https://***@host/v1'
    >>> redact_url("http://127.0.0.1:30000/v1")
    'http://127.0.0.1:30000/v1'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, has_password, _ = userinfo.partition(":")
        netloc = f"{user}:{MASK}@{host}" if has_password else f"{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_SECRET_PARAMS.search(name) for name, _ in pairs):
            masked = [(n, MASK if _SECRET_PARAMS.search(n) else v) for n, v in pairs]
            query = urlencode(masked, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The credentials a URL carries (its user when alone, its password, credential query
    values), raw and percent-decoded, to be masked wherever they appear."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        user, has_password, password = userinfo.partition(":")
        found.append(password if has_password else user)
    found += [v for n, v in parse_qsl(parts.query) if _SECRET_PARAMS.search(n)]
    return [s for raw in found for s in {raw, unquote(raw), quote(raw, safe="")}]


def without_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """(``url`` without its user and password, (user, password) or None), percent-decoded
    as HTTP clients read them (`agents.client.transport` sends them as Basic auth, never in the URL
    it logs)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    bare = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return bare, (unquote(user), unquote(password))


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret, URL password and Authorization value masked.

    >>> redact_text("GET http://u:pw@h/v1 failed: Authorization: Bearer sk-1 (key sk-1)", ["sk-1"])
    'GET http://u:***@h/v1 failed: Authorization: Bearer *** (key ***)'
    """
    for secret in sorted(_real(secrets), key=len, reverse=True):
        text = text.replace(secret, MASK)
    text = _USERINFO.sub(lambda m: f"{m['head']}{m['user']}:{MASK}@", text)
    return _AUTH_VALUE.sub(lambda m: f"{m['name']}{m['sep']}{m['scheme'] or ''}{MASK}", text)


def _real(secrets: Iterable[str]) -> set[str]:
    return {s for s in secrets if s and s not in _NOT_SECRET and len(s) >= 4}


class Redactor:
    """Masks a fixed set of secrets (and any URL password or Authorization value) in text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = frozenset(_real(secrets))

    def __call__(self, text: str) -> str:
        return redact_text(text, self.secrets)

    def __or__(self, other: Redactor) -> Redactor:
        return Redactor(self.secrets | other.secrets)


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in every record it passes (its message, its
    arguments and its traceback text). Add it to a handler to cover every logger."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record: keep it, masked as it stands
            message = str(record.msg)
        record.msg, record.args = self.redactor(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor(record.exc_text)
        return True
