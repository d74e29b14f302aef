"""The ceiling: a bare ASGI app answering every request with one recorded response.

The response (status, headers, body) is Plinth's own answer to GET one domain, recorded once
by the bench and passed in the file named by ``BENCH_CEILING_RESPONSE``; uvicorn runs this with
the same settings as ``plinth serve`` (httptools, uvloop, worker count, no uvicorn access log,
no server header), so the ratio to it isolates what Plinth's application code costs.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

ENV = "BENCH_CEILING_RESPONSE"
Message = dict[str, Any]


def write_response(path: Path, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
    """Record a response for :func:`create_app`. ``date`` is dropped: uvicorn adds its own."""
    kept = [[k, v] for k, v in headers if k.lower() != "date"]
    doc = {"status": status, "headers": kept, "body": base64.b64encode(body).decode()}
    path.write_text(json.dumps(doc))


def create_app() -> Any:
    """The uvicorn factory (``bench.ceiling:create_app --factory``)."""
    doc = json.loads(Path(os.environ[ENV]).read_text())
    # Built once: answering costs two sends and nothing else.
    start: Message = {
        "type": "http.response.start",
        "status": doc["status"],
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in doc["headers"]],
    }
    body: Message = {"type": "http.response.body", "body": base64.b64decode(doc["body"])}

    async def app(scope: Message, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await send(start)
            await send(body)
        elif scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return

    return app
