"""Two ``plinth serve`` processes on one PostgreSQL database (issue 3): a key revoked through one
is refused by the other within one second, and a policy change through one holds on the other
within one second.

The delays are measured (polling every 50 ms, giving up after 3 s) and asserted under 1 s: a
correctness bound the issue sets for revocation, not a performance benchmark.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.api.authz_support import ok, service_account_with_key
from tests.support import pg
from tests.support.server import ServerProcess, start_server

pytestmark = pytest.mark.postgres

ORG = "acme"
BOUND_S = 1.0
POLL_S = 0.05
GIVE_UP_S = 3.0


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    database_url = pg.create_database()
    started: list[ServerProcess] = []
    try:
        first_dir = tmp_path_factory.mktemp("replica-a")
        started.append(start_server(first_dir, database_url))
        # The second starts after the first bootstrapped: it finds the store set up and mints
        # nothing; it gets the admin key the way an operator would, from the first's file.
        second_dir = tmp_path_factory.mktemp("replica-b")
        shutil.copy(first_dir / "bootstrap-admin.key", second_dir / "bootstrap-admin.key")
        started.append(start_server(second_dir, database_url))
        assert "Admin key (shown once" not in (second_dir / "server.log").read_text()
        yield started[0], started[1]
    finally:
        for proc in started:
            proc.stop()
        pg.drop_database(database_url)


def _delay(since: float, answered: Callable[[], bool]) -> float:
    """Seconds from ``since`` until ``answered()`` holds, polled every 50 ms; fails after 3 s."""
    while True:
        if answered():
            return time.monotonic() - since
        if time.monotonic() - since > GIVE_UP_S:
            pytest.fail(f"the other replica did not follow within {GIVE_UP_S} s")
        time.sleep(POLL_S)


def _status(client: httpx.Client, key: str, path: str = f"/org/{ORG}") -> int:
    return client.get(path, headers={"Authorization": f"Bearer {key}"}).status_code


def _grant_view_on_org(admin: httpx.Client, name: str, account: str) -> None:
    policy = {
        "name": name,
        "targetKind": "org",
        "target": "all",
        "bindings": [{"permissions": ["view"], "principalLinks": [f"//serviceaccount/{account}"]}],
    }
    ok(admin.post(f"/org/{ORG}/policy", json=policy), 201)


@pytest.mark.parametrize("through", ["a", "b"], ids=["revoked-on-a-seen-by-b", "revoked-on-b-seen-by-a"])
def test_a_key_revoked_through_one_replica_is_refused_by_the_other_within_a_second(
    replicas: tuple[ServerProcess, ServerProcess], through: str
) -> None:
    writer, reader = replicas if through == "a" else replicas[::-1]
    account = f"revoke-{through}"
    with writer.client() as admin, reader.client() as other:
        key = service_account_with_key(admin, ORG, account)
        _grant_view_on_org(admin, account, account)
        _delay(time.monotonic(), lambda: _status(other, key) == 200)  # the reader knows the key (cached)
        assert _status(other, key) == 200

        start = time.monotonic()
        ok(admin.patch(f"/org/{ORG}/serviceaccount/{account}", json={"$drop/keys": [key.split(".")[0]]}))
        assert _status(admin, key) == 401  # the replica that wrote: at once
        delay = _delay(start, lambda: _status(other, key) == 401)
        print(f"revocation reached the other replica in {delay:.3f} s")  # shown with -s
        assert delay < BOUND_S, f"revocation took {delay:.3f} s to reach the other replica"
        assert all(_status(other, key) == 401 for _ in range(5))  # and stays refused


def test_a_policy_change_through_one_replica_holds_on_the_other_within_a_second(
    replicas: tuple[ServerProcess, ServerProcess],
) -> None:
    a, b = replicas
    account = "policy-follower"
    with a.client() as admin, b.client() as other:
        key = service_account_with_key(admin, ORG, account)
        # Known to b, holding nothing: the org answers as a missing one (docs/api.md, "Errors"), not 401.
        _delay(time.monotonic(), lambda: _status(other, key) == 404)
        assert _status(other, key) == 404

        start = time.monotonic()
        _grant_view_on_org(admin, account, account)
        granted = _delay(start, lambda: _status(other, key) == 200)
        print(f"the grant reached the other replica in {granted:.3f} s")
        assert granted < BOUND_S, f"the grant took {granted:.3f} s to reach the other replica"

        start = time.monotonic()
        assert admin.delete(f"/org/{ORG}/policy/{account}").status_code == 202
        assert _status(admin, key) == 404
        revoked = _delay(start, lambda: _status(other, key) == 404)
        print(f"taking it back reached the other replica in {revoked:.3f} s")
        assert revoked < BOUND_S, f"taking the grant back took {revoked:.3f} s to reach the other replica"
        assert all(_status(other, key) == 404 for _ in range(5))


def test_the_second_replica_serves_the_same_keys_and_items(replicas: tuple[ServerProcess, ServerProcess]) -> None:
    a, b = replicas
    with a.client() as on_a, b.client() as on_b:
        ok(on_a.post(f"/org/{ORG}/gvc", json={"name": "shared"}), 201)
        assert ok(on_b.get(f"/org/{ORG}/gvc/shared"))["name"] == "shared"
        key = ok(on_b.post(f"/org/{ORG}/serviceaccount/admin/-addKey", json={"description": "minted on b"}), 201)["key"]
        assert _status(on_a, key, f"/org/{ORG}/gvc/shared") == 200  # signed on b, verified on a
