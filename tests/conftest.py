"""Fixtures every test package may use: an event loop runner, throwaway PostgreSQL databases and
a real container engine."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.aio import RunAsync, event_loop_runner
from tests.support import containers, docker, host_network, pg
from tests.support.failure_logs import log_tails


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test's report ends with the tails of its servers' and gateways' logs."""
    outcome: Any = yield
    report = outcome.get_result()
    if report.failed and report.when == "call":
        for title, tail in log_tails(getattr(item, "funcargs", {})):
            report.sections.append((title, tail))


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


@pytest.fixture(scope="session")
def test_docker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[containers.ContainerKit]:
    """A Docker engine (Debian's ``docker.io``, a private daemon named in ``DOCKER_HOST`` for the
    session) with the same test image and a test-run label of its own; see
    ``tests/support/docker.py``. Skips with the reason when impossible (fails under CI)."""
    docker.ensure_tools()
    docker.ensure_daemon()
    work = tmp_path_factory.mktemp("docker")
    run_id = containers.new_run_id()
    labels = {"plinth.managed": "true", containers.TEST_RUN: run_id}
    try:
        image = docker.ensure_image(work)
        containers.smoke(image, labels, "docker")
        yield containers.ContainerKit("docker", docker.SOCKET, image, run_id, labels)
    finally:
        containers.cleanup(run_id, "docker")


def pytest_configure_node(node: Any) -> None:
    """xdist's controller: where each worker writes which modules run a container engine and
    which the browser (``tests/support/host_network.py``)."""
    host_network.configure_node(node)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    host_network.record_modules(config, items)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> host_network.NetworkAwareScheduling | None:
    """Under ``--dist loadfile`` (what ``make test`` runs): by file, the browser's modules never
    beside the container engine's (``tests/support/host_network.py``); other modes as xdist does."""
    if config.getvalue("dist") != "loadfile":
        return None
    return host_network.NetworkAwareScheduling(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    """At the end of the whole run (in xdist's controller, after every worker), stop the Docker
    daemon if a test of this run started it."""
    if not hasattr(config, "workerinput"):
        docker.stop_started_daemon()
        host_network.forget(config)
