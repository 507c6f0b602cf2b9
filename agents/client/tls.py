"""One TLS context for every HTTP client the project makes.

Building a context loads the CA bundle, about 70 ms each time; an ``httpx`` client builds
one at construction even for a plain ``http://`` endpoint, so a CLI run that opens two
clients paid 140 ms before its first request (bench/run_overhead.py).
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default context (certifi's bundle, ``SSL_CERT_FILE`` honoured), built once."""
    return httpx.create_ssl_context()
