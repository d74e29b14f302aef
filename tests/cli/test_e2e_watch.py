"""``plinth rest get <list> --watch`` through the real entry point against a real server: each
output form, resuming after a dropped connection without repeats or gaps, and Ctrl-C (exit 0)."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

import httpx
import pytest
import yaml

from tests.cli.conftest import PlinthCli
from tests.support.server import ServerProcess
from tests.support.tcpproxy import TcpProxy
from tests.support.versions import seq_reader

ORG = "/org/acme"
PATIENCE_S = 30


def _interruptible() -> None:
    """Ctrl-C as a terminal sends it: a test run started in the background by a shell without job
    control inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Watching:
    """``plinth rest get ... --watch`` running; its standard output a line at a time."""

    def __init__(
        self, cli: PlinthCli, *args: str, endpoint: str | None = None, command: tuple[str, ...] = ("rest", "get")
    ):
        argv = [sys.executable, "-m", "plinth", *command, *args]
        argv += ["--endpoint", endpoint or str(cli.endpoint), "--token", str(cli.token)]
        self.process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli.environ(),
            preexec_fn=_interruptible,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.printed: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.printed.append(line.rstrip("\n"))
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def until(self, predicate: Callable[[str], bool]) -> list[str]:
        seen: list[str] = []
        while True:
            try:
                line = self.lines.get(timeout=PATIENCE_S)
            except queue.Empty as exc:
                raise AssertionError(f"nothing more printed; saw {seen}") from exc
            assert line is not None, f"the command ended; saw {seen}\n{self.stop()[1]}"
            seen.append(line)
            if predicate(line):
                return seen

    def live(self, api: httpx.Client, probe: str) -> None:
        """Return once the watch is established (``--watch-only`` shows only later changes): a
        probe item is touched until a change of it is printed."""
        api.post(f"{ORG}/gvc", json={"name": probe}).raise_for_status()
        for n in range(PATIENCE_S * 4):
            api.patch(f"{ORG}/gvc/{probe}", json={"description": f"probe {n}"}).raise_for_status()
            try:
                while (line := self.lines.get(timeout=0.25)) is not None:
                    if probe in line:
                        return
            except queue.Empty:
                continue
        raise AssertionError("the watch never printed a change of the probe")

    def stop(self) -> tuple[int, str]:
        """Ctrl-C, then the exit code and standard error."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        code = self.process.wait(PATIENCE_S)
        assert self.process.stderr is not None
        return code, self.process.stderr.read()


@pytest.fixture
def api(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def test_watch_json_prints_the_current_items_then_each_change_and_exits_0_on_ctrl_c(
    cli: PlinthCli, server: ServerProcess, api: httpx.Client, unique: str
) -> None:
    api.post(f"{ORG}/gvc", json={"name": f"{unique}-a"}).raise_for_status()
    watching = Watching(cli, f"{ORG}/gvc", "-w", "-o", "json")
    before = watching.until(lambda line: f'"{unique}-a"' in line)
    api.patch(f"{ORG}/gvc/{unique}-a", json={"description": "changed"}).raise_for_status()
    after = watching.until(lambda line: '"MODIFIED"' in line)
    code, stderr = watching.stop()
    assert code == 0, stderr
    first, changed = json.loads(before[-1]), json.loads(after[-1])
    assert (first["type"], first["object"]["name"]) == ("ADDED", f"{unique}-a")
    assert (changed["type"], changed["object"]["description"]) == ("MODIFIED", "changed")
    seq = seq_reader(server)  # versions are opaque to clients; the test reads their order
    assert seq(changed["resourceVersion"]) > seq(first["resourceVersion"])


def test_watch_only_text_prints_a_table_row_per_change_with_the_event_first(
    cli: PlinthCli, api: httpx.Client, unique: str
) -> None:
    watching = Watching(cli, f"{ORG}/gvc", "--watch-only")
    watching.live(api, f"{unique}-probe")
    api.post(f"{ORG}/gvc", json={"name": f"{unique}-t", "description": "shown"}).raise_for_status()
    api.delete(f"{ORG}/gvc/{unique}-t").raise_for_status()
    lines = watching.until(lambda line: line.startswith("|DELETED"))
    code, stderr = watching.stop()
    assert code == 0, stderr
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in lines if line.startswith("|")]
    assert [row[:3] for row in rows if row[1] == f"{unique}-t"] == [
        ["ADDED", f"{unique}-t", "shown"],
        ["DELETED", f"{unique}-t", "shown"],
    ]
    header = [cell.strip() for cell in watching.printed[1].split("|")[1:-1]]
    assert header[:3] == ["EVENT", "NAME", "DESCRIPTION"]
    assert watching.printed[0].startswith("+--") and watching.printed[2].startswith("|--")


def test_watch_yaml_prints_one_document_per_change(cli: PlinthCli, api: httpx.Client, unique: str) -> None:
    watching = Watching(cli, f"{ORG}/gvc", "--watch-only", "-o", "yaml")
    watching.live(api, f"{unique}-probe")
    api.post(f"{ORG}/gvc", json={"name": f"{unique}-y"}).raise_for_status()
    api.delete(f"{ORG}/gvc/{unique}-y").raise_for_status()
    lines = watching.until(lambda line: line == "type: DELETED")
    lines += watching.until(lambda line: line.strip() == "rel: org")  # the document's last line
    watching.stop()
    documents = [d for d in yaml.safe_load_all("\n".join(lines[lines.index("---") :])) if d]
    assert [(d["type"], d["object"]["name"]) for d in documents] == [
        ("ADDED", f"{unique}-y"),
        ("DELETED", f"{unique}-y"),
    ]


def test_watch_resumes_after_a_dropped_connection_without_repeats_or_gaps(
    cli: PlinthCli, server: ServerProcess, api: httpx.Client, unique: str
) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    with TcpProxy(host, int(port)) as proxy:
        watching = Watching(cli, f"{ORG}/gvc", "--watch-only", "-o", "names", endpoint=f"http://127.0.0.1:{proxy.port}")
        watching.live(api, f"{unique}-probe")
        api.post(f"{ORG}/gvc", json={"name": f"{unique}-1"}).raise_for_status()
        watching.until(lambda line: line == f"ADDED {unique}-1")
        proxy.refuse()  # the connection drops; changes go on meanwhile
        api.post(f"{ORG}/gvc", json={"name": f"{unique}-2"}).raise_for_status()
        api.patch(f"{ORG}/gvc/{unique}-1", json={"description": "while away"}).raise_for_status()
        proxy.restore()
        api.post(f"{ORG}/gvc", json={"name": f"{unique}-3"}).raise_for_status()
        later = watching.until(lambda line: line == f"ADDED {unique}-3")
        code, stderr = watching.stop()
    assert code == 0, stderr
    mine = [line for line in later if unique in line]
    assert mine == [f"ADDED {unique}-2", f"MODIFIED {unique}-1", f"ADDED {unique}-3"]


def test_watch_refuses_formats_without_a_stream_form(cli: PlinthCli) -> None:
    run = cli("rest", "get", f"{ORG}/gvc", "-w", "-o", "tf")
    assert run.code != 0 and "--watch prints" in run.stderr


def test_plinth_get_watch_follows_a_kind_like_rest_get(cli: PlinthCli, api: httpx.Client, unique: str) -> None:
    """``plinth get KIND --watch`` (issue 13) is ``rest get <its list path> --watch``."""
    api.post(f"{ORG}/gvc", json={"name": f"{unique}-g"}).raise_for_status()
    watching = Watching(cli, "gvc", "--watch", "-o", "json", "--org", "acme", command=("get",))
    watching.until(lambda line: f'"{unique}-g"' in line)
    api.patch(f"{ORG}/gvc/{unique}-g", json={"description": "via get"}).raise_for_status()
    changed = json.loads(watching.until(lambda line: '"MODIFIED"' in line and f'"{unique}-g"' in line)[-1])
    code, stderr = watching.stop()
    assert code == 0, stderr
    assert changed["object"]["description"] == "via get"
    named = cli("get", "gvc", f"{unique}-g", "--watch", "--org", "acme")
    assert named.code == 1 and "whole list" in named.stderr
