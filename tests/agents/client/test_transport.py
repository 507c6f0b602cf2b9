"""The client's HTTP layer: what a failed response says to a user, and either HTTP library."""

from __future__ import annotations

import httpx
import httpx2
import pytest

from agents.client.endpoint_errors import server_message
from agents.client.transport import StatusError, Transport
from testing.scripted import Reply, ScriptedServer


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        (b'{"error": {"message": "context too long", "code": 400}}', "json", "context too long"),
        (b'{"detail": "image too large"}', "json", "image too large"),  # FastAPI, vLLM
        (b'{"error": "model not loaded"}', "json", "model not loaded"),
        (b'{"error": {"code": 7}}', "json", '{"code": 7}'),
        (b"<html>502 Bad Gateway</html>", "html", "<html>502 Bad Gateway</html>"),
        (b"", "html", "HTTP 503 with an empty body"),
    ],
)
def test_server_message_reads_each_servers_error_shape(body, content_type, expected):
    response = httpx2.Response(503, content=body, headers={"content-type": f"text/{content_type}"})
    assert server_message(response) == expected


@pytest.mark.parametrize("library", [httpx2, httpx], ids=["default httpx2", "injected httpx"])
async def test_a_status_error_carries_the_read_response(library):
    injected = library.AsyncClient() if library is httpx else None
    with ScriptedServer(Reply("overloaded", status=503)) as server:
        transport = Transport(server.base_url, api_key="k", timeout=10, http_client=injected)
        with pytest.raises(StatusError) as info:
            await transport.send("POST", "/chat/completions", content=b'{"messages": []}')
        listed = await transport.send("GET", "/models")
        await transport.aclose()
    assert info.value.status_code == 503
    assert server_message(info.value.response) == "overloaded"
    assert listed.json()["data"]
    assert isinstance(transport.http, httpx.AsyncClient if injected else httpx2.AsyncClient)
    if injected is not None:
        assert not injected.is_closed  # its owner closes it
        await injected.aclose()
