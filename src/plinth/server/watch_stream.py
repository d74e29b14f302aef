"""Serving a watch (``?watch=true`` on a list path or ``-query``): the stream of a
:class:`~plinth.engine.watch.Watcher`, in one of two encodings of the same events.

- **NDJSON** (the default, ``application/x-ndjson``): one JSON object a line,
  ``{"type":"ADDED","resourceVersion":"12","object":{...}}``; ``BOOKMARK`` carries only the
  ``resourceVersion``; the last line of a stream the server ends is
  ``{"type":"ERROR","object":{status, message, code, details, id}}``.
- **Server-Sent Events** (``Accept: text/event-stream``): ``id:`` is the ``resourceVersion``,
  ``event:`` the type, ``data:`` the same JSON object; a browser's ``EventSource`` resumes by
  itself with ``Last-Event-ID``, which counts as ``resourceVersion``.

The response is chunked (ASGI ``more_body``); items are spliced in as stored, never re-encoded,
and each encoding of a change is made once for every stream of the process
(``Event.encoded``). A send that the client does not take within :data:`SEND_TIMEOUT_S` ends
the stream (uvicorn closes the connection): a client that stops reading holds no more than its
buffer and the socket's.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from plinth.auth.principal import Principal
from plinth.engine.access import Access
from plinth.engine.opaque import seal_seq, token_key
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.watch import Watcher
from plinth.engine.watch_events import Entry, Event, Shared, Signal
from plinth.engine.watch_hub import WatchHub
from plinth.engine.watch_start import parse_version, selection_for, start_watch
from plinth.errors import BadRequest, TooManyRequests
from plinth.server.errors import render_error
from plinth.server.http import Request
from plinth.server.reply import Reply, Services
from plinth.server.routes import access_for
from plinth.server.settings import Settings

NDJSON = "ndjson"
SSE = "sse"
CONTENT_TYPES = {NDJSON: b"application/x-ndjson", SSE: b"text/event-stream"}
#: Seconds one chunk may wait for the client to take it before the stream is cut off.
SEND_TIMEOUT_S = 30.0


def requested(req: Request, info: RequestInfo) -> bool:
    """Whether the request asks for a watch; 400 for ``watch=true`` where there is none. On a
    list or a query the watch parameters are checked even without ``watch`` (as documented)."""
    on_list = info.action is None and not info.is_item and req.method == "GET"
    on_query = info.action == "query" and not info.is_item and not info.action_args and req.method == "POST"
    if on_list or on_query:
        req.flag("sendInitialEvents")
        start_version(req)
    if not req.flag("watch"):
        return False
    if not (on_list or on_query):
        raise BadRequest("watch=true needs GET on a list path, or POST on -query", {"parameter": "watch"})
    return True


def start_version(req: Request) -> str | None:
    """``resourceVersion``, or else the ``Last-Event-ID`` an ``EventSource`` sends back (both are
    checked when both are sent)."""
    last_id = req.headers.get(b"last-event-id")
    from_header = parse_version(last_id.decode("latin-1").strip()) if last_id is not None else None
    from_param = parse_version(req.param("resourceVersion"))
    return from_param if from_param is not None else from_header


def encoding_of(req: Request) -> str:
    accept = req.headers.get(b"accept", b"").lower()
    return SSE if b"text/event-stream" in accept else NDJSON


def event_json(entry: Event | Signal, request_id: str, key: bytes) -> bytes:
    """One event's JSON; its ``resourceVersion`` is the change's seq, sealed (``engine/opaque.py``)."""
    if isinstance(entry, Event):
        head = b'{"type":"' + entry.type.encode() + b'","resourceVersion":"' + seal_seq(key, entry.seq).encode() + b'"'
        return head + b',"object":' + entry.change.doc + b"}"
    if entry.type == "ERROR":
        assert entry.error is not None
        _, body, _ = render_error(entry.error, request_id)
        return b'{"type":"ERROR","object":' + body + b"}"
    extra = ',"initialEventsEnd":true' if entry.initial_end else ""
    return f'{{"type":"BOOKMARK","resourceVersion":"{seal_seq(key, entry.seq)}"{extra}}}'.encode()


def encode(entry: Entry, form: str, request_id: str, key: bytes) -> bytes:
    """One entry in ``form``; a change's (or a batch's) encoding is kept on it for the other
    streams."""
    if isinstance(entry, Shared):
        joined = entry.encoded.get(form)
        if joined is None:
            joined = entry.encoded[form] = b"".join(encode(e, form, request_id, key) for e in entry.events)
        return joined
    if isinstance(entry, Event):
        cached = entry.encoded.get(form)
        if cached is not None:
            return cached
    data = event_json(entry, request_id, key)
    if form == NDJSON:
        out = data + b"\n"
    else:
        seq = entry.seq if isinstance(entry, Event) or entry.type == "BOOKMARK" else None
        head = b"" if seq is None else b"id: " + seal_seq(key, seq).encode() + b"\n"
        out = head + b"event: " + entry.type.encode() + b"\ndata: " + data + b"\n\n"
    if isinstance(entry, Event):
        entry.encoded[form] = out
    return out


async def open_stream(
    svc: Services,
    hub: WatchHub,
    settings: Settings,
    req: Request,
    info: RequestInfo,
    body: object,
    who: Principal,
    reauthenticate: Callable[[], Awaitable[Principal]],
    connection: Any = None,
) -> Reply:
    """The reply of a watch request: its checks happen here (400, 404, 403, 410, 429 answer as
    usual), then the stream runs as the reply's ``stream``."""
    access = await access_for(svc, who, info)
    query = (body if body is not None else {}) if info.action == "query" else None
    selection = selection_for(svc.engine, info, query)
    version = start_version(req)
    key = await token_key(svc.engine.storage)
    initial = req.flag("sendInitialEvents")
    if hub.count(who.link) >= settings.watch_limit:
        raise TooManyRequests(
            f"At most {settings.watch_limit} open watches per principal; close one first",
            {"limit": settings.watch_limit},
            {"Retry-After": "1"},
        )

    async def recheck() -> Access:
        return await access_for(svc, await reauthenticate(), info)

    watcher = await start_watch(
        svc.engine,
        hub,
        info,
        selection,
        access,
        who.link,
        recheck,
        version=version,
        initial=initial,
        buffer_bytes=settings.watch_buffer_bytes,
    )
    form = encoding_of(req)
    headers = [(b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]

    out = Out(send=None, connection=connection)
    if connection is not None:
        watcher.flush = direct_flush(connection, form, req.request_id, settings.watch_buffer_bytes, hub, key)
        connection.on_lost(lambda: watcher.end(None))

    async def stream(send: Any, receive: Any) -> None:
        out.send = send
        await run(watcher, form, settings.watch_bookmark_s, req.request_id, out, receive, key)

    return Reply(200, b"", headers, CONTENT_TYPES[form], stream=stream)


def chunked(data: bytes) -> bytes:
    """``data`` as one chunk of a chunked HTTP/1.1 body."""
    return b"%x\r\n%b\r\n" % (len(data), data)


class Out:
    """Where a stream's chunks go: straight to the connection (``protocol.CONNECTION_EXTENSION``:
    no task switch per write) when the server offers it, else through ASGI ``send``."""

    def __init__(self, send: Any, connection: Any):
        self.send = send
        self.connection = connection

    async def write(self, chunk: bytes) -> None:
        """Write ``chunk`` once the client has taken what is buffered."""
        if self.connection is None:
            async with asyncio.timeout(SEND_TIMEOUT_S):
                await self.send({"type": "http.response.body", "body": chunk, "more_body": True})
            return
        if self.connection.write_paused:
            async with asyncio.timeout(SEND_TIMEOUT_S):
                await self.connection.drain()
        self.connection.write_framed(chunked(chunk))

    async def finish(self) -> None:
        async with asyncio.timeout(SEND_TIMEOUT_S):
            await self.send({"type": "http.response.body", "body": b"", "more_body": False})


def direct_flush(
    connection: Any, form: str, request_id: str, limit: int, hub: WatchHub, token_key: bytes
) -> Callable[[Watcher, Shared | None], None]:
    """How the hub writes a joined watcher's changes (``engine/watch.py``'s ``Flush``): at once,
    to the connection; a client that leaves more than ``limit`` bytes unread is cut off
    (``WatchTooSlow``)."""
    key = form + "/chunk"
    write = connection.write_framed

    def flush(watcher: Watcher, shared: Shared | None) -> None:
        if shared is not None:
            # The hot path: every watcher of the kind writes the same framed bytes.
            framed = shared.encoded.get(key)
            if framed is None:
                framed = shared.encoded[key] = chunked(encode(shared, form, request_id, token_key))
        else:
            entries = watcher.drain()
            if not entries:
                return
            framed = chunked(b"".join(encode(e, form, request_id, token_key) for e in entries))
        if write(framed) > limit:
            watcher.end(hub.slow_error(limit))

    return flush


async def run(
    watcher: Watcher, form: str, bookmark_s: float, request_id: str, out: Out, receive: Any, key: bytes
) -> None:
    """Send what ``watcher`` takes until it ends: a bookmark first (the version the stream
    starts from, so a client knows at once where it stands), then after ``bookmark_s`` of
    silence. With a direct connection the hub writes the live changes itself (``flush``)."""
    gone: asyncio.Future[Any] | None = None
    if out.connection is None:
        gone = asyncio.ensure_future(_disconnected(receive))
        gone.add_done_callback(lambda _: watcher.end(None))
    complete = False
    try:
        next_bookmark = time.monotonic()
        while True:
            entries = await watcher.take(max(0.0, next_bookmark - time.monotonic()))
            if entries is None:
                break
            if not entries:
                if time.monotonic() < next_bookmark:
                    continue
                if out.connection is not None and out.connection.write_paused:
                    next_bookmark = time.monotonic() + bookmark_s
                    continue  # the client is behind: it has versions enough to resume from
                entries.append(watcher.bookmark())
            next_bookmark = time.monotonic() + bookmark_s
            final = isinstance(entries[-1], Signal) and entries[-1].type == "ERROR"
            await out.write(b"".join(encode(e, form, request_id, key) for e in entries))
            if final:
                break
        complete = True
        await out.finish()
    except TimeoutError:
        pass  # the client stopped reading: returning incomplete makes uvicorn close the connection
    finally:
        if gone is not None:
            gone.cancel()
        watcher.end(None)
    if not complete:
        with contextlib.suppress(Exception):
            await out.finish()


async def _disconnected(receive: Any) -> None:
    """Returns when the client has gone (a watch's request body, if any, was read already)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
