"""The browser's modules never run beside the container engine's (``tests/support/host_network.py``):
a small suite run by pytest under two xdist workers, as ``make test`` runs the real one, with this
repository's hooks and stand-in fixtures of the same names. Each module writes when it starts and
ends, and each test takes a moment, so modules handed out together overlap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

CONFTEST = """
import json, os, time
import pytest
from tests.conftest import pytest_collection_modifyitems, pytest_configure_node, pytest_xdist_make_scheduler

@pytest.fixture(scope="module")
def browser():
    return "a browser"

@pytest.fixture(scope="session")
def test_containers():
    return "an engine"

@pytest.fixture
def gateway(test_containers):
    return test_containers

@pytest.fixture(scope="module", autouse=True)
def spans(request):
    def note(what):
        line = json.dumps([what, request.module.__name__, os.environ["PYTEST_XDIST_WORKER"]])
        with open(os.environ["SPANS"], "a") as log:
            log.write(line + "\\n")
    note("start")
    yield
    note("end")

@pytest.fixture(autouse=True)
def a_moment():
    time.sleep(0.05)
"""

WATCHING = {"test_console", "test_console_2"}
CHANGING = {"test_runtime", "test_engine"}
MODULES = {
    # The biggest modules: xdist alone hands the two biggest to the two workers first.
    "test_console": ["def test_page_{n}(browser):\n    assert browser"] * 12,
    "test_console_2": ["def test_page_{n}(browser):\n    assert browser"] * 4,
    "test_engine": ["def test_run_{n}(test_containers):\n    assert test_containers"] * 10,
    # One test of six needs the engine, through another fixture: the whole module changes it.
    "test_runtime": ["def test_gateway(gateway):\n    assert gateway"] + ["def test_plan_{n}():\n    assert True"] * 5,
    **{f"test_plain_{i}": ["def test_thing_{n}():\n    assert True"] * 3 for i in range(5)},
}


def _run(where: Path, dist: str, modules: dict[str, list[str]] = MODULES) -> list[tuple[str, str, str]]:
    """Run the suite with two workers; the modules' starts and ends, in the order they came."""
    (where / "conftest.py").write_text(CONFTEST)
    for name, tests in modules.items():
        (where / f"{name}.py").write_text("\n\n".join(t.format(n=n) for n, t in enumerate(tests)) + "\n")
    spans = where / "spans.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPANS": str(spans)}
    args = [sys.executable, "-m", "pytest", "-n", "2", "--dist", dist, "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*args, "--rootdir", str(where), str(where)], cwd=where, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{sum(len(tests) for tests in modules.values())} passed" in done.stdout
    return [tuple(json.loads(line)) for line in spans.read_text().splitlines()]


def _overlaps(events: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """Each (watching, changing) pair of modules that were running at the same moment."""
    running: set[str] = set()
    found = []
    for what, module, _ in events:
        if what == "end":
            running.discard(module)
            continue
        others = WATCHING if module in CHANGING else CHANGING if module in WATCHING else set()
        found += [tuple(sorted((module, other))) for other in running & others]
        running.add(module)
    return found


def test_a_browser_module_never_runs_beside_one_that_runs_an_engine(tmp_path: Path) -> None:
    events = _run(tmp_path, "loadfile")
    assert {module for _, module, _ in events} == set(MODULES)
    assert _overlaps(events) == []
    # Still by file: every module on one worker, from start to end; the browser's all on one.
    for name in MODULES:
        assert len({worker for _, module, worker in events if module == name}) == 1
    (browsers,) = {worker for _, module, worker in events if module in WATCHING}
    # The browser's went first on their worker, while the other took the rest.
    assert next(module for _, module, worker in events if worker == browsers) in WATCHING


def test_with_nothing_else_to_run_the_two_kinds_take_turns(tmp_path: Path) -> None:
    """Only browser and engine modules: the worker at the browser's last module is sent an engine
    module (it runs the last test it was sent only once it is sent more), and the run ends."""
    only = {name: tests for name, tests in MODULES.items() if name in WATCHING | CHANGING}
    events = _run(tmp_path, "loadfile", only)
    assert {module for _, module, _ in events} == set(only)
    assert _overlaps(events) == []


def test_by_file_alone_they_would_run_side_by_side(tmp_path: Path) -> None:
    """What the scheduler prevents: xdist's own (``--dist loadscope`` splits by module, as
    ``loadfile`` does) starts the two biggest modules, a browser's and an engine's, together."""
    assert _overlaps(_run(tmp_path, "loadscope")) != []
