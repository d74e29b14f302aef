"""The collector's file watch over real files and the kernel's inotify (``inotify_simple``):
a write, a rename over the file and its removal are each reported by path, a file not watched
is not, and a watch the kernel already dropped is discarded quietly."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from plinth.runtime.logs.filewatch import FileWatch
from tests.aio import RunAsync

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
#: A bound on each wait, so that a missing event fails the test instead of hanging it.
WAIT_S = 30.0


def test_writes_renames_and_removals_are_reported_by_path(tmp_path: Path, run_async: RunAsync) -> None:
    watched, other = tmp_path / "a.log", tmp_path / "b.log"
    watched.write_text("")
    other.write_text("")

    async def scenario() -> list[set[str]]:
        watch = FileWatch()
        try:
            assert watch.available
            assert watch.add(str(watched))
            assert not watch.add(str(tmp_path / "missing.log"))
            seen = []
            with other.open("a") as f:
                f.write("not watched\n")
            with watched.open("a") as f:
                f.write("line\n")
            seen.append(await watch.wait(WAIT_S))
            rotated = tmp_path / "a.log.new"
            rotated.write_text("new file\n")
            os.replace(rotated, watched)  # the engine's rotation: a new file renamed over the old
            seen.append(await watch.wait(WAIT_S))
            assert watch.add(str(watched))  # the new file
            watched.unlink()
            seen.append(await watch.wait(WAIT_S))
            watch.discard(str(watched))  # the kernel dropped that watch already: no error
            return seen
        finally:
            watch.close()

    assert run_async(scenario()) == [{str(watched)}] * 3


def test_wake_returns_with_nothing_changed(run_async: RunAsync) -> None:
    async def scenario() -> set[str]:
        watch = FileWatch()
        try:
            watch.wake()
            return await watch.wait(WAIT_S)
        finally:
            watch.close()

    assert run_async(scenario()) == set()
