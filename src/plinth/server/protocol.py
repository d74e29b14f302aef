"""The connection guard: uvicorn's httptools protocol, with limits on the part of a request the
app never sees (its request line and headers).

uvicorn with httptools accepts headers of any size and waits for them for ever: a client that
sends a 10 MB header, or one byte of headers a minute, holds memory or a connection as long as
it likes. This protocol adds two limits, per request:

- the request line and headers together are at most ``limits.MAX_HEADER_BYTES``; past that the
  client gets **431** and the connection is closed;
- they must arrive within ``--request-timeout`` seconds of the request's first byte (or of the
  connection, for a client that connects and says nothing); otherwise **408** and close. One
  timer per process checks every connection (``HeadDeadlines``), so the cut-off comes up to a
  second (a quarter of the timeout, if that is less) after the deadline.

Both answers carry the usual error body (``server/errors.py``), and so does the 400 for a
request httptools cannot parse (uvicorn's own is plain text). The body that follows the
headers is the app's to time (``http.read_body``), and an idle keep-alive connection is
uvicorn's (``timeout_keep_alive``, 5 s). A slow client holds one connection, never the event
loop, so other requests go on being served.

Select it with ``uvicorn.run(http="plinth.server.protocol:GuardedHttpToolsProtocol")``; worker
processes read the timeout from ``PLINTH_REQUEST_TIMEOUT`` like the rest of their settings.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
import weakref
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from plinth.errors import APIError, BadRequest, HeadersTooLarge, RequestTimeout
from plinth.metrics import HTTP_CONNECTIONS
from plinth.server.errors import render_error
from plinth.server.limits import MAX_HEADER_BYTES
from plinth.server.settings import Settings

#: How uvicorn names this protocol class (``--http`` takes an import string).
IMPORT_PATH = "plinth.server.protocol:GuardedHttpToolsProtocol"
#: How long, and how much, a rejected connection is drained before it is closed.
LINGER_S = 1.0
LINGER_BYTES = 64 * 1024
#: The longest wait between two looks for connections past their head deadline.
SWEEP_MAX_S = 1.0


@functools.cache
def request_timeout() -> float:
    """This process's ``--request-timeout`` (seconds), read once from the environment."""
    return Settings.from_env().request_timeout


def error_response(exc: APIError) -> bytes:
    """A complete HTTP/1.1 error response that closes the connection."""
    request_id = str(uuid.uuid4())
    status, body, _ = render_error(exc, request_id)
    head = [
        STATUS_LINE[status],
        b"content-type: application/json\r\n",
        b"content-length: " + str(len(body)).encode() + b"\r\n",
        b"x-request-id: " + request_id.encode() + b"\r\n",
        b"connection: close\r\n\r\n",
    ]
    return b"".join(head) + body


_SHUTDOWN_HOOKS: list[Callable[[], None]] = []


def on_shutdown(hook: Callable[[], None]) -> None:
    """Call ``hook`` when uvicorn begins a graceful shutdown (it asks each connection to close,
    then waits for their responses to end: a watch's stream must be told to end)."""
    _SHUTDOWN_HOOKS.append(hook)


class HeadDeadlines:
    """The head deadlines of one event loop's connections, kept by one timer for them all.

    A timer per request (scheduled when its first byte arrives, cancelled when its headers are
    in) cost more than the rest of the guard on the GET hot path. Instead a connection notes
    when its head began, and one timer, every :data:`SWEEP_MAX_S` at most (a quarter of the
    timeout when that is shorter), answers 408 on the connections past their deadline: a slow
    client is cut off within that much after ``--request-timeout``.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout: float):
        self._loop = loop
        self._interval = min(SWEEP_MAX_S, timeout / 4)
        self._watched: set[GuardedHttpToolsProtocol] = set()
        self._timer: asyncio.TimerHandle | None = None

    def watch(self, conn: GuardedHttpToolsProtocol) -> None:
        self._watched.add(conn)
        if self._timer is None:
            self._timer = self._loop.call_later(self._interval, self._sweep)

    def forget(self, conn: GuardedHttpToolsProtocol) -> None:
        self._watched.discard(conn)

    def _sweep(self) -> None:
        self._timer = None
        now = self._loop.time()
        for conn in [c for c in self._watched if c.head_overdue(now)]:
            conn.head_too_slow()
        if self._watched:
            self._timer = self._loop.call_later(self._interval, self._sweep)


_deadlines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, HeadDeadlines] = weakref.WeakKeyDictionary()


def deadlines_of(loop: asyncio.AbstractEventLoop, timeout: float) -> HeadDeadlines:
    found = _deadlines.get(loop)
    if found is None:
        found = _deadlines[loop] = HeadDeadlines(loop, timeout)
    return found


#: The ASGI scope extension under which a request finds its connection (a watch writes its
#: events straight to the transport: ``server/watch_stream.py``).
CONNECTION_EXTENSION = "plinth.connection"


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """Caps the size of, and the time taken by, each request's line and headers.

    It also hands the app its connection (:data:`CONNECTION_EXTENSION`): :meth:`write_framed`
    writes chunks of a chunked response without a task switch, :meth:`drain` waits for the
    client to take what is buffered, and :meth:`on_lost` calls back when the connection goes.
    """

    header_limit = MAX_HEADER_BYTES

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True  # between requests, or inside a request line and its headers
        self._head_bytes = 0  # bytes received since the current request's headers began (about)
        self._rejected = False  # answered and closing: drop whatever else arrives
        self._drained = 0
        self._head_timeout = request_timeout()
        self._head_since: float | None = None  # loop time the current head began; None: not waiting
        self._deadlines: HeadDeadlines | None = None
        self._lost_hooks: list[Callable[[], None]] | None = None

    # -- what a streaming response uses (CONNECTION_EXTENSION) ----------------------------

    def write_framed(self, data: bytes) -> int:
        """Write ``data``, already framed as chunks of the current chunked response; returns the
        bytes now buffered (the client has not taken yet)."""
        transport = self.transport
        if transport.is_closing():
            return 0
        transport.write(data)
        return transport.get_write_buffer_size()

    @property
    def write_paused(self) -> bool:
        return bool(self.flow.write_paused)

    async def drain(self) -> None:
        await self.flow.drain()

    def on_lost(self, hook: Callable[[], None]) -> None:
        if self._lost_hooks is None:
            self._lost_hooks = []
        self._lost_hooks.append(hook)

    # -- the guards ---------------------------------------------------------------------

    def head_overdue(self, now: float) -> bool:
        since = self._head_since
        return since is not None and now - since >= self._head_timeout

    def head_too_slow(self) -> None:
        message = f"The request headers did not arrive within {self._head_timeout:g} s"
        self._reject(RequestTimeout(message, {"timeout_s": self._head_timeout}))

    def _too_large(self) -> None:
        limit = self.header_limit
        self._reject(HeadersTooLarge(f"The request line and headers are larger than {limit} bytes", {"limit": limit}))

    def _reject(self, exc: APIError) -> None:
        """Answer ``exc`` and close; a response still being written for an earlier pipelined
        request cannot be interrupted by another, so then the connection is simply closed.

        The close lingers: the write side shuts at once, and what the client still sends is
        read and dropped for a moment (up to :data:`LINGER_BYTES`), so that the kernel does
        not reset the connection, and lose the answer, over bytes nobody read.
        """
        self._head_since = None
        self._rejected = True
        transport = self.transport
        if transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            transport.close()
            return
        transport.write(error_response(exc))
        if transport.can_write_eof():
            transport.write_eof()
            self.loop.call_later(LINGER_S, transport.close)
        else:
            transport.close()

    # -- uvicorn's hooks ----------------------------------------------------------------

    def send_400_response(self, msg: str) -> None:
        """A request httptools cannot parse: the usual error body instead of uvicorn's plain text."""
        self._reject(BadRequest(f"Malformed HTTP request: {msg}"))

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        HTTP_CONNECTIONS.inc()
        if self._head_timeout > 0:
            self._head_since = self.loop.time()
            self._deadlines = deadlines_of(self.loop, self._head_timeout)
            self._deadlines.watch(self)

    def connection_lost(self, exc: Exception | None) -> None:
        HTTP_CONNECTIONS.dec()
        if self._deadlines is not None:
            self._deadlines.forget(self)
        super().connection_lost(exc)
        hooks, self._lost_hooks = self._lost_hooks, None
        for hook in hooks or ():
            hook()

    def data_received(self, data: bytes) -> None:
        if self._rejected:
            self._drained += len(data)
            if self._drained > LINGER_BYTES:
                self.transport.close()
            return
        if self._in_head:
            self._head_bytes += len(data)
            if self._head_since is None and self._deadlines is not None:
                self._head_since = self.loop.time()
        super().data_received(data)
        if self._in_head and self._head_bytes > self.header_limit:
            self._too_large()

    def shutdown(self) -> None:
        for hook in _SHUTDOWN_HOOKS:
            hook()
        super().shutdown()

    def on_message_begin(self) -> None:
        if not self._rejected:
            super().on_message_begin()

    def on_headers_complete(self) -> None:
        if self._rejected:
            return
        self._in_head = False
        self._head_bytes = 0
        self._head_since = None
        # Counted here rather than header by header: one pass instead of a call per header.
        size = len(self.url) + sum(len(name) + len(value) for name, value in self.headers) + 4 * len(self.headers)
        if size > self.header_limit:
            self._too_large()  # the app never sees this request
            return
        scope: dict[str, Any] = self.scope  # type: ignore[assignment]
        scope["extensions"] = {**scope.get("extensions", {}), CONNECTION_EXTENSION: self}
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self._rejected:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._rejected:
            return
        super().on_message_complete()
        self._in_head = True
        self._head_bytes = 0
