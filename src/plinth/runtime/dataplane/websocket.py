"""A server-side websocket over asyncio streams, with wsproto (sans-IO) doing the framing.

Incoming data is handed over **as it arrives, frame by frame** (even part of a frame): a binary
message of any size (a ``cpln cp`` upload is one message the size of its tar) is never
assembled or capped, and each piece says whether it ends its message. Text messages are small
control messages here (a session's request, keystrokes, resizes): they are assembled, up to
:data:`MAX_TEXT` characters. Pings are answered at once; the client's close is answered and
ends :meth:`WebSocket.receive`.

Outgoing data can be **acknowledged**: :meth:`WebSocket.mark` sends a ping carrying the number
of bytes sent so far, and :meth:`WebSocket.acknowledged` waits until the client's pong carries
a number at least as large. A client answers a ping once it has parsed every frame before it
(RFC 6455, 5.5.2: it MUST answer; pongs come in order), so an acknowledged count is what the
client's own code has been handed, not merely what reached its socket.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from wsproto.connection import Connection, ConnectionState, ConnectionType
from wsproto.events import BytesMessage, CloseConnection, Message, Ping, Pong, TextMessage
from wsproto.frame_protocol import CloseReason

#: What one read takes from the socket (a ``cp`` upload comes as fast as the client sends).
READ_BYTES = 1024 * 1024
MAX_TEXT = 1024 * 1024
CLOSE_WAIT_S = 2.0


@dataclass(frozen=True, slots=True)
class Text:
    """A whole text message."""

    text: str


@dataclass(frozen=True, slots=True)
class Binary:
    """A piece of a binary message; ``last`` when it ends the message."""

    data: bytes
    last: bool


class WebSocket:
    """One accepted websocket (the 101 answer was sent by the HTTP side)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, trailing: bytes = b"") -> None:
        self._reader = reader
        self._writer = writer
        self._ws = Connection(ConnectionType.SERVER, trailing_data=trailing)
        self._pending: list[Text | Binary | None] = []
        self._text: list[str] = []
        self._text_size = 0
        self._pong = asyncio.Event()
        #: The largest byte count a pong has echoed (:meth:`mark`).
        self._acked = 0
        self._gone = False

    @property
    def open(self) -> bool:
        return self._ws.state == ConnectionState.OPEN and not self._writer.is_closing()

    async def receive(self) -> Text | Binary | None:
        """The next text message or binary piece; ``None`` once the client closed or left."""
        while not self._pending:
            self._collect()
            if self._pending:
                break
            try:
                data = await self._reader.read(READ_BYTES)
            except ConnectionError:
                data = b""
            if not data:
                self._gone = True
                self._pong.set()  # nothing more will be acknowledged
                return None
            self._ws.receive_data(data)
        return self._pending.pop(0)

    def _collect(self) -> None:
        for event in self._ws.events():
            if isinstance(event, Ping):
                self._write(self._ws.send(event.response()))
            elif isinstance(event, Pong):
                payload = bytes(event.payload)
                if payload.isdigit():
                    self._acked = max(self._acked, int(payload))
                self._pong.set()
            elif isinstance(event, CloseConnection):
                self._pong.set()  # nothing more will be acknowledged
                if self._ws.state == ConnectionState.REMOTE_CLOSING:
                    self._write(self._ws.send(event.response()))
                self._pending.append(None)
            elif isinstance(event, TextMessage):
                self._text_piece(event)
            elif isinstance(event, BytesMessage):
                self._pending.append(Binary(bytes(event.data), event.message_finished))

    def _text_piece(self, event: Message[str]) -> None:
        self._text.append(event.data)
        self._text_size += len(event.data)
        if self._text_size > MAX_TEXT:
            self._text, self._text_size = [], 0
            self._pending.append(None)
            return
        if event.message_finished:
            self._pending.append(Text("".join(self._text)))
            self._text, self._text_size = [], 0

    def _write(self, data: bytes) -> None:
        if not self._writer.is_closing():
            self._writer.write(data)

    def send_now(self, message: str | bytes) -> None:
        """Queue one whole message (text for ``str``) at once: a cancellation cannot cut it."""
        if self.open:
            event = TextMessage(data=message) if isinstance(message, str) else BytesMessage(data=message)
            self._write(self._ws.send(event))

    async def send(self, message: str | bytes) -> None:
        """Send one whole message, then wait while the client reads slowly."""
        self.send_now(message)
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()

    def mark(self, sent: int) -> None:
        """Ask the client to acknowledge ``sent`` bytes: a ping carrying the number."""
        if self.open:
            self._write(self._ws.send(Ping(str(sent).encode())))

    async def acknowledged(self, sent: int) -> bool:
        """Wait until a pong acknowledged ``sent`` bytes (:meth:`mark`); ``False`` once the
        connection is gone first. Someone must be reading (:meth:`receive`) meanwhile."""
        while self._acked < sent:
            if self._gone or not self.open:
                return False
            self._pong.clear()
            await self._pong.wait()
        return True

    async def close(self, code: int = CloseReason.NORMAL_CLOSURE, reason: str = "") -> None:
        """The closing handshake (once): send a close, then read (nobody else does by now) until
        the client's close comes back, at most :data:`CLOSE_WAIT_S`. Clients take a connection
        dropped before their close was answered for an error (websocket-client, which cpln-py
        uses, does). The HTTP side closes the TCP connection afterwards."""
        if self._ws.state != ConnectionState.OPEN:
            return
        self._write(self._ws.send(CloseConnection(code=code, reason=reason)))
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()
        with contextlib.suppress(TimeoutError, ConnectionError):
            async with asyncio.timeout(CLOSE_WAIT_S):
                while self._ws.state != ConnectionState.CLOSED:
                    data = await self._reader.read(READ_BYTES)
                    if not data:
                        return
                    self._ws.receive_data(data)
                    for _ in self._ws.events():
                        pass  # what the client sent after our close no longer matters
