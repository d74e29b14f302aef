"""Keep the browser's tests apart in time from the tests that change the host's network.

A container engine adds and removes bridges, addresses and veth pairs on the host as the
container tests create networks and start containers. Chromium watches the host's addresses and,
when one changes, fails every request it has in flight with ``net::ERR_NETWORK_CHANGED`` (a
console page then loads without its scripts; CI saw it once, in a console test that ran beside a
container test on the other xdist worker). Nothing in the page or the server can prevent that,
so the run never lets the two overlap. Modules are scheduled by file as ``--dist loadfile`` does,
with two rules (``NetworkAwareScheduling``): the browser's modules are one unit, handed out
first (one worker runs them one after the other, a few minutes, while the other starts on the
rest), and a module that changes the network goes to a worker only once that unit is done or
ran on that same worker; after it, the container modules come in xdist's order, on both
workers, as before. (One unit, not several: a worker runs the last test it was sent only once
it is sent more, so two browser units, each at its last test on its own worker, would each hold
the container modules back from the other and stop the run. The browser's modules are the
smaller side to put on one worker: ~4 minutes alone, against ~12 for the container modules.)

Which modules those are is known from their fixtures, which only the workers see (they collect;
xdist's controller only schedules node ids). So the controller names a file in each worker's
``workerinput`` (``configure_node``), each worker writes the modules it found there at the end of
its collection (``record_modules``), and the controller's scheduler reads it when it splits the
collection into units, which xdist does only after every worker has finished collecting.
(xdist's own ``--dist loadgroup`` would only keep modules on one worker, not apart in time, and
with pytest 9 its group suffix on node ids no longer takes effect.)
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

#: Fixtures that run a container engine (podman, Docker): a module using either, directly or
#: through another fixture, changes the host's network.
CHANGES_NETWORK = frozenset({"test_containers", "test_docker"})
#: The browser (Chromium; the ``browser`` fixture of ``tests/console/conftest.py``): a module using
#: it watches the host's network.
WATCHES_NETWORK = frozenset({"browser"})
#: The unit of work all those modules make: one worker runs them, one after the other.
WATCHING_UNIT = "browser"
#: The ``workerinput`` key naming the file the workers write the modules to.
WORKERINPUT_KEY = "plinth_host_network_modules"
_MODULES_FILE = pytest.StashKey[Path]()


def modules_file(config: pytest.Config) -> Path:
    """The controller's file for this run (made on first use, removed by ``forget``)."""
    if _MODULES_FILE not in config.stash:
        config.stash[_MODULES_FILE] = Path(tempfile.mkdtemp(prefix="plinth-xdist-")) / "host-network-modules"
    return config.stash[_MODULES_FILE]


def configure_node(node: Any) -> None:
    """Controller, per worker: tell it where to write the modules it finds."""
    node.workerinput[WORKERINPUT_KEY] = str(modules_file(node.config))


def modules_using(items: Sequence[pytest.Item], fixtures: frozenset[str]) -> list[str]:
    """The files (as node ids spell them) where any test uses one of ``fixtures``: whole modules,
    since a module-scoped fixture (a server, a browser) lives as long as its module."""
    found = {item.nodeid.split("::", 1)[0] for item in items if fixtures & set(getattr(item, "fixturenames", ()))}
    return sorted(found)


def record_modules(config: pytest.Config, items: Sequence[pytest.Item]) -> None:
    """Worker, after collecting: write the modules for the controller. Every worker collects the
    same tests, so each writes the same; a rename makes each write whole."""
    target = getattr(config, "workerinput", {}).get(WORKERINPUT_KEY)
    if target is None:
        return
    found = {"changes": modules_using(items, CHANGES_NETWORK), "watches": modules_using(items, WATCHES_NETWORK)}
    partial = Path(f"{target}.{os.getpid()}")
    partial.write_text(json.dumps(found))
    partial.replace(target)


def forget(config: pytest.Config) -> None:
    """Controller, at the end of the run: remove the file and its directory."""
    if _MODULES_FILE in config.stash:
        shutil.rmtree(config.stash[_MODULES_FILE].parent, ignore_errors=True)


class NetworkAwareScheduling(LoadScopeScheduling):
    """``--dist loadfile``, except that the browser's modules are one unit, handed out first, and
    a module that changes the host's network goes to a worker only once that unit is done or ran
    on that same worker."""

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        self._modules_file = modules_file(config)
        self._modules: dict[str, frozenset[str]] | None = None

    def _read_modules(self) -> dict[str, frozenset[str]]:
        """Read once, at the first split: every worker has collected and written by then."""
        if self._modules is None:
            written = json.loads(self._modules_file.read_text()) if self._modules_file.exists() else {}
            self._modules = {role: frozenset(written.get(role, ())) for role in ("changes", "watches")}
        return self._modules

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        return WATCHING_UNIT if module in self._read_modules()["watches"] else module

    def _watching_elsewhere(self, node: Any) -> bool:
        """Whether the browser's unit is queued, or running on another worker. On ``node`` itself
        it does not count: a worker runs what it is sent in order, tearing each module down
        before the next starts; and it runs the last test it was sent only once it is sent more,
        so holding it back would stop the run."""
        if WATCHING_UNIT in self.workqueue:
            return True
        return any(
            not all(assigned[WATCHING_UNIT].values())
            for other, assigned in self.assigned_work.items()
            if other is not node and WATCHING_UNIT in assigned
        )

    def _assign_work_unit(self, node: Any) -> None:
        if WATCHING_UNIT in self.workqueue:
            self.workqueue.move_to_end(WATCHING_UNIT, last=False)
        held = self._watching_elsewhere(node)
        changing = self._read_modules()["changes"]
        scope = next((scope for scope in self.workqueue if not (held and scope in changing)), None)
        if scope is None:  # only changing modules are left, and the browser runs elsewhere
            return
        work_unit = self.workqueue.pop(scope)
        self.assigned_work.setdefault(node, {})[scope] = work_unit
        collection = self.registered_collections[node]
        node.send_runtest_some([collection.index(nodeid) for nodeid, done in work_unit.items() if not done])

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        """As xdist does, then offer work to every worker: one may have been left waiting for
        the browser's unit, which the other has just finished."""
        super().mark_test_complete(node, item_index, duration)
        for other in self.assigned_work:
            if other is not node:
                self._reschedule(other)
