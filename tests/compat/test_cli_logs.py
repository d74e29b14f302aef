"""``cpln logs`` of the official CLI (pinned in conftest.py) against the logs service's
``query_range`` and ``tail`` (runtime/logs), over real SQLite.

The data plane that serves the service in the product is tested with the CLI in
test_logs_containers.py; here a minimal loopback HTTP server stands in for it with the two
paths the CLI calls for a query: ``/discovery`` (its ``endpoints.logs``) and
``{logs}/logs/org/{org}/loki/api/v1/query_range`` (``commands/logs.js`` of
``@controlplane/cli`` 3.10.1); for ``cpln logs -f``, ``/org/{org}`` (the CLI reads it first)
and the websocket ``{logs}/logs/org/{org}/loki/api/v1/tail``, served with ``wsproto``.
Lines are stored directly, so what is checked is the wire: the CLI's
parameters read as it means them, and Loki's answers read back.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, CloseConnection, Ping, Request, TextMessage

from plinth.runtime.logs import LogStore, tailing
from plinth.runtime.logs.query import answer
from plinth.runtime.logs.records import Record
from plinth.runtime.logs.store import Position
from plinth.runtime.logs.tailing import Signal
from tests.aio import RunAsync
from tests.compat.conftest import Cpln

ORG = "acme"
PREFIX = f"/logs/org/{ORG}/loki/api/v1/query_range"


class Server:
    """The stand-in server: answers the CLI from ``store`` and keeps each query's parameters."""

    def __init__(self, store: LogStore, logs_url: str | None = None) -> None:
        self.store = store
        self.queries: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlsplit(self.path)
                if url.path == "/discovery":
                    status, body = 200, {"endpoints": {"logs": logs_url or outer.url}}
                elif url.path == f"/org/{ORG}":
                    status, body = 200, {"kind": "org", "name": ORG}
                elif url.path == PREFIX:
                    params = dict(parse_qsl(url.query))
                    outer.queries.append(params)
                    status, body = answer(outer.store, ORG, params)
                else:
                    status, body = 404, {"status": 404, "message": "not found"}
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def logs(tmp_path: Path) -> Iterator[Server]:
    store = LogStore(tmp_path / "logs.sqlite3")
    now = time.time_ns()
    for replica in ("web-0", "web-1"):
        labels = {"org": ORG, "gvc": "main", "workload": "web", "container": "main"}
        labels |= {"location": "aws-us-east-2", "provider": "aws", "replica": replica}
        # 1,500 lines each over the last 25 minutes, web-1's a microsecond after web-0's.
        shift = 1000 if replica == "web-1" else 0
        records = [
            Record(now - (1500 - i) * 10**9 + shift, "stderr" if i % 3 == 0 else "stdout", f"{replica} {i:04d}")
            for i in range(1500)
        ]
        store.append(replica, Position("/x", 1, 1), labels, records)
    server = Server(store)
    yield server
    server.close()
    store.close()


def run(cpln_bin: Path, cpln_home: Path, server: Server, *args: str) -> list[str]:
    cli = Cpln(cpln_bin, cpln_home, server.url, "token-not-checked-here")
    done = cli("logs", *args)
    assert done.code == 0, done.stderr
    return done.stdout.splitlines()


def expected(count: int, last: bool = False) -> list[str]:
    lines = [f"web-{r} {i:04d}" for i in range(1500) for r in (0, 1)]
    return lines[-count:] if last else lines[:count]


def test_cpln_logs_shows_the_oldest_lines_of_the_last_hour_by_default(
    cpln_bin: Path, cpln_home: Path, logs: Server
) -> None:
    lines = run(cpln_bin, cpln_home, logs, '{gvc="main", workload="web"}', "-o", "raw")
    assert lines == expected(30)  # the CLI's defaults: forward, limit 30, since 1h
    (params,) = logs.queries
    assert params["limit"] == "30" and params["direction"] == "forward" and len(params["start"]) == 19


def test_cpln_logs_backward_shows_the_newest_newest_first(cpln_bin: Path, cpln_home: Path, logs: Server) -> None:
    lines = run(cpln_bin, cpln_home, logs, '{workload="web"}', "--direction", "backward", "--limit", "10", "-o", "raw")
    assert lines == expected(10, last=True)[::-1]


def test_cpln_logs_pages_through_everything_with_limit_0(cpln_bin: Path, cpln_home: Path, logs: Server) -> None:
    lines = run(cpln_bin, cpln_home, logs, '{workload="web"}', "--limit", "0", "-o", "raw")
    assert lines == expected(3000)
    assert [q["limit"] for q in logs.queries] == ["999", "999", "999", "999"]


def test_cpln_logs_filters_and_shows_labels(cpln_bin: Path, cpln_home: Path, logs: Server) -> None:
    query = '{workload="web", replica="web-1", stream="stderr"} |~ "1[0-9]{3}$" != "1002"'
    lines = run(cpln_bin, cpln_home, logs, query, "--limit", "3", "-o", "jsonl")
    got = [json.loads(line) for line in lines]
    assert [e["line"] for e in got] == ["web-1 1005", "web-1 1008", "web-1 1011"]
    assert got[0]["labels"] == {
        "container": "main",
        "gvc": "main",
        "location": "aws-us-east-2",
        "org": ORG,
        "provider": "aws",
        "replica": "web-1",
        "stream": "stderr",
        "workload": "web",
    }


def test_cpln_logs_reports_an_unsupported_query(cpln_bin: Path, cpln_home: Path, logs: Server) -> None:
    cli = Cpln(cpln_bin, cpln_home, logs.url, "token-not-checked-here")
    done = cli("logs", '{workload="web"} | json')
    assert done.code != 0
    assert "'| json' is not supported" in done.stdout + done.stderr


class TailServer:
    """The tail websocket: each connection runs the service's tail with its query's parameters."""

    def __init__(self, store: LogStore, signal: Signal) -> None:
        self.store, self.signal = store, signal
        self.requests: list[tuple[str, dict[str, str]]] = []  # (authorization, parameters)
        self.tasks: list[asyncio.Task[None]] = []

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ws = WSConnection(ConnectionType.SERVER)
        tail: asyncio.Task[None] | None = None
        try:
            while data := await reader.read(65536):
                ws.receive_data(data)
                for event in ws.events():
                    if isinstance(event, Request):
                        url = urlsplit(event.target)
                        headers = {k.decode().lower(): v.decode() for k, v in event.extra_headers}
                        params = dict(parse_qsl(url.query))
                        self.requests.append((headers.get("authorization", ""), params))
                        assert url.path == f"/logs/org/{ORG}/loki/api/v1/tail"
                        writer.write(ws.send(AcceptConnection()))

                        def send(text: str) -> None:
                            writer.write(ws.send(TextMessage(data=text)))

                        tail = asyncio.create_task(tailing.tail(self.store, self.signal, ORG, params, send))
                        self.tasks.append(tail)
                    elif isinstance(event, Ping):
                        writer.write(ws.send(event.response()))
                    elif isinstance(event, CloseConnection):
                        return
        finally:
            if tail is not None:
                tail.cancel()
            writer.close()

    async def stop(self) -> None:
        self.server.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def test_cpln_logs_follow_shows_lines_stored_after_it_started(
    cpln_bin: Path, cpln_home: Path, tmp_path: Path, run_async: RunAsync
) -> None:
    store = LogStore(tmp_path / "logs.sqlite3")
    labels = {"org": ORG, "gvc": "main", "workload": "web", "container": "main"}
    labels |= {"location": "aws-us-east-2", "provider": "aws", "replica": "web-0"}
    store.append("c", Position("/x", 1, 1), labels, [Record(time.time_ns() - 10**9, "stdout", "before")])
    signal = Signal()
    tails = TailServer(store, signal)
    cli = Cpln(cpln_bin, cpln_home, "", "token-for-the-tail")

    async def scenario() -> list[str]:
        api = Server(store, logs_url=await tails.start())
        cli.endpoint = api.url
        argv = [str(cli.bin), "logs", "-f", '{workload="web"} != "noise"', "-o", "raw"]
        argv += ["--endpoint", api.url, "--token", cli.token, "--org", ORG]
        proc = await asyncio.create_subprocess_exec(
            *argv, env=cli.environ(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        assert proc.stdout is not None
        seen: list[str] = []
        try:
            seen.append((await asyncio.wait_for(proc.stdout.readline(), 60)).decode().strip())
            more = [Record(time.time_ns(), "stdout", "noise"), Record(time.time_ns(), "stderr", "after")]
            store.append("c", Position("/x", 1, 2), labels, more)
            signal.notify()
            seen.append((await asyncio.wait_for(proc.stdout.readline(), 60)).decode().strip())
        finally:
            proc.kill()
            await proc.wait()
            await tails.stop()
            api.close()
        return seen

    try:
        seen = run_async(scenario())
    finally:
        store.close()
    assert seen == ["before", "after"]
    ((authorization, params),) = tails.requests
    assert authorization.removeprefix("Bearer ") == "token-for-the-tail"
    assert params["query"] == '{workload="web"} != "noise"' and params["limit"] == "30"
