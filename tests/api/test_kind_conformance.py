"""The shared kind conformance suite: every kind clients create passes the same CRUD checks through HTTP.

The cases are the kinds' own declarations (``KindSpec.example``, see ``KindExample``), so a kind
is in the suite as soon as it is in the registry. The root kind is not: an org is created by the
server admin and never deleted (``tests/kinds/test_org.py`` and the API tests cover it); neither
are kinds without ``create`` (users join by ``-invite``, see ``test_users.py``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import httpx
import pytest

from plinth.kinds import KINDS
from plinth.kinds.base import KindExample, KindSpec
from plinth.meta import collection_href

ORG = "acme"

CREATABLE = [kind for kind in KINDS if "create" in kind.access.verbs and kind.scope != "root"]
CASES = [kind for kind in CREATABLE if kind.example is not None]


class Case(NamedTuple):
    kind: KindSpec
    example: KindExample
    #: The collection path, ``{org}`` and ``{n}`` filled in.
    collection: str
    #: This test's unique suffix, for ``{n}``.
    n: str


def fill(value: Any, **subs: str) -> Any:
    """Substitute ``{org}`` and ``{n}`` in every string of a nested body."""
    if isinstance(value, str):
        for key, sub in subs.items():
            value = value.replace("{" + key + "}", sub)
        return value
    if isinstance(value, list):
        return [fill(v, **subs) for v in value]
    if isinstance(value, dict):
        return {fill(k, **subs): fill(v, **subs) for k, v in value.items()}
    return value


def _example(kind: KindSpec) -> KindExample:
    assert kind.example is not None
    return kind.example


def test_every_kind_clients_create_declares_an_example() -> None:
    missing = [kind.name for kind in CREATABLE if kind.example is None]
    assert not missing, f"kinds serving create without KindSpec.example: {missing}"
    unnamed_parent = [kind.name for kind in CASES if kind.scope == "gvc" and _example(kind).gvc is None]
    assert not unnamed_parent, f"GVC-scoped kinds whose example names no parent gvc: {unnamed_parent}"


def test_only_kinds_in_the_suite_declare_an_example() -> None:
    in_suite = {kind.name for kind in CASES}
    unused = [kind.name for kind in KINDS if kind.example is not None and kind.name not in in_suite]
    assert not unused, f"examples the suite never runs (no create verb, or the root kind): {unused}"


@pytest.fixture(params=CASES, ids=[kind.name for kind in CASES])
def case(request: pytest.FixtureRequest, api: httpx.Client, unique: str) -> Case:
    """One kind's case, once the items its example ``needs`` exist."""
    kind: KindSpec = request.param
    example = _example(kind)
    n = unique[-8:]
    for path, body in example.needs:
        r = api.post(fill(path, org=ORG, n=n), json=fill(body, org=ORG, n=n))
        assert r.status_code == 201, r.text
    gvc = fill(example.gvc, org=ORG, n=n) if kind.scope == "gvc" else None
    return Case(kind, example, collection_href(ORG, kind.name, gvc), n)


def _within(value: Any, shape: Any) -> Any:
    """``value`` with only the object keys ``shape`` has, recursively."""
    if isinstance(value, dict) and isinstance(shape, dict):
        return {k: _within(v, shape[k]) for k, v in value.items() if k in shape}
    return value


def _paths(value: Any, prefix: str = "") -> set[str]:
    """Every object key path of ``value`` (``status.bootstrapConfig.agentId``)."""
    if not isinstance(value, dict):
        return set()
    return {f"{prefix}{k}" for k in value} | {p for k, v in value.items() for p in _paths(v, f"{prefix}{k}.")}


def test_create_get_list(api: httpx.Client, case: Case) -> None:
    kind, example, collection, n = case
    body = fill(example.valid, org=ORG, n=n)
    created = api.post(collection, json=body)
    assert created.status_code == 201, created.text
    item = created.json()
    assert item["kind"] == kind.name and item["version"] == 1 and item["name"] == body["name"]
    served = api.get(created.headers["location"]).json()
    if kind.lifecycle.shown_once is None:
        assert served == item
    else:
        # What only the creating write answers (an agent's registration token) is in no read.
        assert _within(item, served) == served and _paths(kind.lifecycle.shown_once(served)) == _paths(item)
    names = [i["name"] for i in api.get(collection, params={"limit": 1000}).json()["items"]]
    assert body["name"] in names


def test_invalid_bodies_are_400_naming_the_field_and_store_nothing(api: httpx.Client, case: Case) -> None:
    _, example, collection, n = case
    for body, path in example.invalid:
        filled = fill(body, org=ORG, n=n)
        r = api.post(collection, json=filled)
        assert r.status_code == 400, r.text
        assert path in [e["path"] for e in r.json()["details"]["errors"]], r.text
        assert api.get(f"{collection}/{filled['name']}").status_code == 404


def test_update_bumps_version_and_delete_removes(api: httpx.Client, case: Case) -> None:
    """A kind without ``delete`` (audit contexts) answers a DELETE with 405 and keeps the item."""
    kind, example, collection, n = case
    body = fill(example.valid, org=ORG, n=n)
    location = api.post(collection, json=body).headers["location"]
    patched = api.patch(location, json=fill(example.update, org=ORG, n=n))
    assert patched.status_code == 200, patched.text
    assert patched.json()["version"] == 2
    replaced = api.put(location, json={**patched.json(), "description": "replaced"})
    assert replaced.status_code == 200 and replaced.json()["version"] == 3
    if "delete" in kind.access.verbs:
        assert api.delete(location).status_code == 202
        assert api.get(location).status_code == 404
    else:
        refused = api.delete(location)
        assert refused.status_code == 405 and "DELETE" not in refused.headers["allow"]
        assert api.get(location).json()["version"] == 3


def test_unknown_top_level_field_is_rejected(api: httpx.Client, case: Case) -> None:
    _, example, collection, n = case
    r = api.post(collection, json={**fill(example.valid, org=ORG, n=n), "surprise": 1})
    assert r.status_code == 400
    assert [e["path"] for e in r.json()["details"]["errors"]] == ["surprise"]
