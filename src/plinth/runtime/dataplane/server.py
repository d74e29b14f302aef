"""The data plane's HTTP/1.1 server: asyncio streams, h11 for HTTP, wsproto for websockets.

Why not an ASGI server: the official CLI sends all of a session's stdin (a whole tar for ``cpln
cp``) as **one** fragmented websocket message, and ASGI servers hand an application whole
messages only, capped in size (uvicorn at 16 MiB). The websocket library ``websockets`` reads
frames, but serves no ``POST``. h11 and wsproto (both python-hyper, sans-IO) let this server
read HTTP requests and websocket frames as they come, with nothing assembled or capped.

Routes, each under ``/location/{location}`` (the ``status.remote`` of that location's deployment):

- ``GET  .../replicas/org/{org}/gvc/{gvc}/workload/{name}`` (also with ``//org``, as one of the
  CLI's code paths builds it): ``{"items": [replica names], "links": []}`` of the running
  replicas, for a caller the API allows ``view`` on the workload (its errors passed through);
- websocket ``.../exec`` (the CLI) and ``.../remote`` (cpln-py, which decodes every message
  as bytes, so its status messages are binary too): one exec session each (``session.py``);
- ``POST .../portforward-ticket`` and websocket ``.../portforward``: port forwarding
  (``portforward.py``).

And, not under a location (logs are the org's, whatever the location): ``GET
/logs/org/{org}/loki/api/v1/query_range`` and the websocket ``.../loki/api/v1/tail`` of
``cpln logs`` (``logroutes.py``), when the controller runs a log service.

It listens on loopback only (``--dataplane-listen``), like the gateway's admin port.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

import h11
import httpx
import orjson
from wsproto.utilities import generate_accept_token

from plinth.runtime.containers.protocol import ContainerEngine
from plinth.runtime.dataplane.access import ApiAccess, bearer_token, error_body
from plinth.runtime.dataplane.logroutes import QUERY_RANGE, TAIL, LogRoutes, query_params, route
from plinth.runtime.dataplane.portforward import Tunnel, issue_ticket
from plinth.runtime.dataplane.replicas import Replicas
from plinth.runtime.dataplane.session import Session
from plinth.runtime.dataplane.tickets import Tickets
from plinth.runtime.dataplane.websocket import WebSocket
from plinth.runtime.logs import LogService
from plinth.runtime.tasks import cancel_and_wait

log = logging.getLogger("plinth.runtime.dataplane")

READ_BYTES = 64 * 1024
#: A connection's read buffer: a websocket (a ``cp`` upload) is read a megabyte at a time.
STREAM_LIMIT = 1024 * 1024
#: A request's head and body must arrive within this, and an idle kept-alive connection closes.
IDLE_S = 60.0
MAX_BODY = 64 * 1024
SOCKETS = ("exec", "remote", "portforward")
ALLOW_GET = [(b"allow", b"GET")]


class DataPlane:
    """Serves the routes above for the containers carrying all of ``scope`` (the controller's
    scope labels), asking the API at ``api`` about every caller."""

    def __init__(
        self,
        api: str,
        driver: ContainerEngine,
        scope: Mapping[str, str],
        verify: bool | str = True,
        logs: LogService | None = None,
    ):
        self.driver = driver
        self.replicas = Replicas(driver, scope)
        self.access = ApiAccess(api, verify)
        #: The logs routes, when the controller runs a log service.
        self.logs = LogRoutes(logs, self.access) if logs is not None else None
        self.tickets = Tickets()
        self._server: asyncio.Server | None = None
        self._sessions: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (loopback: the caller checked); the port bound."""
        self._server = await asyncio.start_server(self._connection, host, port, limit=STREAM_LIMIT)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening and end every connection (their processes are killed)."""
        if self._server is not None:
            self._server.close()
        for task in list(self._sessions):
            task.cancel()
        for task in list(self._sessions):
            await cancel_and_wait(task)
        await self.access.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._sessions.add(task)
        conn = h11.Connection(h11.SERVER)
        try:
            while await self._exchange(conn, reader, writer):
                conn.start_next_cycle()
        except (h11.ProtocolError, ConnectionError, TimeoutError):
            pass
        except Exception:
            log.exception("data plane connection failed")
        finally:
            self._sessions.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _next(self, conn: h11.Connection, reader: asyncio.StreamReader) -> object:
        async with asyncio.timeout(IDLE_S):
            while (event := conn.next_event()) is h11.NEED_DATA:
                conn.receive_data(await reader.read(READ_BYTES))
        return event

    async def _exchange(self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """One request and its answer; whether the connection may serve another."""
        request = await self._next(conn, reader)
        if not isinstance(request, h11.Request):
            return False
        body = b""
        while not isinstance(event := await self._next(conn, reader), h11.EndOfMessage):
            if isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY:
                    await self._answer(conn, writer, 413, error_body(413, "The request body is too large"))
                    return False
            elif not isinstance(event, h11.Data):
                return False
        headers = {k.decode().lower(): v.decode("latin-1") for k, v in request.headers}
        target = urlsplit(request.target.decode("latin-1"))
        path = target.path
        if self.logs is not None and (logs := route(path)) is not None:
            return await self._logs(conn, reader, writer, request.method, headers, logs, query_params(target.query))
        parts = path.split("/")
        if len(parts) < 4 or parts[1] != "location" or not parts[2]:
            await self._answer(conn, writer, 404, error_body(404, f"No route for {path}"))
            return conn.our_state is h11.IDLE
        location, rest = unquote(parts[2]), parts[3:]
        if len(rest) == 1 and rest[0] in SOCKETS:
            if headers.get("upgrade", "").lower() != "websocket" or "sec-websocket-key" not in headers:
                await self._answer(conn, writer, 400, error_body(400, "This path takes a websocket"))
                return False
            key = headers["sec-websocket-key"]
            await self._websocket(conn, reader, writer, key, location, rest[0])
            return False
        if rest == ["portforward-ticket"]:
            if request.method != b"POST":
                allow = [(b"allow", b"POST")]
                await self._answer(conn, writer, 405, error_body(405, "Only POST is supported here"), allow)
            else:
                auth = headers.get("authorization", "")
                status, doc = await issue_ticket(self.access, self.tickets, location, auth, body)
                await self._answer(conn, writer, status, doc)
            return conn.our_state is h11.IDLE
        if rest[:1] == ["replicas"]:
            if request.method != b"GET":
                await self._answer(conn, writer, 405, error_body(405, "Only GET is supported here"), ALLOW_GET)
            else:
                status, doc = await self._replicas(location, "/".join(rest[1:]), headers.get("authorization", ""))
                await self._answer(conn, writer, status, doc)
            return conn.our_state is h11.IDLE
        await self._answer(conn, writer, 404, error_body(404, f"No route for {path}"))
        return conn.our_state is h11.IDLE

    async def _answer(
        self,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        status: int,
        body: bytes,
        extra: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        writer.write(conn.send(h11.Response(status_code=status, headers=headers + (extra or []))) or b"")
        writer.write(conn.send(h11.Data(data=body)) or b"")
        writer.write(conn.send(h11.EndOfMessage()) or b"")
        await writer.drain()

    async def _replicas(self, location: str, tail: str, authorization: str) -> tuple[int, bytes]:
        segments = [unquote(s) for s in tail.split("/") if s]
        if len(segments) != 6 or segments[0::2] != ["org", "gvc", "workload"]:
            return 404, error_body(404, "Replicas are at /replicas/org/{org}/gvc/{gvc}/workload/{name}")
        org, gvc, workload = segments[1::2]
        token = bearer_token(authorization)
        if not token:
            return 401, error_body(401, "The credentials are not valid")
        link = f"/org/{org}/gvc/{gvc}/workload/{workload}"
        try:
            answer = await self.access.ask(token, org, "view", link)
        except httpx.HTTPError as exc:
            return 503, error_body(503, f"The API cannot be reached ({type(exc).__name__})")
        if not answer.allowed:
            return answer.status, answer.body
        names = await self.replicas.names(org, gvc, workload, location)
        return 200, orjson.dumps({"kind": "list", "items": names, "links": []})

    async def _logs(
        self,
        conn: h11.Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        method: bytes,
        headers: Mapping[str, str],
        where: tuple[str, str],
        params: dict[str, str],
    ) -> bool:
        """A logs call (``logroutes.py``); whether the connection may serve another."""
        assert self.logs is not None
        (org, endpoint), token = where, bearer_token(headers.get("authorization", ""))
        if endpoint == TAIL and headers.get("upgrade", "").lower() == "websocket" and "sec-websocket-key" in headers:
            refusal = await self.logs.check_tail(org, params, token)
            if refusal is not None:
                await self._answer(conn, writer, *refusal)
                return False
            ws = await self._accept(conn, reader, writer, headers["sec-websocket-key"])
            try:
                await self.logs.tail(ws, org, params, token)
            finally:
                with contextlib.suppress(ConnectionError):
                    await ws.close()
            return False
        if endpoint == TAIL:
            await self._answer(conn, writer, 400, error_body(400, "This path takes a websocket"))
        elif endpoint != QUERY_RANGE:
            await self._answer(conn, writer, 404, error_body(404, f"No logs endpoint {endpoint}"))
        elif method != b"GET":
            await self._answer(conn, writer, 405, error_body(405, "Only GET is supported here"), ALLOW_GET)
        else:
            await self._answer(conn, writer, *await self.logs.query_range(org, params, token))
        return conn.our_state is h11.IDLE

    async def _accept(
        self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, key: str
    ) -> WebSocket:
        """Answer a websocket upgrade (101); the socket."""
        accept = generate_accept_token(key.encode())
        headers = [(b"upgrade", b"websocket"), (b"connection", b"Upgrade"), (b"sec-websocket-accept", accept)]
        writer.write(conn.send(h11.InformationalResponse(status_code=101, headers=headers)) or b"")
        await writer.drain()
        return WebSocket(reader, writer, conn.trailing_data[0])

    async def _websocket(
        self,
        conn: h11.Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        key: str,
        location: str,
        path: str,
    ) -> None:
        ws = await self._accept(conn, reader, writer, key)
        try:
            if path == "portforward":
                await Tunnel(ws, location, self.driver, self.replicas, self.access, self.tickets).run()
            else:
                binary_status = path == "remote"
                session = Session(ws, location, self.driver, self.replicas, self.access, binary_status=binary_status)
                await session.run()
        finally:
            with contextlib.suppress(ConnectionError):
                await ws.close()
