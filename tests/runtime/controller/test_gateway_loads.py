"""The control loop's loads of the gateway's routes: a load whose answer did not come leaves the
gateway's table unknown, so the next load is sent even when it repeats the last table that was
answered. The loop runs against real podman (its list of an empty scope); the gateway is the
test's own recorder, which takes a table and then fails to answer, as a gateway that applied a
configuration and lost the connection would."""

from __future__ import annotations

from typing import Any

import pytest

from plinth.runtime.containers import CliEngine
from plinth.runtime.controller import Informer
from plinth.runtime.controller.loop import ControlLoop
from plinth.runtime.gateway import RouteTable
from tests.aio import RunAsync
from tests.runtime.controller.conftest import World


class Gateway:
    """Holds the last table it was given; the loads named in ``lose`` take theirs and then fail."""

    def __init__(self) -> None:
        self.held: RouteTable | None = None
        self.loads = 0
        self.lose: set[int] = set()

    async def __call__(self, table: RouteTable) -> None:
        self.loads += 1
        self.held = table
        if self.loads in self.lose:
            raise ConnectionError("the gateway took the table; its answer was lost")


def test_a_load_whose_answer_was_lost_is_sent_again_even_if_the_table_is_the_last_answered(
    run_async: RunAsync, engine: CliEngine, world: World
) -> None:
    gateway = Gateway()
    gateway.lose = {2}
    gvc: dict[str, Any] = {"kind": "gvc", "name": "main", "alias": "x"}

    async def scenario() -> tuple[RouteTable | None, RouteTable | None]:
        informer = Informer("http://127.0.0.1:9", "unused", world.org)  # never run: the test fills its cache
        loop = ControlLoop(informer, engine, labels=world.scope, gateway=gateway)
        try:
            informer._gvcs.items["main"] = gvc
            await loop._load_routes()  # T0: no workload
            first = gateway.held
            informer._workloads.items[("main", "web")] = world.workload("web")
            with pytest.raises(ConnectionError):
                await loop._load_routes()  # T1: taken by the gateway, answer lost
            assert gateway.held != first
            del informer._workloads.items[("main", "web")]
            await loop._load_routes()  # T0 again: the gateway holds T1, so it must be sent
            return first, gateway.held
        finally:
            await informer.client.aclose()

    first, held = run_async(scenario())
    assert gateway.loads == 3
    assert held == first
