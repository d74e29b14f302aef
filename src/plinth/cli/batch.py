"""Running a plan: every step once the steps it needs are done, a few at a time, each result as it comes.

``run_plan(steps, action, connect, workers, keep_going, ordered)`` calls ``action(client,
document)`` for each step on a pool of ``workers`` threads, each with its own kept-alive
:class:`ApiClient` (``connect()`` makes one; ``http.client`` connections are not shared between
threads). A step starts as soon as every step it needs has finished, so independent documents
travel together while a target still goes before what links to it.

Results are yielded as ``(plan position, result)`` the moment they arrive (the steps that finish
together, in plan order), so a step is always yielded after every step it needs. With
``ordered`` they are held back and yielded in plan order instead (a step's result waits for
those before it), the same from run to run whatever finishes first. Either way new steps are
started before results are handed out, so a slow reader of the results does not hold back the
writes. An action's exception is its result. After the first failure no new step starts
unless ``keep_going``: the steps already under way finish, and the steps never started are
yielded last, in plan order, as :data:`SKIPPED`.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from plinth.cli.manifests import Document
from plinth.cli.plan import Step
from plinth.client import ApiClient

#: The result of a step that never ran (an earlier step failed).
SKIPPED = object()


def run_plan(
    steps: Sequence[Step],
    action: Callable[[ApiClient, Document], Any],
    connect: Callable[[], ApiClient],
    workers: int,
    keep_going: bool,
    ordered: bool = False,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(position, result or exception or SKIPPED)`` for every step; see the module docstring."""
    local = threading.local()
    clients: list[ApiClient] = []
    lock = threading.Lock()

    def run(step: Step) -> Any:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = connect()
            with lock:
                clients.append(client)
        return action(client, step.document)

    waiting = [set(step.needs) for step in steps]
    dependants: list[list[int]] = [[] for _ in steps]
    for n, step in enumerate(steps):
        for m in set(step.needs):
            dependants[m].append(n)
    results: dict[int, Any] = {}
    started: set[int] = set()
    running: dict[Future[Any], int] = {}
    failed = False
    shown = 0  # with ``ordered``: every position below it has been yielded
    workers = max(1, workers)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="plinth-apply")
    try:
        # Steps whose needs are all done, lowest plan position first (a heap: a large stack
        # has thousands, and a scan of every step at each completion would cost n² steps).
        ready = [n for n in range(len(steps)) if not waiting[n]]

        def start_ready() -> None:
            # At most ``workers`` under way, so that a failure stops what has not been sent yet.
            while ready and len(running) < workers and not (failed and not keep_going):
                n = heapq.heappop(ready)
                started.add(n)
                running[pool.submit(run, steps[n])] = n

        start_ready()
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            by_position = {running.pop(future): future for future in done}
            finished = sorted(by_position)
            for n in finished:
                future = by_position[n]
                error = future.exception()
                results[n] = error if error is not None else future.result()
                failed = failed or error is not None
                for m in dependants[n]:
                    waiting[m].discard(n)
                    if not waiting[m] and m not in started:
                        heapq.heappush(ready, m)
            start_ready()  # before handing results out: the reader's pace is not the writes'
            if not ordered:
                for n in finished:
                    yield n, results[n]
                continue
            while shown in results:
                yield shown, results[shown]
                shown += 1
        # Nothing under way and nothing can start: the rest never ran.
        for n in range(shown if ordered else 0, len(steps)):
            if n not in started:
                yield n, SKIPPED
            elif ordered:
                yield n, results[n]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for client in clients:
            client.close()
