"""Run a real ``plinth serve`` process on loopback for tests, and talk to it over HTTP."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

READY_TIMEOUT_S = 30
#: The secrets key PostgreSQL test servers share unless a test gives its own (a PostgreSQL
#: server without one refuses to start; SQLite servers generate theirs in the data directory).
TEST_SECRETS_KEY = "cGxpbnRoLXRlc3Qtc2VjcmV0cy1rZXktMzItYnl0ZXM="


@functools.cache
def _default_tls() -> ssl.SSLContext:
    """httpx's own default context (its CA bundle, verifying), made once for every client of
    the tests: httpx builds one per client otherwise, and loading the CA bundle each time costs
    tens of milliseconds a client, paid on every ``client()``, and every poll of a starting server."""
    return httpx.create_ssl_context()


def tls_verify(verify: bool | str) -> bool | ssl.SSLContext:
    """A CA file path becomes an SSL context (httpx no longer takes paths); ``True`` is the
    shared default context (the same checks as httpx's ``verify=True``)."""
    if isinstance(verify, str):
        return ssl.create_default_context(cafile=verify)
    return _default_tls() if verify else verify


#: The announcement ``plinth serve`` prints once it holds its port (``cli/store/serve.py``).
ANNOUNCED = re.compile(r"Plinth serving https?://[^\s:]+:(\d+)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServerProcess:
    url: str
    key: str
    org: str
    data_dir: Path
    process: subprocess.Popen[bytes]
    log_path: Path

    def client(self, token: str | None = None, verify: bool | str = True) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token or self.key}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30, verify=tls_verify(verify))

    def read_key(self) -> str:
        """The bootstrap admin key, once the server has written it (``key`` is ``""`` before)."""
        path = self.data_dir / "bootstrap-admin.key"
        self.key = path.read_text().strip() if path.exists() else ""
        return self.key

    def kill(self) -> None:
        """SIGKILL the whole process group (the server and its workers), as a crash would."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def log_lines(self) -> list[str]:
        return self.log_path.read_text().splitlines()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


def start_server(
    data_dir: Path,
    database_url: str | None = None,
    org: str = "acme",
    workers: int = 1,
    extra_args: tuple[str, ...] = (),
    scheme: str = "http",
    verify: bool | str = True,
    port: int | None = None,
    ready_path: str = "/readyz",
    secrets_key: str | None = None,
) -> ServerProcess:
    """Start ``plinth serve`` and return once ``ready_path`` answers 200 (``/healthz``: once it
    listens, ready or not). ``port`` lets a restarted server keep its address. ``secrets_key``
    goes in ``PLINTH_SECRETS_KEY``; a PostgreSQL server without ``--secrets-key-file`` gets
    ``TEST_SECRETS_KEY`` unless given one (``""``: none at all)."""
    # Without a port the server takes any free one (--port 0) and announces it: a port chosen
    # here and bound there could be taken in between by a server another test starts.
    args = [sys.executable, "-m", "plinth", "serve", "--host", "127.0.0.1", "--port", str(port or 0)]
    args += ["--data-dir", str(data_dir), "--org", org, "--workers", str(workers), *extra_args]
    if database_url:
        args += ["--database-url", database_url]
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    if secrets_key is None and database_url and "--secrets-key-file" not in extra_args:
        secrets_key = TEST_SECRETS_KEY
    if secrets_key:
        env["PLINTH_SECRETS_KEY"] = secrets_key
    with open(log_path, "wb") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"{scheme}://127.0.0.1:{port}" if port else None
    deadline = time.monotonic() + READY_TIMEOUT_S
    # One client for every poll (a refused connection leaves it usable), not one per poll.
    with httpx.Client(timeout=1, verify=tls_verify(verify)) as poller:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"plinth serve exited early:\n{log_path.read_text()}")
            if url is None:
                announced = ANNOUNCED.search(log_path.read_text(errors="replace"))
                if announced is None:
                    time.sleep(0.05)
                    continue
                url = f"{scheme}://127.0.0.1:{announced.group(1)}"
            try:
                if poller.get(f"{url}{ready_path}").status_code == 200:
                    server = ServerProcess(url, "", org, data_dir, process, log_path)
                    server.read_key()
                    return server
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)
    raise RuntimeError(f"plinth serve did not become ready:\n{log_path.read_text()}")


@contextlib.contextmanager
def serving(backend: str, data_dir: Path, extra_args: tuple[str, ...] = ()) -> Iterator[ServerProcess]:
    """A server on ``backend`` ("sqlite" or "postgres", in a throwaway database), stopped after."""
    from tests.support import pg

    database_url = pg.create_database() if backend == "postgres" else None
    try:
        proc = start_server(data_dir, database_url, extra_args=extra_args)
        try:
            yield proc
        finally:
            proc.stop()
    finally:
        if database_url:
            pg.drop_database(database_url)
