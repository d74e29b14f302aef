"""``run_plan``'s order contract (``cli/batch.py``): results as they come, each after the steps it
needs, or in plan order with ``ordered``; after a failure the steps never started come last, skipped.

The actions here are plain functions that hold a step back until another step's result has been
read (threading events), so which step finishes first is fixed by the test, not by timing. The
actions never use the client they are handed (a real :class:`ApiClient` that never connects);
the same runner against a real server is ``test_e2e_apply.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plinth.cli.batch import SKIPPED, run_plan
from plinth.cli.manifests import Document
from plinth.cli.plan import Step, plan
from plinth.client import ApiClient
from tests.cli.test_plan import STACK, documents

#: How long an action waits for the event the test sets; only a broken runner ever waits this long.
HOLD_S = 30.0

#: Three documents: two that need nothing (``a``, ``b``) and one that needs ``a`` (``a-child``).
THREE = """\
kind: gvc
name: a
---
kind: secret
name: b
type: opaque
data: {payload: x, encoding: plain}
---
kind: identity
name: child
gvc: a
"""


def connect() -> ApiClient:
    return ApiClient("http://127.0.0.1:9")  # never used: the actions below send nothing


def three(tmp_path: Path) -> list[Step]:
    steps = plan(documents(tmp_path, THREE))
    assert [(s.document.name, s.needs) for s in steps] == [("a", ()), ("b", ()), ("child", (0,))]
    return steps


def held_until(event: threading.Event, name: str) -> Callable[[ApiClient, Document], Any]:
    """An action that holds the document ``name`` back until ``event`` is set."""

    def action(client: ApiClient, document: Document) -> str:
        if document.name == name and not event.wait(HOLD_S):
            raise TimeoutError(f"{name} was never released")
        return document.name

    return action


def test_results_stream_as_they_come_and_a_step_after_what_it_needs(tmp_path: Path) -> None:
    steps = three(tmp_path)
    released = threading.Event()
    seen: list[tuple[int, Any]] = []
    for n, result in run_plan(steps, held_until(released, "a"), connect, workers=4, keep_going=False):
        seen.append((n, result))
        released.set()  # ``a`` answers only once ``b``'s answer has been handed out
    assert seen == [(1, "b"), (0, "a"), (2, "child")]


def test_ordered_holds_results_back_to_plan_order(tmp_path: Path) -> None:
    steps = three(tmp_path)
    b_done = threading.Event()

    def action(client: ApiClient, document: Document) -> str:
        if document.name == "b":
            b_done.set()
        elif document.name == "a" and not b_done.wait(HOLD_S):  # ``b`` finishes first
            raise TimeoutError("b never ran")
        return document.name

    seen = list(run_plan(steps, action, connect, workers=4, keep_going=False, ordered=True))
    assert seen == [(0, "a"), (1, "b"), (2, "child")]


@pytest.mark.parametrize("ordered", [False, True], ids=["streamed", "ordered"])
def test_after_a_failure_the_steps_never_started_come_last_skipped(tmp_path: Path, ordered: bool) -> None:
    steps = three(tmp_path)

    def action(client: ApiClient, document: Document) -> str:
        if document.name == "a":
            raise ValueError("refused")
        return document.name

    seen = list(run_plan(steps, action, connect, workers=1, keep_going=False, ordered=ordered))
    assert [n for n, _ in seen] == [0, 1, 2]
    assert isinstance(seen[0][1], ValueError) and seen[1][1] is SKIPPED and seen[2][1] is SKIPPED


@pytest.mark.parametrize("workers", [1, 3, 32])
def test_every_step_once_each_after_the_steps_it_needs(tmp_path: Path, workers: int) -> None:
    steps = plan(documents(tmp_path, STACK))
    finished: set[int] = set()
    lock = threading.Lock()

    def action(client: ApiClient, document: Document) -> str:
        n = next(i for i, step in enumerate(steps) if step.document is document)
        with lock:  # what it needs had finished before it was started
            assert set(steps[n].needs) <= finished, document.label
            finished.add(n)
        return document.label

    order: list[int] = []
    for n, result in run_plan(steps, action, connect, workers=workers, keep_going=False):
        assert result == steps[n].document.label
        assert set(steps[n].needs) <= set(order), (steps[n].document.label, order)
        order.append(n)
    assert sorted(order) == list(range(len(steps)))
