"""Run a real ``plinth serve`` process on loopback for tests, and talk to it over HTTP."""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

READY_TIMEOUT_S = 30


def tls_verify(verify: bool | str) -> bool | ssl.SSLContext:
    """A CA file path becomes an SSL context (httpx no longer takes paths)."""
    return ssl.create_default_context(cafile=verify) if isinstance(verify, str) else verify


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
) -> ServerProcess:
    port = free_port()
    args = [sys.executable, "-m", "plinth", "serve", "--host", "127.0.0.1", "--port", str(port)]
    args += ["--data-dir", str(data_dir), "--org", org, "--workers", str(workers), *extra_args]
    if database_url:
        args += ["--database-url", database_url]
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    with open(log_path, "wb") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"{scheme}://127.0.0.1:{port}"
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"plinth serve exited early:\n{log_path.read_text()}")
        try:
            if httpx.get(f"{url}/readyz", timeout=1, verify=tls_verify(verify)).status_code == 200:
                key = (data_dir / "bootstrap-admin.key").read_text().strip()
                return ServerProcess(url, key, org, data_dir, process, log_path)
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)
    raise RuntimeError(f"plinth serve did not become ready:\n{log_path.read_text()}")
