"""A canned-response HTTP server for formatting goldens: fixed answers per method and path.

Loopback only, port 0, one thread. Each route answers a fixed status, headers and body;
``{{now-3d}}``-style markers in a body are replaced by timestamps relative to the moment of
the request, so ``--ts age`` output is the same whenever a golden is recorded or checked.
``{{port}}`` becomes the server's port (for discovery answers that point back at it).
Requests are recorded (method, path, headers, body) for tests that check what was sent.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FIXED_DATE = "Sat, 01 Mar 2025 12:00:00 GMT"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_MARKER = re.compile(r"\{\{now-(\d+)([smhd])\}\}")


@dataclass
class Canned:
    status: int = 200
    body: str | bytes = ""
    content_type: str | None = "application/json; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)
    reason: str | None = None
    echo: bool = False  # answer {"received": <request body as sent>} instead of ``body``


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class CannedServer:
    """``routes``: (METHOD, path-with-query) -> Canned. Unknown routes answer 404 with an API error."""

    def __init__(self, routes: dict[tuple[str, str], Canned], tls_context: Any = None) -> None:
        self.routes = routes
        self.requests: list[Recorded] = []
        handler = _make_handler(self)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        if tls_context is not None:
            self.httpd.socket = tls_context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.scheme = "https" if tls_context is not None else "http"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def __enter__(self) -> CannedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def render_body(body: str | bytes, port: int, now: datetime | None = None) -> bytes:
    if isinstance(body, bytes):
        return body
    moment = now or datetime.now(UTC)

    def stamp(match: re.Match[str]) -> str:
        seconds = int(match.group(1)) * _UNITS[match.group(2)]
        value = moment - timedelta(seconds=seconds)
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"

    return _MARKER.sub(stamp, body).replace("{{port}}", str(port)).encode("utf-8")


def _make_handler(server: CannedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            server.requests.append(Recorded(self.command, self.path, dict(self.headers.items()), body))
            canned = server.routes.get((self.command, self.path))
            if canned is None:
                canned = Canned(404, '{"status":404,"message":"no canned answer","code":"not_found"}')
            payload = (
                b'{"received":' + (body or b"null") + b"}" if canned.echo else render_body(canned.body, server.port)
            )
            self.send_response_only(canned.status, canned.reason)
            if canned.content_type:
                self.send_header("Content-Type", canned.content_type)
            for name, value in canned.headers:
                self.send_header(name, value.replace("{{port}}", str(server.port)))
            self.send_header("Date", FIXED_DATE)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    return Handler
