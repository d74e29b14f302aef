"""The logs service against real podman (runtime/logs): what containers write is collected
from the engine's log files with its labels, stdout and stderr apart; replicas merge in time
order; a collector started again resumes without loss or repetition; a tail sees a line
written after it started; query_range answers 400 naming a bad parameter.

Each test runs a ``LogService`` on its own state directory over containers carrying its own
scope label (and the session's test-run label: the finalizer removes any left behind).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from plinth.runtime.containers import CliEngine, ReplicaSpec, identity_labels
from plinth.runtime.logs import LogService
from plinth.runtime.logs.store import ROW_OVERHEAD
from tests.aio import RunAsync
from tests.support.containers import ContainerKit

KEY = os.urandom(32)
LOCATION = "aws-us-east-2"
SCOPE = "plinth.test-logs"
#: The longest a test waits for lines to be collected (a bound, not a measure).
WAIT_S = 60.0
#: As PID 1, a shell must trap SIGTERM to end on it.
IDLE = "trap 'exit 0' TERM; sleep 300 & wait"


@pytest.fixture(scope="module")
def engine(test_containers: ContainerKit) -> CliEngine:
    binary = shutil.which("podman")
    assert binary is not None
    return CliEngine("podman", binary, hash_key=KEY)


class Scene:
    """One test's org, scope and containers (removed after it)."""

    def __init__(self, kit: ContainerKit, engine: CliEngine, state: Path) -> None:
        self.kit, self.engine, self.state = kit, engine, state
        self.tag = uuid.uuid4().hex[:8]
        self.org = f"t{kit.run_id}{self.tag}"
        self.scope = {**kit.labels, SCOPE: self.tag}
        self.names: list[str] = []

    def spec(self, workload: str, replica: str, script: str) -> ReplicaSpec:
        name = f"plinth_{self.org}_main_{LOCATION}_{replica}_main"
        self.names.append(name)
        labels = {
            **identity_labels(self.org, "main", workload, LOCATION),
            **self.scope,
            "plinth.replica": replica,
            "plinth.container": "main",
        }
        return ReplicaSpec(name=name, image=self.kit.image, labels=labels, args=["-c", script])

    def service(self) -> LogService:
        return LogService(self.engine, self.state, scope=self.scope)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[LogService]:
        service = self.service()
        await service.start()
        try:
            yield service
        finally:
            await service.stop()

    def query(self, service: LogService, query: str, **params: Any) -> dict[str, Any]:
        status, body = service.query_range(self.org, {"query": query, **{k: str(v) for k, v in params.items()}})
        assert status == 200, body
        return body


@pytest.fixture
def scene(test_containers: ContainerKit, engine: CliEngine, tmp_path: Path, run_async: RunAsync) -> Iterator[Scene]:
    made = Scene(test_containers, engine, tmp_path / "state")
    try:
        yield made
    finally:
        for name in made.names:
            run_async(engine.remove(name))


def entries(body: dict[str, Any], backward: bool = True) -> list[tuple[int, str, dict[str, str]]]:
    """(ts, line, labels) of an answer, in time order. The engine stamps the lines it reads at
    once with one time, so ties are common: a stream's values are in the answer's direction,
    ties in collection order, so a backward answer's are reversed first to keep that order."""
    found = []
    for stream in body["data"]["result"]:
        values = stream["values"][::-1] if backward else stream["values"]
        found += [(int(ts), line, stream["stream"]) for ts, line in values]
    return sorted(found, key=lambda e: e[0])


async def until(what: str, check: Callable[[], Any]) -> Any:
    """``check()``'s first truthy answer, asked every 0.1 s for up to ``WAIT_S``."""
    deadline = asyncio.get_running_loop().time() + WAIT_S
    while not (found := check()):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.1)
    return found


def test_stdout_and_stderr_are_collected_apart_with_the_containers_labels(scene: Scene, run_async: RunAsync) -> None:
    script = f"echo out-1; echo err-1 >&2; echo out-2; {IDLE}"

    async def scenario() -> list[tuple[int, str, dict[str, str]]]:
        async with scene.running() as service:
            await scene.engine.run(scene.spec("web", "web-0", script))
            query = '{gvc="main", workload="web"}'
            return await until("3 lines", lambda: len(got := entries(scene.query(service, query))) >= 3 and got)

    got = run_async(scenario())
    by_line = {line: labels for _, line, labels in got}
    assert sorted(by_line) == ["err-1", "out-1", "out-2"]
    common = {
        "org": scene.org,
        "gvc": "main",
        "workload": "web",
        "container": "main",
        "location": LOCATION,
        "provider": "aws",
        "replica": "web-0",
    }
    assert by_line["out-1"] == by_line["out-2"] == {**common, "stream": "stdout"}
    assert by_line["err-1"] == {**common, "stream": "stderr"}
    assert [line for _, line, _ in got if line.startswith("out")] == ["out-1", "out-2"]


def test_two_replicas_are_merged_in_time_order(scene: Scene, run_async: RunAsync) -> None:
    def writer(name: str) -> str:
        return f'i=0; while [ $i -lt 20 ]; do i=$((i+1)); echo "{name} $i"; sleep 0.05; done; {IDLE}'

    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        async with scene.running() as service:
            await scene.engine.run(scene.spec("web", "web-0", writer("r0")))
            await scene.engine.run(scene.spec("web", "web-1", writer("r1")))
            query = '{workload="web"}'
            everything = await until(
                "40 lines", lambda: len(e := entries(scene.query(service, query, limit=100))) == 40 and e
            )
            first = entries(scene.query(service, query, limit=15, direction="forward"), backward=False)
            last = entries(scene.query(service, query, limit=15))
            return everything, first, last

    everything, first, last = run_async(scenario())
    for replica, name in (("web-0", "r0"), ("web-1", "r1")):
        mine = [line for _, line, labels in everything if labels["replica"] == replica]
        assert mine == [f"{name} {i}" for i in range(1, 21)]  # each replica's lines in the order written
    times = [ts for ts, _, _ in everything]
    assert first == everything[:15] and last == everything[-15:]  # the earliest and the latest, across replicas
    assert times == sorted(times)


def test_a_collector_started_again_neither_loses_nor_repeats_lines(scene: Scene, run_async: RunAsync) -> None:
    script = f'i=0; while [ $i -lt 300 ]; do i=$((i+1)); echo "line $i"; sleep 0.01; done; {IDLE}'
    query = '{workload="web"}'

    async def scenario() -> tuple[int, list[str]]:
        async with scene.running() as service:
            await scene.engine.run(scene.spec("web", "web-0", script))
            stopped_at = await until(
                "some lines", lambda: len(e := entries(scene.query(service, query, limit=5000))) >= 20 and len(e)
            )
        # Stopped while the container goes on writing; a new collector over the same store resumes.
        async with scene.running() as service:
            done = await until(
                "the last line",
                lambda: (e := entries(scene.query(service, query, limit=5000))) and e[-1][1] == "line 300" and e,
            )
        return stopped_at, [line for _, line, _ in done]

    stopped_at, lines = run_async(scenario())
    assert stopped_at < 300  # it really stopped midway
    assert lines == [f"line {i}" for i in range(1, 301)]


def test_a_tail_sees_a_line_written_after_it_started(scene: Scene, run_async: RunAsync) -> None:
    script = f"echo before; while [ ! -f /tmp/go ]; do sleep 0.1; done; echo after; echo noise; {IDLE}"
    sent: list[dict[str, Any]] = []

    async def scenario() -> None:
        async with scene.running() as service:
            spec = scene.spec("web", "web-0", script)
            await scene.engine.run(spec)
            await until("before", lambda: entries(scene.query(service, '{workload="web"}')))
            params = {"query": '{workload="web"} != "noise"', "limit": "10", "start": "0"}
            tail = asyncio.create_task(service.tail(scene.org, params, lambda text: sent.append(json.loads(text))))
            try:
                await until("the first message", lambda: sent)
                await scene.engine.exec(spec.name, ["touch", "/tmp/go"])
                await until("after", lambda: len(sent) >= 2)
            finally:
                tail.cancel()
                await asyncio.gather(tail, return_exceptions=True)

    run_async(scenario())
    lines = [[line for s in m["streams"] for _, line in s["values"]] for m in sent]
    assert lines == [["before"], ["after"]]
    assert all(m["dropped_entries"] is None for m in sent)
    assert sent[1]["streams"][0]["stream"]["stream"] == "stdout"


def test_bad_parameters_are_refused_before_anything_runs(scene: Scene, run_async: RunAsync) -> None:
    async def scenario() -> tuple[int, dict[str, Any], str]:
        async with scene.running() as service:
            status, body = service.query_range(scene.org, {"query": '{workload="web"} | json'})
            try:
                await service.tail(scene.org, {"query": '{workload="web"}', "limit": "-1"}, lambda text: None)
            except ValueError as exc:
                return status, body, str(exc)
        raise AssertionError("the tail accepted a bad limit")

    status, body, tail_error = run_async(scenario())
    assert status == 400 and body["details"]["errors"][0]["path"] == "query"
    assert "'| json' is not supported" in body["message"]
    assert tail_error.startswith("limit: ")


def test_a_workload_over_its_bound_keeps_its_newest_lines(scene: Scene, run_async: RunAsync) -> None:
    bound = 8000
    script = f'i=0; while [ $i -lt 1000 ]; do i=$((i+1)); echo "line $i"; done; echo last; {IDLE}'

    async def scenario() -> list[str]:
        service = LogService(scene.engine, scene.state, scope=scene.scope, retention_bytes=bound)
        await service.start()
        try:
            await scene.engine.run(scene.spec("web", "web-0", script))

            def all_lines() -> list[str]:
                return [line for _, line, _ in entries(scene.query(service, '{workload="web"}', limit=5000))]

            return await until("the last line", lambda: (got := all_lines()) and got[-1] == "last" and got)
        finally:
            await service.stop()

    lines = run_async(scenario())
    assert sum(len(line) + ROW_OVERHEAD for line in lines) <= bound
    assert len(lines) < 1001
    assert lines == [*(f"line {i}" for i in range(1002 - len(lines), 1001)), "last"]  # the newest, none missing
