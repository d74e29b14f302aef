"""The shared kind conformance suite: every served kind passes the same CRUD checks through HTTP."""

from __future__ import annotations

import httpx
import pytest

from plinth.kinds import REGISTRY
from tests.api.kind_cases import CASES, KindCase, fill

CASE_IDS = [case.kind for case in CASES]


def test_every_kind_with_a_spec_has_a_case() -> None:
    served = {name for name, kind in REGISTRY.items() if kind.scope != "root" and "create" in kind.verbs}
    assert served <= {case.kind for case in CASES}


@pytest.fixture(params=CASES, ids=CASE_IDS)
def case(request: pytest.FixtureRequest, api: httpx.Client, unique: str) -> tuple[KindCase, str, str]:
    kind_case: KindCase = request.param
    n = unique[-8:]
    for path, body in kind_case.needs:
        r = api.post(fill(path, org="acme", n=n), json=fill(body, org="acme", n=n))
        assert r.status_code == 201, r.text
    return kind_case, fill(kind_case.collection, org="acme", n=n), n


def test_create_get_list(api: httpx.Client, case: tuple[KindCase, str, str]) -> None:
    kind_case, collection, n = case
    body = fill(kind_case.valid, org="acme", n=n)
    created = api.post(collection, json=body)
    assert created.status_code == 201, created.text
    item = created.json()
    assert item["kind"] == kind_case.kind and item["version"] == 1 and item["name"] == body["name"]
    assert api.get(created.headers["location"]).json() == item
    names = [i["name"] for i in api.get(collection, params={"limit": 1000}).json()["items"]]
    assert body["name"] in names


def test_invalid_bodies_are_400_naming_the_field_and_store_nothing(
    api: httpx.Client, case: tuple[KindCase, str, str]
) -> None:
    kind_case, collection, n = case
    for body, path in kind_case.invalid:
        filled = fill(body, org="acme", n=n)
        r = api.post(collection, json=filled)
        assert r.status_code == 400, r.text
        assert path in [e["path"] for e in r.json()["details"]["errors"]], r.text
        assert api.get(f"{collection}/{filled['name']}").status_code == 404


def test_update_bumps_version_and_delete_removes(api: httpx.Client, case: tuple[KindCase, str, str]) -> None:
    kind_case, collection, n = case
    body = fill(kind_case.valid, org="acme", n=n)
    location = api.post(collection, json=body).headers["location"]
    patched = api.patch(location, json=fill(kind_case.update, org="acme", n=n))
    assert patched.status_code == 200, patched.text
    assert patched.json()["version"] == 2
    replaced = api.put(location, json={**patched.json(), "description": "replaced"})
    assert replaced.status_code == 200 and replaced.json()["version"] == 3
    assert api.delete(location).status_code == 202
    assert api.get(location).status_code == 404


def test_unknown_top_level_field_is_rejected(api: httpx.Client, case: tuple[KindCase, str, str]) -> None:
    kind_case, collection, n = case
    r = api.post(collection, json={**fill(kind_case.valid, org="acme", n=n), "surprise": 1})
    assert r.status_code == 400
    assert [e["path"] for e in r.json()["details"]["errors"]] == ["surprise"]
