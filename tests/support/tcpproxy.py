"""A loopback TCP proxy that can take the database away, for fault tests.

The machine's PostgreSQL is shared with other test sessions, so it is never stopped; instead a
server under test reaches it through this proxy, which can

- ``refuse()``: stop listening and reset every open connection, as a stopped or crashed server
  does (clients see "connection refused" or a reset at once);
- ``blackhole()``: keep accepting, but forward nothing in either direction, as a network
  partition does (clients see nothing at all: only their own timeouts end the wait);
- ``restore()``: forward again. Connections caught in a blackhole are reset then, as TCP
  would eventually do to them.

It runs its own asyncio loop on a daemon thread, listens on 127.0.0.1 only, and its control
methods return once the change has taken effect.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any

from tests.support.server import free_port

CHUNK = 65536


class _Link:
    """One client connection and its upstream twin."""

    def __init__(self, client: asyncio.StreamWriter) -> None:
        self.client = client
        self.upstream: asyncio.StreamWriter | None = None
        self.tasks: list[asyncio.Task[None]] = []

    def abort(self) -> None:
        for writer in (self.client, self.upstream):
            if writer is not None:
                writer.transport.abort()
        for task in self.tasks:
            task.cancel()


class TcpProxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = free_port()
        self.mode = "forward"
        self._links: set[_Link] = set()
        self._server: asyncio.Server | None = None
        self._flowing: asyncio.Event | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tcpproxy", daemon=True)

    # -- control, from the test's thread ------------------------------------------------

    def start(self) -> TcpProxy:
        self._thread.start()
        self._call(self._start)
        return self

    def refuse(self) -> None:
        self._call(self._refuse)

    def blackhole(self) -> None:
        self._call(self._blackhole)

    def restore(self) -> None:
        self._call(self._restore)

    def close(self) -> None:
        if self._thread.is_alive():
            self._call(self._refuse)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
        self._loop.close()

    def __enter__(self) -> TcpProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, fn: Callable[[], Any]) -> None:
        asyncio.run_coroutine_threadsafe(fn(), self._loop).result(10)

    # -- the loop's side ----------------------------------------------------------------

    async def _start(self) -> None:
        self._flowing = asyncio.Event()
        self._flowing.set()
        await self._listen()

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port, reuse_address=True)

    async def _refuse(self) -> None:
        self.mode = "refuse"
        if self._server is not None:
            self._server.close()
            self._server = None
        self._abort_all()

    async def _blackhole(self) -> None:
        assert self._flowing is not None
        self.mode = "blackhole"
        self._flowing.clear()

    async def _restore(self) -> None:
        assert self._flowing is not None
        if self.mode == "blackhole":
            self._abort_all()
        self.mode = "forward"
        self._flowing.set()
        if self._server is None:
            await self._listen()

    def _abort_all(self) -> None:
        for link in list(self._links):
            link.abort()
        self._links.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._flowing is not None
        link = _Link(writer)
        self._links.add(link)
        try:
            await self._flowing.wait()  # a connection made into a blackhole waits, as its SYN would
            if link not in self._links:
                return
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            link.upstream = up_writer
            link.tasks = [
                asyncio.create_task(self._pump(reader, up_writer, link)),
                asyncio.create_task(self._pump(up_reader, writer, link)),
            ]
            await asyncio.gather(*link.tasks, return_exceptions=True)
        except OSError:
            pass
        finally:
            self._links.discard(link)
            link.abort()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, link: _Link) -> None:
        assert self._flowing is not None
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    break
                await self._flowing.wait()  # in a blackhole, bytes stop here
                if link not in self._links:
                    break
                writer.write(data)
                await writer.drain()
        with contextlib.suppress(OSError):
            if writer.can_write_eof():
                writer.write_eof()
