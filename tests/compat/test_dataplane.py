"""The official CLI (pinned, unchanged) against the data plane of ``plinth serve --runtime
containers``: replica listing and ``replica stop``, ``exec`` (exit codes, stdin), ``connect`` on a
terminal with a resize, ``cp`` both ways, ``workload run --rm``, refused and revoked keys (the
command inside ends too), the audit trail, the API's access endpoint, and cpln-py's socket
client on ``/remote`` (docs/runtime.md, "The data plane"), on both stores.

One server per module and store, with one workload ``web`` of two replicas (the test busybox
image) in a GVC of the module's own; the finalizer removes the scope's containers.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from cpln.errors import WebSocketConnectionError
from cpln.utils import WebSocketAPI
from wsproto.events import BytesMessage, CloseConnection, Ping

from tests.compat.conftest import Cpln, Run
from tests.compat.test_cli_containers import FAST_CLOCK
from tests.support.containers import podman
from tests.support.runtime_server import RuntimeServer, wait_for
from tests.support.wsclient import WsClient

LOCATION = "aws-us-east-2"
WORKLOAD = "web"
MiB = 1024 * 1024


@dataclass
class Plane:
    """The module's server, its GVC with ``web`` running two replicas, and the CLI."""

    runtime: RuntimeServer
    gvc: str
    cpln_bin: Path
    home: Path

    @property
    def org(self) -> str:
        return self.runtime.org

    def cli(self, token: str | None = None) -> Cpln:
        return Cpln(self.cpln_bin, self.home, self.runtime.api.url, token or self.runtime.api.key)

    def argv(self, *args: str, token: str | None = None) -> list[str]:
        auth = ["--gvc", self.gvc, "--endpoint", self.runtime.api.url, "--token", token or self.runtime.api.key]
        auth += ["--org", self.org]
        if "--" in args:  # the flags go before the command's own arguments
            at = args.index("--")
            return [str(self.cpln_bin), *args[:at], *auth, *args[at:]]
        return [str(self.cpln_bin), *args, *auth]

    def cpln(self, *args: str, token: str | None = None, stdin: str = "", env: dict[str, str] | None = None) -> Run:
        runner = self.cli(token)
        done = subprocess.run(
            self.argv(*args, token=token),
            input=stdin,
            capture_output=True,
            text=True,
            env=runner.environ(env),
            timeout=180,
            check=False,
        )
        return Run(done.stdout, done.stderr, done.returncode)

    def exec(self, *command: str, replica: str = "web-0", token: str | None = None) -> Run:
        where = ("--location", LOCATION, "--replica", replica, "--container", "main")
        return self.cpln("workload", "exec", WORKLOAD, *where, "--", *command, token=token)

    def container(self, replica: str = "web-0") -> str:
        found = self.runtime.containers(**{"plinth.workload": WORKLOAD, "plinth.replica": replica})
        running = [c["Names"][0] for c in found if c.get("State") == "running"]
        assert running, f"no running container of {replica}"
        return running[0]

    def api(self) -> httpx.Client:
        return self.runtime.api.client()


@pytest.fixture(scope="module")
def plane(runtime: RuntimeServer, cpln_bin: Path, cpln_home: Path) -> Iterator[Plane]:
    gvc = f"g{uuid.uuid4().hex[:8]}"
    base = f"/org/{runtime.org}/gvc"
    container = {"name": "main", "image": runtime.kit.image, "ports": [{"number": 8080, "protocol": "http"}]}
    workload = {
        "name": WORKLOAD,
        "spec": {
            "type": "standard",
            "containers": [container],
            "defaultOptions": {"autoscaling": {"minScale": 2, "maxScale": 2}},
        },
    }
    with runtime.api.client() as api:
        placement = {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}
        assert api.post(base, json={"name": gvc, "spec": placement}).status_code == 201
        made = api.post(f"{base}/{gvc}/workload", json=workload)
        assert made.status_code == 201, made.text
    runtime.wait_running(WORKLOAD, 2)
    yield Plane(runtime, gvc, cpln_bin, cpln_home)
    with runtime.api.client() as api:
        api.delete(f"{base}/{gvc}/workload/{WORKLOAD}")
        api.delete(f"{base}/{gvc}")


def ok(run: Run) -> Run:
    assert run.code == 0, f"exit {run.code}\n{run.stdout}\n{run.stderr}"
    return run


def in_container(name: str, *argv: str) -> str:
    return podman("exec", name, *argv).stdout


def restricted_key(plane: Plane, permissions: list[str]) -> tuple[str, str, str]:
    """A service account holding ``permissions`` on ``web`` (and view on its GVC): its name,
    a key and the key's name."""
    name = f"sa{uuid.uuid4().hex[:8]}"
    org = plane.org
    with plane.api() as api:
        assert api.post(f"/org/{org}/serviceaccount", json={"name": name}).status_code == 201
        minted = api.post(f"/org/{org}/serviceaccount/{name}/-addKey", json={"description": "data plane test"})
        assert minted.status_code == 201, minted.text
        principal = [f"//serviceaccount/{name}"]
        policies = [
            ("workload", [f"//gvc/{plane.gvc}/workload/{WORKLOAD}"], permissions),
            ("gvc", [f"//gvc/{plane.gvc}"], ["view"]),
        ]
        for kind, links, granted in policies:
            body = {
                "name": f"{name}-{kind}",
                "targetKind": kind,
                "targetLinks": links,
                "bindings": [{"permissions": granted, "principalLinks": principal}],
            }
            made = api.post(f"/org/{org}/policy", json=body)
            assert made.status_code == 201, made.text
    return name, str(minted.json()["key"]), str(minted.json()["name"])


# -- status.remote and replicas --------------------------------------------------------------


def test_each_deployment_names_its_location_on_the_data_plane(plane: Plane) -> None:
    with plane.api() as api:
        deployments = api.get(f"/org/{plane.org}/gvc/{plane.gvc}/workload/{WORKLOAD}/deployment").json()["items"]
    remote = f"http://127.0.0.1:{plane.runtime.dataplane_port}/location/{LOCATION}"
    assert [(d["name"], d["status"]["remote"]) for d in deployments] == [(LOCATION, remote)]


def test_get_replicas_and_replica_get_list_the_running_replicas(plane: Plane) -> None:
    listed = ok(plane.cpln("workload", "get-replicas", WORKLOAD, "--location", LOCATION, "-o", "json")).json()
    assert listed["items"] == ["web-0", "web-1"]  # type: ignore[index]
    got = ok(plane.cpln("workload", "replica", "get", WORKLOAD, "-o", "json")).json()
    assert got["items"] == ["web-0", "web-1"]  # type: ignore[index]


def test_the_replica_listing_also_answers_with_a_double_slash_and_needs_a_key(plane: Plane) -> None:
    base = f"http://127.0.0.1:{plane.runtime.dataplane_port}/location/{LOCATION}/replicas"
    path = f"/org/{plane.org}/gvc/{plane.gvc}/workload/{WORKLOAD}"
    headers = {"Authorization": f"Bearer {plane.runtime.api.key}"}
    assert httpx.get(base + "/" + path, headers=headers).json()["items"] == ["web-0", "web-1"]
    assert httpx.get(base + path, headers=headers).json() == {"kind": "list", "items": ["web-0", "web-1"], "links": []}
    refused = httpx.get(base + path, headers={"Authorization": "Bearer nope"})
    assert refused.status_code == 401 and refused.json()["code"] == "unauthorized"


def test_replica_stop_replaces_the_replica(plane: Plane) -> None:
    before = plane.container("web-1")
    old_id = plane.runtime.running(WORKLOAD)[before]
    ok(plane.cpln("workload", "replica", "stop", WORKLOAD, "--location", LOCATION, "--replica-name", "web-1"))

    def replaced() -> bool:
        running = plane.runtime.running(WORKLOAD)
        return len(running) == 2 and old_id not in running.values()

    wait_for(replaced, "web-1 replaced by a new container")
    listed = ok(plane.cpln("workload", "get-replicas", WORKLOAD, "--location", LOCATION, "-o", "json")).json()
    assert listed["items"] == ["web-0", "web-1"]  # type: ignore[index]


# -- exec --------------------------------------------------------------------------------


def test_exec_prints_the_output_and_exits_with_the_commands_code(plane: Plane) -> None:
    shown = ok(plane.exec("echo", "hello from the replica"))
    assert "hello from the replica" in shown.stdout
    assert ok(plane.exec("hostname")).stdout.strip().endswith("web-0")
    assert ok(plane.exec("true")).code == 0
    three = plane.exec("sh", "-c", "echo partial; exit 3")
    assert three.code == 3, three
    assert "partial" in three.stdout
    assert "Failed to create terminal session: command terminated with exit code 3" in three.stdout
    missing = plane.exec("no-such-command-here")
    assert missing.code == 127, missing


def test_exec_streams_stdin_into_the_process(plane: Plane) -> None:
    runner = plane.cli()
    where = ("--location", LOCATION, "--replica", "web-0", "--container", "main", "--stdin")
    text = "".join(f"line {i}\n" for i in range(2000))
    done = subprocess.run(
        plane.argv("workload", "exec", WORKLOAD, *where, "--", "wc", "-l"),
        input=text,
        capture_output=True,
        text=True,
        env=runner.environ(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done
    assert done.stdout.strip() == "2000"


def test_cp_copies_20_mib_both_ways_byte_for_byte(plane: Plane, tmp_path: Path) -> None:
    container = plane.container("web-0")
    upload = tmp_path / "up.bin"
    upload.write_bytes(os.urandom(20 * MiB))
    where = ("--location", LOCATION, "--replica", "web-0", "--container", "main")
    ok(plane.cpln("cp", str(upload), f"{WORKLOAD}:/tmp/up.bin", *where))
    inside = in_container(container, "sha256sum", "/tmp/up.bin").split()[0]
    assert inside == hashlib.sha256(upload.read_bytes()).hexdigest()

    in_container(container, "dd", "if=/dev/urandom", "of=/tmp/down.bin", "bs=1048576", "count=20")
    expected = in_container(container, "sha256sum", "/tmp/down.bin").split()[0]
    download = tmp_path / "down.bin"
    # A path relative to the working directory (/): with an absolute one, busybox's tar warns
    # "removing leading '/'" in words the CLI does not recognise as a warning (it knows GNU tar's
    # "Removing leading `/'"), and it would take the warning for part of the archive.
    ok(plane.cpln("cp", f"{WORKLOAD}:tmp/down.bin", str(download), *where))
    assert download.stat().st_size == 20 * MiB
    assert hashlib.sha256(download.read_bytes()).hexdigest() == expected


def test_output_goes_at_the_clients_pace_and_the_close_waits_for_its_acknowledgement(plane: Plane) -> None:
    """A slow client (it sleeps before each pong): each output message is followed by a ping
    carrying the bytes sent so far, nothing more comes until the client answered it, and the
    close comes only after it acknowledged every byte (docs/runtime.md, "The data plane", step
    6). The sleep only gives a server that did not wait the time to show it."""
    port = plane.runtime.dataplane_port
    client = WsClient(f"ws://127.0.0.1:{port}/location/{LOCATION}/exec")
    size = 6 * MiB
    request = {"token": plane.runtime.api.key, "org": plane.org, "gvc": plane.gvc, "pod": "web-0"}
    request |= {"container": "main", "command": ["head", "-c", str(size), "/dev/urandom"]}
    client.send(json.dumps(request))
    received, acknowledged, messages, within = 0, 0, 0, False
    try:
        while not isinstance(event := client.event(), CloseConnection):
            if isinstance(event, BytesMessage):  # a message may come in several events
                if not within:
                    assert acknowledged == received, "output came before the client acknowledged what it had"
                received += len(event.data)
                within = not event.message_finished
                messages += event.message_finished
            elif isinstance(event, Ping):
                count = int(event.payload)
                assert count == received or (count > size and received == size), (count, received)
                time.sleep(0.02)
                assert not client.pending(), "the server sent on before the client answered its ping"
                client.pong(event)
                acknowledged = min(count, size)
            else:
                raise AssertionError(f"unexpected {event!r}")
    finally:
        client.close()
    assert received == size
    assert acknowledged == size, "the server closed before the client acknowledged all of the output"
    assert messages > 0


# -- connect on a terminal -----------------------------------------------------------------


class Terminal:
    """A process on a pseudo-terminal of ours, as a user's shell runs the CLI."""

    def __init__(self, argv: list[str], env: dict[str, str], rows: int, cols: int) -> None:
        self.master, subordinate = pty.openpty()
        self.resize(rows, cols)
        self.proc = subprocess.Popen(argv, stdin=subordinate, stdout=subordinate, stderr=subordinate, env=env)
        os.close(subordinate)
        self.seen = b""

    def resize(self, rows: int, cols: int) -> None:
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        if hasattr(self, "proc"):
            self.proc.send_signal(signal.SIGWINCH)  # what the kernel sends a terminal's foreground

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def expect(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            assert time.monotonic() < deadline, f"timed out waiting for {text!r}; saw {self.seen[-2000:]!r}"
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:
                    break

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            os.close(self.master)


def test_connect_runs_a_shell_on_a_terminal_that_follows_resizes(plane: Plane) -> None:
    where = ("--location", LOCATION, "--replica", "web-0", "--container", "main", "--shell", "sh")
    term = Terminal(plane.argv("workload", "connect", WORKLOAD, *where), plane.cli().environ(), 24, 80)
    try:
        term.expect("/ # ")  # typed after the prompt, as a user does (the size is set as the shell starts)
        term.type("stty size; echo size-$((6*7))\r")
        term.expect("24 80")
        term.expect("size-42")
        term.resize(40, 120)
        time.sleep(0.5)  # the CLI debounces resizes before it sends one
        term.type("stty size; echo size-$((6*8))\r")
        term.expect("size-48")
        assert b"40 120" in term.seen, term.seen[-2000:]
        term.type("exit\r")
    finally:
        code = term.close()
    assert code == 0


# -- access and audit --------------------------------------------------------------------------


def test_a_key_without_connect_is_refused_and_nothing_runs(plane: Plane) -> None:
    _, key, _ = restricted_key(plane, ["view"])
    marker = f"/tmp/refused-{uuid.uuid4().hex[:8]}"
    refused = plane.exec("touch", marker, token=key)
    assert refused.code != 0, refused
    assert "Unauthorized: " in refused.stdout, refused
    listed = podman("exec", plane.container("web-0"), "ls", marker, check=False)
    assert listed.returncode != 0  # the command never ran


def test_a_key_with_connect_may_exec(plane: Plane) -> None:
    _, key, _ = restricted_key(plane, ["view", "connect"])
    assert "allowed" in ok(plane.exec("echo", "allowed", token=key)).stdout


def test_a_revoked_key_ends_an_open_session(plane: Plane) -> None:
    name, key, key_name = restricted_key(plane, ["view", "connect"])
    where = ("--location", LOCATION, "--replica", "web-0", "--container", "main")
    seconds = str(600 + uuid.uuid4().int % 1000)  # a command line of this test's own
    argv = plane.argv("workload", "exec", WORKLOAD, *where, "--", "sleep", seconds, token=key)
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=plane.cli().environ()
    )
    try:
        assert proc.stdout is not None
        container = plane.container("web-0")
        wait_for(lambda: f"sleep {seconds}" in in_container(container, "ps"), "the command running in web-0")
        with plane.api() as api:
            dropped = api.patch(f"/org/{plane.org}/serviceaccount/{name}", json={"$drop/keys": [key_name]})
            assert dropped.status_code == 200, dropped.text
        code = proc.wait(timeout=60)
        rest = proc.stdout.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code != 0
    assert "Unauthorized: " in rest, rest
    # The command inside ends with the session (the engine's exec client alone would leave it).
    wait_for(lambda: f"sleep {seconds}" not in in_container(container, "ps"), "the command gone from web-0")


def test_sessions_are_audited_in_the_workloads_event_log(plane: Plane) -> None:
    marker = f"audit-{uuid.uuid4().hex[:8]}"
    ok(plane.exec("echo", marker))
    with plane.api() as api:
        org_link = f"/org/{plane.org}"
        who = api.post(f"{org_link}/-runtime/access", json={"permission": "view", "link": org_link})
        assert who.status_code == 200, who.text
        principal = who.json()["principal"]
        events = api.get(f"{org_link}/gvc/{plane.gvc}/workload/{WORKLOAD}/-eventlog?limit=1000").json()["items"]
    audited = [e for e in events if e["context"].get("command") == ["echo", marker]]
    assert len(audited) == 1, events
    context = audited[0]["context"]
    assert audited[0]["status"] == "exec"
    assert context["principalLink"] == principal
    assert (context["replica"], context["location"], context["container"]) == ("web-0", LOCATION, "main")


def test_the_access_endpoint_answers_as_the_api_does(plane: Plane) -> None:
    org_link = f"/org/{plane.org}"
    path = f"{org_link}/-runtime/access"
    link = f"{org_link}/gvc/{plane.gvc}/workload/{WORKLOAD}"
    _, key, _ = restricted_key(plane, ["view"])
    with plane.api() as api:
        bad = api.post(path, json={"permission": 3, "link": "/nowhere", "extra": True})
        assert bad.status_code == 400, bad.text
        paths = {e["path"] for e in bad.json()["details"]["errors"]}
        assert {"permission", "extra"} <= paths
        unknown = api.post(path, json={"permission": "fly", "link": link})
        assert unknown.status_code == 400 and unknown.json()["details"]["errors"][0]["path"] == "permission"
        elsewhere = api.post(path, json={"permission": "view", "link": "/org/other-org"})
        assert elsewhere.status_code == 400
        missing = api.post(path, json={"permission": "view", "link": f"{org_link}/gvc/{plane.gvc}/workload/nope"})
        assert missing.status_code == 404
        restricted = {"Authorization": f"Bearer {key}"}
        viewed = api.post(path, json={"permission": "view", "link": link}, headers=restricted)
        assert viewed.status_code == 200, viewed.text
        denied = api.post(path, json={"permission": "connect", "link": link}, headers=restricted)
        assert denied.status_code == 403 and denied.json()["details"]["permission"] == "connect"
        stranger = api.post(path, json={"permission": "view", "link": link}, headers={"Authorization": "Bearer x"})
        assert stranger.status_code == 401


def test_workload_run_with_a_local_image_runs_the_command_and_removes_the_workload(
    plane: Plane, tmp_path: Path
) -> None:
    clock = tmp_path / "fast-clock.js"
    clock.write_text(FAST_CLOCK)  # the CLI waits a minute before it connects (commands/workload.js)
    env = {"NODE_OPTIONS": f"--require={clock}"}
    image = plane.runtime.kit.image
    ran = ok(plane.cpln("workload", "run", "--image", image, "--rm", "--", "echo", "ran-in-a-new-workload", env=env))
    assert "ran-in-a-new-workload" in ran.stdout
    with plane.api() as api:
        names = [w["name"] for w in api.get(f"/org/{plane.org}/gvc/{plane.gvc}/workload").json()["items"]]
    assert names == [WORKLOAD]  # --rm deleted the workload it made


def test_the_python_sdk_runs_commands_on_remote(plane: Plane, capsys: pytest.CaptureFixture[str]) -> None:
    """cpln-py's socket client (``cpln/utils/websocket.py``) decodes every message as bytes, so
    output and status messages on ``/remote`` are binary. Its websocket-client (1.9) reports any
    close the server starts, even a normal one, to ``on_error``, which cpln-py raises: a call
    that ran fine ends with that error, after the output was printed."""
    remote = f"ws://127.0.0.1:{plane.runtime.dataplane_port}/location/{LOCATION}/remote"
    where = {"token": plane.runtime.api.key, "org": plane.org, "gvc": plane.gvc, "container": "main", "pod": "web-0"}
    with pytest.raises(WebSocketConnectionError, match=r"closed normally \(code 1000\)"):
        WebSocketAPI(remote).exec(**where, command=["echo", "from-cpln-py"])
    assert "from-cpln-py" in capsys.readouterr().out
