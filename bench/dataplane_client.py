"""A bare websocket client of the data plane (wsproto over asyncio), for ``bench.dataplane``:
the same session the official CLI opens, with none of the CLI's own work, so the figures can
tell the data plane's time from the client's."""

from __future__ import annotations

import asyncio
import io
import json
import os
import tarfile
import time
from typing import Any

from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, BytesMessage, CloseConnection, Ping, Request, TextMessage

FRAME = 64 * 1024  # what the CLI sends a frame (a Node file stream's chunk)


def tar_of(size: int) -> bytes:
    """One file of ``size`` random bytes as a tar (what ``cpln cp`` uploads)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo("upload.bin")
        info.size = size
        tar.addfile(info, io.BytesIO(os.urandom(size)))
    return out.getvalue()


async def session(port: int, location: str, request: dict[str, Any], upload: bytes | None = None) -> tuple[float, int]:
    """Open ``/exec``, send ``request`` (and ``upload`` as one fragmented message); the seconds
    from the request to the server's close, and the output bytes received."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    ws = WSConnection(ConnectionType.CLIENT)
    writer.write(ws.send(Request(host=f"127.0.0.1:{port}", target=f"/location/{location}/exec")))
    accepted, closed = asyncio.Event(), asyncio.Event()
    received = 0

    async def read() -> None:
        nonlocal received
        while data := await reader.read(256 * 1024):
            ws.receive_data(data)
            for event in ws.events():
                if isinstance(event, AcceptConnection):
                    accepted.set()
                elif isinstance(event, BytesMessage):
                    received += len(event.data)
                elif isinstance(event, Ping):
                    writer.write(ws.send(event.response()))
                elif isinstance(event, CloseConnection):
                    writer.write(ws.send(event.response()))
                    closed.set()
                    return
                elif isinstance(event, TextMessage) and not event.data.isdigit() and event.data.strip():
                    raise RuntimeError(f"the session said: {event.data[:300]}")

    task = asyncio.create_task(read())
    await accepted.wait()
    started = time.perf_counter()
    writer.write(ws.send(TextMessage(json.dumps(request))))
    if upload is not None:
        for at in range(0, len(upload), FRAME):
            writer.write(ws.send(BytesMessage(upload[at : at + FRAME], message_finished=False)))
            await writer.drain()
        writer.write(ws.send(BytesMessage(b"", message_finished=True)))
    await task
    elapsed = time.perf_counter() - started
    writer.close()
    if not closed.is_set():
        raise RuntimeError("the data plane dropped the connection")
    return elapsed, received
