"""The official CLI's ``location`` commands against a real Plinth server: the catalog read as
lists and items, enabling and disabling with ``location patch``, BYOK locations created and
deleted with ``location create``/``delete``, and ``gvc create --location`` placed against it.

Deleting a built-in location is a 409, which the CLI retries ten times with backoff before it
gives up: tests/api/test_locations.py tests it over HTTP instead. The server is shared: the
built-in location these tests disable is one no other test uses, and they enable it again."""

from __future__ import annotations

import json

import httpx

from plinth.kinds.location import BUILTIN_LOCATIONS
from tests.compat.conftest import ORG, Cpln
from tests.compat.test_typed import as_json, ok

SPARE = "azure-centralus"  # no other compat test places anything here


def test_location_get_lists_the_catalog_and_reads_one(either: Cpln, api: httpx.Client) -> None:
    listed = as_json(either("location", "get", "--max", "0", "-o", "json"))
    assert listed["kind"] == "list" and set(BUILTIN_LOCATIONS) <= {item["name"] for item in listed["items"]}
    one = as_json(either("location", "get", "aws-us-east-1", "-o", "json"))
    assert one == api.get(f"/org/{ORG}/location/aws-us-east-1").json()
    assert (one["provider"], one["region"], one["origin"]) == ("aws", "us-east-1", "builtin")
    table = ok(either("location", "get", "gcp-us-east1", "aws-us-west-2")).stdout
    assert "|gcp-us-east1 " in table and "|aws-us-west-2 " in table and "|builtin |" in table
    names = ok(either("location", "get", "--max", "0", "-o", "names")).stdout.split()
    assert "azure-eastus2" in names and "gcp-me-west1" in names


def test_location_patch_disables_and_enables_and_gvc_create_follows(cpln: Cpln, api: httpx.Client, unique: str) -> None:
    off = as_json(cpln("location", "patch", SPARE, "-f", "-", "-o", "json", stdin='{"spec": {"enabled": false}}'))
    assert off["spec"]["enabled"] is False
    assert api.get(f"/org/{ORG}/location/{SPARE}").json()["spec"]["enabled"] is False
    refused = cpln("gvc", "create", "--name", unique, "--location", SPARE)
    assert refused.code == 1
    error = json.loads(refused.stderr)[0] if refused.stderr.startswith("[") else json.loads(refused.stderr)
    assert error["status"] == 400 and SPARE in error["message"]
    assert api.get(f"/org/{ORG}/gvc/{unique}").status_code == 404
    on = as_json(cpln("location", "patch", SPARE, "-f", "-", "-o", "json", stdin="spec:\n  enabled: true\n"))
    assert on["spec"]["enabled"] is True
    made = as_json(cpln("gvc", "create", "--name", unique, "--location", SPARE, "-o", "json"))
    assert made["spec"]["staticPlacement"]["locationLinks"] == [f"/org/{ORG}/location/{SPARE}"]
    # In use now: disabling it is refused, naming the GVC.
    in_use = cpln("location", "patch", SPARE, "-f", "-", stdin='{"spec": {"enabled": false}}')
    assert in_use.code == 1 and f"gvc/{unique}" in in_use.stderr
    ok(cpln("gvc", "delete", unique))


def test_gvc_create_with_an_unknown_location_is_refused(cpln: Cpln, api: httpx.Client, unique: str) -> None:
    refused = cpln("gvc", "create", "--name", unique, "--location", "aws-mars-1")
    assert refused.code == 1 and "aws-mars-1" in refused.stderr
    assert api.get(f"/org/{ORG}/gvc/{unique}").status_code == 404


def test_location_create_and_delete_a_byok_location(either: Cpln, api: httpx.Client, unique: str) -> None:
    made = as_json(either("location", "create", "--name", unique, "--tag", "rack=2", "-o", "json"))
    stored = api.get(f"/org/{ORG}/location/{unique}").json()
    assert made == stored
    assert (stored["provider"], stored["origin"], stored["spec"], stored["tags"]) == (
        "byok",
        "custom",
        {"enabled": True},
        {"rack": 2},  # the CLI sends --tag values that look like numbers as numbers
    )
    ok(either("location", "delete", unique))
    assert api.get(f"/org/{ORG}/location/{unique}").status_code == 404
