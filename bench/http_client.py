"""Client CPU per request of the two HTTP libraries the chat client can run on, side by side.

httpx (httpcore 1) and httpx2 (httpcore2, the default: agents/client/transport.py) each send the
same small chat request to `testing.scripted` in its own process, N at a time, alternating
rounds; the figure is this process's CPU time per request (the server's is not in it).

    python bench/http_client.py   # writes bench/http_client.json
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import httpx2  # noqa: E402

from testing.scripted import scripted_process  # noqa: E402

BODY = b'{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":8}'
LIBRARIES = {"httpx": httpx, "httpx2": httpx2}


async def cpu_per_request(library, url: str, in_flight: int, requests: int) -> float:
    """Milliseconds of this process's CPU per request, `in_flight` at a time."""
    limits = library.Limits(max_connections=1000, max_keepalive_connections=100)
    async with library.AsyncClient(timeout=30, limits=limits) as client:
        gate = asyncio.Semaphore(in_flight)

        async def one() -> None:
            async with gate:
                request = client.build_request(
                    "POST", url, content=BODY, headers={"Content-Type": "application/json"}
                )
                response = await client.send(request)
                response.raise_for_status()

        await asyncio.gather(*(one() for _ in range(2 * in_flight)))  # connections open
        began = time.process_time()
        await asyncio.gather(*(one() for _ in range(requests)))
        return 1000 * (time.process_time() - began) / requests


def main() -> None:
    with scripted_process(cwd=ROOT) as base:
        results = []
        for in_flight in (1, 5, 16):
            rounds: dict[str, list[float]] = {name: [] for name in LIBRARIES}
            for _ in range(3):
                for name, library in LIBRARIES.items():
                    cpu = asyncio.run(
                        cpu_per_request(library, base + "/chat/completions", in_flight, 300)
                    )
                    rounds[name].append(cpu)
            results.append(
                {"in_flight": in_flight}
                | {
                    f"{n}_cpu_ms_per_request": round(statistics.median(v), 3)
                    for n, v in rounds.items()
                }
            )
    report = {
        "what": "client CPU per chat request, median of 3 alternated rounds of 300",
        "versions": {name: library.__version__ for name, library in LIBRARIES.items()},
        "results": results,
    }
    Path(__file__).with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
