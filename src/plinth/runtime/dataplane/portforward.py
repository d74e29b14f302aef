"""Port forwarding: ``POST {remote}/portforward-ticket`` and the socket ``{remote}/portforward``
of the official CLI's ``cpln port-forward`` (3.10.1, ``commands/portforward.js``), as
docs/runtime.md, "Port forwarding", describes it.

1. **Ticket.** ``POST .../portforward-ticket`` with ``Authorization: Bearer <token>`` and
   ``{org, gvc, workload, pod?, port}``: the API is asked, with that token, for ``connect`` on
   the workload (the platform's documented permission for ``cpln port-forward``), with an audit
   record (type ``portForward``, command ``["port-forward", "<port>"]``); then ``{"ticket"}``
   (``tickets.py``: bound to the request and the token, renewed by use, short-lived).
2. **Socket.** The first text message is ``{contextId, token, org, gvc, workload, pod, port,
   ticket}``. An unknown or expired ticket (or one issued for something else) is answered
   ``Port-forward error: {"code": 1, ...}``, on which the CLI asks for a new ticket. Then the
   token is asked about again (no audit: the ticket's event stands for its connections), the
   replica's container publishing ``port`` is found, and a TCP connection is opened to the host
   port the engine published it on, **on 127.0.0.1**: a container network's own address is
   never used. A port no container of the replica publishes is a fatal error (``code`` 0).
3. **Bytes both ways**, as binary messages, until either side closes. The token is asked about
   again every ``RECHECK_S``: a revoked key or a withdrawn permission ends the connection with a
   fatal error (the CLI then exits).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from plinth.errors import FieldError
from plinth.runtime.containers.protocol import GVC, LOCATION, ORG, WORKLOAD, ContainerEngine
from plinth.runtime.controller.plan import REPLICA
from plinth.runtime.dataplane.access import Answer, ApiAccess, bearer_token, error_body
from plinth.runtime.dataplane.replicas import Replicas
from plinth.runtime.dataplane.tickets import Grant, Tickets, token_digest
from plinth.runtime.dataplane.websocket import Binary, Text, WebSocket
from plinth.runtime.tasks import cancel_and_wait

PERMISSION = "connect"
ERROR = "Port-forward error: "
FATAL, TICKET_EXPIRED = 0, 1  # the CLI's PortForwardErrorType
#: The first message must come within this after the socket opened (the CLI asks for its
#: ticket in between).
FIRST_S = 30.0
READ_BYTES = 64 * 1024
MAX_NAME = 253


class BadRequest(ValueError):
    """A ticket request or socket request that names its bad fields."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{path}: {message}" for path, message in errors))
        self.errors = errors


@dataclass(frozen=True, slots=True)
class Request:
    org: str
    gvc: str
    workload: str
    pod: str
    port: int

    @property
    def link(self) -> str:
        return f"/org/{self.org}/gvc/{self.gvc}/workload/{self.workload}"

    def grant(self, location: str, token: str) -> Grant:
        return Grant(self.org, self.gvc, self.workload, self.pod, self.port, location, token_digest(token))


def parse_request(doc: object) -> Request:
    """``{org, gvc, workload, pod?, port}`` (other keys, such as the socket's ``token``, are the
    caller's to read); :class:`BadRequest` naming every bad field."""
    if not isinstance(doc, dict):
        raise BadRequest([("", "must be a JSON object with org, gvc, workload and port")])
    errors: list[tuple[str, str]] = []
    names: dict[str, str] = {}
    for key in ("org", "gvc", "workload", "pod"):
        value = doc.get(key)
        if key == "pod" and value in (None, ""):
            names[key] = ""
        elif not isinstance(value, str) or not value or "/" in value or len(value) > MAX_NAME:
            errors.append((key, "must be a name"))
        else:
            names[key] = value
    port = doc.get("port")
    if isinstance(port, str) and port.isdigit():
        port = int(port)
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        errors.append(("port", "must be a port number (1-65535)"))
    if errors:
        raise BadRequest(errors)
    assert isinstance(port, int)
    return Request(names["org"], names["gvc"], names["workload"], names["pod"], port)


def audit(request: Request, location: str) -> dict[str, Any]:
    return {
        "type": "portForward",
        "command": ["port-forward", str(request.port)],
        "replica": request.pod or None,
        "location": location,
    }


def error_frame(code: int, message: str) -> str:
    return ERROR + orjson.dumps({"code": code, "message": message}).decode()


async def published(
    driver: ContainerEngine, replicas: Replicas, location: str, request: Request
) -> tuple[str, int | None] | None:
    """The replica forwarded to and the host port (on 127.0.0.1) its container publishes
    ``port`` on (``None`` when none does); ``None`` when no such replica runs. Without ``pod``,
    the first running replica."""
    names = await replicas.names(request.org, request.gvc, request.workload, location)
    pod = request.pod or (names[0] if names else "")
    if pod not in names:
        return None
    labels = {**replicas.scope, ORG: request.org, GVC: request.gvc, WORKLOAD: request.workload}
    labels.update({LOCATION: location, REPLICA: pod})
    for info in sorted(await driver.list(labels), key=lambda i: i.name):
        if info.running and request.port in info.ports:
            return pod, int(info.ports[request.port])
    return pod, None


class Tunnel:
    """One forwarded connection on an accepted ``/portforward`` socket (module docstring)."""

    def __init__(
        self,
        ws: WebSocket,
        location: str,
        driver: ContainerEngine,
        replicas: Replicas,
        api: ApiAccess,
        tickets: Tickets,
    ) -> None:
        self.ws, self.location, self.driver, self.replicas = ws, location, driver, replicas
        self.api, self.tickets = api, tickets

    async def run(self) -> None:
        try:
            async with asyncio.timeout(FIRST_S):
                first = await self.ws.receive()
        except TimeoutError:
            await self.ws.send(error_frame(FATAL, "no request came"))
            return
        if not isinstance(first, Text):
            return
        try:
            doc = orjson.loads(first.text)
            request = parse_request(doc)
            token, ticket = doc.get("token"), doc.get("ticket")
        except (orjson.JSONDecodeError, BadRequest) as exc:
            await self.ws.send(error_frame(FATAL, f"bad request: {exc}"))
            return
        if not isinstance(token, str) or not token:
            await self.ws.send(error_frame(FATAL, "bad request: token: must be the caller's token"))
            return
        if not isinstance(ticket, str) or not self.tickets.redeem(ticket, request.grant(self.location, token)):
            await self.ws.send(error_frame(TICKET_EXPIRED, "the ticket is unknown or expired"))
            return
        answer = await self._ask(token, request)
        if not answer.allowed:
            await self.ws.send(error_frame(FATAL, f"Unauthorized: {answer.reason}"))
            return
        found = await published(self.driver, self.replicas, self.location, request)
        if found is None or found[1] is None:
            what = f"replica {found[0]} publishes no port {request.port}" if found else "no replica runs"
            await self.ws.send(error_frame(FATAL, f"{what} (workload {request.workload}, {self.location})"))
            return
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", found[1])
        except OSError as exc:
            await self.ws.send(error_frame(FATAL, f"port {request.port} of {found[0]} refused: {exc.strerror}"))
            return
        await self._pump(reader, writer, token, request)

    async def _ask(self, token: str, request: Request) -> Answer:
        try:
            return await self.api.ask(token, request.org, PERMISSION, request.link)
        except httpx.HTTPError as exc:
            return Answer(503, orjson.dumps({"message": f"the API cannot be reached ({type(exc).__name__})"}))

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, token: str, request: Request
    ) -> None:
        outbound = asyncio.create_task(self._outbound(reader))
        inbound = asyncio.create_task(self._inbound(writer))
        revoked = asyncio.create_task(self.api.until_refused(token, request.org, PERMISSION, request.link))
        try:
            await asyncio.wait({outbound, inbound, revoked}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (outbound, inbound, revoked):
                await cancel_and_wait(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        if revoked.done() and not revoked.cancelled():
            await self.ws.send(error_frame(FATAL, f"Unauthorized: {revoked.result()}"))

    async def _outbound(self, reader: asyncio.StreamReader) -> None:
        """The container's bytes to the client, until the container closes its side."""
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(READ_BYTES):
                await self.ws.send(data)

    async def _inbound(self, writer: asyncio.StreamWriter) -> None:
        """The client's bytes to the container, until the client goes."""
        while (message := await self.ws.receive()) is not None:
            data = message.data if isinstance(message, Binary) else message.text.encode()
            writer.write(data)
            try:
                await writer.drain()
            except ConnectionError:
                return


async def issue_ticket(
    api: ApiAccess, tickets: Tickets, location: str, authorization: str, body: bytes
) -> tuple[int, bytes]:
    """The answer to ``POST .../portforward-ticket`` (module docstring): status and body."""
    token = bearer_token(authorization)
    if not token:
        return 401, error_body(401, "The credentials are not valid")
    try:
        request = parse_request(orjson.loads(body or b"null"))
    except orjson.JSONDecodeError:
        return 400, error_body(400, "The body must be JSON", [FieldError("", "must be a JSON object")])
    except BadRequest as exc:
        return 400, error_body(400, f"Invalid port-forward request: {exc}", [FieldError(p, m) for p, m in exc.errors])
    try:
        answer = await api.ask(token, request.org, PERMISSION, request.link, audit(request, location))
    except httpx.HTTPError as exc:
        return 503, error_body(503, f"The API cannot be reached ({type(exc).__name__})")
    if not answer.allowed:
        return answer.status, answer.body
    return 200, orjson.dumps({"ticket": tickets.issue(request.grant(location, token))})
