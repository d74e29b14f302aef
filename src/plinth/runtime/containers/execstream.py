"""Streamed exec through the engine CLI (``podman exec`` / ``docker exec``): the data plane's
``exec``, ``connect`` and ``cp`` (docs/runtime.md, "The data plane").

The command runs as ``argv``, with no shell, inside the running container. Without a terminal,
its stdin is a pipe fed as input arrives (``exec -i``), and stdout and stderr come back as one
stream of pieces, each from one of them (the data plane's clients do not tell them apart, but
the official CLI's ``cp`` tells tar's warnings from the archive by whole messages). With a
terminal, the CLI runs on the subordinate side of a pseudo-terminal made here (``exec -i -t``):
the engine then puts that terminal in raw mode and makes one inside the container, so line
editing, echo and signals (Ctrl-C) happen inside, as on a remote shell. A resize sets the
pair's size and sends the CLI ``SIGWINCH``, on which both engines read their terminal's size
again and resize the one inside. Ending an exec early also kills the command inside (:func:`end`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import struct
import termios
import uuid

from plinth.runtime.containers import process
from plinth.runtime.containers.protocol import EngineError, EngineUnavailable, ExecRequest

READ_BYTES = 256 * 1024
#: The largest piece a :class:`PipeExec` read returns (what it gathered from one stream).
PIECE_BYTES = 4 * 1024 * 1024
PIPE_BYTES = 1024 * 1024
#: The variable each exec's command gets, with a value of its own (:func:`end`).
MARKER = "PLINTH_EXEC_SESSION"


def _widen(stdin: asyncio.StreamWriter) -> None:
    """Let input run ahead of the engine CLI: its pipe holds :data:`PIPE_BYTES` (Linux's
    default cap) and the writer buffers up to :data:`PIECE_BYTES` before a write waits."""
    pipe = stdin.transport.get_extra_info("pipe")
    if pipe is not None and hasattr(fcntl, "F_SETPIPE_SZ"):
        with contextlib.suppress(OSError):
            fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    stdin.transport.set_write_buffer_limits(high=PIECE_BYTES)


def _set_size(fd: int, width: int, height: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", max(1, height), max(1, width), 0, 0))


def kill_marked(marker: str) -> int:
    """SIGKILL every process of this machine whose environment holds ``marker`` (``NAME=VALUE``):
    an exec's command and whatever it started. How many were signalled."""
    wanted = marker.encode()
    killed = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as environ:
                found = wanted in environ.read().split(b"\0")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
    return killed


async def end(proc: asyncio.subprocess.Process, marker: str) -> None:
    """End an exec: the engine's client, and when it was still running, the command inside.

    Killing ``podman exec`` (or ``docker exec``) does not signal the command in the container,
    and neither engine can kill an exec session. Each exec carries a variable of its own
    (:data:`MARKER`) that the command and its children inherit, so they are found in ``/proc``
    and killed. This needs the engine on this machine and the right to signal its processes
    (rootful podman run by the same user: the controller's case); elsewhere it finds nothing."""
    running = proc.returncode is None
    if running:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(ProcessLookupError):
        await proc.wait()
    if running:
        await asyncio.to_thread(kill_marked, marker)


class PipeExec:
    """An exec without a terminal: stdin a pipe (or empty), stdout and stderr pipes of their
    own, read as they come into one stream of pieces. A piece is never part one and part the
    other: the official CLI's ``cp`` tells tar's warnings (stderr) from the archive (stdout) by
    whole messages (``tar-file-transfer/helpers.js``, ``detectTarErrorOrWarning``). A read
    returns everything that has come from one of them meanwhile, up to :data:`PIECE_BYTES`: a
    reader that waits gets fewer, larger pieces."""

    def __init__(self, proc: asyncio.subprocess.Process, marker: str) -> None:
        self._proc = proc
        self._marker = marker
        self._pieces: asyncio.Queue[tuple[int, bytes]] = asyncio.Queue(maxsize=2)
        self._held: tuple[int, bytes] | None = None
        self._open = 2
        streams = (proc.stdout, proc.stderr)
        self._readers = [asyncio.ensure_future(self._pump(n, s)) for n, s in enumerate(streams) if s is not None]

    async def _pump(self, source: int, stream: asyncio.StreamReader) -> None:
        try:
            while piece := await stream.read(PIECE_BYTES):
                await self._pieces.put((source, piece))
        finally:
            await self._pieces.put((source, b""))

    async def read(self) -> bytes:
        parts: list[bytes] = []
        size, source = 0, -1
        while self._open:
            if self._held is not None:
                item, self._held = self._held, None
            elif parts:
                try:
                    item = self._pieces.get_nowait()
                except asyncio.QueueEmpty:
                    break
            else:
                item = await self._pieces.get()
            if not item[1]:
                self._open -= 1
                continue
            if parts and (item[0] != source or size + len(item[1]) > PIECE_BYTES):
                self._held = item
                break
            parts.append(item[1])
            size, source = size + len(item[1]), item[0]
        return parts[0] if len(parts) == 1 else b"".join(parts)

    async def write(self, data: bytes) -> None:
        stdin = self._proc.stdin
        if stdin is None or stdin.is_closing():
            return
        stdin.write(data)
        # The process stopped reading (it ended): the rest of the input has nowhere to go.
        with contextlib.suppress(ConnectionError):
            await stdin.drain()

    async def close_stdin(self) -> None:
        stdin = self._proc.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
            with contextlib.suppress(ConnectionError):
                await stdin.wait_closed()

    def resize(self, width: int, height: int) -> None:
        return None

    async def wait(self) -> int:
        return await self._proc.wait()

    async def kill(self) -> None:
        await end(self._proc, self._marker)
        for reader in self._readers:
            reader.cancel()


class TerminalExec:
    """An exec on a pseudo-terminal: one byte stream each way through its controlling side."""

    def __init__(self, proc: asyncio.subprocess.Process, master: int, marker: str) -> None:
        self._proc = proc
        self._master = master
        self._marker = marker
        self._closed = False

    async def _ready(self, add: str, remove: str) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        getattr(loop, add)(self._master, wake)
        try:
            await ready
        finally:
            getattr(loop, remove)(self._master)

    async def read(self) -> bytes:
        while not self._closed:
            try:
                return os.read(self._master, READ_BYTES)
            except BlockingIOError:
                await self._ready("add_reader", "remove_reader")
            except OSError:  # EIO: every process holding the terminal's other side is gone
                return b""
        return b""

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self._closed:
            try:
                view = view[os.write(self._master, view) :]
            except BlockingIOError:
                await self._ready("add_writer", "remove_writer")
            except OSError:
                return

    async def close_stdin(self) -> None:
        return None

    def resize(self, width: int, height: int) -> None:
        if self._closed or self._proc.returncode is not None:
            return
        with contextlib.suppress(OSError):
            _set_size(self._master, width, height)
            self._proc.send_signal(signal.SIGWINCH)

    async def wait(self) -> int:
        return await self._proc.wait()

    async def kill(self) -> None:
        await end(self._proc, self._marker)
        if not self._closed:
            self._closed = True
            os.close(self._master)


async def start_exec(binary: str, container: str, request: ExecRequest) -> PipeExec | TerminalExec:
    """Start ``request`` in ``container`` with the engine CLI ``binary`` (module docstring)."""
    if not request.argv:
        raise EngineError("exec: no command to run")
    flags = ["-i"] if request.stdin or request.tty else []
    if request.tty:
        flags.append("-t")
    marker = f"{MARKER}={uuid.uuid4().hex}"
    args = ["exec", *flags, "--env", marker, container, *request.argv]
    try:
        if not request.tty:
            proc = await process.start(
                binary,
                *args,
                stdin=asyncio.subprocess.PIPE if request.stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=PIECE_BYTES // 2,  # each stream's buffer holds up to a piece before the pipe waits
            )
            if proc.stdin is not None:
                _widen(proc.stdin)
            return PipeExec(proc, marker)
        master, subordinate = os.openpty()
        try:
            _set_size(subordinate, request.width, request.height)
            os.set_blocking(master, False)
            proc = await process.start(
                binary, *args, stdin=subordinate, stdout=subordinate, stderr=subordinate, start_new_session=True
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(subordinate)
        return TerminalExec(proc, master, marker)
    except OSError as exc:
        raise EngineUnavailable(f"cannot run {binary}: {exc}") from exc
