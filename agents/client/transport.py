"""HTTP to an OpenAI-compatible endpoint: one request, its status checked, nothing more.

The client sends a chat request as bytes made once (`agents.client.wire_json`) and reads the
body itself (`agents.client.completion`, `agents.client.chunks`), so it needs no SDK between
it and the HTTP library: an SDK's per-request option models, header merging and URL building
cost about 1 ms of CPU a request, on the event loop, on every sub-agent call. Retrying is
`agents.client.retries`'.

The default client is httpx2's (httpx's successor, as openai 3 uses): httpcore 1's connection
pool rescans every connection for each request it assigns, 3.4 ms of client CPU a request at
16 in flight against httpx2's 1.4, the same at one in flight (bench/http_client.py). An
injected client may be either.
"""

from __future__ import annotations

import base64
from typing import Any

import httpx
import httpx2

from agents.client.redact import without_userinfo
from agents.client.tls import tls_context

TIMEOUTS = (httpx2.TimeoutException, httpx.TimeoutException)
REQUEST_ERRORS = (httpx2.RequestError, httpx.RequestError)  # timeouts are request errors too


def default_http_client(**options: Any) -> httpx2.AsyncClient:
    """The client a `Transport` makes when given none (``options`` add to its settings)."""
    return httpx2.AsyncClient(
        verify=tls_context(),
        follow_redirects=True,
        # as many connections as a batch of sub-agents opens at once (the default is 100)
        limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100),
        **options,
    )


class StatusError(Exception):
    """The endpoint answered with an HTTP error status; ``response`` is read and closed."""

    def __init__(self, response: Any) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response
        self.status_code: int = response.status_code


class Transport:
    """Requests to ``base_url`` with the endpoint's key, each under ``timeout`` seconds.

    A user and password in ``base_url`` go as Basic auth in place of the key, as HTTP
    clients send them; the URL requested (and logged by the HTTP library) carries neither.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str,
        timeout: float,
        http_client: httpx2.AsyncClient | httpx.AsyncClient | None = None,
    ) -> None:
        bare, userinfo = without_userinfo(base_url.rstrip("/"))
        self.base_url = bare
        self.timeout = timeout
        self._owns_http_client = http_client is None
        self.http = http_client or default_http_client()
        auth = f"Bearer {api_key}"
        if userinfo is not None:
            auth = "Basic " + base64.b64encode(":".join(userinfo).encode()).decode()
        self._headers = {"Authorization": auth, "Accept": "application/json"}

    @property
    def credentials(self) -> tuple[str, ...]:
        """What the requests carry that must never be shown: the Authorization value and its
        token (a Basic auth token is the user and password, encoded)."""
        value = self._headers["Authorization"]
        return value, value.partition(" ")[2]

    async def send(
        self,
        method: str,
        path: str,
        *,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
        stream: bool = False,
    ) -> Any:
        """The response to ``method`` ``path`` (relative to ``base_url``, or a whole URL);
        raises StatusError for a 4xx/5xx, httpx's errors for a failed exchange. A streamed
        response is the caller's to close."""
        sent = {**self._headers, **(headers or {})}
        if content is not None:
            sent["Content-Type"] = "application/json"
        url = without_userinfo(path)[0] if "://" in path else self.base_url + path
        request = self.http.build_request(
            method, url, content=content, headers=sent, timeout=self.timeout
        )
        response = await self.http.send(request, stream=stream)
        if response.status_code >= 400:
            try:
                await response.aread()
            finally:
                await response.aclose()
            raise StatusError(response)
        return response

    async def aclose(self) -> None:
        """Close the HTTP client, unless it was injected (then its owner closes it)."""
        if self._owns_http_client:
            await self.http.aclose()
