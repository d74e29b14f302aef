"""End-to-end fixtures: a real ``plinth serve`` on loopback and the real ``plinth`` entry point
run as a user would (a subprocess of ``python -m plinth``), each run with its own config dir."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.api.conftest import BACKENDS
from tests.support.server import ServerProcess, serving, start_server

SRC = str(Path(__file__).resolve().parents[2] / "src")


#: The commands that talk to the server, to which ``PlinthCli`` adds ``--endpoint`` and ``--token``.
AUTHENTICATED = ("rest", "get", "apply", "delete")


@dataclass
class Run:
    stdout: str
    stderr: str
    code: int


@dataclass
class PlinthCli:
    """Runs ``python -m plinth`` with a clean environment: only what the test passes leaks in."""

    home: Path
    endpoint: str | None = None
    token: str | None = None

    def environ(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        environ = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": SRC,
            "HOME": str(self.home),
            "PLINTH_HOME": str(self.home / "plinth"),
            "TMPDIR": str(self.home),
            "LANG": "C.UTF-8",
            "TZ": "UTC",
        }
        return {**environ, **(extra or {})}

    def __call__(self, *args: str, stdin: str = "", env: dict[str, str] | None = None, auth: bool = True) -> Run:
        argv = list(args)
        if auth and args and args[0] in AUTHENTICATED:
            if self.endpoint:
                argv += ["--endpoint", self.endpoint]
            if self.token:
                argv += ["--token", self.token]
        done = subprocess.run(
            [sys.executable, "-m", "plinth", *argv],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.environ(env),
            timeout=60,
            check=False,
        )
        return Run(done.stdout, done.stderr, done.returncode)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = start_server(tmp_path_factory.mktemp("plinth-server"), org="acme")
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module", params=BACKENDS)
def store_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A real server per storage backend (SQLite, PostgreSQL), for a module's end-to-end tests."""
    with serving(request.param, tmp_path_factory.mktemp("plinth-store")) as proc:
        yield proc


@pytest.fixture
def cli(server: ServerProcess, tmp_path: Path) -> PlinthCli:
    return PlinthCli(home=tmp_path, endpoint=server.url, token=server.key)


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> str:
    import hashlib

    return "t" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:10]
