"""``plinth serve --workers 2`` on SQLite commits every worker's writes in its own process
(``storage/sqlite_committer.py``), so the workers' writes share durable commits; with one
worker, the worker commits its own (``docs/write-path.md``, "Group commit").

Seen from outside through ``plinth_sqlite_commits_total`` (by whom each commit was made), while
clients write through both workers at once."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.server import ServerProcess, start_server

WRITERS, EACH = 8, 12


def commits(server: ServerProcess) -> dict[tuple[str, str], float]:
    with server.client() as api:
        text = api.get("/metrics").text
    found = re.findall(r'^plinth_sqlite_commits_total\{by="(\w+)",writers="(\w+)"\} (\S+)$', text, re.M)
    return {(by, writers): float(value) for by, writers, value in found}


def write_concurrently(server: ServerProcess) -> None:
    with server.client() as api:
        api.post("/org/acme/gvc", json={"name": "main"}).raise_for_status()

    def writer(n: int) -> None:
        # A client of its own per writer: new connections spread over both workers.
        with server.client() as api:
            for i in range(EACH):
                body = {"name": f"v{n}-{i}", "spec": {"initialCapacity": 10}}
                assert api.post("/org/acme/gvc/main/volumeset", json=body).status_code == 201

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(writer, range(WRITERS)))


@pytest.mark.parametrize("workers", [1, 2])
def test_who_commits_the_writes(tmp_path: Path, workers: int) -> None:
    server = start_server(tmp_path / "data", workers=workers, extra_args=("--metrics-public",))
    try:
        before = commits(server)
        write_concurrently(server)
        after = commits(server)
        with server.client() as api:
            listed = api.get("/org/acme/gvc/main/volumeset", params={"limit": 1000}).json()["items"]
    finally:
        server.stop()
    assert len(listed) == WRITERS * EACH
    grew = {label: after.get(label, 0.0) - before.get(label, 0.0) for label in after}
    if workers == 1:
        assert grew.get(("worker", "one"), 0) > 0
        assert not any(by == "committer" for by, _ in after)
    else:
        # The workers commit nothing themselves: everything goes through plinth serve's committer.
        assert grew.get(("worker", "one"), 0) == 0
        assert grew.get(("committer", "one"), 0) + grew.get(("committer", "shared"), 0) > 0
