"""Real containers for the tests: podman with runc, a busybox image built here, and Caddy.

- **Installed when missing.** ``podman``, ``runc``, ``busybox-static`` and ``caddy`` come from
  Debian's packages: ``apt-get update`` once, then ``apt-get install`` (as root, under a file
  lock, as ``tests/console`` installs Chromium). When that cannot be done the tests skip with
  the reason, except under ``CI=true``, where they fail (``tests/support/required.py``).
- **Engine configuration the tests write.** Podman reads ``CONTAINERS_CONF``; the file sets
  ``runtime = "runc"`` (crun fails on this machine's kind of hybrid cgroup v1/v2 hierarchy) and
  ``default_ulimits`` *lowered* to at most the current soft limits: podman otherwise asks runc
  for ``nproc``/``nofile`` limits above them, and raising a limit needs ``CAP_SYS_RESOURCE``,
  which a sandboxed root may lack (``error setting rlimit type 6: operation not permitted``).
- **One image, built locally** (no registry is reachable): ``FROM scratch`` plus Debian's
  static busybox with its applet links, a ``/www/index.html``, a CGI script
  ``/www/cgi-bin/echo`` (:data:`ECHO_CGI`) and ``/tmp``. Its tag carries a
  digest of its contents, so it is built once per machine and shared by every session.
  By default a container of it serves ``/www`` with ``busybox httpd`` on port 8080 and exits at
  once on SIGTERM. Inside it, use ``wget -q`` (busybox's progress bar crashes without a tty)
  and ``nc`` for container-to-container calls.
- **Labelled and removed.** Every container, network, volume and secret a test makes carries
  ``plinth.managed=true`` and ``plinth.test-run=<id>`` (:attr:`ContainerKit.labels`); the
  session's finalizer removes everything carrying its test-run label.
- **Loopback only.** Tests reach containers through ports published on 127.0.0.1.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import resource
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from plinth.runtime.containers.tmpfs_secrets import TmpfsSecrets
from tests.support.paths import ROOT
from tests.support.required import unavailable

PACKAGES = ("podman", "runc", "busybox-static", "caddy")
BUSYBOX = Path(os.environ.get("PLINTH_TEST_BUSYBOX", "/bin/busybox"))
APT_TIMEOUT_S = 240  # under pytest-timeout's 300 s for the test whose set-up installs them
TEST_RUN = "plinth.test-run"
IMAGE_REPO = "localhost/plinth-test-busybox"
#: The image's default command: serve /www on 8080, and stop at once on SIGTERM (a shell that
#: is PID 1 ignores it unless it traps it).
SERVE = "trap 'exit 0' TERM; httpd -f -p 8080 -h /www & wait"
CONTAINERFILE = f"""FROM scratch
COPY bin /bin
COPY www /www
COPY tmp /tmp
ENTRYPOINT ["/bin/sh"]
CMD {json.dumps(["-c", SERVE])}
"""
INDEX = b"hello from plinth-test-busybox\n"
#: ``/cgi-bin/echo``: what the request looked like on arrival (for the gateway's rewrites and
#: headers), and which container answered (its hostname).
ECHO_CGI = """#!/bin/sh
echo "Content-Type: text/plain"
echo
echo "replica=$(hostname) uri=$REQUEST_URI header=$HTTP_X_PLINTH_TEST host=$HTTP_HOST"
"""
ULIMIT_CEILING = 4096


@dataclass(frozen=True)
class ContainerKit:
    """What a test needs to make containers: the engine, its configuration and the image."""

    engine: str
    #: The engine's configuration: podman's ``CONTAINERS_CONF`` file, docker's daemon socket.
    conf: Path
    image: str
    run_id: str
    #: Labels every object a test makes must carry (removed by the session's finalizer).
    labels: dict[str, str] = field(default_factory=dict)

    def cli(
        self, *args: str, check: bool = True, timeout: float = 120, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run this kit's engine client (``podman`` or ``docker``); ``check`` raises on failure."""
        return engine_cli(self.engine, *args, check=check, timeout=timeout, input=input)

    def remove(self, *names: str) -> None:
        """Remove these containers at once, whatever their state (absent ones are ignored), and
        with docker their secret files (which the driver removes when it removes a container)."""
        if names:
            self.cli("rm", "--force", *_NOW[self.engine], *names, check=False)
        for name in names if self.engine == "docker" else ():
            TmpfsSecrets().remove(name)


def _binaries() -> dict[str, str | None]:
    return {name: shutil.which(name) for name in ("podman", "runc", "caddy")}


def _is_static_elf(path: Path) -> bool:
    """Whether ``path`` is a 64-bit ELF executable without an interpreter (statically linked):
    only such a busybox runs in a ``FROM scratch`` image."""
    try:
        data = path.read_bytes()[:65536]
    except OSError:
        return False
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return False
    offset, size, count = (int.from_bytes(data[a:b], "little") for a, b in ((32, 40), (54, 56), (56, 58)))
    pt_interp = 3
    return all(
        int.from_bytes(data[offset + i * size : offset + i * size + 4], "little") != pt_interp for i in range(count)
    )


def _missing() -> list[str]:
    found = _binaries()
    missing = [name for name in ("podman", "runc", "caddy") if found[name] is None]
    if not _is_static_elf(BUSYBOX):
        missing.append("busybox-static")
    return missing


def apt_install(packages: list[str] | tuple[str, ...]) -> None:
    """``apt-get update`` and ``apt-get install`` the packages, or skip (fail under CI) saying why not."""
    what = ", ".join(packages)
    if shutil.which("apt-get") is None:
        unavailable("container tools", f"{what} missing and there is no apt-get to install them")
    if os.geteuid() != 0:
        unavailable("container tools", f"{what} missing: run 'apt-get install {' '.join(packages)}' as root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for args in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *packages]):
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=APT_TIMEOUT_S, env=env, check=False)
        except subprocess.TimeoutExpired:
            unavailable("container tools", f"'{' '.join(args)}' took more than {APT_TIMEOUT_S} s")
        if done.returncode != 0:
            unavailable("container tools", f"'{' '.join(args)}' failed ({done.returncode}):\n{done.stderr[-2000:]}")


def lock(name: str) -> int:
    lock_dir = ROOT / "build"
    lock_dir.mkdir(exist_ok=True)
    fd = os.open(lock_dir / name, os.O_CREAT | os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # one xdist worker (or session) at a time; released on close
    return fd


def ensure_tools() -> None:
    """podman, runc, a static busybox and caddy, installed when missing (skip or fail if impossible)."""
    fd = lock("containers.lock")
    try:
        missing = _missing()
        if missing:
            apt_install(PACKAGES)
    finally:
        os.close(fd)
    missing = _missing()
    if missing:
        unavailable("container tools", f"apt-get did not install {', '.join(missing)}")


def write_containers_conf(directory: Path) -> Path:
    """A ``containers.conf`` for the tests: runc, and ulimits no higher than this process's."""
    nofile = min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], ULIMIT_CEILING)
    nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[0], ULIMIT_CEILING)
    path = directory / "containers.conf"
    path.write_text(
        "# Written by tests/support/containers.py: see its docstring for why.\n"
        "[containers]\n"
        f'default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n'
        "[engine]\n"
        'runtime = "runc"\n'
    )
    return path


def engine_cli(
    engine: str, *args: str, check: bool = True, timeout: float = 120, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``engine``'s client (podman with the environment's ``CONTAINERS_CONF``, docker with
    its ``DOCKER_HOST``); ``check`` raises on failure."""
    done = subprocess.run([engine, *args], capture_output=True, text=True, timeout=timeout, check=False, input=input)
    if check and done.returncode != 0:
        raise AssertionError(f"{engine} {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done


def podman(
    *args: str, check: bool = True, timeout: float = 120, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run podman (with the environment's ``CONTAINERS_CONF``); ``check`` raises on failure."""
    return engine_cli("podman", *args, check=check, timeout=timeout, input=input)


def get_when_up(port: int, wait_s: float) -> httpx.Response:
    """GET / on a port published on 127.0.0.1 once the server in the container listens,
    retrying connection errors for up to ``wait_s`` seconds (then the last one is raised)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def image_tag() -> str:
    digest = hashlib.sha256(BUSYBOX.read_bytes() + CONTAINERFILE.encode() + INDEX + ECHO_CGI.encode()).hexdigest()[:12]
    return f"{IMAGE_REPO}:{digest}"


def ensure_image(work: Path) -> str:
    """The test image, built from a context under ``work`` unless the engine has it already."""
    tag = image_tag()
    fd = lock("containers-image.lock")
    try:
        if podman("image", "exists", tag, check=False).returncode == 0:
            return tag
        context = image_context(work)
        done = podman(
            "build", "--quiet", "--tag", tag, "--file", str(context / "Containerfile"), str(context), check=False
        )
        if done.returncode != 0:
            unavailable("podman", f"podman could not build the test image: {done.stderr.strip()[-2000:]}")
        return tag
    finally:
        os.close(fd)


def image_context(work: Path) -> Path:
    """The test image's build context (static busybox and its applets, the pages, the CGI
    script, ``Containerfile``), made under ``work``."""
    context = work / "image"
    (context / "bin").mkdir(parents=True)
    (context / "www").mkdir()
    (context / "tmp").mkdir()
    shutil.copy2(BUSYBOX, context / "bin" / "busybox")
    applets = subprocess.run([str(BUSYBOX), "--list"], capture_output=True, text=True, check=True).stdout.split()
    for applet in applets:
        if applet != "busybox":
            (context / "bin" / applet).symlink_to("busybox")
    (context / "www" / "index.html").write_bytes(INDEX)
    (context / "www" / "cgi-bin").mkdir()
    (context / "www" / "cgi-bin" / "echo").write_text(ECHO_CGI)
    (context / "www" / "cgi-bin" / "echo").chmod(0o755)
    (context / "Containerfile").write_text(CONTAINERFILE)
    return context


def smoke(image: str, labels: dict[str, str], engine: str = "podman") -> None:
    """Run one container to completion, or skip (fail under CI) with the engine's own error."""
    label_args = [arg for k, v in labels.items() for arg in ("--label", f"{k}={v}")]
    done = engine_cli(engine, "run", "--rm", *label_args, image, "-c", "echo ok", check=False)
    if done.returncode != 0 or done.stdout.strip() != "ok":
        unavailable(engine, f"{engine} cannot run containers here: {done.stderr.strip()[-2000:]}")


def _secrets_labelled(run_id: str, engine: str) -> list[str]:
    if engine != "podman":
        return []  # docker keeps secrets only in swarm mode, which the tests do not use
    names = podman("secret", "ls", "--format", "{{.Name}}", check=False).stdout.split()
    if not names:
        return []
    done = podman("secret", "inspect", *names, check=False)
    docs = json.loads(done.stdout or "[]")
    return [doc["Spec"]["Name"] for doc in docs if (doc["Spec"].get("Labels") or {}).get(TEST_RUN) == run_id]


#: ``rm --force`` without podman's ``--time 0`` waits out the stop timeout (docker's kills at once
#: and has no such option); podman's ``network rm`` takes ``--force``, docker 20.10's does not.
_NOW = {"podman": ("--time", "0"), "docker": ()}
_FORCE = {"podman": ("--force",), "docker": ()}


def cleanup(run_id: str, engine: str = "podman") -> None:
    """Remove every container, secret, network and volume carrying this test run's label."""
    label = f"label={TEST_RUN}={run_id}"
    names = engine_cli(engine, "ps", "--all", "--format", "{{.Names}}", "--filter", label, check=False).stdout.split()
    if names:
        engine_cli(engine, "rm", "--force", *_NOW[engine], *names, check=False)
    for name in names if engine == "docker" else ():  # docker's secret files, on a tmpfs
        TmpfsSecrets().remove(name)
    secrets = _secrets_labelled(run_id, engine)
    if secrets:
        engine_cli(engine, "secret", "rm", *secrets, check=False)
    networks = engine_cli(engine, "network", "ls", "--quiet", "--filter", label, check=False).stdout.split()
    if networks:
        engine_cli(engine, "network", "rm", *_FORCE[engine], *networks, check=False)
    volumes = engine_cli(engine, "volume", "ls", "--quiet", "--filter", label, check=False).stdout.split()
    if volumes:
        engine_cli(engine, "volume", "rm", "--force", *volumes, check=False)


def leftovers(run_id: str, engine: str = "podman") -> list[str]:
    """What still carries this run's label (for tests of the clean-up itself)."""
    label = f"label={TEST_RUN}={run_id}"
    found = engine_cli(engine, "ps", "--all", "--quiet", "--filter", label, check=False).stdout.split()
    found += engine_cli(engine, "network", "ls", "--quiet", "--filter", label, check=False).stdout.split()
    found += engine_cli(engine, "volume", "ls", "--quiet", "--filter", label, check=False).stdout.split()
    return found + _secrets_labelled(run_id, engine)


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


MIGRATE_REQ = Path("/proc/sys/net/ipv4/tcp_migrate_req")


def ensure_tcp_migrate_req() -> None:
    """``net.ipv4.tcp_migrate_req = 1``, set when it is 0 and this is root (it applies to this
    network namespace): without it Linux resets the connections queued on a listener Caddy
    closes during a reload (``src/plinth/runtime/gateway/caddy.py``). Skips (fails under CI)
    when it cannot be had."""
    try:
        if MIGRATE_REQ.read_text().strip() == "1":
            return
    except OSError:
        unavailable("tcp_migrate_req", "this kernel has no net.ipv4.tcp_migrate_req (Linux 5.14 or later)")
    try:
        MIGRATE_REQ.write_text("1\n")
    except OSError as exc:
        reason = f"net.ipv4.tcp_migrate_req is 0 and cannot be set here ({exc})"
        unavailable("tcp_migrate_req", f"{reason}: run 'sysctl -w net.ipv4.tcp_migrate_req=1' as root")
