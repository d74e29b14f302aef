"""Child processes, each in its own process group, all ended when the run ends.

A Plinth or uvicorn server with several workers is a supervisor plus spawned workers; killing
the group (not the pid) takes the workers too, also when the bench dies on Ctrl-C or an error.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO


class Processes:
    """Starts processes in new sessions and stops every one still alive on :meth:`close`."""

    def __init__(self) -> None:
        self._running: list[subprocess.Popen[bytes]] = []

    def start(
        self, argv: Sequence[str], *, env: dict[str, str], cwd: Path, stdout: IO[bytes], stderr: IO[bytes]
    ) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            list(argv), env=env, cwd=cwd, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, start_new_session=True
        )
        self._running.append(proc)
        return proc

    def stop(self, proc: subprocess.Popen[bytes], grace_s: float = 10.0) -> None:
        """SIGTERM the process group (uvicorn shuts workers down cleanly), SIGKILL after ``grace_s``."""
        if proc in self._running:
            self._running.remove(proc)
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait(timeout=grace_s)
        # Workers may outlive a supervisor that died first; the group still names them.
        _signal_group(proc, signal.SIGKILL)

    def close(self) -> None:
        for proc in list(self._running):
            try:
                self.stop(proc, grace_s=5.0)
            except Exception:  # keep ending the others
                pass

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # start_new_session: the pgid is the child's pid
    except (ProcessLookupError, PermissionError):
        pass


def free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago (the servers bind it right after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    """Until 127.0.0.1:port accepts connections; raise if the process exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with code {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listened on 127.0.0.1:{port} within {timeout_s:.0f} s")


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: fields start after the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def worker_pids(server_pid: int) -> list[int]:
    """The processes that serve requests: uvicorn's spawned workers, or the server itself
    when it runs one worker in-process (uvicorn does not fork for ``workers=1``)."""
    spawned = [p for p in _children(server_pid) if "spawn_main" in _cmdline(p)]
    return sorted(spawned) or [server_pid]


def rss_mb(pid: int) -> float | None:
    """VmRSS of ``pid`` in MB (10^6 bytes), or ``None`` if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / 1e6
    except OSError:
        return None
    return None
