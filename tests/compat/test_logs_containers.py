"""The official CLI's ``cpln logs`` (pinned, unchanged) against ``plinth serve --runtime
containers``: the controller collects what real containers write, ``/discovery`` names the data
plane as ``logs``, and the data plane answers ``query_range`` and the ``tail`` websocket for a
caller the API allows ``readLogs`` on the org (docs/runtime.md, "Logs"), on both stores.

One server per module and store, with one workload ``web`` of two replicas (the test busybox
image) in a GVC of the module's own; the finalizer removes the scope's containers. The tests
make a replica write a line on demand (``podman exec`` writing to its first process's stdout or
stderr, which the engine logs), with a marker of their own, and wait until the data plane has
it before writing the next: so the order of the lines is the order of the writes.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.compat.conftest import Cpln, Run
from tests.support.containers import podman
from tests.support.runtime_server import RuntimeServer, wait_for

LOCATION = "aws-us-east-2"
WORKLOAD = "web"
READ_S = 60
#: ``plinth serve --log-retention-bytes``, passed on to the controller.
RETENTION = 4 * 1024 * 1024


#: ``plinth serve`` options of this module's server (the ``runtime`` fixture, tests/compat/conftest.py).
RUNTIME_ARGS = ("--log-retention-bytes", str(RETENTION))


def workload_body(name: str, replicas: int, image: str) -> dict[str, object]:
    container = {"name": "main", "image": image, "ports": [{"number": 8080, "protocol": "http"}]}
    scale = {"autoscaling": {"minScale": replicas, "maxScale": replicas}}
    return {"name": name, "spec": {"type": "standard", "containers": [container], "defaultOptions": scale}}


@dataclass
class Logs:
    """The module's server, its GVC with ``web`` running two replicas, and the CLI."""

    runtime: RuntimeServer
    gvc: str
    cpln_bin: Path
    home: Path

    @property
    def org(self) -> str:
        return self.runtime.org

    @property
    def logs_url(self) -> str:
        return f"http://127.0.0.1:{self.runtime.dataplane_port}/logs/org/{self.org}/loki/api/v1"

    def argv(self, *args: str, token: str | None = None) -> list[str]:
        auth = ["--endpoint", self.runtime.api.url, "--token", token or self.runtime.api.key, "--org", self.org]
        return [str(self.cpln_bin), *args, *auth]

    def environ(self) -> dict[str, str]:
        return Cpln(self.cpln_bin, self.home, self.runtime.api.url, self.runtime.api.key).environ()

    def cpln(self, *args: str, token: str | None = None) -> Run:
        done = subprocess.run(
            self.argv(*args, token=token), capture_output=True, text=True, env=self.environ(), timeout=180, check=False
        )
        return Run(done.stdout, done.stderr, done.returncode)

    def selector(self, workload: str = WORKLOAD, **labels: str) -> str:
        matchers = {"gvc": self.gvc, "workload": workload, **labels}
        return "{" + ", ".join(f'{k}="{v}"' for k, v in matchers.items()) + "}"

    def container(self, replica: str, workload: str = WORKLOAD) -> str:
        found = self.runtime.containers(**{"plinth.workload": workload, "plinth.replica": replica})
        running = [c["Names"][0] for c in found if c.get("State") == "running"]
        assert running, f"no running container of {workload} {replica}"
        return running[0]

    def query(self, query: str, token: str | None = None, **params: str) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token or self.runtime.api.key}"}
        return httpx.get(f"{self.logs_url}/query_range", params={"query": query, **params}, headers=headers)

    def lines(self, query: str) -> list[str]:
        """The lines ``query`` answers now (through the data plane, as the admin)."""
        answer = self.query(query, limit="1000", direction="forward")
        assert answer.status_code == 200, answer.text
        values = [v for s in answer.json()["data"]["result"] for v in s["values"]]
        return [line for _, line in sorted(values, key=lambda v: int(v[0]))]

    def write(self, replica: str, text: str, stream: str = "stdout", workload: str = WORKLOAD) -> None:
        """Make ``replica`` write ``text`` on ``stream`` and wait until it is collected."""
        fd = 1 if stream == "stdout" else 2
        podman("exec", self.container(replica, workload), "sh", "-c", f"echo '{text}' > /proc/1/fd/{fd}")
        wait_for(lambda: text in self.lines(self.selector(workload) + f' |= "{text}"'), f"{text!r} collected")


@pytest.fixture(scope="module")
def logs(runtime: RuntimeServer, cpln_bin: Path, cpln_home: Path) -> Iterator[Logs]:
    gvc = f"g{uuid.uuid4().hex[:8]}"
    base = f"/org/{runtime.org}/gvc"
    with runtime.api.client() as api:
        placement = {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}
        assert api.post(base, json={"name": gvc, "spec": placement}).status_code == 201
        made = api.post(f"{base}/{gvc}/workload", json=workload_body(WORKLOAD, 2, runtime.kit.image))
        assert made.status_code == 201, made.text
    runtime.wait_running(WORKLOAD, 2)
    yield Logs(runtime, gvc, cpln_bin, cpln_home)
    with runtime.api.client() as api:
        api.delete(f"{base}/{gvc}/workload/{WORKLOAD}")
        api.delete(f"{base}/{gvc}")


@pytest.fixture(scope="module")
def written(logs: Logs) -> str:
    """A marker, and four lines carrying it written in turn by the two replicas on both streams."""
    marker = f"m{uuid.uuid4().hex[:8]}"
    for index, (replica, stream) in enumerate(
        [("web-0", "stdout"), ("web-1", "stderr"), ("web-0", "stderr"), ("web-1", "stdout")], start=1
    ):
        logs.write(replica, f"{marker}-{index} from {replica} {stream}", stream)
    return marker


def ok(run: Run) -> Run:
    assert run.code == 0, f"exit {run.code}\n{run.stdout}\n{run.stderr}"
    return run


def jsonl(run: Run) -> list[dict[str, Any]]:
    """The events of ``cpln logs -o jsonl``."""
    return [json.loads(line) for line in ok(run).stdout.splitlines() if line.strip()]


def account(logs: Logs, permissions: list[str]) -> tuple[str, str, str]:
    """A service account allowed ``view`` and ``permissions`` on the org: its name, a key and
    the key's name."""
    name = f"sa{uuid.uuid4().hex[:8]}"
    org = logs.org
    with logs.runtime.api.client() as api:
        assert api.post(f"/org/{org}/serviceaccount", json={"name": name}).status_code == 201
        minted = api.post(f"/org/{org}/serviceaccount/{name}/-addKey", json={"description": "logs test"})
        assert minted.status_code == 201, minted.text
        policy = {
            "name": f"{name}-org",
            "targetKind": "org",
            "target": "all",
            "bindings": [{"permissions": ["view", *permissions], "principalLinks": [f"//serviceaccount/{name}"]}],
        }
        made = api.post(f"/org/{org}/policy", json=policy)
        assert made.status_code == 201, made.text
    return name, str(minted.json()["key"]), str(minted.json()["name"])


class Follow:
    """``cpln logs -f`` running, its output lines read by a thread into a queue."""

    def __init__(self, logs: Logs, query: str, token: str | None = None) -> None:
        argv = logs.argv("logs", "-f", query, "-o", "raw", token=token)
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=logs.environ()
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw.decode().rstrip("\n"))
        self.lines.put(None)

    def next(self) -> str | None:
        return self.lines.get(timeout=READ_S)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


# -- discovery and the wire -------------------------------------------------------------------


def test_discovery_names_the_data_plane_as_logs_whatever_the_host(logs: Logs) -> None:
    found = httpx.get(f"{logs.runtime.api.url}/discovery", headers={"Host": "evil.example"}).json()["endpoints"]
    assert found["logs"] == f"http://127.0.0.1:{logs.runtime.dataplane_port}"
    assert found["api"] == logs.runtime.api.url  # the rest unchanged


def test_the_controller_keeps_logs_in_its_state_dir_with_the_retention_given(logs: Logs) -> None:
    (pid,) = logs.runtime.controllers()
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    at = argv.index(b"--log-retention-bytes")
    assert argv[at + 1] == str(RETENTION).encode()
    store = logs.runtime.data_dir / "gateway" / "logs" / "logs.sqlite3"
    assert store.stat().st_mode & 0o777 == 0o600


def test_query_range_names_a_bad_parameter_and_needs_a_key(logs: Logs) -> None:
    bad = logs.query(logs.selector(), limit="many")
    assert bad.status_code == 400, bad.text
    assert bad.json()["details"]["errors"][0]["path"] == "limit"
    anonymous = httpx.get(f"{logs.logs_url}/query_range", params={"query": logs.selector()})
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "unauthorized"
    stranger = logs.query(logs.selector(), token="not-a-key")
    assert stranger.status_code == 401


# -- cpln logs --------------------------------------------------------------------------------


def test_cpln_logs_interleaves_both_replicas_in_time_order(logs: Logs, written: str) -> None:
    events = jsonl(logs.cpln("logs", logs.selector() + f' |= "{written}"', "-o", "jsonl"))
    assert [e["line"] for e in events] == [
        f"{written}-1 from web-0 stdout",
        f"{written}-2 from web-1 stderr",
        f"{written}-3 from web-0 stderr",
        f"{written}-4 from web-1 stdout",
    ]
    labels = [e["labels"] for e in events]
    assert [(lb["replica"], lb["stream"]) for lb in labels] == [
        ("web-0", "stdout"),
        ("web-1", "stderr"),
        ("web-0", "stderr"),
        ("web-1", "stdout"),
    ]
    assert {(lb["gvc"], lb["workload"], lb["container"], lb["location"], lb["provider"]) for lb in labels} == {
        (logs.gvc, WORKLOAD, "main", LOCATION, "aws")
    }
    stamps = [str(e["timestamp"]) for e in events]
    assert stamps == sorted(stamps)


def test_cpln_logs_filters_by_replica_stream_and_line(logs: Logs, written: str) -> None:
    def raw(query: str) -> list[str]:
        return ok(logs.cpln("logs", query, "-o", "raw")).stdout.splitlines()

    assert raw(logs.selector(replica="web-1") + f' |= "{written}"') == [
        f"{written}-2 from web-1 stderr",
        f"{written}-4 from web-1 stdout",
    ]
    assert raw(logs.selector(stream="stderr") + f' |= "{written}"') == [
        f"{written}-2 from web-1 stderr",
        f"{written}-3 from web-0 stderr",
    ]
    assert raw(logs.selector() + f' |~ "{written}-[13]" != "stderr"') == [f"{written}-1 from web-0 stdout"]


def test_cpln_logs_follow_shows_a_line_written_after_it_started(logs: Logs) -> None:
    marker = f"f{uuid.uuid4().hex[:8]}"
    logs.write("web-0", f"{marker} before")
    follow = Follow(logs, logs.selector() + f' |= "{marker}"')
    try:
        assert follow.next() == f"{marker} before"  # the tail's first message: it is connected
        logs.write("web-1", f"{marker} after", "stderr")
        assert follow.next() == f"{marker} after"
    finally:
        follow.stop()


# -- access -----------------------------------------------------------------------------------


def test_a_key_without_read_logs_is_refused(logs: Logs, written: str) -> None:
    _, key, _ = account(logs, [])
    refused = logs.cpln("logs", logs.selector() + f' |= "{written}"', token=key)
    assert refused.code != 0 and written not in refused.stdout, refused
    answer = logs.query(logs.selector(), token=key)
    assert answer.status_code == 403, answer.text
    assert answer.json()["details"]["permission"] == "readLogs"
    upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13"}
    upgrade |= {"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "authorization": key}
    tail = httpx.get(f"{logs.logs_url}/tail", params={"query": logs.selector()}, headers=upgrade)
    assert tail.status_code == 403 and tail.json()["details"]["permission"] == "readLogs"
    tail = httpx.get(
        f"{logs.logs_url}/tail", params={"query": logs.selector()}, headers={**upgrade, "authorization": "x"}
    )
    assert tail.status_code == 401  # the answer on which the CLI's -f gives up


def test_a_key_with_read_logs_may_read_and_follow_until_revoked(logs: Logs, written: str) -> None:
    name, key, key_name = account(logs, ["readLogs"])
    shown = ok(logs.cpln("logs", logs.selector(replica="web-0") + f' |= "{written}"', "-o", "raw", token=key))
    assert shown.stdout.splitlines() == [f"{written}-1 from web-0 stdout", f"{written}-3 from web-0 stderr"]
    follow = Follow(logs, logs.selector() + f' |= "{written}-4"', token=key)
    try:
        assert follow.next() == f"{written}-4 from web-1 stdout"
        with logs.runtime.api.client() as api:
            dropped = api.patch(f"/org/{logs.org}/serviceaccount/{name}", json={"$drop/keys": [key_name]})
            assert dropped.status_code == 200, dropped.text
        assert follow.next() is None  # the tail ends, and the CLI with it
        assert follow.proc.wait(timeout=READ_S) != 0
    finally:
        follow.stop()


# -- deletion ---------------------------------------------------------------------------------


def test_a_deleted_workloads_lines_are_dropped(logs: Logs, written: str) -> None:
    name = f"w{uuid.uuid4().hex[:6]}"
    path = f"/org/{logs.org}/gvc/{logs.gvc}/workload"
    with logs.runtime.api.client() as api:
        made = api.post(path, json=workload_body(name, 1, logs.runtime.kit.image))
        assert made.status_code == 201, made.text
    logs.runtime.wait_running(name, 1)
    marker = f"d{uuid.uuid4().hex[:8]}"
    logs.write(f"{name}-0", f"{marker} of {name}", workload=name)
    query = logs.selector(name)
    assert ok(logs.cpln("logs", query, "-o", "raw")).stdout.splitlines() == [f"{marker} of {name}"]
    with logs.runtime.api.client() as api:
        assert api.delete(f"{path}/{name}").status_code in (200, 202, 204)
    wait_for(lambda: not logs.runtime.containers(**{"plinth.workload": name}), f"{name}'s containers removed")
    wait_for(lambda: logs.lines(query) == [], f"{name}'s lines dropped")
    assert ok(logs.cpln("logs", query, "-o", "raw")).stdout.strip() == ""
    # The other workload keeps its own.
    assert len(logs.lines(logs.selector() + f' |= "{written}"')) == 4
