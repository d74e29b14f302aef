"""Paging cursors say nothing about items the caller may not view (issue 21, defect 4).

A page that stopped on a hidden row used to put that row's name (and sort value) in ``next``,
readable by base64-decoding it; and ``next`` appeared whenever any row followed a full page,
so its presence told whether hidden items match a query. Cursors are now sealed and
authenticated (docs/api.md, "Paging"), and ``next`` appears only when a visible row remains.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.api.authz_support import every_item, ok, service_account_with_key
from tests.support.server import ServerProcess


def _next(page: dict[str, Any]) -> str | None:
    hrefs = [link["href"] for link in page["links"] if link["rel"] == "next"]
    return hrefs[0] if hrefs else None


def _cursor(href: str) -> str:
    return str(httpx.URL(href).params["cursor"])


def _raw(token: str) -> bytes:
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


@pytest.fixture(scope="module")
def names() -> dict[str, str]:
    """Visible ``cur-a``, ``cur-c``; hidden ``cur-b``, ``cur-d``, ``cur-e`` (keyset order is by name)."""
    return {s: f"cur-{s}" for s in "abcde"}


@pytest.fixture(scope="module")
def viewer(server: ServerProcess, api: httpx.Client, names: dict[str, str]) -> Iterator[httpx.Client]:
    """A key that may view gvcs ``cur-a`` and ``cur-c`` only; every gvc is tagged ``probe=yes``."""
    org = server.org
    for name in names.values():
        ok(api.post(f"/org/{org}/gvc", json={"name": name, "description": f"secret plans of {name}"}), 201)
        ok(api.patch(f"/org/{org}/gvc/{name}", json={"tags": {"probe": "yes"}}))
    key = service_account_with_key(api, org, "cursor-viewer")
    policy = {
        "name": "cursor-viewer",
        "targetKind": "gvc",
        "targetLinks": [f"/org/{org}/gvc/{names['a']}", f"/org/{org}/gvc/{names['c']}"],
        "bindings": [{"permissions": ["view"], "principalLinks": ["//serviceaccount/cursor-viewer"]}],
    }
    ok(api.post(f"/org/{org}/policy", json=policy), 201)
    with server.client(key) as client:
        yield client


def _query(client: httpx.Client, org: str, limit: int, sort: bool = False) -> httpx.Response:
    spec: dict[str, Any] = {"match": "all", "terms": [{"op": "=", "tag": "probe", "value": "yes"}]}
    if sort:
        spec["sort"] = {"by": "description"}
    return client.post(f"/org/{org}/gvc/-query", params={"limit": limit}, json={"spec": spec})


def test_a_cursor_names_no_row(server: ServerProcess, viewer: httpx.Client, names: dict[str, str]) -> None:
    """The page after ``cur-a`` ends on hidden ``cur-b`` when only one row fits; its cursor
    decodes to no name, description or JSON at all."""
    for response in (
        viewer.get(f"/org/{server.org}/gvc", params={"limit": 1}),
        _query(viewer, server.org, 1),
        _query(viewer, server.org, 1, sort=True),
    ):
        page = ok(response)
        assert [i["name"] for i in page["items"]] == [names["a"]]
        href = _next(page)
        assert href is not None, "cur-c remains visible"
        raw = _raw(_cursor(href))
        for word in (b"cur-", b"secret plans", b'"n"', b'"p"'):
            assert word not in raw, raw
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(raw)


def test_next_appears_only_when_a_visible_row_remains(
    server: ServerProcess, viewer: httpx.Client, names: dict[str, str]
) -> None:
    """After ``cur-c`` only hidden rows match: no ``next``, exactly as if nothing followed."""
    first = ok(_query(viewer, server.org, 1))
    second = ok(viewer.get(str(_next(first))))
    assert [i["name"] for i in second["items"]] == [names["c"]]
    assert _next(second) is None
    whole = ok(_query(viewer, server.org, 2))
    assert [i["name"] for i in whole["items"]] == [names["a"], names["c"]]
    assert _next(whole) is None


def test_paging_still_reaches_every_visible_item_once(
    server: ServerProcess, viewer: httpx.Client, names: dict[str, str]
) -> None:
    for limit in (1, 2, 3):
        items = every_item(viewer, viewer.get(f"/org/{server.org}/gvc", params={"limit": limit}))
        assert [i["name"] for i in items] == [names["a"], names["c"]]
        assert [i["name"] for i in every_item(viewer, _query(viewer, server.org, limit))] == [names["a"], names["c"]]


def test_a_key_without_view_learns_nothing_from_a_query(
    server: ServerProcess, nobody: httpx.Client, viewer: httpx.Client
) -> None:
    """No policy grants ``nobody`` view on gvcs: an empty page, no ``next``, whatever matches."""
    page = ok(_query(nobody, server.org, 1))
    assert page["items"] == [] and _next(page) is None


def _assert_bad_cursor(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    assert response.json()["details"] == {"parameter": "cursor"}


def test_a_changed_or_moved_cursor_is_400(server: ServerProcess, api: httpx.Client, viewer: httpx.Client) -> None:
    org = server.org
    href = str(_next(ok(viewer.get(f"/org/{org}/gvc", params={"limit": 1}))))
    token = _cursor(href)
    raw = bytearray(_raw(token))
    raw[-1] ^= 1
    tampered = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    _assert_bad_cursor(viewer.get(f"/org/{org}/gvc", params={"limit": 1, "cursor": tampered}))
    # The old readable form: a name of the caller's choosing, unsealed.
    forged = base64.urlsafe_b64encode(orjson.dumps({"v": 1, "p": "", "n": "cur-b"})).decode().rstrip("=")
    _assert_bad_cursor(viewer.get(f"/org/{org}/gvc", params={"limit": 1, "cursor": forged}))
    # A cursor of the gvc list is not one of the policy list, nor of the gvc query.
    _assert_bad_cursor(api.get(f"/org/{org}/policy", params={"cursor": token}))
    _assert_bad_cursor(viewer.get(f"/org/{org}/gvc/-query", params={"cursor": token}))
    # The genuine one still works.
    assert ok(viewer.get(href))["items"]


def test_event_log_cursors_are_sealed_and_strict(
    server: ServerProcess, api: httpx.Client, viewer: httpx.Client
) -> None:
    """The event log's cursor held the store-wide event seq, readable, and took ``"seq": true``.

    ``viewer`` creates the GVCs whose logs are read, so this test stands alone (as under xdist).
    """
    org = server.org
    log = f"/org/{org}/gvc/cur-a/-eventlog"
    first = ok(api.get(log, params={"limit": 1}))
    token = _cursor(str(_next(first)))
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(_raw(token))
    second = ok(api.get(log, params={"limit": 1, "cursor": token}))
    assert second["items"] and second["items"][0] != first["items"][0]
    for body in ({"v": 1, "seq": True}, {"v": 1, "seq": 1}, {"v": 1, "seq": -1}):
        forged = base64.urlsafe_b64encode(orjson.dumps(body)).decode().rstrip("=")
        _assert_bad_cursor(api.get(log, params={"cursor": forged}))
    _assert_bad_cursor(api.get(f"/org/{org}/gvc/cur-c/-eventlog", params={"cursor": token}))
