"""Fixtures every test package may use: an event loop runner, throwaway PostgreSQL databases and
a real container engine."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.aio import RunAsync, event_loop_runner
from tests.support import containers, pg

#: Fixture scopes whose instances a worker sets up once per module (a session fixture is set up
#: once per worker whatever runs there).
_MODULE_SCOPES = frozenset({"module", "package"})


def fixture_group(item: pytest.Item) -> str | None:
    """The module, and the parameter of each module-or-wider fixture the test runs with
    (``tests/api/test_crud.py:server=1``: the PostgreSQL server of that module), when the test
    uses a module or package fixture: tests of one group share those fixtures' instances, so one
    worker should run them all. ``None`` for a test that shares nothing of the kind (it may run
    anywhere). No ``[``, ``]`` or ``@``: xdist reads a group after the last ``@`` of a test's id
    only when no ``]`` follows it."""
    info = getattr(item, "_fixtureinfo", None)  # pytest's record of the fixtures the test uses
    if info is None or not any(defs[-1].scope in _MODULE_SCOPES for defs in info.name2fixturedefs.values() if defs):
        return None
    callspec = getattr(item, "callspec", None)
    scopes = getattr(callspec, "_arg2scope", {})  # and of each parameter's scope
    shared = sorted(
        f"{name}={index}"
        for name, index in (callspec.indices.items() if callspec is not None else ())
        if getattr(scopes.get(name), "value", None) in _MODULE_SCOPES | {"session"}
    )
    return ":".join([item.nodeid.split("::", 1)[0], *shared])


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (its hook in each worker)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup`` (``make pytest``), a test without a group of its own that uses a
    module fixture joins its :func:`fixture_group`. Plain ``load`` hands a module's tests to both
    workers, so each started the module's servers (per store) and seeded them again; grouped,
    every module fixture is set up once per run, and the two stores' halves of a module still run
    side by side. Tests that share no module fixture stay single, to even out the end of the run."""
    if config.getoption("dist", "no") != "loadgroup":
        return
    for item in items:
        group = None if item.get_closest_marker("xdist_group") else fixture_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture
def run_async() -> Iterator[RunAsync]:
    """``run_async(coro)`` runs ``coro`` on this test's event loop (closed after the test)."""
    with event_loop_runner() as run:
        yield run


@pytest.fixture(scope="session")
def pg_url() -> str:
    """The PostgreSQL server the tests may use (``PLINTH_TEST_PG_URL``); see ``tests/support/pg.py``."""
    return pg.require_postgres()


@pytest.fixture
def fresh_pg_url(pg_url: str) -> Iterator[str]:
    """The URL of a new, empty database, dropped after the test."""
    url = pg.create_database(pg_url)
    try:
        yield url
    finally:
        pg.drop_database(url)


@pytest.fixture(scope="session")
def test_containers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[containers.ContainerKit]:
    """Podman (runc, lowered ulimits: ``CONTAINERS_CONF`` set for the session) with the test image
    built, and a test-run label whose objects are all removed at the end; see
    ``tests/support/containers.py``. Skips with the reason when impossible (fails under CI)."""
    containers.ensure_tools()
    work = tmp_path_factory.mktemp("containers")
    previous = os.environ.get("CONTAINERS_CONF")
    os.environ["CONTAINERS_CONF"] = str(containers.write_containers_conf(work))
    run_id = containers.new_run_id()
    labels = {"plinth.managed": "true", containers.TEST_RUN: run_id}
    try:
        image = containers.ensure_image(work)
        containers.smoke(image, labels)
        yield containers.ContainerKit("podman", Path(os.environ["CONTAINERS_CONF"]), image, run_id, labels)
    finally:
        containers.cleanup(run_id)
        if previous is None:
            os.environ.pop("CONTAINERS_CONF", None)
        else:
            os.environ["CONTAINERS_CONF"] = previous
