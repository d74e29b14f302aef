"""Caddy as the gateway: a child process configured through its admin API.

:class:`Caddy` starts ``caddy run`` with a bootstrap configuration holding only its admin
endpoint (on loopback), then :meth:`Caddy.apply` loads whole configurations with ``POST /load``.
Caddy swaps configurations gracefully: the listening socket is kept and in-flight requests
finish on the old one (for up to ``GRACE_PERIOD``), so a reload drops no connection.

One machine setting matters: Caddy (2.6, Debian's) binds each new configuration's listener
beside the old one with ``SO_REUSEPORT`` and then closes the old one, and Linux resets the
connections still waiting in a closing listener's accept queue unless
``net.ipv4.tcp_migrate_req`` is 1 (Linux 5.14 and later), which hands them to the new
listener instead. Measured here: with it 0, about one run in five of 20 reloads under a stream
of requests saw a connection reset; with it 1, none did. :func:`reloads_keep_queued_connections`
tells which applies, so the caller can say so.

Everything Caddy writes (its log, the bootstrap file, its data and config directories through
``HOME``/``XDG_*``) stays under ``state_dir``; none of it holds a secret.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from plinth.runtime.gateway.routes import RouteTable, caddy_config

START_TIMEOUT_S = 20.0
MIGRATE_REQ = Path("/proc/sys/net/ipv4/tcp_migrate_req")
STOP_TIMEOUT_S = 15.0


class GatewayError(Exception):
    """Caddy is missing, did not start, or refused a configuration (its message included)."""


def free_loopback_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def reloads_keep_queued_connections(setting: Path = MIGRATE_REQ) -> bool | None:
    """Whether a reload can hand queued connections to the new listener (``tcp_migrate_req``
    is 1); ``None`` when this kernel has no such setting (not Linux, or older than 5.14)."""
    try:
        return setting.read_text().strip() == "1"
    except OSError:
        return None


def loopback_address(address: str) -> str:
    """``address`` (``HOST:PORT``) when HOST is a loopback address or ``localhost``; the
    gateway serves this machine only, so anything else is a ``ValueError``."""
    host, sep, port = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"gateway listen address '{address}' is not HOST:PORT")
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise ValueError(f"gateway listen address '{address}' is not a loopback address")
    return address


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux for SIGTERM when the parent ends (``PR_SET_PDEATHSIG``)."""
    import ctypes

    pr_set_pdeathsig = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: stop() remains the only way


class Caddy:
    """One Caddy child process with its admin API on ``127.0.0.1:admin_port``."""

    def __init__(
        self, state_dir: Path, binary: str | None = None, admin_port: int | None = None, die_with_parent: bool = False
    ) -> None:
        found = binary or shutil.which("caddy")
        if found is None:
            raise GatewayError("caddy is not installed (apt-get install caddy)")
        self.binary = found
        self.state_dir = state_dir
        self.admin = f"127.0.0.1:{admin_port or free_loopback_port()}"
        self._process: subprocess.Popen[bytes] | None = None
        #: Linux: Caddy gets SIGTERM when the thread that started it ends (a controller killed
        #: with SIGKILL must not leave a gateway holding the listen port). Start it from the
        #: main thread then.
        self.die_with_parent = die_with_parent

    @property
    def admin_url(self) -> str:
        return f"http://{self.admin}"

    @property
    def log_path(self) -> Path:
        return self.state_dir / "caddy.log"

    def start(self) -> None:
        """Start Caddy and wait until its admin API answers; :class:`GatewayError` if it does not."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        bootstrap = self.state_dir / "bootstrap.json"
        bootstrap.write_text(json.dumps({"admin": {"listen": self.admin, "config": {"persist": False}}}))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.state_dir),
            "XDG_DATA_HOME": str(self.state_dir / "data"),
            "XDG_CONFIG_HOME": str(self.state_dir / "config"),
        }
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                [self.binary, "run", "--config", str(bootstrap)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
                start_new_session=True,  # a Ctrl-C meant for Plinth reaches Caddy through stop()
                preexec_fn=_die_with_parent if self.die_with_parent else None,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self._process.poll() is not None:
                raise GatewayError(f"caddy exited ({self._process.returncode}): {self._log_tail()}")
            try:
                if httpx.get(f"{self.admin_url}/config/", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise GatewayError(f"caddy's admin API did not answer within {START_TIMEOUT_S:g} s: {self._log_tail()}")
            time.sleep(0.05)

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    async def load(self, config: dict[str, Any]) -> None:
        """Replace Caddy's whole configuration; :class:`GatewayError` with Caddy's reason if refused."""
        # The admin API is plain HTTP on loopback: no TLS context to build (httpx builds one per
        # client by default, loading the CA bundle: 50 to 150 ms of CPU before every load).
        async with httpx.AsyncClient(timeout=30, verify=False) as client:
            try:
                response = await client.post(f"{self.admin_url}/load", json=config)
            except httpx.TransportError as exc:
                raise GatewayError(f"caddy's admin API is unreachable: {exc}") from exc
        if response.status_code != 200:
            raise GatewayError(f"caddy refused the configuration ({response.status_code}): {response.text.strip()}")

    async def apply(self, table: RouteTable, listen: str) -> None:
        """Serve ``table`` on ``listen`` (loopback ``HOST:PORT``)."""
        await self.load(caddy_config(table, loopback_address(listen), self.admin))

    def stop(self) -> None:
        """Stop Caddy gracefully (SIGTERM), killing it if it has not exited in time."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> Caddy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
