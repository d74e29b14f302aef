"""The location kind and its catalog, driven through the engine's own write pipeline (build_candidate)."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from plinth.engine.pipeline import build_candidate, strip_server_owned
from plinth.errors import FieldError
from plinth.kinds import REGISTRY
from plinth.kinds.base import Item, KindContext
from plinth.kinds.location import BUILTIN_LOCATIONS, LOCATION
from plinth.kinds.location.rules import CATALOG_PREFIXES
from plinth.kinds.permissions import implied_closure
from plinth.meta import NAME_PATTERN

CTX = KindContext(org="acme", now="2026-01-01T00:00:00.000Z", id="6b0e8a8e-1c1e-4c3a-9a55-7d1c2b3a4f60")
BUILTIN = {"origin": "builtin", "provider": "aws", "region": "us-east-1"}


def write(
    body: dict[str, Any], name: str, old: Item | None = None, system: dict[str, Any] | None = None
) -> tuple[Item, list[FieldError]]:
    """One write as the engine runs it: strip server-owned fields, then build the candidate."""
    return build_candidate(LOCATION, strip_server_owned(LOCATION, body), old, CTX, name, system)


def paths(errors: list[FieldError]) -> list[str]:
    return [error.path for error in errors]


def builtin(name: str = "aws-us-east-1") -> Item:
    """A built-in location as the server seeds it."""
    entry = BUILTIN_LOCATIONS[name]
    system = {"origin": "builtin", "provider": entry.provider, "region": entry.region}
    item, errors = write({"name": name, "spec": {"enabled": True}}, name, system=system)
    assert errors == []
    return item


# -- the catalog ----------------------------------------------------------------------


def test_the_catalog_holds_the_locations_the_suites_and_docs_use() -> None:
    for name in ("aws-us-east-1", "aws-us-west-2", "aws-eu-central-1", "gcp-us-east1", "gcp-me-west1", "azure-eastus2"):
        assert name in BUILTIN_LOCATIONS
    assert {entry.provider for entry in BUILTIN_LOCATIONS.values()} == {"aws", "gcp", "azure"}
    assert len(BUILTIN_LOCATIONS) >= 50


@pytest.mark.parametrize("name", sorted(BUILTIN_LOCATIONS))
def test_every_catalog_entry_is_well_formed(name: str) -> None:
    entry = BUILTIN_LOCATIONS[name]
    assert entry.name == name == f"{entry.provider}-{entry.region}"
    assert NAME_PATTERN.fullmatch(name) and len(name) <= 64
    assert re.fullmatch(r"[a-z0-9-]+", entry.region)
    geo = entry.geo()
    assert list(geo) == ["lat", "lon", "continent", "country", "state", "city"]
    assert -90 <= geo["lat"] <= 90 and -180 <= geo["lon"] <= 180 and not math.isnan(geo["lat"])
    assert geo["continent"] in {"Africa", "Asia", "Europe", "North America", "Oceania", "South America"}
    assert all(isinstance(geo[k], str) and geo[k] for k in ("country", "state", "city"))


def test_the_catalog_is_sorted_by_name() -> None:
    assert list(BUILTIN_LOCATIONS) == sorted(BUILTIN_LOCATIONS)


# -- built-in locations -----------------------------------------------------------------


def test_a_builtin_location_carries_its_catalog_tags_and_geo() -> None:
    item = builtin("gcp-us-east1")
    assert (item["origin"], item["provider"], item["region"]) == ("builtin", "gcp", "us-east1")
    assert item["spec"] == {"enabled": True}
    assert item["tags"] == {
        "cpln/city": "Moncks Corner",
        "cpln/country": "United States",
        "cpln/continent": "North America",
    }
    status = LOCATION.status.compute(item, CTX)
    assert status == {"geo": BUILTIN_LOCATIONS["gcp-us-east1"].geo(), "ipRanges": []}


def test_a_builtin_location_can_be_disabled_described_and_tagged() -> None:
    old = builtin()
    body = {"name": "aws-us-east-1", "description": "ours", "tags": {"team": "edge"}, "spec": {"enabled": False}}
    item, errors = write(body, "aws-us-east-1", old)
    assert errors == []
    assert item["spec"] == {"enabled": False} and item["description"] == "ours"
    assert item["tags"]["team"] == "edge" and item["tags"]["cpln/city"] == "Ashburn"
    assert (item["origin"], item["provider"], item["region"]) == ("builtin", "aws", "us-east-1")


def test_what_a_client_reads_it_may_send_back_unchanged() -> None:
    old = builtin()
    item, errors = write({**old, "id": "x", "status": {"geo": {}}}, "aws-us-east-1", old)
    assert errors == [] and item == old


@pytest.mark.parametrize(
    ("change", "path"),
    [({"provider": "gcp"}, "provider"), ({"region": "us-west-2"}, "region"), ({"provider": "byok"}, "provider")],
)
def test_a_builtin_location_keeps_its_provider_and_region(change: dict[str, Any], path: str) -> None:
    old = builtin()
    _, errors = write({"name": "aws-us-east-1", **change}, "aws-us-east-1", old)
    assert paths(errors) == [path]


def test_a_client_cannot_make_a_location_builtin_or_drop_its_tags() -> None:
    old = builtin()
    item, errors = write({"name": "aws-us-east-1", "origin": "custom", "tags": {}}, "aws-us-east-1", old)
    assert errors == []
    assert item["origin"] == "builtin" and item["tags"]["cpln/country"] == "United States"


# -- BYOK locations -----------------------------------------------------------------------


def test_a_byok_location_as_the_official_cli_creates_it() -> None:
    body = {"name": "basement", "description": None, "tags": {"rack": "2"}, "provider": "byok"}
    item, errors = write(body, "basement")
    assert errors == []
    assert (item["origin"], item["provider"], item["spec"]) == ("custom", "byok", {"enabled": True})
    assert "region" not in item and item["description"] == "basement"
    assert LOCATION.status.compute(item, CTX) == {}


def test_provider_defaults_to_byok_and_origin_is_the_servers() -> None:
    item, errors = write({"name": "edge", "origin": "builtin"}, "edge")
    assert errors == [] and (item["origin"], item["provider"]) == ("custom", "byok")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"provider": "aws"}, ["provider"]),
        ({"provider": "mars"}, ["provider"]),
        ({"region": "us-east-1"}, ["region"]),
        ({"spec": {"enabled": "yes"}}, ["spec.enabled"]),
        ({"spec": {"enabled": True, "zones": 3}}, ["spec.zones"]),
        ({"tags": {"cpln/city": "Paris"}}, ["tags.cpln/city"]),
        ({"geo": {}}, ["geo"]),
    ],
)
def test_invalid_byok_bodies(body: dict[str, Any], expected: list[str]) -> None:
    _, errors = write({"name": "edge", **body}, "edge")
    assert paths(errors) == expected


@pytest.mark.parametrize("prefix", CATALOG_PREFIXES)
def test_a_byok_location_cannot_take_a_catalog_name(prefix: str) -> None:
    _, errors = write({"name": f"{prefix}home"}, f"{prefix}home")
    assert paths(errors) == ["name"]
    assert CATALOG_PREFIXES == ("aws-", "azure-", "gcp-")


def test_a_byok_location_keeps_its_provider() -> None:
    old, _ = write({"name": "edge"}, "edge")
    item, errors = write({"name": "edge", "spec": {"enabled": False}}, "edge", old)
    assert errors == [] and item["provider"] == "byok"
    _, errors = write({"name": "edge", "provider": "aws"}, "edge", old)
    assert paths(errors) == ["provider"]


# -- what guards a location in use -----------------------------------------------------------


def test_disabling_is_the_change_a_gvc_placed_there_would_not_survive() -> None:
    assert LOCATION.rules.protected_change is not None
    on, off = builtin(), {**builtin(), "spec": {"enabled": False}}
    assert LOCATION.rules.protected_change(off, on) == "disabled"
    assert LOCATION.rules.protected_change(on, off) is None
    assert LOCATION.rules.protected_change({**on, "description": "x"}, on) is None
    assert "location" in REGISTRY["gvc"].rules.protects


def test_declaration() -> None:
    assert REGISTRY["location"] is LOCATION
    assert (LOCATION.scope, LOCATION.schema.server_fields, LOCATION.schema.immutable) == (
        "org",
        {"origin"},
        ("provider", "region"),
    )
    assert {"origin", "provider", "region"} <= set(LOCATION.presentation.query_properties)
    assert LOCATION.presentation.terraform_resource == "cpln_location"
    assert LOCATION.access.verbs >= {"get", "list", "create", "patch", "replace", "delete"}
    assert LOCATION.example is not None


def test_permissions_follow_the_documented_table_and_delete_needs_manage() -> None:
    assert set(LOCATION.access.permissions) == {"create", "edit", "manage", "use", "view"}
    assert implied_closure("location", ["manage"]) == {"create", "edit", "manage", "use", "view"}
    assert implied_closure("location", ["use"]) == {"use", "view"}
    assert implied_closure("location", ["edit"]) == {"edit", "view"}
    assert LOCATION.access.delete_permission == "manage"
    assert REGISTRY["gvc"].access.delete_permission == "delete"
