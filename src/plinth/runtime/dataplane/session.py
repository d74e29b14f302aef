"""One exec session on ``{remote}/exec`` (the official CLI's ``exec``, ``connect``, ``run`` and
``cp``) or ``{remote}/remote`` (the Python SDK cpln-py), as docs/runtime.md, "The data plane",
describes it.

1. The first text message is the request (:func:`parse_request`): the token, the org, GVC,
   replica (``pod``) and container, ``command`` (argv) or ``shell`` (split like a shell line, and
   run without one), ``stdin``, ``tty`` with ``width``/``height``, and ``writeReceivedBytes``.
2. The replica's container is found, and the API asked, with the user's token, for ``connect``
   on its workload, with the audit record (``access.py``). A refusal ends the session with the
   text ``Unauthorized: <reason>``, and nothing runs.
3. The command starts at once (the engine's streamed exec); its output goes out verbatim as
   binary messages, each followed by a ping carrying the bytes sent so far, and the next one
   only once the client's pong acknowledged them (what came meanwhile gathers into it); input
   comes in frame by frame (binary pieces as stdin, the last piece's end as end of input) or,
   with a terminal, as ``{"type": "data"|"resize", "buffer", "width", "height"}`` text
   messages. With ``writeReceivedBytes`` (a ``cp`` upload) the input is answered with the byte
   counts the CLI's progress adds up (``tarcount.py``), in batches of at least
   :data:`COUNT_EVERY` bytes, at the end of the input, and when the process ends.
4. The API is asked again every ``RECHECK_S``: a revoked key or a withdrawn permission ends the
   session (``Unauthorized: ...``, the process killed).
5. When the command ends, a non-zero exit code is reported as the text ``Failed to create
   terminal session: command terminated with exit code N`` (what the CLI turns into its own
   exit code, ``commands/workload.js`` and ``commands/cp.js`` of 3.10.1), and the socket closes,
   once the client acknowledged all of the output, answered :data:`SETTLE_ROUNDS` more pings,
   and as long again as its slowest acknowledgement took has passed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import orjson

from plinth.runtime.containers.protocol import ContainerEngine, EngineError, ExecRequest, ExecStream
from plinth.runtime.dataplane.access import Answer, ApiAccess, audit_record
from plinth.runtime.dataplane.replicas import Replicas, Target
from plinth.runtime.dataplane.request import BadRequest, SessionRequest, parse_request, size_field
from plinth.runtime.dataplane.tarcount import TarProgress
from plinth.runtime.dataplane.websocket import Binary, Text, WebSocket
from plinth.runtime.tasks import cancel_and_wait

log = logging.getLogger("plinth.runtime.dataplane")

FAILED = "Failed to create terminal session: "
UNAUTHORIZED = "Unauthorized: "
#: The permission a session needs on the workload (its description: "Open an interactive shell
#: in a replica"); listing replicas needs ``view``.
PERMISSION = "connect"
#: A ``cp`` upload's counts go in batches of at least this many bytes (and at its end): one a
#: frame would be one message each way for every 64 KiB.
COUNT_EVERY = 1024 * 1024
#: Ping round trips after the client acknowledged the last byte, before the close (``_output``).
SETTLE_ROUNDS = 3
#: The most the close then waits, as long as the client's slowest acknowledgement took.
SETTLE_MAX_S = 10.0


class Session:
    """Runs one session on an accepted websocket (module docstring)."""

    def __init__(
        self,
        ws: WebSocket,
        location: str,
        driver: ContainerEngine,
        replicas: Replicas,
        api: ApiAccess,
        *,
        binary_status: bool = False,
    ):
        self.ws = ws
        self._unsent = 0
        #: Status messages as binary (cpln-py's ``/remote``: it decodes every message as bytes).
        self.binary_status = binary_status
        self.location = location
        self.driver = driver
        self.replicas = replicas
        self.api = api

    async def run(self) -> None:
        first = await self.ws.receive()
        if not isinstance(first, Text):
            return
        try:
            request = parse_request(first.text)
        except BadRequest as exc:
            await self._say(f"{FAILED}{exc}")
            return
        target = await self.replicas.target(request.org, request.gvc, self.location, request.pod, request.container)
        link = f"/org/{request.org}/gvc/{request.gvc}"
        if target is None:
            # Say "not found" only to a caller who may see the GVC (the API's rule: existence
            # is not disclosed to others).
            answer = await self._ask(request, "view", link)
            if answer.allowed:
                what = f"container {request.container} of " if request.container else ""
                await self._say(f"{FAILED}no running {what}replica {request.pod} at location {self.location}")
                return
            await self._say(f"{UNAUTHORIZED}{answer.reason}")
            return
        link = f"{link}/workload/{target.workload}"
        kind = "connect" if request.shell else "exec"
        audit = audit_record(kind, request.argv, request.pod, self.location, target.container)
        answer = await self._ask(request, PERMISSION, link, audit)
        if not answer.allowed:
            await self._say(f"{UNAUTHORIZED}{answer.reason}")
            return
        await self._execute(request, target, link)

    def _send_count(self) -> None:
        """Send the bytes counted and not yet reported (``writeReceivedBytes``), in one message.
        Synchronous, so a cancellation never loses nor repeats a count."""
        if self._unsent:
            counted, self._unsent = self._unsent, 0
            self.ws.send_now(str(counted))

    async def _say(self, text: str) -> None:
        """A status message (``Unauthorized: ...``, ``Failed to create terminal session: ...``)."""
        await self.ws.send(text.encode() if self.binary_status else text)

    async def _ask(self, request: SessionRequest, permission: str, link: str, audit: Any = None) -> Answer:
        try:
            return await self.api.ask(request.token, request.org, permission, link, audit)
        except httpx.HTTPError as exc:
            return Answer(503, orjson.dumps({"message": f"the API cannot be reached ({type(exc).__name__})"}))

    async def _execute(self, request: SessionRequest, target: Target, link: str) -> None:
        exec_request = ExecRequest(request.argv, request.stdin, request.tty, request.width, request.height)
        try:
            stream = await self.driver.exec_stream(target.engine_name, exec_request)
        except EngineError as exc:
            await self._say(f"{FAILED}{exc}")
            return
        finished = asyncio.create_task(self._output(stream))
        inbound = asyncio.create_task(self._input(stream, request))
        revoked = asyncio.create_task(self.api.until_refused(request.token, request.org, PERMISSION, link))
        try:
            await asyncio.wait({finished, inbound, revoked}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (inbound, revoked, finished):
                await cancel_and_wait(task)
            await stream.kill()
        self._send_count()  # what the process read before it ended (counts go in batches)
        if revoked.done() and not revoked.cancelled():
            await self._say(f"{UNAUTHORIZED}{revoked.result()}")
        elif finished.done() and not finished.cancelled():
            code = finished.result()
            if code != 0:
                await self._say(f"{FAILED}command terminated with exit code {code}")

    async def _output(self, stream: ExecStream) -> int:
        """Send the output as it comes, each message once the client acknowledged everything
        before it, so that what the engine says meanwhile gathers into the
        next, larger message; the exit code once it ended, the client acknowledged all of it,
        :data:`SETTLE_ROUNDS` more ping round trips passed, and then as long again as the
        client's slowest acknowledgement took (docs/runtime.md, "The data plane", step 6, says
        why: the official CLI's ``cp`` download)."""
        loop = asyncio.get_running_loop()
        sent, slowest = 0, 0.0
        while chunk := await stream.read():
            await self.ws.send(chunk)
            sent += len(chunk)
            self.ws.mark(sent)
            started = loop.time()
            await self.ws.acknowledged(sent)
            slowest = max(slowest, loop.time() - started)
        code = await stream.wait()
        await self.ws.acknowledged(sent)
        for extra in range(1, SETTLE_ROUNDS + 1 if sent else 1):
            self.ws.mark(sent + extra)  # a count past the output: one more round trip each
            await self.ws.acknowledged(sent + extra)
        if sent:
            await asyncio.sleep(min(slowest, SETTLE_MAX_S))
        return code

    async def _input(self, stream: ExecStream, request: SessionRequest) -> None:
        """Feed input until the client goes (returns then); input after its end is dropped."""
        progress = TarProgress() if request.count_bytes else None
        ended = not request.stdin
        size = (request.width, request.height)
        while (message := await self.ws.receive()) is not None:
            if ended:
                continue
            if isinstance(message, Binary):
                if progress is not None:
                    self._unsent += progress.feed(message.data)
                    if self._unsent >= COUNT_EVERY or message.last:
                        self._send_count()
                await stream.write(message.data)
                if message.last and not request.tty:
                    ended = True
                    await stream.close_stdin()
            elif request.tty:
                size = await self._terminal(stream, message.text, size)
            else:
                await stream.write(message.text.encode())

    async def _terminal(self, stream: ExecStream, text: str, size: tuple[int, int]) -> tuple[int, int]:
        """A terminal message: keystrokes and/or a new size; the size it leaves."""
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError:
            doc = None
        if not isinstance(doc, dict):
            await stream.write(text.encode())
            return size
        new = (size_field(doc, "width", size[0]), size_field(doc, "height", size[1]))
        if new != size:
            stream.resize(*new)
        data = doc.get("buffer")
        if doc.get("type") == "data" and isinstance(data, list) and data:
            try:
                await stream.write(bytes(data))
            except (TypeError, ValueError):
                pass  # not bytes: nothing to type
        return new
