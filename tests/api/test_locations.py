"""Locations over real HTTP, on both backends: the built-in catalog, BYOK locations, and GVC
placement resolved against them (links that must name enabled locations, and queries).

The module's server is shared by its tests: a test that disables a built-in location uses one
no other test places anything in, and enables it again."""

from __future__ import annotations

from typing import Any

import httpx

from plinth.kinds.location import BUILTIN_LOCATIONS

ORG = "/org/acme"


def placed(*names: str, query: dict[str, Any] | None = None) -> dict[str, Any]:
    placement: dict[str, Any] = {"locationLinks": [f"//location/{name}" for name in names]}
    if query is not None:
        placement["locationQuery"] = query
    return {"staticPlacement": placement}


def every_location(api: httpx.Client) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    url: str | None = f"{ORG}/location?limit=50"
    while url:
        page = api.get(url).json()
        items += page["items"]
        url = next((link["href"] for link in page["links"] if link["rel"] == "next"), None)
    return items


def errors_of(r: httpx.Response) -> list[tuple[str, str]]:
    return [(e["path"], e["message"]) for e in r.json()["details"]["errors"]]


def test_the_list_shows_the_whole_catalog(api: httpx.Client) -> None:
    items = {item["name"]: item for item in every_location(api)}
    assert set(BUILTIN_LOCATIONS) <= set(items)
    one = items["aws-us-east-1"]
    assert (one["kind"], one["origin"], one["provider"], one["region"]) == ("location", "builtin", "aws", "us-east-1")
    assert one["spec"] == {"enabled": True}
    assert one["status"]["geo"]["city"] == "Ashburn" and one["status"]["ipRanges"] == []
    assert one["tags"]["cpln/continent"] == "North America"
    assert {"rel": "self", "href": f"{ORG}/location/aws-us-east-1"} in one["links"]
    assert api.get(f"{ORG}/location/gcp-us-east1").json()["status"]["geo"]["state"] == "South Carolina"


def test_a_query_selects_locations_by_provider_and_region(api: httpx.Client) -> None:
    body = {
        "spec": {
            "match": "all",
            "terms": [{"property": "provider", "value": "gcp"}, {"op": "~", "property": "region", "value": "^us-"}],
        }
    }
    found = api.post(f"{ORG}/location/-query", json=body).json()
    expected = sorted(n for n, e in BUILTIN_LOCATIONS.items() if e.provider == "gcp" and e.region.startswith("us-"))
    assert [item["name"] for item in found["items"]] == expected


def test_a_builtin_location_is_patched_never_deleted_or_created(api: httpx.Client) -> None:
    name = "azure-westus3"
    r = api.patch(f"{ORG}/location/{name}", json={"spec": {"enabled": False}, "tags": {"team": "edge"}})
    assert r.status_code == 200 and r.json()["spec"]["enabled"] is False and r.json()["version"] == 2
    assert r.json()["tags"]["cpln/city"] == "Phoenix"
    refused = api.patch(f"{ORG}/location/{name}", json={"region": "westus2", "provider": "gcp"})
    assert refused.status_code == 400 and [p for p, _ in errors_of(refused)] == ["provider", "region"]
    deleted = api.delete(f"{ORG}/location/{name}")
    assert deleted.status_code == 409 and "Built-in" in deleted.json()["message"]
    again = api.post(f"{ORG}/location", json={"name": name, "provider": "byok"})
    assert again.status_code == 409
    r = api.patch(f"{ORG}/location/{name}", json={"spec": {"enabled": True}, "$replace/tags": {}})
    assert r.json()["spec"]["enabled"] is True and "team" not in r.json()["tags"]


def test_byok_locations_are_created_listed_and_deleted(api: httpx.Client, unique: str) -> None:
    body = {"name": unique, "description": None, "tags": {"rack": "2"}, "provider": "byok"}
    created = api.post(f"{ORG}/location", json=body)
    assert created.status_code == 201 and created.headers["location"] == f"{ORG}/location/{unique}"
    item = api.get(f"{ORG}/location/{unique}").json()
    assert (item["origin"], item["provider"], item["spec"], item["status"]) == ("custom", "byok", {"enabled": True}, {})
    assert unique in {i["name"] for i in every_location(api)}
    query = {"spec": {"terms": [{"property": "origin", "value": "custom"}, {"property": "name", "value": unique}]}}
    assert [i["name"] for i in api.post(f"{ORG}/location/-query", json=query).json()["items"]] == [unique]
    assert api.delete(f"{ORG}/location/{unique}").status_code == 202
    assert api.get(f"{ORG}/location/{unique}").status_code == 404


def test_only_byok_locations_are_created(api: httpx.Client, unique: str) -> None:
    r = api.post(f"{ORG}/location", json={"name": unique, "provider": "aws", "region": "mars-1"})
    assert r.status_code == 400 and [p for p, _ in errors_of(r)] == ["provider", "region"]
    r = api.post(f"{ORG}/location", json={"name": "aws-" + unique})
    assert r.status_code == 400 and [p for p, _ in errors_of(r)] == ["name"]


def test_a_gvc_placed_in_an_unknown_or_disabled_location_is_a_400(api: httpx.Client, unique: str) -> None:
    off = f"{unique}-off"
    api.post(f"{ORG}/location", json={"name": off, "provider": "byok", "spec": {"enabled": False}})
    r = api.post(f"{ORG}/gvc", json={"name": unique, "spec": placed("aws-us-east-1", "nowhere-1", "nowhere-2")})
    assert r.status_code == 400
    assert errors_of(r) == [
        ("spec.staticPlacement.locationLinks[1]", "location 'nowhere-1' does not exist"),
        ("spec.staticPlacement.locationLinks[2]", "location 'nowhere-2' does not exist"),
    ]
    # What the locations are is judged once every link names one that exists.
    body = {"name": unique, "spec": placed("aws-us-east-1", off)}
    r = api.post(f"{ORG}/gvc", json=body)
    assert r.status_code == 400
    assert errors_of(r) == [
        (
            "spec.staticPlacement.locationLinks[1]",
            f"location '{off}' is disabled; enable it first (PATCH spec.enabled: true)",
        )
    ]
    assert api.get(f"{ORG}/gvc/{unique}").status_code == 404
    api.patch(f"{ORG}/location/{off}", json={"spec": {"enabled": True}})
    assert api.post(f"{ORG}/gvc", json=body).status_code == 201
    patched = api.patch(f"{ORG}/gvc/{unique}", json={"spec": placed("gcp-us-east1", "nowhere-1")})
    assert patched.status_code == 400 and [p for p, _ in errors_of(patched)] == [
        "spec.staticPlacement.locationLinks[1]"
    ]


def test_a_location_a_gvc_links_to_is_neither_disabled_nor_deleted(api: httpx.Client, unique: str) -> None:
    api.post(f"{ORG}/location", json={"name": unique, "provider": "byok"})
    api.post(f"{ORG}/gvc", json={"name": unique, "spec": placed(unique)})
    r = api.patch(f"{ORG}/location/{unique}", json={"spec": {"enabled": False}})
    assert r.status_code == 409 and f"gvc/{unique}" in r.json()["message"]
    assert r.json()["details"]["dependants"] == [f"gvc/{unique}"]
    assert api.get(f"{ORG}/location/{unique}").json()["spec"]["enabled"] is True
    r = api.delete(f"{ORG}/location/{unique}")
    assert r.status_code == 409 and f"gvc/{unique}" in r.json()["message"]
    # Other changes are fine; and once the GVC lets go, so is disabling and deleting.
    assert api.patch(f"{ORG}/location/{unique}", json={"description": "still here"}).status_code == 200
    api.patch(f"{ORG}/gvc/{unique}", json={"spec": {"staticPlacement": {"locationLinks": []}}})
    assert api.patch(f"{ORG}/location/{unique}", json={"spec": {"enabled": False}}).status_code == 200
    assert api.delete(f"{ORG}/location/{unique}").status_code == 202


def test_a_location_query_places_a_gvc_and_follows_the_catalog(api: httpx.Client, unique: str) -> None:
    tag = {"placement": unique}
    first = f"{unique}-a"
    api.post(f"{ORG}/location", json={"name": first, "provider": "byok", "tags": tag})
    query = {"kind": "location", "spec": {"terms": [{"tag": "placement", "value": unique}]}}
    gvc = api.post(f"{ORG}/gvc", json={"name": unique, "spec": placed("aws-us-west-2", query=query)})
    assert gvc.status_code == 201, gvc.text
    api.post(f"{ORG}/gvc/{unique}/volumeset", json={"name": "data", "spec": {"initialCapacity": 10}})
    domain = f"{unique}.example.com"
    api.post(f"{ORG}/domain", json={"name": domain, "spec": {"dnsMode": "cname", "gvcLink": f"//gvc/{unique}"}})

    def locations() -> tuple[list[str], list[str]]:
        vs = api.get(f"{ORG}/gvc/{unique}/volumeset/data").json()
        dom = api.get(f"{ORG}/domain/{domain}").json()
        return [loc["name"] for loc in vs["status"]["locations"]], [loc["name"] for loc in dom["status"]["locations"]]

    assert locations() == (["aws-us-west-2", first], ["aws-us-west-2", first])
    # A location created (or enabled) that the query selects joins the placement; one disabled leaves it.
    second = f"{unique}-b"
    api.post(f"{ORG}/location", json={"name": second, "provider": "byok", "tags": tag})
    assert locations()[0] == ["aws-us-west-2", first, second]
    assert api.patch(f"{ORG}/location/{first}", json={"spec": {"enabled": False}}).status_code == 200
    assert locations() == (["aws-us-west-2", second], ["aws-us-west-2", second])
    assert api.delete(f"{ORG}/location/{second}").status_code == 202
    assert locations() == (["aws-us-west-2"], ["aws-us-west-2"])


def test_a_workload_runs_where_the_query_places_its_gvc(api: httpx.Client, unique: str) -> None:
    query = {"spec": {"terms": [{"property": "name", "value": "gcp-me-west1"}]}}
    api.post(f"{ORG}/gvc", json={"name": unique, "spec": placed("aws-us-east-1", query=query)})
    container = {"name": "web", "image": "nginx", "ports": [{"number": 80, "protocol": "http"}]}
    r = api.post(
        f"{ORG}/gvc/{unique}/workload", json={"name": "web", "spec": {"type": "standard", "containers": [container]}}
    )
    assert r.status_code == 201, r.text
    deployments = api.get(f"{ORG}/gvc/{unique}/workload/web/deployment").json()
    assert [d["name"] for d in deployments["items"]] == ["aws-us-east-1", "gcp-me-west1"]


def test_a_location_query_must_name_location_properties(api: httpx.Client, unique: str) -> None:
    query = {"spec": {"terms": [{"property": "colour", "value": "red"}]}}
    r = api.post(f"{ORG}/gvc", json={"name": unique, "spec": placed(query=query)})
    assert r.status_code == 400
    assert [p for p, _ in errors_of(r)] == ["spec.staticPlacement.locationQuery.spec.terms[0].property"]
