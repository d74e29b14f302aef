"""Concurrent writers never lose an update."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.support.server import ServerProcess

WRITERS = 12


def test_concurrent_patches_without_version_all_apply(server: ServerProcess, unique: str) -> None:
    with server.client() as api:
        api.post("/org/acme/gvc", json={"name": unique})

    def writer(i: int) -> int:
        with server.client() as client:
            return client.patch(f"/org/acme/gvc/{unique}", json={"tags": {f"w{i}": i}}).status_code

    with ThreadPoolExecutor(WRITERS) as pool:
        statuses = list(pool.map(writer, range(WRITERS)))
    assert statuses == [200] * WRITERS
    with server.client() as api:
        item = api.get(f"/org/acme/gvc/{unique}").json()
    assert item["tags"] == {f"w{i}": i for i in range(WRITERS)}
    assert item["version"] == 1 + WRITERS


def test_concurrent_patches_with_the_same_version_one_wins(server: ServerProcess, unique: str) -> None:
    with server.client() as api:
        api.post("/org/acme/gvc", json={"name": unique})

    def writer(i: int) -> int:
        with server.client() as client:
            body = {"description": f"by {i}", "version": 1}
            return client.patch(f"/org/acme/gvc/{unique}", json=body).status_code

    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(writer, range(8)))
    assert statuses.count(200) == 1 and statuses.count(409) == 7
    with server.client() as api:
        assert api.get(f"/org/acme/gvc/{unique}").json()["version"] == 2
