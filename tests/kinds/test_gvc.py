"""The gvc kind, driven through the engine's own write pipeline (build_candidate)."""

from __future__ import annotations

import copy
import re
from dataclasses import replace
from typing import Any

import pytest

from plinth.engine.dependencies import dependants_of
from plinth.engine.pipeline import build_candidate, strip_server_owned
from plinth.errors import FieldError
from plinth.kinds import REGISTRY
from plinth.kinds.base import Item, KindContext
from plinth.kinds.gvc import GVC, gvc_alias
from plinth.kinds.links import gvc_locations

GVC_ID = "0b6f5a8e-2f7c-4c1e-9a55-7d1c2b3a4f60"
CTX = KindContext(org="acme", now="2026-01-01T00:00:00.000Z", id=GVC_ID)


def write(
    spec: Any = None,
    *,
    name: str = "main",
    body: dict[str, Any] | None = None,
    old: Item | None = None,
    ctx: KindContext = CTX,
) -> tuple[Item, list[FieldError]]:
    """Run one GVC write as the engine does: strip server-owned fields, then build."""
    full = {"spec": spec} if body is None else body
    return build_candidate(GVC, strip_server_owned(GVC, full), old, ctx, name)


def paths(errors: list[FieldError]) -> list[str]:
    return [error.path for error in errors]


def errors_for(spec: dict[str, Any]) -> list[str]:
    return paths(write(spec)[1])


MAXIMAL_SPEC: dict[str, Any] = {
    "staticPlacement": {
        "locationLinks": ["//location/aws-us-east-1", "/org/acme/location/gcp-us-east1"],
        "locationOptions": [
            {
                "locationLink": "//location/aws-us-east-1",
                "routingTier": 0,
                "latencyOffsetMs": -20,
                "latencyToleranceMs": 5,
            }
        ],
    },
    "pullSecretLinks": ["//secret/registry"],
    "domain": "legacy.example.com",
    "endpointNamingFormat": "org",
    "aliasWorkloadLink": "//gvc/main/workload/web",
    "tracing": {"sampling": 10.0, "provider": {"lightstep": {"endpoint": "ls:443", "credentials": "//secret/ls"}}},
    "sidecar": {"envoy": {"http": [{"name": "envoy.filters.http.lua", "priority": 50}], "anything": {"x": [1]}}},
    "env": [{"name": "REGION", "value": "us"}, {"name": "EMPTY"}],
    "loadBalancer": {
        "dedicated": True,
        "multiZone": {"enabled": True},
        "trustedProxies": 2,
        "redirect": {"class": {"status5xx": "https://status.example.com", "status401": "https://login"}},
        "ipSet": "//ipset/egress",
    },
    "keda": {"enabled": True, "identityLink": "//gvc/main/identity/keda", "secrets": ["//secret/k1", "//secret/k2"]},
}


def test_minimal_gvc_stores_an_empty_spec_and_gets_an_alias() -> None:
    item, errors = write()
    assert errors == []
    assert item == {
        "kind": "gvc",
        "name": "main",
        "description": "main",
        "tags": {},
        "spec": {},
        "alias": gvc_alias(GVC_ID),
    }


def test_maximal_gvc_is_stored_exactly_as_sent() -> None:
    item, errors = write(copy.deepcopy(MAXIMAL_SPEC))
    assert errors == []
    assert item["spec"] == MAXIMAL_SPEC


def test_alias_is_13_dns_safe_characters_stable_per_id() -> None:
    alias = gvc_alias(GVC_ID)
    assert re.fullmatch(r"[a-z2-7]{13}", alias)
    assert gvc_alias(GVC_ID) == alias
    other_ids = [f"0b6f5a8e-2f7c-4c1e-9a55-7d1c2b3a4f{n:02d}" for n in range(50)]
    assert len({gvc_alias(i) for i in other_ids}) == 50


def test_alias_is_kept_on_update_and_client_values_are_ignored() -> None:
    created, _ = write()
    later_ctx = KindContext(org="acme", now="2026-02-01T00:00:00.000Z", id="some-other-id")
    updated, errors = write(body={"spec": {"env": []}, "alias": "chosen-by-client"}, old=created, ctx=later_ctx)
    assert errors == []
    assert updated["alias"] == created["alias"] == gvc_alias(GVC_ID)


def test_no_alias_without_an_id() -> None:
    item, errors = write(ctx=KindContext(org="acme", now="2026-01-01T00:00:00.000Z"))
    assert errors == [] and "alias" not in item


def test_status_is_an_empty_object() -> None:
    item, _ = write(copy.deepcopy(MAXIMAL_SPEC))
    assert GVC.status.compute(item, CTX) == {}


def test_declaration() -> None:
    assert REGISTRY["gvc"] is GVC
    assert (GVC.scope, GVC.presentation.title, GVC.schema.server_fields) == ("org", "GVC", frozenset({"alias"}))
    assert {"id", "name", "alias", "spec.staticPlacement.locationLinks"} <= set(GVC.presentation.query_properties)


def test_references_cover_every_link_and_only_locations_must_exist() -> None:
    item, _ = write(copy.deepcopy(MAXIMAL_SPEC))
    refs = GVC.rules.references(item, "acme")
    assert [(r.path, r.link, r.kinds) for r in refs] == [
        ("spec.staticPlacement.locationLinks[0]", "//location/aws-us-east-1", frozenset({"location"})),
        ("spec.staticPlacement.locationLinks[1]", "/org/acme/location/gcp-us-east1", frozenset({"location"})),
        ("spec.staticPlacement.locationOptions[0].locationLink", "//location/aws-us-east-1", frozenset({"location"})),
        ("spec.pullSecretLinks[0]", "//secret/registry", frozenset({"secret"})),
        ("spec.keda.secrets[0]", "//secret/k1", frozenset({"secret"})),
        ("spec.keda.secrets[1]", "//secret/k2", frozenset({"secret"})),
        ("spec.keda.identityLink", "//gvc/main/identity/keda", frozenset({"identity"})),
        ("spec.aliasWorkloadLink", "//gvc/main/workload/web", frozenset({"workload"})),
    ]
    assert [r.must_exist for r in refs] == [True] * 3 + [False] * 5


def test_an_empty_gvc_holds_no_references() -> None:
    item, _ = write()
    assert GVC.rules.references(item, "acme") == []


def test_load_balancer_defaults_fill_only_a_sent_block() -> None:
    item, _ = write({"loadBalancer": {}})
    assert item["spec"]["loadBalancer"] == {"dedicated": False, "trustedProxies": 0}
    item, _ = write({"env": []})
    assert "loadBalancer" not in item["spec"]


@pytest.mark.parametrize(("proxies", "ok"), [(-1, False), (0, True), (1, True), (2, True), (3, False)])
def test_trusted_proxies_bounds(proxies: int, ok: bool) -> None:
    assert errors_for({"loadBalancer": {"trustedProxies": proxies}}) == (
        [] if ok else ["spec.loadBalancer.trustedProxies"]
    )


@pytest.mark.parametrize(
    ("value", "ok"),
    [("default", True), ("legacy", True), ("org", True), ("Default", False), ("gvc", False), ("", False)],
)
def test_endpoint_naming_format(value: str, ok: bool) -> None:
    assert errors_for({"endpointNamingFormat": value}) == ([] if ok else ["spec.endpointNamingFormat"])


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ({"locationLink": "//location/a", "routingTier": -1}, ["spec.staticPlacement.locationOptions[0].routingTier"]),
        (
            {"locationLink": "//location/a", "latencyToleranceMs": -1},
            ["spec.staticPlacement.locationOptions[0].latencyToleranceMs"],
        ),
        ({"locationLink": "//location/a", "latencyOffsetMs": -100, "routingTier": 0, "latencyToleranceMs": 0}, []),
        ({"routingTier": 1}, ["spec.staticPlacement.locationOptions[0].locationLink"]),
    ],
)
def test_location_option_bounds(option: dict[str, Any], expected: list[str]) -> None:
    placement = {"locationLinks": ["//location/a"], "locationOptions": [option]}
    assert errors_for({"staticPlacement": placement}) == expected


def test_a_location_listed_twice_is_an_error_in_either_link_form() -> None:
    placement = {"locationLinks": ["//location/a", "//location/b", "/org/acme/location/a"]}
    _, errors = write({"staticPlacement": placement})
    assert [(e.path, e.message) for e in errors] == [
        ("spec.staticPlacement.locationLinks[2]", "lists the same location twice"),
    ]


def test_location_options_must_tune_placed_locations_unless_placement_is_a_query() -> None:
    options = [{"locationLink": "/org/acme/location/a"}, {"locationLink": "//location/elsewhere"}]
    fixed = {"locationLinks": ["//location/a"], "locationOptions": options}
    assert errors_for({"staticPlacement": fixed}) == ["spec.staticPlacement.locationOptions[1].locationLink"]
    queried = {
        "locationQuery": {"kind": "location", "spec": {"terms": [{"property": "provider", "value": "aws"}]}},
        "locationOptions": options,
    }
    assert errors_for({"staticPlacement": queried}) == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"kind": "workload"}, ["spec.staticPlacement.locationQuery.kind"]),
        ({"fetch": "all"}, ["spec.staticPlacement.locationQuery.fetch"]),
        ({"spec": {"match": "some"}}, ["spec.staticPlacement.locationQuery.spec.match"]),
        ({"spec": {"terms": [{"value": "x"}]}}, ["spec.staticPlacement.locationQuery.spec.terms[0]"]),
        ({"spec": {"terms": [{"tag": "a", "rel": "b"}]}}, ["spec.staticPlacement.locationQuery.spec.terms[0]"]),
        (
            {"spec": {"terms": [{"op": "exists", "tag": "a", "value": "x"}]}},
            ["spec.staticPlacement.locationQuery.spec.terms[0]"],
        ),
        ({"spec": {"terms": [{"op": "like", "tag": "a"}]}}, ["spec.staticPlacement.locationQuery.spec.terms[0].op"]),
        (
            {"spec": {"terms": [{"tag": "a", "value": {"x": 1}}]}},
            ["spec.staticPlacement.locationQuery.spec.terms[0].value"],
        ),
        ({"spec": {"sort": {"order": "asc"}}}, ["spec.staticPlacement.locationQuery.spec.sort.by"]),
        (
            {
                "kind": "location",
                "fetch": "links",
                "context": {"a": 1},
                "spec": {
                    "match": "any",
                    "terms": [{"op": "!exists", "tag": "a"}, {"op": ">=", "property": "region", "value": "m"}],
                    "sort": {"by": "name", "order": "desc"},
                },
            },
            [],
        ),
        ({"spec": {"terms": [{"property": "spec.enabled", "value": True}]}}, []),
        (
            {"spec": {"terms": [{"property": "colour", "value": "red"}], "sort": {"by": "size"}}},
            [
                "spec.staticPlacement.locationQuery.spec.terms[0].property",
                "spec.staticPlacement.locationQuery.spec.sort.by",
            ],
        ),
        ({"spec": {"terms": [{"rel": "gvc", "value": "x"}]}}, ["spec.staticPlacement.locationQuery.spec.terms[0].rel"]),
    ],
)
def test_location_query_shape(query: dict[str, Any], expected: list[str]) -> None:
    assert errors_for({"staticPlacement": {"locationQuery": query}}) == expected


def test_environment_names_are_unique_and_not_empty() -> None:
    env = [{"name": "A", "value": "1"}, {"name": ""}, {"name": "A", "value": "2"}]
    # The empty name is a schema error; the rules still run on the rest and find the repeat.
    assert errors_for({"env": env}) == ["spec.env[1].name", "spec.env[2].name"]
    assert errors_for({"env": [env[0], env[2]]}) == ["spec.env[1].name"]


def test_pull_secrets_and_keda_secrets_are_listed_once() -> None:
    spec = {"pullSecretLinks": ["//secret/a", "/org/acme/secret/a"], "keda": {"secrets": ["//secret/k", "//secret/k"]}}
    assert errors_for(spec) == ["spec.pullSecretLinks[1]", "spec.keda.secrets[1]"]


@pytest.mark.parametrize(
    ("link", "ok"),
    [("//gvc/main/identity/keda", True), ("/org/acme/gvc/main/identity/k", True), ("//gvc/other/identity/keda", False)],
)
def test_keda_identity_belongs_to_this_gvc(link: str, ok: bool) -> None:
    assert errors_for({"keda": {"enabled": True, "identityLink": link}}) == ([] if ok else ["spec.keda.identityLink"])


def test_redirect_class_is_spelled_class_on_the_wire() -> None:
    item, errors = write({"loadBalancer": {"redirect": {"class": {"status5xx": "https://x"}}}})
    assert errors == []
    assert item["spec"]["loadBalancer"]["redirect"] == {"class": {"status5xx": "https://x"}}
    assert errors_for({"loadBalancer": {"redirect": {"class_": {}}}}) == ["spec.loadBalancer.redirect.class_"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"loadBalancer": {"dedicated": "true"}}, ["spec.loadBalancer.dedicated"]),
        ({"loadBalancer": {"multiZone": {"enabled": 1}}}, ["spec.loadBalancer.multiZone.enabled"]),
        ({"pullSecretLinks": "//secret/a"}, ["spec.pullSecretLinks"]),
        ({"sidecar": {"envoy": "{}"}}, ["spec.sidecar.envoy"]),
        ({"sidecar": {"istio": {}}}, ["spec.sidecar.istio"]),
        ({"keda": {"enabled": True, "scaler": "x"}}, ["spec.keda.scaler"]),
        ({"staticPlacement": {"locationLinks": [""]}}, ["spec.staticPlacement.locationLinks[0]"]),
    ],
)
def test_types_are_strict_and_fields_closed(spec: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(spec) == expected


def test_several_errors_come_together_with_their_paths() -> None:
    spec = {
        "endpointNamingFormat": "short",
        "tracing": {"sampling": 101, "provider": {}},
        "loadBalancer": {"trustedProxies": 5, "dedicated": "no"},
        "unknown": True,
    }
    _, errors = write(spec, name="-bad")
    assert sorted(paths(errors)) == sorted(
        [
            "name",
            "spec.endpointNamingFormat",
            "spec.tracing.sampling",
            "spec.tracing.provider",
            "spec.loadBalancer.dedicated",
            "spec.loadBalancer.trustedProxies",
            "spec.unknown",
        ]
    )


def test_cross_field_errors_come_together() -> None:
    spec = {
        "staticPlacement": {
            "locationLinks": ["//location/a", "//location/a"],
            "locationOptions": [{"locationLink": "//location/z"}],
        },
        "env": [{"name": "X"}, {"name": "X"}],
        "keda": {"identityLink": "//gvc/other/identity/i"},
    }
    assert errors_for(spec) == [
        "spec.staticPlacement.locationLinks[1]",
        "spec.staticPlacement.locationOptions[0].locationLink",
        "spec.env[1].name",
        "spec.keda.identityLink",
    ]


# -- placement against the location catalog ---------------------------------------------------


def _location(name: str, enabled: bool) -> Item:
    return {"kind": "location", "name": name, "spec": {"enabled": enabled}}


def test_a_gvc_may_be_placed_only_in_enabled_locations() -> None:
    spec = {"staticPlacement": {"locationLinks": ["//location/aws-us-east-1", "/org/acme/location/gcp-us-east1"]}}
    item, errors = write(spec)
    assert errors == []
    resolved = {
        "/org/acme/location/aws-us-east-1": _location("aws-us-east-1", True),
        "/org/acme/location/gcp-us-east1": _location("gcp-us-east1", False),
    }
    found = GVC.rules.validate_resolved(item, replace(CTX, resolved=resolved))
    assert [(e.path, e.message.split(";")[0]) for e in found] == [
        ("spec.staticPlacement.locationLinks[1]", "location 'gcp-us-east1' is disabled")
    ]
    resolved["/org/acme/location/gcp-us-east1"] = _location("gcp-us-east1", True)
    assert GVC.rules.validate_resolved(item, replace(CTX, resolved=resolved)) == []


def test_locations_must_exist_and_the_gvc_protects_them_and_follows_queries() -> None:
    assert GVC.rules.protects == frozenset({"location"})
    # What a GVC's locationQuery selects is followed: the statuses reading placements say so.
    assert dependants_of(REGISTRY, "location").selectors == (("gvc", "spec.staticPlacement.locationQuery"),)


def test_where_a_gvc_is_placed_is_what_the_engine_resolved_else_its_links() -> None:
    gvc = {"name": "main", "spec": {"staticPlacement": {"locationLinks": ["//location/a", "/org/acme/location/b"]}}}
    assert gvc_locations(gvc, {}, "acme") == ("a", "b")
    assert gvc_locations(gvc, {"/org/acme/gvc/main": ("a", "b", "c")}, "acme") == ("a", "b", "c")
    assert gvc_locations(gvc, {"/org/acme/gvc/other": ("z",)}, "acme") == ("a", "b")
    assert gvc_locations(None, {}, "acme") == ()
