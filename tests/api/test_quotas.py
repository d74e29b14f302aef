"""Quotas over real HTTP on both backends: the server's records (by id, one per GVC for the
per-GVC ones), counted in the transaction of every create and delete, and enforced with a 429
that names the quota, also under concurrent creates and for a dry run."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.api.authz_support import assert_forbidden, assert_hidden, bearer, ok, service_account_with_key

ORG = "acme"
CONTAINERS = [{"name": "app", "image": "nginx:1.27"}]


def quotas(api: httpx.Client) -> list[dict[str, Any]]:
    page = api.get(f"/org/{ORG}/quota")
    assert page.status_code == 200, page.text
    return page.json()["items"]  # type: ignore[no-any-return]


def quota(api: httpx.Client, name: str, gvc: str | None = None) -> dict[str, Any]:
    (found,) = [q for q in quotas(api) if q["name"] == name and q["dimensions"].get("gvc") == gvc]
    return found


def new_gvc(api: httpx.Client, name: str) -> None:
    assert api.post(f"/org/{ORG}/gvc", json={"name": name}).status_code == 201


def create_workload(api: httpx.Client, gvc: str, name: str, **params: str) -> httpx.Response:
    return api.post(
        f"/org/{ORG}/gvc/{gvc}/workload", params=params, json={"name": name, "spec": {"containers": CONTAINERS}}
    )


def set_max(api: httpx.Client, item: dict[str, Any], value: int) -> dict[str, Any]:
    patched = api.patch(f"/org/{ORG}/quota/{item['id']}", json={"max": value})
    assert patched.status_code == 200, patched.text
    return patched.json()  # type: ignore[no-any-return]


def test_every_gvc_has_its_own_quotas_addressed_by_id(api: httpx.Client, unique: str) -> None:
    new_gvc(api, unique)
    mine = [q for q in quotas(api) if q["dimensions"] == {"gvc": unique}]
    assert sorted(q["name"] for q in mine) == ["identities-per-gvc", "workloads-per-gvc"]
    item = mine[0]
    assert item["kind"] == "quota" and item["origin"] == "default" and item["current"] == 0
    assert "tags" not in item
    assert {"rel": "self", "href": f"/org/{ORG}/quota/{item['id']}"} in item["links"]
    got = api.get(f"/org/{ORG}/quota/{item['id']}")
    assert got.status_code == 200 and got.json() == item
    assert {q["name"] for q in quotas(api) if q["dimensions"] == {}} >= {"agents", "domains"}

    # Quotas are the server's: no POST, PUT or DELETE; and the GVC's go with it.
    assert api.post(f"/org/{ORG}/quota", json={"name": "more", "max": 3}).status_code == 405
    assert api.delete(f"/org/{ORG}/quota/{item['id']}").status_code == 405
    assert api.delete(f"/org/{ORG}/gvc/{unique}").status_code == 202
    assert api.get(f"/org/{ORG}/quota/{item['id']}").status_code == 404
    assert [q for q in quotas(api) if q["dimensions"] == {"gvc": unique}] == []


def test_only_max_is_the_clients(api: httpx.Client, unique: str) -> None:
    new_gvc(api, unique)
    item = quota(api, "workloads-per-gvc", unique)
    # What ``cpln quota edit`` sends: the whole item back, with max changed.
    edited = {**item, "max": 7, "name": "renamed", "current": 99, "unit": "boxes"}
    patched = api.patch(f"/org/{ORG}/quota/{item['id']}", json=edited)
    assert patched.status_code == 200, patched.text
    after = patched.json()
    assert (after["max"], after["name"], after["current"], after["unit"]) == (7, "workloads-per-gvc", 0, "workloads")
    assert after["version"] == item["version"] + 1
    refused = api.patch(f"/org/{ORG}/quota/{item['id']}", json={"max": -1, "tags": {"a": "b"}})
    assert refused.status_code == 400
    assert sorted(e["path"] for e in refused.json()["details"]["errors"]) == ["max", "tags"]
    assert api.get(f"/org/{ORG}/quota/{item['id']}").json()["max"] == 7


def test_creates_count_and_the_quota_refuses_past_its_max(api: httpx.Client, unique: str) -> None:
    new_gvc(api, unique)
    item = set_max(api, quota(api, "workloads-per-gvc", unique), 2)
    assert create_workload(api, unique, "one").status_code == 201
    assert create_workload(api, unique, "two").status_code == 201
    counted = api.get(f"/org/{ORG}/quota/{item['id']}").json()
    assert counted["current"] == 2 and counted["version"] == item["version"]  # counting is not an edit

    for params in ({"dryRun": "true"}, {}):
        refused = create_workload(api, unique, "three", **params)
        assert refused.status_code == 429, refused.text
        assert "quota" in refused.json()["message"].lower() and "workloads-per-gvc" in refused.json()["message"]
    assert api.get(f"/org/{ORG}/gvc/{unique}/workload/three").status_code == 404
    # An update is no create: it counts nothing and is never refused.
    assert api.patch(f"/org/{ORG}/gvc/{unique}/workload/one", json={"description": "still"}).status_code == 200

    assert api.delete(f"/org/{ORG}/gvc/{unique}/workload/one").status_code == 202
    assert quota(api, "workloads-per-gvc", unique)["current"] == 1
    assert create_workload(api, unique, "three").status_code == 201
    # Another GVC counts on its own.
    new_gvc(api, f"{unique}-b")
    assert create_workload(api, f"{unique}-b", "one").status_code == 201
    assert quota(api, "workloads-per-gvc", f"{unique}-b")["current"] == 1


def test_concurrent_creates_never_take_the_last_unit_twice(api: httpx.Client, server: Any, unique: str) -> None:
    new_gvc(api, unique)
    set_max(api, quota(api, "identities-per-gvc", unique), 3)

    def create(n: int) -> int:
        with httpx.Client(base_url=str(api.base_url), headers=api.headers, timeout=30) as client:
            return client.post(f"/org/{ORG}/gvc/{unique}/identity", json={"name": f"id{n}"}).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(create, range(10)))
    assert sorted(statuses) == [201] * 3 + [429] * 7
    listed = api.get(f"/org/{ORG}/gvc/{unique}/identity").json()["items"]
    assert len(listed) == 3 == quota(api, "identities-per-gvc", unique)["current"]


def test_org_wide_quotas_count_domains_and_agents(api: httpx.Client, unique: str) -> None:
    for name, path, body in (
        ("domains", "domain", lambda n: {"name": f"{unique}-{n}.example.com"}),
        ("agents", "agent", lambda n: {"name": f"{unique}-{n}"}),
    ):
        item = quota(api, name)
        set_max(api, item, item["current"] + 1)
        try:
            assert api.post(f"/org/{ORG}/{path}", json=body(1)).status_code == 201
            refused = api.post(f"/org/{ORG}/{path}", json=body(2))
            assert refused.status_code == 429 and name in refused.json()["message"]
        finally:
            set_max(api, item, item["max"])
        assert quota(api, name)["current"] == item["current"] + 1


def test_query_by_usage(api: httpx.Client, unique: str) -> None:
    new_gvc(api, unique)
    assert create_workload(api, unique, "one").status_code == 201
    query = {"kind": "quota", "spec": {"match": "all", "terms": [{"op": "=", "property": "current", "value": 1}]}}
    found = api.post(f"/org/{ORG}/quota/-query", json=query)
    assert found.status_code == 200, found.text
    assert any(q["dimensions"] == {"gvc": unique} for q in found.json()["items"])


def test_reading_needs_view_and_changing_max_needs_edit(server: Any, api: httpx.Client, unique: str) -> None:
    new_gvc(api, unique)
    item = quota(api, "workloads-per-gvc", unique)
    href = f"/org/{ORG}/quota/{item['id']}"
    tokens = {held: service_account_with_key(api, ORG, f"{unique}-{held}") for held in ("none", "view", "edit")}
    for held in ("view", "edit"):
        policy = {
            "name": f"{unique}-{held}",
            "targetKind": "quota",
            "targetLinks": [href],
            "bindings": [{"permissions": [held], "principalLinks": [f"//serviceaccount/{unique}-{held}"]}],
        }
        ok(api.post(f"/org/{ORG}/policy", json=policy), 201)
    with server.client() as anyone:
        # Without view the quota answers as a missing one would (docs/api.md, "Errors").
        assert_hidden(anyone.get(href, headers=bearer(tokens["none"])), "quota", href.rsplit("/", 1)[-1])
        assert anyone.get(f"/org/{ORG}/quota", headers=bearer(tokens["none"])).json()["items"] == []
        assert ok(anyone.get(href, headers=bearer(tokens["view"])))["id"] == item["id"]
        seen = anyone.get(f"/org/{ORG}/quota", headers=bearer(tokens["view"])).json()["items"]
        assert [q["id"] for q in seen] == [item["id"]], "a list shows only what the caller may view"
        assert_forbidden(anyone.patch(href, json={"max": 5}, headers=bearer(tokens["view"])), "edit")
        assert ok(anyone.patch(href, json={"max": 5}, headers=bearer(tokens["edit"])))["max"] == 5
        assert ok(anyone.get(href, headers=bearer(tokens["edit"])))["max"] == 5, "edit implies view"
