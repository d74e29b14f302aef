"""Lists, paging, queries and event logs."""

from __future__ import annotations

import httpx


def _all_pages(api: httpx.Client, first: httpx.Response) -> list[dict[str, object]]:
    items: list[dict[str, object]] = []
    page = first.json()
    while True:
        items += page["items"]
        nxt = [link["href"] for link in page["links"] if link["rel"] == "next"]
        if not nxt:
            return items
        page = api.get(nxt[0]).json()


def test_keyset_paging_visits_every_item_once(api: httpx.Client, unique: str) -> None:
    names = [f"{unique}-{i:02d}" for i in range(23)]
    for name in names:
        assert api.post("/org/acme/gvc", json={"name": name, "tags": {"batch": unique}}).status_code == 201
    first = api.get("/org/acme/gvc?limit=7")
    body = first.json()
    assert body["kind"] == "list" and body["itemKind"] == "gvc" and len(body["items"]) == 7
    seen = [item["name"] for item in _all_pages(api, first)]
    assert len(seen) == len(set(seen))
    assert set(names) <= set(seen)
    assert seen == sorted(seen)


def test_bad_cursor_and_limit_are_400(api: httpx.Client) -> None:
    assert api.get("/org/acme/gvc?cursor=garbage!").status_code == 400
    assert api.get("/org/acme/gvc?limit=0").status_code == 400
    assert api.get("/org/acme/gvc?limit=abc").status_code == 400


def test_query_by_tag_and_property_with_paging(api: httpx.Client, unique: str) -> None:
    for i in range(9):
        api.post("/org/acme/gvc", json={"name": f"{unique}-q{i}", "tags": {"grp": unique, "n": i, "even": i % 2 == 0}})
    query = {
        "kind": "gvc",
        "spec": {
            "match": "all",
            "terms": [{"op": "=", "tag": "grp", "value": unique}, {"op": "=", "tag": "even", "value": "true"}],
            "sort": {"by": "name", "order": "desc"},
        },
    }
    first = api.post("/org/acme/gvc/-query?limit=2", json=query)
    assert first.status_code == 200, first.text
    assert first.json()["kind"] == "queryresult"
    names = [item["name"] for item in _all_pages(api, first)]
    assert names == [f"{unique}-q{i}" for i in (8, 6, 4, 2, 0)]
    numeric = {
        "spec": {"terms": [{"tag": "grp", "value": unique}, {"op": ">=", "property": "name", "value": f"{unique}-q7"}]}
    }
    assert [i["name"] for i in api.post("/org/acme/gvc/-query", json=numeric).json()["items"]] == [
        f"{unique}-q7",
        f"{unique}-q8",
    ]


def test_bad_query_lists_every_problem(api: httpx.Client) -> None:
    query = {"spec": {"match": "some", "terms": [{"op": "??", "tag": "x"}, {"property": "secret.field", "value": 1}]}}
    r = api.post("/org/acme/gvc/-query", json=query)
    assert r.status_code == 400
    paths = {e["path"] for e in r.json()["details"]["errors"]}
    assert paths == {"spec.match", "spec.terms[0].op", "spec.terms[1].property"}


def test_volume_sets_list_org_wide_and_query_by_gvc(api: httpx.Client, unique: str) -> None:
    for gvc in (f"{unique}-a", f"{unique}-b"):
        api.post("/org/acme/gvc", json={"name": gvc})
        api.post(f"/org/acme/gvc/{gvc}/volumeset", json={"name": "vol", "spec": {"initialCapacity": 10}})
    org_wide = [i["gvc"] for i in _all_pages(api, api.get("/org/acme/volumeset")) if i["name"] == "vol"]
    assert {f"{unique}-a", f"{unique}-b"} <= set(org_wide)
    q = {"spec": {"terms": [{"rel": "gvc", "value": f"{unique}-b"}]}}
    items = api.post("/org/acme/volumeset/-query", json=q).json()["items"]
    assert [(i["gvc"], i["name"]) for i in items] == [(f"{unique}-b", "vol")]


def test_event_log_records_every_change_in_order(api: httpx.Client, unique: str) -> None:
    api.post("/org/acme/gvc", json={"name": unique})
    api.patch(f"/org/acme/gvc/{unique}", json={"description": "two"})
    api.patch(f"/org/acme/gvc/{unique}", json={"description": "two"})  # a no-op: no event
    api.delete(f"/org/acme/gvc/{unique}")
    first = api.get(f"/org/acme/gvc/{unique}/-eventlog?limit=2")
    assert first.status_code == 200
    events = _all_pages(api, first)
    assert [e["status"] for e in events] == ["created", "updated", "deleted"]
    assert [e["context"]["version"] for e in events] == [1, 2, 2]
    assert all(e["context"]["principalLink"] == "/org/acme/serviceaccount/admin" for e in events)
    assert api.get(f"/org/acme/gvc/{unique}-never/-eventlog").status_code == 404
