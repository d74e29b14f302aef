"""Every verb through the one engine, over real HTTP, on both backends."""

from __future__ import annotations

import httpx


def test_create_returns_201_location_and_the_stored_item(api: httpx.Client, unique: str) -> None:
    r = api.post("/org/acme/gvc", json={"name": unique, "tags": {"team": "a"}})
    assert r.status_code == 201
    assert r.headers["location"] == f"/org/acme/gvc/{unique}"
    got = api.get(r.headers["location"]).json()
    assert got == r.json()
    assert got["version"] == 1 and got["kind"] == "gvc" and got["description"] == unique
    assert got["created"] == got["lastModified"] and got["created"].endswith("Z")
    assert {"rel": "self", "href": f"/org/acme/gvc/{unique}"} in got["links"]


def test_create_twice_is_409_and_changes_nothing(api: httpx.Client, unique: str) -> None:
    first = api.post("/org/acme/gvc", json={"name": unique, "description": "one"}).json()
    r = api.post("/org/acme/gvc", json={"name": unique, "description": "two"})
    assert r.status_code == 409 and r.json()["code"] == "conflict"
    assert api.get(f"/org/acme/gvc/{unique}").json() == first


def test_version_counts_changes_and_a_noop_write_changes_nothing(api: httpx.Client, unique: str) -> None:
    api.post("/org/acme/gvc", json={"name": unique})
    same = api.put(f"/org/acme/gvc/{unique}", json={"name": unique})
    assert same.status_code == 200 and same.json()["version"] == 1
    changed = api.patch(f"/org/acme/gvc/{unique}", json={"description": "changed"})
    assert changed.json()["version"] == 2 and changed.json()["description"] == "changed"
    again = api.patch(f"/org/acme/gvc/{unique}", json={"description": "changed"})
    assert again.json()["version"] == 2
    assert again.json()["lastModified"] == changed.json()["lastModified"]


def test_stale_version_is_409_and_current_version_succeeds(api: httpx.Client, unique: str) -> None:
    api.post("/org/acme/gvc", json={"name": unique})
    api.patch(f"/org/acme/gvc/{unique}", json={"description": "v2"})
    stale = api.patch(f"/org/acme/gvc/{unique}", json={"description": "v3", "version": 1})
    assert stale.status_code == 409
    assert api.get(f"/org/acme/gvc/{unique}").json()["description"] == "v2"
    ok = api.patch(f"/org/acme/gvc/{unique}", json={"description": "v3", "version": 2})
    assert ok.status_code == 200 and ok.json()["version"] == 3


def test_get_edit_put_round_trips_with_server_fields(api: httpx.Client, unique: str) -> None:
    item = api.post("/org/acme/gvc", json={"name": unique}).json()
    item["description"] = "edited"
    item["status"] = {"forged": True}
    item["id"] = "forged"
    r = api.put(f"/org/acme/gvc/{unique}", json=item)
    assert r.status_code == 200
    stored = r.json()
    assert stored["description"] == "edited" and stored["version"] == 2
    assert stored["id"] != "forged" and stored["status"] != {"forged": True}


def test_put_collection_upserts(api: httpx.Client, unique: str) -> None:
    created = api.put("/org/acme/gvc", json={"name": unique})
    assert created.status_code == 201 and created.headers["location"] == f"/org/acme/gvc/{unique}"
    updated = api.put("/org/acme/gvc", json={"name": unique, "description": "later"})
    assert updated.status_code == 200 and updated.json()["version"] == 2


def test_writes_say_their_outcome_dry_run_included(api: httpx.Client, unique: str) -> None:
    """``x-plinth-outcome`` tells an update from a write that changed nothing (``plinth apply``)."""
    would = api.put("/org/acme/gvc?dryRun=true", json={"name": unique})
    assert (would.status_code, would.headers["x-plinth-outcome"]) == (200, "created")
    created = api.put("/org/acme/gvc", json={"name": unique})
    assert created.headers["x-plinth-outcome"] == "created"
    same = api.put("/org/acme/gvc", json={"name": unique})
    assert (same.status_code, same.headers["x-plinth-outcome"], same.json()["version"]) == (200, "unchanged", 1)
    would = api.put("/org/acme/gvc?dryRun=true", json={"name": unique, "description": "later"})
    assert would.headers["x-plinth-outcome"] == "updated"
    patched = api.patch(f"/org/acme/gvc/{unique}", json={"description": "later"})
    assert (patched.headers["x-plinth-outcome"], patched.json()["version"]) == ("updated", 2)


def test_patch_tag_null_removes_it_and_replace_directive(api: httpx.Client, unique: str) -> None:
    api.post("/org/acme/gvc", json={"name": unique, "tags": {"a": "1", "b": 2}})
    r = api.patch(f"/org/acme/gvc/{unique}", json={"tags": {"a": None, "c": True}})
    assert r.json()["tags"] == {"b": 2, "c": True}
    r = api.patch(f"/org/acme/gvc/{unique}", json={"$replace/tags": {"only": "this"}})
    assert r.json()["tags"] == {"only": "this"}


def test_dry_run_validates_without_storing(api: httpx.Client, unique: str) -> None:
    r = api.post("/org/acme/gvc?dryRun=true", json={"name": unique})
    assert r.status_code == 200 and r.json()["name"] == unique
    assert api.get(f"/org/acme/gvc/{unique}").status_code == 404
    bad = api.post("/org/acme/gvc?dryRun=true", json={"name": "Bad_Name"})
    assert bad.status_code == 400


def test_delete_then_404_and_protected_tag_blocks_delete(api: httpx.Client, unique: str) -> None:
    api.post("/org/acme/gvc", json={"name": unique, "tags": {"cpln/protected": "true"}})
    blocked = api.delete(f"/org/acme/gvc/{unique}")
    assert blocked.status_code == 409 and "protected" in blocked.json()["message"]
    api.patch(f"/org/acme/gvc/{unique}", json={"tags": {"cpln/protected": None}})
    assert api.delete(f"/org/acme/gvc/{unique}").status_code == 202
    assert api.get(f"/org/acme/gvc/{unique}").status_code == 404
    assert api.delete(f"/org/acme/gvc/{unique}").status_code == 404


def test_gvc_holding_volume_sets_cannot_be_deleted(api: httpx.Client, unique: str) -> None:
    api.post("/org/acme/gvc", json={"name": unique})
    vs = api.post(f"/org/acme/gvc/{unique}/volumeset", json={"name": "data", "spec": {"initialCapacity": 10}})
    assert vs.status_code == 201, vs.text
    r = api.delete(f"/org/acme/gvc/{unique}")
    assert r.status_code == 409 and "volumeset/data" in r.json()["message"]
    assert api.delete(f"/org/acme/gvc/{unique}/volumeset/data").status_code == 202
    assert api.delete(f"/org/acme/gvc/{unique}").status_code == 202


def test_volume_set_needs_its_gvc_and_gets_status_from_it(api: httpx.Client, unique: str) -> None:
    missing = api.post(f"/org/acme/gvc/{unique}-none/volumeset", json={"name": "x", "spec": {"initialCapacity": 10}})
    assert missing.status_code == 404
    gvc = api.post(
        "/org/acme/gvc",
        json={"name": unique, "spec": {"staticPlacement": {"locationLinks": ["//location/aws-us-east-2"]}}},
    ).json()
    assert gvc["spec"]["staticPlacement"]["locationLinks"] == ["/org/acme/location/aws-us-east-2"]
    vs = api.post(f"/org/acme/gvc/{unique}/volumeset", json={"name": "data", "spec": {"initialCapacity": 10}}).json()
    assert vs["status"]["parentId"] == gvc["id"]
    assert [loc["name"] for loc in vs["status"]["locations"]] == ["aws-us-east-2"]
    # The status follows the GVC's placement when the GVC changes.
    api.patch(
        f"/org/acme/gvc/{unique}",
        json={"spec": {"staticPlacement": {"locationLinks": ["//location/gcp-us-east1", "//location/aws-us-east-2"]}}},
    )
    vs = api.get(f"/org/acme/gvc/{unique}/volumeset/data").json()
    assert sorted(loc["name"] for loc in vs["status"]["locations"]) == ["aws-us-east-2", "gcp-us-east1"]
    assert vs["version"] == 1


def test_orgs_are_not_deleted_and_unknown_paths_are_404(api: httpx.Client) -> None:
    assert api.delete("/org/acme").status_code == 405
    assert api.get("/org/acme/nosuchkind").status_code == 404
    assert api.get("/nothing/here").status_code == 404
    assert api.get("/org/nosuchorg/gvc").status_code == 404
    assert api.post("/org/nosuchorg/gvc", json={"name": "x1"}).status_code == 404


def test_dry_run_delete_checks_without_deleting(api: httpx.Client, unique: str) -> None:
    api.post("/org/acme/gvc", json={"name": unique})
    assert api.delete(f"/org/acme/gvc/{unique}?dryRun=true").status_code == 202
    assert api.get(f"/org/acme/gvc/{unique}").status_code == 200
    api.post(f"/org/acme/gvc/{unique}/volumeset", json={"name": "held", "spec": {"initialCapacity": 10}})
    assert api.delete(f"/org/acme/gvc/{unique}?dryRun=true").status_code == 409
    assert api.delete(f"/org/acme/gvc/{unique}-none?dryRun=true").status_code == 404


def test_names_with_a_trailing_newline_are_rejected(api: httpx.Client, unique: str) -> None:
    r = api.post("/org/acme/gvc", json={"name": unique + "\n"})
    assert r.status_code == 400 and r.json()["details"]["errors"][0]["path"] == "name"


def test_orgs_do_not_nest(api: httpx.Client) -> None:
    for path in ("/org/acme/org", "/org/acme/org/acme", "/org/acme/org/-query"):
        assert api.get(path).status_code == 404, path
