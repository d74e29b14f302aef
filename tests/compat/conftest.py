"""The official CLI (npm ``@controlplane/cli``, pinned) run unchanged against a real Plinth server.

- The CLI is installed by npm into ``<repo>/.cache/cpln`` (git-ignored) on first use, under a
  file lock so that pytest-xdist workers install it once. Without node or npm the compat tests
  are skipped with the reason shown, except under ``CI=true``, where that fails the run (as a
  missing PostgreSQL does, see ``tests/support/pg.py``).
- Every run has ``CPLN_SKIP_UPDATE_CHECK=1`` (no registry call) and a scratch ``CPLN_HOME`` made
  for the test session; nothing else leaks in from the caller's environment.
- ``Cpln`` runs one command with ``--endpoint``/``--token``/``--org`` (``mode="flags"``, in a
  ``CPLN_HOME`` with no profile at all) or through a ``cpln profile`` made for the server with
  ``cpln profile update`` (``mode="profile"``, in a ``CPLN_HOME`` of its own, where that profile
  is the default and supplies the endpoint, the token and the org).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support import npm, pg
from tests.support.containers import ContainerKit
from tests.support.paths import CPLN_BIN, CPLN_PREFIX, ROOT
from tests.support.required import unavailable
from tests.support.runtime_server import RuntimeServer, serving_runtime
from tests.support.server import ServerProcess, start_server

CPLN_PACKAGE = "@controlplane/cli"
CPLN_VERSION = "3.10.1"
ORG = "acme"


@dataclass
class Run:
    stdout: str
    stderr: str
    code: int

    def json(self) -> object:
        return json.loads(self.stdout)


def ensure_cpln() -> Path:
    """The pinned CLI's entry point, installed with npm when missing (skip or fail if impossible)."""
    what = "the official CLI"
    if "CPLN_BIN" in os.environ:
        if not CPLN_BIN.exists():
            unavailable(what, f"CPLN_BIN={CPLN_BIN} does not exist")
        return CPLN_BIN
    if shutil.which("node") is None:
        unavailable(what, "'node' is not on PATH: install Node.js 20+ to run the official CLI tests")
    npm.ensure_package(CPLN_PREFIX, CPLN_PACKAGE, CPLN_VERSION)
    if not CPLN_BIN.exists():
        unavailable(what, f"npm installed {CPLN_PACKAGE}@{CPLN_VERSION} without {CPLN_BIN}")
    return CPLN_BIN


@pytest.fixture(scope="session")
def cpln_bin() -> Path:
    return ensure_cpln()


@pytest.fixture(scope="session")
def cpln_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scratch ``CPLN_HOME`` (and ``HOME``, ``TMPDIR``) of this test session."""
    return tmp_path_factory.mktemp("cpln-home")


def base_environ(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
    }


@dataclass
class Cpln:
    """``cpln ARGS`` against one server, as a subprocess, authenticated by flags or by a profile."""

    bin: Path
    home: Path
    endpoint: str
    token: str
    mode: str = "flags"
    config: str = "cpln-flags"

    def environ(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        environ = {**base_environ(self.home), "CPLN_HOME": str(self.home / self.config), "CPLN_SKIP_UPDATE_CHECK": "1"}
        return {**environ, **(extra or {})}

    def raw(self, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> Run:
        argv = [str(self.bin), *args]
        done = subprocess.run(
            argv, input=stdin, capture_output=True, text=True, env=self.environ(env), timeout=120, check=False
        )
        return Run(done.stdout, done.stderr, done.returncode)

    def __call__(self, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> Run:
        """``cpln ARGS`` authenticated by this runner's mode (typed commands get the org too)."""
        if self.mode == "profile":
            return self.raw(*args, stdin=stdin, env=env)  # the default profile holds all three
        auth = ["--endpoint", self.endpoint, "--token", self.token]
        if args and args[0] not in ("rest", "profile"):
            auth += ["--org", ORG]
        return self.raw(*args, *auth, stdin=stdin, env=env)

    def with_profile(self, name: str) -> Cpln:
        """This CLI through a default profile ``name`` made by ``cpln profile update`` for the same server."""
        runner = Cpln(self.bin, self.home, self.endpoint, self.token, "profile", f"cpln-{name}")
        made = runner.raw("profile", "update", name, "--endpoint", self.endpoint, "--token", self.token, "--org", ORG)
        assert made.code == 0, made.stderr
        listed = runner.raw("profile", "get", "-o", "json")
        assert [(p["name"], p["request"]["endpoint"]) for p in json.loads(listed.stdout)] == [(name, self.endpoint)]
        return runner


@dataclass
class Plinth:
    """Plinth's own CLI (``python -m plinth``), given the same requests as ``cpln``."""

    home: Path
    endpoint: str
    token: str

    def __call__(self, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> Run:
        environ = {
            **base_environ(self.home),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
            "PLINTH_HOME": str(self.home / "plinth"),
            **(env or {}),
        }
        argv = [sys.executable, "-m", "plinth", *args, "--endpoint", self.endpoint, "--token", self.token]
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=environ, timeout=60, check=False)
        return Run(done.stdout, done.stderr, done.returncode)


def serve(tmp_path_factory: pytest.TempPathFactory, database_url: str | None = None) -> ServerProcess:
    return start_server(tmp_path_factory.mktemp("plinth-compat"), database_url, org=ORG)


@pytest.fixture(scope="module")
def server(cpln_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = serve(tmp_path_factory)
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[httpx.Client]:
    """Plinth's HTTP API, to check the stored state after each command."""
    with server.client() as client:
        yield client


@pytest.fixture(scope="module")
def cpln(cpln_bin: Path, cpln_home: Path, server: ServerProcess) -> Cpln:
    return Cpln(cpln_bin, cpln_home, server.url, server.key)


@pytest.fixture(scope="module")
def cpln_profile(cpln: Cpln, request: pytest.FixtureRequest) -> Cpln:
    """The same server through a ``cpln profile`` (one per module, so modules never share one)."""
    name = "compat-" + request.module.__name__.rsplit(".", 1)[-1].replace("_", "-")
    return cpln.with_profile(name)


@pytest.fixture(params=["flags", "profile"])
def either(request: pytest.FixtureRequest, cpln: Cpln, cpln_profile: Cpln) -> Cpln:
    """``cpln`` with ``--endpoint``/``--token``, then through a profile."""
    return cpln if request.param == "flags" else cpln_profile


@pytest.fixture
def plinth(server: ServerProcess, cpln_home: Path) -> Plinth:
    return Plinth(cpln_home, server.url, server.key)


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> str:
    import hashlib

    return "c" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:10]


@pytest.fixture(scope="module")
def pg_server(cpln_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    url = pg.create_database()
    try:
        process = serve(tmp_path_factory, url)
        try:
            yield process
        finally:
            process.stop()
    finally:
        pg.drop_database(url)


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def runtime(
    request: pytest.FixtureRequest,
    cpln_bin: Path,
    test_containers: ContainerKit,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RuntimeServer]:
    """``plinth serve --runtime containers`` for the requesting module, on each store, with the
    module's ``RUNTIME_ARGS`` (more ``plinth serve`` options) when it has them; the official
    CLI is installed first (``cpln_bin``)."""
    extra = tuple(getattr(request.module, "RUNTIME_ARGS", ()))
    where = tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2])
    with serving_runtime(request.param, where, test_containers, extra_args=extra) as server:
        yield server
