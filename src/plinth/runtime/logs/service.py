"""The logs service: what the runtime controller starts, and what the data plane serves.

:class:`LogService` owns the log store (``logs.sqlite3`` in the state directory it is given)
and the collector, and answers Loki's two calls for the official CLI's ``cpln logs``
(``commands/logs.js`` of ``@controlplane/cli`` 3.10.1):

- :meth:`LogService.query_range` for ``GET .../loki/api/v1/query_range``: a plain function
  ``(org, params) -> (status, body)`` (blocking: a server runs it in a worker thread);
- :meth:`LogService.tail` for the websocket ``.../loki/api/v1/tail``: it sends each Loki tail
  message through ``send(text)`` until cancelled.

Authentication and the org's ``readLogs`` check are the mounting server's; ``org`` is the one
in the request's path. Usage::

    service = LogService(driver, state_dir, scope=scope, retention_bytes=16 << 20)
    await service.start()
    ...
    await service.stop()
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plinth.runtime.containers.protocol import ContainerEngine
from plinth.runtime.logs import query, tailing
from plinth.runtime.logs.collector import Collector
from plinth.runtime.logs.store import DEFAULT_RETENTION_BYTES, LogStore
from plinth.runtime.tasks import cancel_and_wait

STORE_FILE = "logs.sqlite3"


def _positive_bytes(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of bytes") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of bytes")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The controller's logs setting: ``--log-retention-bytes`` (``args.log_retention_bytes``),
    the most each workload's lines may take in the log store."""
    parser.add_argument(
        "--log-retention-bytes",
        type=_positive_bytes,
        default=DEFAULT_RETENTION_BYTES,
        help=f"Most bytes of log lines kept per workload, oldest dropped first (default {DEFAULT_RETENTION_BYTES})",
    )


class LogService:
    """Collection into a bounded store, and Loki's queries over it (module docstring)."""

    def __init__(
        self,
        driver: ContainerEngine,
        state_dir: Path,
        *,
        scope: Mapping[str, str] | None = None,
        retention_bytes: int = DEFAULT_RETENTION_BYTES,
    ) -> None:
        self.store = LogStore(Path(state_dir) / STORE_FILE, retention_bytes)
        self.collector = Collector(driver, self.store, scope)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start collecting (on the running loop)."""
        if self._task is None:
            self._task = asyncio.create_task(self.collector.run(), name="log collector")

    async def stop(self) -> None:
        """Stop collecting and close the store; what was collected stays for the next start."""
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)
        self.store.close()

    def query_range(self, org: str, params: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        """Loki's ``query_range`` over ``org``'s lines: ``(200, answer)``, or ``(400, error)``
        naming the bad parameter (``params``: the query string's values)."""
        return query.answer(self.store, org, params)

    def drop_workload(self, org: str, gvc: str, workload: str) -> int:
        """Forget a workload's lines (blocking; the controller's loop calls it once the workload
        is gone: ``controller/logkeeper.py``). What its containers still write is not stored."""
        self.collector.discard(org, gvc, workload)
        return self.store.drop_workload(org, gvc, workload)

    def workloads(self, org: str | None = None) -> set[tuple[str, str, str]]:
        """``(org, gvc, workload)`` of each workload with lines stored (``org``'s only, when given)."""
        return self.store.workloads(org)

    def drop_org(self, org: str) -> int:
        """Forget every line of an org (blocking; once it is gone); how many went."""
        self.collector.discard(org)
        return sum(self.store.drop_workload(*key) for key in sorted(self.store.workloads(org)))

    async def tail(self, org: str, params: Mapping[str, str], send: tailing.Send) -> None:
        """Loki's tail of ``org``'s lines through ``send`` until cancelled; a bad parameter raises
        :class:`~.params.ParamError` (``status``, ``body()``) before anything is sent."""
        await tailing.tail(self.store, self.collector.signal, org, params, send)
