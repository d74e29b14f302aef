"""The controller under test, in a process of its own: ``python -m bench.runtime_controller``.

What ``bench.runtime`` measures: the :class:`ControlLoop` (with its :class:`Informer` against a
real ``plinth serve``, the podman :class:`CliEngine` and Caddy as its gateway), as ``plinth serve
--runtime containers`` will run it. A process of its own so that its CPU is its own
(``/proc/PID/stat``: utime + stime), and the podman commands it runs (reaped children:
cutime + cstime; running ones, its ``podman events`` above all, from their own ``stat``) are
counted apart from the bench's.

Arguments: ``URL ORG LABEL STATE_DIR LISTEN``, ``LABEL`` being ``KEY=VALUE``; the API key comes
in ``BENCH_CONTROLLER_KEY`` (never on a command line). Every container carries ``LABEL`` (the
loop's scope: the bench's ``plinth.test-run``), so the bench's clean-up removes them. SIGTERM
stops the loop and Caddy and leaves the containers running.

With ``BENCH_CONTROLLER_TRACE=FILE`` it writes one JSON line per wake-up of the loop (``{"wake":
t}``) and per podman command (``{"call": [args], "at": t, "took": s, "by": coroutine}``),
wall-clock seconds, for ``bench.runtime_trace`` to say where a write's delay goes. With
``BENCH_CONTROLLER_DEBOUNCE=S`` the loop waits ``S`` seconds after a wake-up instead of its default.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import IO, Any

from plinth.runtime.containers import CliEngine
from plinth.runtime.controller import ControlLoop, Informer
from plinth.runtime.controller.loop import DEBOUNCE_S
from plinth.runtime.gateway import Caddy, RouteTable

KEY_ENV = "BENCH_CONTROLLER_KEY"
TRACE_ENV = "BENCH_CONTROLLER_TRACE"
#: The loop's ``debounce_s`` when set (what a shorter or no debounce would change).
DEBOUNCE_ENV = "BENCH_CONTROLLER_DEBOUNCE"
#: Printed on stdout once Caddy answers and the loop runs.
READY_LINE = "controller running"


class TracedEngine(CliEngine):
    """The podman driver, with each command's start and duration written to ``trace``."""

    def __init__(self, binary: str, hash_key: bytes, trace: IO[str]) -> None:
        super().__init__("podman", binary, hash_key=hash_key)
        self.trace = trace

    async def _call(self, *args: str, **kwargs: Any) -> tuple[int, bytes, bytes]:
        began = time.time()
        try:
            return await super()._call(*args, **kwargs)
        finally:
            # Only the command and its first argument: later ones may be env names or values.
            task = asyncio.current_task()
            by = task.get_coro().__qualname__ if task else ""  # type: ignore[union-attr]
            line = {"call": list(args[:2]), "at": began, "took": time.time() - began, "by": by}
            self.trace.write(json.dumps(line) + "\n")
            self.trace.flush()


def traced_wake(loop: ControlLoop, trace: IO[str]) -> None:
    """Note each wake-up by the informer (a change in its cache) before the loop's own."""
    wake = loop.informer.on_change

    def noted() -> None:
        trace.write(json.dumps({"wake": time.time()}) + "\n")
        wake()

    loop.informer.on_change = noted


async def serve(url: str, org: str, label: str, state: Path, listen: str) -> None:
    podman = shutil.which("podman")
    if podman is None:
        raise SystemExit("podman is not on PATH")
    with Caddy(state / "caddy") as caddy:

        async def gateway(table: RouteTable) -> None:
            await caddy.apply(table, listen)

        informer = Informer(url, os.environ[KEY_ENV], org)
        key, _, value = label.partition("=")
        trace_path = os.environ.get(TRACE_ENV)
        trace = open(trace_path, "a") if trace_path else None  # noqa: SIM115 (open for the whole run)
        engine = TracedEngine(podman, os.urandom(32), trace) if trace else CliEngine("podman", podman, os.urandom(32))
        debounce = float(os.environ.get(DEBOUNCE_ENV) or DEBOUNCE_S)
        loop = ControlLoop(informer, engine, labels={key: value}, gateway=gateway, debounce_s=debounce)
        if trace:
            traced_wake(loop, trace)
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        print(READY_LINE, flush=True)
        try:
            await loop.run()
        except asyncio.CancelledError:
            pass


def main(argv: list[str]) -> int:
    url, org, label, state, listen = argv
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    asyncio.run(serve(url, org, label, Path(state), listen))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
