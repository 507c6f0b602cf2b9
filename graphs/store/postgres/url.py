"""Database URLs: which name PostgreSQL, and how they are shown (never with the password).

A URL is printed, logged and stored only through `redact`, which writes the password as
``***`` (``postgresql://user:***@host/db``); `scrub` takes it out of any message that might
quote it. This module imports no driver, so settings and the CLI can use it for free.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

SCHEMES = ("postgresql", "postgres")
MASK = "***"


class DatabaseError(RuntimeError):
    """The database cannot be used as it is (unreachable, refused, a newer schema): the
    message says which database (redacted) and what to do."""


def is_postgres_url(text: str | None) -> bool:
    return bool(text) and urlsplit(text).scheme in SCHEMES


def check_url(url: str) -> str:
    """``url`` if it is a PostgreSQL URL; otherwise a ValueError naming the form expected."""
    if not is_postgres_url(url):
        raise ValueError(
            f"the database URL {redact(url)!r} is not a PostgreSQL URL: give one like "
            "postgresql://USER:PASSWORD@HOST:5432/DATABASE (env PARAVT_DATABASE_URL)"
        )
    return url


def redact(url: str) -> str:
    """``url`` with its password (in the authority or a ``password=`` parameter) as ``***``.

    >>> redact("postgresql://ann:pw@db.example:5432/paravt?sslmode=require&password=x")
    'postgresql://ann:***@db.example:5432/paravt?sslmode=require&password=%2A%2A%2A'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if k == "password" else v) for k, v in pairs])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def password(url: str) -> str | None:
    """The password a URL carries, if any (to take it out of messages)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.password:
        return unquote(parts.password)
    found = dict(parse_qsl(parts.query)).get("password")
    return found or None


def scrub(message: str, url: str) -> str:
    """``message`` with the URL redacted and its password masked wherever it appears."""
    message = message.replace(url, redact(url))
    secret = password(url)
    if secret:
        for form in {secret, quote(secret, safe="")}:
            message = message.replace(form, MASK)
    return message
