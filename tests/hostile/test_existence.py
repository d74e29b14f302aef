"""An item the caller may not view answers exactly as a missing one (issue 21, defect 7).

Before, reading a hidden item answered 403 and a missing one 404, so any key, even one with no
permissions, could probe which names exist. Now a caller without ``view`` gets the same 404 for
both, on reads, writes, deletes and the event log; a caller who may view an item but lacks the
permission it asked for still gets the 403 naming it (docs/api.md, "Errors").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.api.authz_support import ok, service_account_with_key
from tests.support.server import ServerProcess

Probe = Callable[[httpx.Client, str], httpx.Response]

PROBES: dict[str, Probe] = {
    "get": lambda c, path: c.get(path),
    "patch": lambda c, path: c.patch(path, json={"description": "mine now"}),
    "put": lambda c, path: c.put(path, json={"description": "mine now"}),
    "delete": lambda c, path: c.delete(path),
    "eventlog": lambda c, path: c.get(f"{path}/-eventlog"),
    "accessreport": lambda c, path: c.get(f"{path}/-accessreport"),
    "post": lambda c, path: c.post(path.rsplit("/", 1)[0], json={"name": path.rsplit("/", 1)[1]}),
}
#: Writes that may create answer a free name with 403 naming ``create`` (for a caller that may not).
CREATING = ("put", "post")


def _shape(response: httpx.Response, name: str) -> tuple[int, str, str, Any]:
    """What a caller learns from an error, with the name it asked for taken out."""
    body = response.json()
    details = {k: (v.replace(name, "<name>") if isinstance(v, str) else v) for k, v in body.get("details", {}).items()}
    return response.status_code, body["code"], body["message"].replace(name, "<name>"), details


@pytest.fixture(scope="module")
def hidden(server: ServerProcess, api: httpx.Client) -> str:
    ok(api.post(f"/org/{server.org}/gvc", json={"name": "exists-hidden", "description": "plans"}), 201)
    return f"/org/{server.org}/gvc/exists-hidden"


@pytest.fixture(scope="module")
def viewer(server: ServerProcess, api: httpx.Client, hidden: str) -> Iterator[httpx.Client]:
    """A key that may view the hidden gvc, and nothing more."""
    key = service_account_with_key(api, server.org, "exists-viewer")
    policy = {
        "name": "exists-viewer",
        "targetKind": "gvc",
        "targetLinks": [hidden],
        "bindings": [{"permissions": ["view"], "principalLinks": ["//serviceaccount/exists-viewer"]}],
    }
    ok(api.post(f"/org/{server.org}/policy", json=policy), 201)
    with server.client(key) as client:
        yield client


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_a_hidden_item_answers_as_a_missing_one(
    server: ServerProcess, api: httpx.Client, nobody: httpx.Client, hidden: str, probe: str
) -> None:
    missing = f"/org/{server.org}/gvc/exists-missing"
    seen_hidden = PROBES[probe](nobody, hidden)
    seen_missing = PROBES[probe](nobody, missing)
    assert seen_hidden.status_code == (403 if probe in CREATING else 404), seen_hidden.text
    assert _shape(seen_hidden, "exists-hidden") == _shape(seen_missing, "exists-missing")
    stored = ok(api.get(hidden))
    assert stored["description"] == "plans"  # and the refused write changed nothing


def test_a_visible_item_still_names_the_missing_permission(viewer: httpx.Client, hidden: str) -> None:
    assert ok(viewer.get(hidden))["name"] == "exists-hidden"
    refused = viewer.patch(hidden, json={"description": "mine now"})
    assert refused.status_code == 403 and refused.json()["details"]["permission"] == "edit"
    refused = viewer.delete(hidden)
    assert refused.status_code == 403 and refused.json()["details"]["permission"] == "delete"


def test_a_caller_that_may_create_learns_only_that_a_name_is_taken(
    server: ServerProcess, api: httpx.Client, hidden: str
) -> None:
    """As unique names tell anyone who may create: 409, with nothing of the item, and no change."""
    key = service_account_with_key(api, server.org, "exists-creator")
    policy = {
        "name": "exists-creator",
        "targetKind": "gvc",
        "target": "all",
        "bindings": [{"permissions": ["create"], "principalLinks": ["//serviceaccount/exists-creator"]}],
    }
    ok(api.post(f"/org/{server.org}/policy", json=policy), 201)
    with server.client(key) as creator:
        for probe in CREATING:
            taken = PROBES[probe](creator, hidden)
            assert taken.status_code == 409 and taken.json()["code"] == "conflict", taken.text
            assert "plans" not in taken.text
        assert creator.get(hidden).status_code == 404
    assert ok(api.get(hidden))["description"] == "plans"


def test_an_org_one_may_not_view_answers_as_a_missing_org(server: ServerProcess, nobody: httpx.Client) -> None:
    """The key's own org (a key used on another org's path is 401 before any of this)."""
    got = nobody.get(f"/org/{server.org}")
    assert got.status_code == 404, got.text
    assert got.json()["details"] == {"kind": "org", "name": server.org}
