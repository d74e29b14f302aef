"""A Docker engine for the tests: Debian's ``docker.io``, one private daemon per machine.

Plinth drives podman or docker through their command-line clients (``plinth.runtime.containers``);
these helpers let the driver, controller and server tests run against a real Docker engine too.

- **Installed when missing.** ``dockerd`` (with containerd and runc) comes from Debian's
  ``docker.io``, installed with ``apt-get`` under the same lock as the podman tools
  (``tests/support/containers.py``). The client is whatever ``docker`` is first on ``PATH``
  (the package's own, or a newer one: it negotiates the API version down).
- **A private daemon.** Started by the first test that needs it, with its state under
  :data:`STATE` (data root, containerd, exec root, socket), a socket of its own that the tests
  name in ``DOCKER_HOST`` (no system socket is touched), and ``--iptables=false``: ports are
  published on 127.0.0.1 by docker's userland proxy, so the daemon needs no NAT and never
  rewrites the host's firewall. One per machine, because each daemon makes the same default
  bridge: later tests and sessions reuse it while it runs. The pytest run that started it stops
  it when it ends (:func:`stop_started_daemon`, from ``tests/conftest.py``).
- **The same image as podman's**, built from the same context with ``docker build`` (the
  classic builder: no buildx plugin is needed), under the same digest tag.
- **Labelled and removed**: every object a test makes carries the test-run label; the session's
  finalizer removes them (``containers.cleanup(run_id, "docker")``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from tests.support import containers
from tests.support.paths import ROOT
from tests.support.required import unavailable

PACKAGE = "docker.io"
#: Machine-wide (one daemon per machine); short, because the socket's path must fit a sockaddr.
STATE = Path("/var/tmp/plinth-test-docker")
SOCKET = STATE / "docker.sock"
PIDFILE = STATE / "dockerd.pid"
HOST = f"unix://{SOCKET}"
#: Written by the run whose test started the daemon: its pid, so that run stops it at its end.
STARTED_BY_THIS_TREE = ROOT / "build" / "dockerd-started"
START_WAIT_S = 60


def _missing() -> list[str]:
    return [name for name in ("dockerd", "docker") if shutil.which(name) is None]


def ensure_tools() -> None:
    """podman's tools (for the image's busybox) and Docker's daemon and client."""
    containers.ensure_tools()
    fd = containers.lock("containers.lock")
    try:
        if _missing():
            containers.apt_install([PACKAGE])
    finally:
        os.close(fd)
    missing = _missing()
    if missing:
        unavailable("docker", f"apt-get did not install {', '.join(missing)} ({PACKAGE})")


def _answers() -> bool:
    env = {**os.environ, "DOCKER_HOST": HOST}
    try:
        done = subprocess.run(["docker", "version"], capture_output=True, env=env, timeout=20, check=False)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _start() -> int:
    STATE.mkdir(mode=0o700, parents=True, exist_ok=True)
    argv = ["dockerd", "--host", HOST, "--pidfile", str(PIDFILE)]
    argv += ["--data-root", str(STATE / "root"), "--exec-root", str(STATE / "run")]
    argv += ["--iptables=false", "--ip6tables=false"]
    with open(STATE / "dockerd.log", "ab") as log:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True
        )
    deadline = time.monotonic() + START_WAIT_S
    while not _answers():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            tail = (STATE / "dockerd.log").read_text(errors="replace")[-2000:]
            unavailable("docker", f"dockerd did not start (exit {process.poll()}):\n{tail}")
        time.sleep(0.2)
    return process.pid


def ensure_daemon() -> None:
    """The machine's test daemon, started when it is not running; ``DOCKER_HOST`` names it for
    this process and its children from now on."""
    fd = containers.lock("docker-daemon.lock")
    try:
        if not _answers():
            pid = _start()
            STARTED_BY_THIS_TREE.parent.mkdir(exist_ok=True)
            STARTED_BY_THIS_TREE.write_text(f"{pid}\n")
    finally:
        os.close(fd)
    os.environ["DOCKER_HOST"] = HOST


def stop_started_daemon() -> None:
    """Stop the daemon if a test of this tree's run started it (SIGTERM: dockerd stops its
    containerd and leaves no container running, the tests having removed theirs)."""
    try:
        pid = int(STARTED_BY_THIS_TREE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    STARTED_BY_THIS_TREE.unlink(missing_ok=True)
    try:
        recorded = int(PIDFILE.read_text().strip())
    except (OSError, ValueError):
        return
    if recorded != pid:
        return  # another daemon since: not ours to stop
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


def ensure_image(work: Path) -> str:
    """The test image in the daemon, built from the podman image's context unless present."""
    tag = containers.image_tag()
    fd = containers.lock("docker-image.lock")
    try:
        if containers.engine_cli("docker", "image", "inspect", tag, check=False).returncode == 0:
            return tag
        context = containers.image_context(work)
        env = {**os.environ, "DOCKER_BUILDKIT": "0"}
        argv = ["docker", "build", "--quiet", "--tag", tag, "--file", str(context / "Containerfile"), str(context)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, check=False)
        if done.returncode != 0:
            unavailable("docker", f"docker could not build the test image: {done.stderr.strip()[-2000:]}")
        return tag
    finally:
        os.close(fd)
