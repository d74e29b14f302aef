"""The controller under test, in a process of its own: ``python -m bench.runtime_controller``.

What ``bench.runtime`` measures: the :class:`ControlLoop` (with its :class:`Informer` against a
real ``plinth serve``, the podman :class:`CliEngine` and Caddy as its gateway), as ``plinth serve
--runtime containers`` will run it. A process of its own so that its CPU is its own
(``/proc/PID/stat``: utime + stime), and the podman commands it runs (reaped children:
cutime + cstime) are counted apart from the bench's.

Arguments: ``URL ORG RUN_ID STATE_DIR LISTEN``; the API key comes in ``BENCH_CONTROLLER_KEY`` (never
on a command line). Containers carry ``plinth.test-run=RUN_ID`` (the loop's scope), so the bench's
clean-up removes them. SIGTERM stops the loop and Caddy and leaves the containers running.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import sys
from pathlib import Path

from plinth.runtime.containers import CliEngine
from plinth.runtime.controller import ControlLoop, Informer
from plinth.runtime.gateway import Caddy, RouteTable

KEY_ENV = "BENCH_CONTROLLER_KEY"
#: Printed on stdout once Caddy answers and the loop runs.
READY_LINE = "controller running"
TEST_RUN = "plinth.test-run"  # tests.support.containers.TEST_RUN, without importing pytest here


async def serve(url: str, org: str, run_id: str, state: Path, listen: str) -> None:
    podman = shutil.which("podman")
    if podman is None:
        raise SystemExit("podman is not on PATH")
    with Caddy(state / "caddy") as caddy:

        async def gateway(table: RouteTable) -> None:
            await caddy.apply(table, listen)

        informer = Informer(url, os.environ[KEY_ENV], org)
        engine = CliEngine("podman", podman, hash_key=os.urandom(32))
        loop = ControlLoop(informer, engine, labels={TEST_RUN: run_id}, gateway=gateway)
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        print(READY_LINE, flush=True)
        try:
            await loop.run()
        except asyncio.CancelledError:
            pass


def main(argv: list[str]) -> int:
    url, org, run_id, state, listen = argv
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    asyncio.run(serve(url, org, run_id, Path(state), listen))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
