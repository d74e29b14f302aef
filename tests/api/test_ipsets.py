"""The ipset kind over real HTTP on both backends: links stored in full, what the CLI's location
commands send, and the status following the workload or GVC the IP set links to."""

from __future__ import annotations

from typing import Any

import httpx

ORG = "acme"


def warning(api: httpx.Client, name: str) -> str | None:
    item = api.get(f"/org/{ORG}/ipset/{name}").json()
    assert item["status"]["ipAddresses"] == []
    return item["status"].get("warning")  # type: ignore[no-any-return]


def direct_workload(ip_set: str | None, enabled: bool = True) -> dict[str, Any]:
    direct: dict[str, Any] = {"enabled": enabled, "ports": [{"externalPort": 443, "protocol": "TCP"}]}
    if ip_set is not None:
        direct["ipSet"] = ip_set
    containers = [{"name": "app", "image": "nginx:1.27", "ports": [{"number": 443}]}]
    return {"name": "web", "spec": {"containers": containers, "loadBalancer": {"direct": direct}}}


def test_links_and_locations_are_stored_in_full(api: httpx.Client, unique: str) -> None:
    body = {
        "name": unique,
        "spec": {
            "link": f"//gvc/{unique}/workload/web",
            "locations": [{"name": "aws-us-west-2"}, {"name": "//location/gcp-us-east1", "retentionPolicy": "free"}],
        },
    }
    made = api.post(f"/org/{ORG}/ipset", json=body)
    assert made.status_code == 201, made.text
    assert made.headers["location"] == f"/org/{ORG}/ipset/{unique}"
    assert made.json()["spec"] == {
        "link": f"/org/{ORG}/gvc/{unique}/workload/web",
        "locations": [
            {"name": f"/org/{ORG}/location/aws-us-west-2", "retentionPolicy": "keep"},
            {"name": f"/org/{ORG}/location/gcp-us-east1", "retentionPolicy": "free"},
        ],
    }
    refused = api.post(f"/org/{ORG}/ipset", json={"name": f"{unique}-b", "spec": {"link": "/org/other/gvc/g"}})
    assert refused.status_code == 400
    assert [e["path"] for e in refused.json()["details"]["errors"]] == ["spec.link"]
    refused = api.post(f"/org/{ORG}/ipset", json={"name": f"{unique}-b", "spec": {"link": "//domain/x.example.com"}})
    assert [e["message"] for e in refused.json()["details"]["errors"]] == ["must link to a gvc or workload"]


def test_the_location_commands_patch_the_whole_merged_list(api: httpx.Client, unique: str) -> None:
    """``cpln ipset add-location|update-location|remove-location`` GET, merge by name, PATCH."""
    assert api.post(f"/org/{ORG}/ipset", json={"name": unique}).status_code == 201
    href = f"/org/{ORG}/ipset/{unique}"
    keep = {"name": f"/org/{ORG}/location/aws-us-west-2", "retentionPolicy": "keep"}
    free = {"name": f"/org/{ORG}/location/aws-us-east-1", "retentionPolicy": "free"}
    added = api.patch(href, json={"spec": {"locations": [keep, free]}})
    assert added.status_code == 200 and added.json()["spec"]["locations"] == [keep, free]
    removed = api.patch(href, json={"spec": {"locations": [free]}}).json()
    assert removed["spec"] == {"locations": [free]} and removed["version"] == 3


def test_the_status_follows_the_linked_workload(api: httpx.Client, unique: str) -> None:
    assert api.post(f"/org/{ORG}/gvc", json={"name": unique}).status_code == 201
    workload = f"/org/{ORG}/gvc/{unique}/workload/web"
    assert api.post(f"/org/{ORG}/ipset", json={"name": unique, "spec": {"link": workload}}).status_code == 201
    assert warning(api, unique) == f"{workload} does not exist: its addresses cannot be bound"
    # A workload naming an IP set that does not exist yet is accepted (cpln apply writes IP sets last).
    assert api.post(f"/org/{ORG}/gvc/{unique}/workload", json=direct_workload(None)).status_code == 201
    assert (warning(api, unique) or "").startswith(f"Cross-link misconfiguration: {workload} must name this IP set")
    linked = api.patch(workload, json={"spec": {"loadBalancer": {"direct": {"ipSet": f"//ipset/{unique}"}}}})
    assert linked.status_code == 200, linked.text
    assert linked.json()["spec"]["loadBalancer"]["direct"]["ipSet"] == f"/org/{ORG}/ipset/{unique}"
    assert warning(api, unique) is None
    assert api.patch(workload, json={"spec": {"loadBalancer": {"direct": {"enabled": False}}}}).status_code == 200
    assert (warning(api, unique) or "").startswith("Cross-link misconfiguration")
    assert api.delete(workload).status_code == 202
    assert warning(api, unique) == f"{workload} does not exist: its addresses cannot be bound"


def test_the_status_follows_the_linked_gvc(api: httpx.Client, unique: str) -> None:
    gvc = f"/org/{ORG}/gvc/{unique}"
    assert api.post(f"/org/{ORG}/ipset", json={"name": unique, "spec": {"link": f"//gvc/{unique}"}}).status_code == 201
    balancer = {"dedicated": True, "ipSet": unique}
    assert api.post(f"/org/{ORG}/gvc", json={"name": unique, "spec": {"loadBalancer": balancer}}).status_code == 201
    assert warning(api, unique) is None
    assert api.patch(gvc, json={"spec": {"loadBalancer": {"dedicated": False}}}).status_code == 200
    assert (warning(api, unique) or "").startswith(f"Cross-link misconfiguration: {gvc} must name this IP set")


def test_an_ip_set_in_use_is_deleted_all_the_same(api: httpx.Client, unique: str) -> None:
    """No addresses are allocated, so none is ever bound: a delete is not refused."""
    assert api.post(f"/org/{ORG}/gvc", json={"name": unique}).status_code == 201
    workload = f"/org/{ORG}/gvc/{unique}/workload/web"
    assert api.post(f"/org/{ORG}/ipset", json={"name": unique, "spec": {"link": workload}}).status_code == 201
    assert api.post(f"/org/{ORG}/gvc/{unique}/workload", json=direct_workload(unique)).status_code == 201
    assert api.delete(f"/org/{ORG}/ipset/{unique}").status_code == 202
    assert api.get(workload).json()["spec"]["loadBalancer"]["direct"]["ipSet"] == f"/org/{ORG}/ipset/{unique}"


def test_query_by_link(api: httpx.Client, unique: str) -> None:
    link = f"/org/{ORG}/gvc/{unique}/workload/web"
    assert api.post(f"/org/{ORG}/ipset", json={"name": unique, "spec": {"link": link}}).status_code == 201
    assert api.post(f"/org/{ORG}/ipset", json={"name": f"{unique}-b"}).status_code == 201
    query = {"spec": {"terms": [{"property": "spec.link", "value": link}]}}
    found = api.post(f"/org/{ORG}/ipset/-query", json=query).json()["items"]
    assert [i["name"] for i in found] == [unique]
