"""A minimal blocking websocket client (wsproto over a socket to 127.0.0.1), for tests that
speak to the data plane without the official CLI: to send what the CLI never sends (an unknown
ticket, a malformed request) and read the answer."""

from __future__ import annotations

import select
import socket
from urllib.parse import urlsplit

from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Message,
    Ping,
    RejectConnection,
    Request,
    TextMessage,
)

TIMEOUT_S = 30.0


class WsClient:
    """One websocket to ``url`` (``ws://127.0.0.1:PORT/path``)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        assert parts.hostname == "127.0.0.1", "tests connect to loopback only"
        self.sock = socket.create_connection(("127.0.0.1", parts.port or 80), timeout=TIMEOUT_S)
        self.ws = WSConnection(ConnectionType.CLIENT)
        self._stash: list[object] = []
        self._send(self.ws.send(Request(host=f"127.0.0.1:{parts.port}", target=parts.path or "/")))
        self._text: list[str] = []
        self._bytes = b""
        while True:
            event = self._event()
            if isinstance(event, AcceptConnection):
                return
            assert not isinstance(event, RejectConnection), "the websocket was refused"

    def _send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _event(self) -> object:
        """The next event of any kind (a ``Ping`` too, which this client never answers itself)."""
        if self._stash:
            return self._stash.pop(0)
        while True:
            for event in self.ws.events():
                return event
            data = self.sock.recv(65536)
            self.ws.receive_data(data or None)

    def event(self) -> object:
        """The next event, for a test that answers pings itself (:meth:`pong`)."""
        return self._event()

    def pending(self) -> bool:
        """Whether anything from the server is waiting to be read, parsed or not (no waiting)."""
        if not self._stash:
            self._stash.extend(self.ws.events())
        ready, _, _ = select.select([self.sock], [], [], 0)
        return bool(self._stash or ready)

    def pong(self, ping: Ping) -> None:
        self._send(self.ws.send(ping.response()))

    def send(self, message: str | bytes) -> None:
        event = TextMessage(data=message) if isinstance(message, str) else BytesMessage(data=message)
        self._send(self.ws.send(event))

    def receive(self) -> str | bytes | None:
        """The next whole message; ``None`` once the server closed."""
        while True:
            event = self._event()
            if isinstance(event, CloseConnection):
                return None
            if isinstance(event, TextMessage):
                self._text.append(event.data)
                if event.message_finished:
                    text, self._text = "".join(self._text), []
                    return text
            elif isinstance(event, Message):
                self._bytes += bytes(event.data)
                if event.message_finished:
                    data, self._bytes = self._bytes, b""
                    return data

    def close(self) -> None:
        self.sock.close()
