"""Workload logs on the data plane: Loki's two calls of the official CLI's ``cpln logs``.

``commands/logs.js`` of ``@controlplane/cli`` 3.10.1 calls, under ``/discovery``'s
``endpoints.logs`` (the data plane's base URL: no ``/location`` prefix, logs are per org):

- ``GET /logs/org/{org}/loki/api/v1/query_range?query=...`` with the session's
  ``Authorization`` (``cpln logs``);
- the websocket ``/logs/org/{org}/loki/api/v1/tail?...`` with the header ``authorization:
  <token>``, ``Bearer `` or not (``cpln logs -f``). On a refused upgrade the CLI exits when the
  answer is a 401 and tries again every 3 s otherwise.

Each is allowed only to a caller the API allows ``readLogs`` on the org (``/org/{org}``),
asked with the caller's own token (``access.py``); a refusal is the API's own answer (status
and error document). A tail asks again every :data:`~.access.RECHECK_S` while it lasts and,
once refused, closes the socket (1008, ``Unauthorized: <reason>``): the CLI's reconnection then
meets the refusal as an HTTP answer. The lines come from the controller's
:class:`~plinth.runtime.logs.LogService`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from urllib.parse import parse_qsl, unquote

import httpx
import orjson
from wsproto.frame_protocol import CloseReason

from plinth.runtime.dataplane.access import Answer, ApiAccess, error_body
from plinth.runtime.dataplane.websocket import WebSocket
from plinth.runtime.logs import LogService, ParamError
from plinth.runtime.logs.params import parse_params
from plinth.runtime.tasks import cancel_and_wait

log = logging.getLogger("plinth.runtime.dataplane")

PERMISSION = "readLogs"
QUERY_RANGE, TAIL = "query_range", "tail"
#: A close frame's reason is at most 123 bytes (RFC 6455, 5.5).
MAX_REASON = 123


def route(path: str) -> tuple[str, str] | None:
    """``(org, endpoint)`` of ``/logs/org/{org}/loki/api/v1/{endpoint}``, else ``None``."""
    parts = path.split("/")
    if len(parts) != 8 or parts[1:3] != ["logs", "org"] or parts[4:7] != ["loki", "api", "v1"] or not parts[3]:
        return None
    return unquote(parts[3]), parts[7]


def query_params(query: str) -> dict[str, str]:
    """A query string's parameters (the last of a repeated one)."""
    return dict(parse_qsl(query, keep_blank_values=True))


class LogRoutes:
    """Answers the two calls for ``service``, asking ``access`` about each caller."""

    def __init__(self, service: LogService, access: ApiAccess) -> None:
        self.service, self.access = service, access

    async def ask(self, token: str, org: str) -> Answer:
        """The API's verdict on ``readLogs`` for ``token`` in ``org``; an unreachable API is a 503."""
        if not token:
            return Answer(401, error_body(401, "The credentials are not valid"))
        try:
            return await self.access.ask(token, org, PERMISSION, f"/org/{org}")
        except httpx.HTTPError as exc:
            return Answer(503, error_body(503, f"The API cannot be reached ({type(exc).__name__})"))

    async def query_range(self, org: str, params: Mapping[str, str], token: str) -> tuple[int, bytes]:
        """``(status, body)`` of a ``query_range``: the API's refusal, a 400 naming the bad
        parameter, or Loki's answer."""
        answer = await self.ask(token, org)
        if not answer.allowed:
            return answer.status, answer.body
        status, body = await asyncio.to_thread(self.service.query_range, org, params)
        return status, orjson.dumps(body)

    async def check_tail(self, org: str, params: Mapping[str, str], token: str) -> tuple[int, bytes] | None:
        """What to answer instead of accepting a tail (a refusal, a bad parameter); ``None``: accept."""
        answer = await self.ask(token, org)
        if not answer.allowed:
            return answer.status, answer.body
        try:
            parse_params(params, tail=True)
        except ParamError as exc:
            return exc.status, orjson.dumps(exc.body())
        return None

    async def tail(self, ws: WebSocket, org: str, params: Mapping[str, str], token: str) -> None:
        """Send the tail's messages on the accepted ``ws`` until the client goes or is refused."""
        sending = asyncio.create_task(self.service.tail(org, params, ws.send))
        reading = asyncio.create_task(self._drain(ws))  # answers pings; ends when the client closes
        refused = asyncio.create_task(self.access.until_refused(token, org, PERMISSION, f"/org/{org}"))
        tasks = {sending, reading, refused}
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                await cancel_and_wait(task)
        if sending.done() and not sending.cancelled() and (error := sending.exception()) is not None:
            log.warning("a tail of org %s failed: %s", org, error)
        if refused.done() and not refused.cancelled() and refused.exception() is None:
            reason = f"Unauthorized: {refused.result()}".encode()[:MAX_REASON].decode(errors="ignore")
            await ws.close(CloseReason.POLICY_VIOLATION, reason)

    @staticmethod
    async def _drain(ws: WebSocket) -> None:
        while await ws.receive() is not None:
            pass  # the client sends nothing the tail uses
