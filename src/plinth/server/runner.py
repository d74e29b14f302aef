"""Run uvicorn on a socket Plinth has already bound, and stop it gracefully.

Start-up order (``plinth serve``): :func:`listen` binds and listens first, so a port that is
taken fails the start before anything is announced, bootstrapped or printed; only then is the
store opened and the server announced. uvicorn never binds: it serves the socket it is given
(one worker serves it in this process; with ``--workers N`` every worker process inherits it).
Connections made while the store is being opened wait in the listen backlog instead of being
refused.

Stopping (``SIGTERM`` or ``SIGINT``, to the server, which passes it to each worker): the app
hears the signal first and drains (``PlinthApp.drain``: ``/readyz`` answers 503 and the drain
hooks run, so long-lived streams end with a final event); uvicorn stops accepting, closes idle
keep-alive connections, lets in-flight requests finish for up to ``--shutdown-grace`` seconds
(cancelling what is left after that), and runs the app's shutdown. The server then exits 0:
uvicorn alone re-raises the signal once it has stopped, so a supervisor would see a server
"killed by SIGTERM" after a clean stop (:class:`PlinthServer`).
"""

from __future__ import annotations

import contextlib
import errno
import signal
import socket
import threading
from collections.abc import Iterator

import uvicorn
from uvicorn.server import HANDLED_SIGNALS
from uvicorn.supervisors import Multiprocess

#: Connections the kernel queues for us before they are accepted (uvicorn's default).
BACKLOG = 2048


class CannotListen(Exception):
    """The address could not be bound; ``in_use`` when another process listens there."""

    def __init__(self, host: str, port: int, cause: OSError):
        self.host, self.port, self.in_use = host, port, cause.errno == errno.EADDRINUSE
        if self.in_use:
            message = (
                f"port {port} on {host} is already in use (another plinth serve, or another program, "
                f"listens there): stop it, or choose another --port"
            )
        else:
            message = f"cannot listen on {host}:{port}: {cause.strerror or cause}"
        super().__init__(message)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening (``port`` 0: a free port, see
    ``getsockname``); :class:`CannotListen` otherwise. Listening at once matters: on Linux two
    sockets with ``SO_REUSEADDR`` may both *bind* a port that nobody listens on yet."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        # Rebinding a port whose previous server left connections in TIME_WAIT (a restart).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise CannotListen(host, port, exc) from exc
    sock.set_inheritable(True)  # worker processes serve it too
    return sock


class PlinthServer(uvicorn.Server):
    """uvicorn's server, exiting cleanly after a graceful stop."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """As uvicorn's, without re-raising the signal after the graceful stop (exit 0)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in HANDLED_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


class PlinthSupervisor(Multiprocess):
    """uvicorn's supervisor of worker processes, letting go of the listener when told to stop.

    The supervisor holds the listening socket too (its workers inherit it). Kept open while the
    workers finish their requests, it would go on queueing new connections that nobody will
    ever accept, and that are reset when the supervisor exits; closed at once, the port stops
    accepting as soon as the workers close theirs, and new connections are refused (a client
    retries them elsewhere). It exits 0 once its workers have stopped."""

    def _let_go(self) -> None:
        for sock in self.sockets:
            sock.close()

    def handle_term(self) -> None:
        self._let_go()
        super().handle_term()

    def handle_int(self) -> None:
        self._let_go()
        super().handle_int()


def serve(config: uvicorn.Config, sock: socket.socket) -> None:
    """Serve ``sock`` until a signal stops the server (every worker, with ``config.workers``)."""
    if config.workers > 1:
        PlinthSupervisor(config, sockets=[sock]).run()
    else:
        PlinthServer(config).run(sockets=[sock])
