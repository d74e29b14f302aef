"""A body's validation is bounded and linear in the body, and a caller without permissions
cannot make the server work on one (docs/api.md, "Limits").

The issue's case: about 16 KB of wrong-typed array entries made the pruning of invalid parts
replay every earlier removal for each new one, so one request held the worker for seconds (a
larger body, for hours), before the permission check ran.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hostile.answering import assert_kept_answering, while_hostile
from tests.support.server import ServerProcess

#: The most entries one array of a body may hold (docs/api.md, "Limits").
ARRAY_MAX = 1000


@pytest.fixture(scope="module")
def gvc(api: httpx.Client) -> Iterator[str]:
    assert api.post("/org/acme/gvc", json={"name": "hostile-work"}).status_code == 201
    yield "hostile-work"


def _paths(r: httpx.Response) -> set[str]:
    return {e["path"] for e in r.json()["details"]["errors"]}


def _wrong_typed_workload(name: str) -> dict[str, Any]:
    """24,000 wrong-typed list entries (8 containers, 3 lists of 1,000 each): every array is
    within the bound, and each entry is a schema error whose part the pruning takes out."""
    wrong = [7] * ARRAY_MAX
    containers = [
        {"name": f"c{i}", "image": "nginx:latest", "env": wrong, "args": wrong, "ports": wrong} for i in range(8)
    ]
    return {"name": name, "spec": {"type": "standard", "containers": containers}}


@pytest.mark.parametrize("entries", [8000, 300_000], ids=["16KB", "602KB"])
def test_the_issues_bodies_of_wrong_entries_stall_nothing(
    server: ServerProcess, nobody: httpx.Client, api: httpx.Client, entries: int
) -> None:
    body = {"name": "hostile-8000", "spec": {"pullSecretLinks": [1] * entries}}
    outcome = while_hostile(server, lambda: nobody.post("/org/acme/gvc", json=body), "/org/acme/gvc")
    for r in assert_kept_answering(outcome, 400):
        # Refused by the bound on arrays before any permission is looked at, naming the array.
        assert "spec.pullSecretLinks" in _paths(r)
    assert api.get("/org/acme/gvc/hostile-8000").status_code == 404


def test_a_body_of_24000_wrong_entries_within_every_bound_stalls_nothing(
    server: ServerProcess, api: httpx.Client, gvc: str
) -> None:
    body = _wrong_typed_workload("hostile-24k")
    path = f"/org/acme/gvc/{gvc}/workload"
    outcome = while_hostile(server, lambda: api.post(path, json=body), "/org/acme/gvc")
    for r in assert_kept_answering(outcome, 400):
        paths = _paths(r)
        # Every offending entry is named at its path as sent.
        assert {"spec.containers[0].env[0]", "spec.containers[7].args[999]", "spec.containers[3].ports[500]"} <= paths
        assert len([p for p in paths if p.startswith("spec.containers[")]) == 8 * 3 * ARRAY_MAX
    assert api.get(f"{path}/hostile-24k").status_code == 404


def test_a_caller_without_permissions_gets_403_for_the_same_body(
    server: ServerProcess, nobody: httpx.Client, gvc: str
) -> None:
    body = _wrong_typed_workload("hostile-24k-nobody")
    path = f"/org/acme/gvc/{gvc}/workload"
    outcome = while_hostile(server, lambda: nobody.post(path, json=body), "/org/acme/gvc")
    for r in assert_kept_answering(outcome, 403):
        assert r.json()["details"]["permission"] == "create"


def test_an_array_over_the_bound_is_400_naming_each_such_array(api: httpx.Client, unique: str) -> None:
    links = ["//secret/s"] * (ARRAY_MAX + 1)
    body = {"name": unique, "spec": {"pullSecretLinks": links, "staticPlacement": {"locationLinks": links}}}
    r = api.post("/org/acme/gvc", json=body)
    assert r.status_code == 400, r.text
    err = r.json()
    assert err["code"] == "invalid"
    assert _paths(r) == {"spec.pullSecretLinks", "spec.staticPlacement.locationLinks"}
    assert all(str(ARRAY_MAX) in e["message"] for e in err["details"]["errors"])
    assert api.get(f"/org/acme/gvc/{unique}").status_code == 404


def test_an_array_at_the_bound_reaches_the_kind(api: httpx.Client, unique: str) -> None:
    body = {"name": unique, "spec": {"pullSecretLinks": [1] * ARRAY_MAX}}
    r = api.post("/org/acme/gvc", json=body)
    assert r.status_code == 400, r.text
    assert "spec.pullSecretLinks[999]" in _paths(r)  # judged entry by entry by the kind's schema


def test_the_array_bound_holds_for_patch_and_put_and_top_level_arrays(api: httpx.Client, gvc: str) -> None:
    many = list(range(ARRAY_MAX + 1))
    r = api.patch(f"/org/acme/gvc/{gvc}", json={"tags": {"k": 1}, "spec": {"env": many}})
    assert r.status_code == 400 and _paths(r) == {"spec.env"}, r.text
    r = api.put(f"/org/acme/gvc/{gvc}", json={"name": gvc, "description": "d", "spec": {"env": many}})
    assert r.status_code == 400 and _paths(r) == {"spec.env"}, r.text
    r = api.post("/org/acme/gvc", json=many)
    assert r.status_code == 400 and _paths(r) == {"(body)"}, r.text
    assert api.get(f"/org/acme/gvc/{gvc}").json()["version"] == 1
