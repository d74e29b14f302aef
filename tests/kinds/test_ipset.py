"""The ipset kind (docs.controlplane.com/reference/ipset) through build_candidate: the spec's rules at their paths, the
defaults, the links it holds, and the status computed from what its link resolves to."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from plinth.engine.pipeline import build_candidate, strip_server_owned
from plinth.errors import FieldError
from plinth.kinds import PERMISSIONS, REGISTRY
from plinth.kinds.base import CRUD_VERBS, Item, KindContext, ReadsLinked
from plinth.kinds.ipset import IPSET

ORG = "acme"
CTX = KindContext(org=ORG, now="2026-01-01T00:00:00.000Z", id="6a1c2b3d-0000-4000-8000-000000000001")
WORKLOAD = f"/org/{ORG}/gvc/prod/workload/web"
GVC = f"/org/{ORG}/gvc/prod"
OWN = f"/org/{ORG}/ipset/egress"

MAXIMAL_SPEC: dict[str, Any] = {
    "link": WORKLOAD,
    "locations": [
        {"name": f"/org/{ORG}/location/aws-us-west-2", "retentionPolicy": "keep"},
        {"name": f"/org/{ORG}/location/gcp-us-east1", "retentionPolicy": "free"},
    ],
}


def write(body: dict[str, Any], old: Item | None = None) -> tuple[Item, list[FieldError]]:
    return build_candidate(IPSET, strip_server_owned(IPSET, copy.deepcopy(body)), old, CTX, "egress")


def paths(spec: Any) -> list[str]:
    return [error.path for error in write({"spec": spec})[1]]


def test_declaration() -> None:
    assert REGISTRY["ipset"] is IPSET
    assert (IPSET.scope, IPSET.access.verbs, IPSET.schema.spec_required) == ("org", CRUD_VERBS, False)
    assert IPSET.access.permissions is PERMISSIONS["ipset"].permissions
    assert (IPSET.presentation.terraform_resource, IPSET.presentation.text_columns) == (
        "cpln_ipset",
        ("NAME", "DESCRIPTION", "LINK", "LOCATIONS", "TAGS"),
    )
    assert IPSET.status.reads(ReadsLinked) == (ReadsLinked(frozenset({"workload", "gvc"})),)


def test_no_spec_is_an_empty_spec() -> None:
    for body in ({}, {"spec": {}}, {"spec": None}):
        item, errors = write(body)
        assert errors == []
        assert item == {"kind": "ipset", "name": "egress", "description": "egress", "tags": {}, "spec": {}}


def test_a_maximal_ip_set_is_stored_as_sent_and_defaults_are_idempotent() -> None:
    item, errors = write({"description": "Payments", "tags": {"a": 1}, "spec": MAXIMAL_SPEC})
    assert errors == [] and item["spec"] == MAXIMAL_SPEC
    item, errors = write({"spec": {"locations": [{"name": "//location/aws-us-west-2"}]}})
    assert errors == [] and item["spec"]["locations"] == [
        {"name": "//location/aws-us-west-2", "retentionPolicy": "keep"}
    ]
    again, errors = write(item, old=item)
    assert errors == [] and again == item


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"link": WORKLOAD}, []),
        ({"link": "//gvc/prod/workload/web"}, []),
        ({"link": "//gvc/prod"}, []),
        ({"link": "//workload/web"}, ["spec.link"]),
        ({"link": ""}, ["spec.link"]),
        ({"link": 7}, ["spec.link"]),
        ({"locations": [{"name": "aws-us-west-2"}]}, []),
        ({"locations": [{"name": ""}]}, ["spec.locations[0].name"]),
        ({"locations": [{"retentionPolicy": "keep"}]}, ["spec.locations[0].name"]),
        ({"locations": [{"name": "a", "retentionPolicy": "hold"}]}, ["spec.locations[0].retentionPolicy"]),
        ({"locations": [{"name": "a", "retention": "keep"}]}, ["spec.locations[0].retention"]),
        ({"locations": {"name": "a"}}, ["spec.locations"]),
        ({"locations": [{"name": "//gvc/prod/location/a"}]}, ["spec.locations[0].name"]),
        (
            {"locations": [{"name": "aws-us-west-2"}, {"name": f"/org/{ORG}/location/aws-us-west-2"}]},
            ["spec.locations[1].name"],
        ),
        ({"surprise": True}, ["spec.surprise"]),
    ],
)
def test_each_rule_at_its_path(spec: Any, expected: list[str]) -> None:
    assert paths(spec) == expected


def test_schema_and_rule_errors_come_back_together() -> None:
    spec = {"link": "//workload/web", "locations": [{"name": "a"}, {"name": "a"}, {"name": "b", "retentionPolicy": 1}]}
    assert sorted(paths(spec)) == ["spec.link", "spec.locations[1].name", "spec.locations[2].retentionPolicy"]


def test_references_are_the_link_and_every_location_as_full_links() -> None:
    item, _ = write(
        {"spec": {"link": "//gvc/prod", "locations": [{"name": "aws-us-west-2"}, {"name": "//location/b"}]}}
    )
    refs = IPSET.rules.references(item, ORG)
    assert [(r.path, r.link, r.kinds, r.must_exist) for r in refs] == [
        ("spec.link", "//gvc/prod", frozenset({"workload", "gvc"}), False),
        ("spec.locations[0].name", f"/org/{ORG}/location/aws-us-west-2", frozenset({"location"}), False),
        ("spec.locations[1].name", "//location/b", frozenset({"location"}), False),
    ]


# --- status -----------------------------------------------------------------------------------


def status(link: str | None, target: Item | None) -> dict[str, Any]:
    spec = {"link": link} if link else {}
    item, errors = write({"spec": spec})
    assert errors == []
    ctx = KindContext(org=ORG, now=CTX.now, resolved={link: target} if link else {})
    return IPSET.status.compute(item, ctx)


def direct(enabled: bool, ip_set: str | None) -> Item:
    lb: dict[str, Any] = {"enabled": enabled}
    if ip_set is not None:
        lb["ipSet"] = ip_set
    return {"kind": "workload", "spec": {"loadBalancer": {"direct": lb}}}


def dedicated(on: bool, ip_set: str | None) -> Item:
    return {"kind": "gvc", "spec": {"loadBalancer": {"dedicated": on, "ipSet": ip_set}}}


def test_without_a_link_nothing_is_held_and_nothing_is_wrong() -> None:
    assert status(None, None) == {"ipAddresses": []}


def test_a_missing_target_is_a_warning() -> None:
    assert status(WORKLOAD, None) == {
        "ipAddresses": [],
        "warning": f"{WORKLOAD} does not exist: its addresses cannot be bound",
    }


@pytest.mark.parametrize(
    ("link", "target", "ok"),
    [
        (WORKLOAD, direct(True, OWN), True),
        (WORKLOAD, direct(True, "egress"), True),
        (WORKLOAD, direct(True, "//ipset/egress"), True),
        (WORKLOAD, direct(False, OWN), False),
        (WORKLOAD, direct(True, f"/org/{ORG}/ipset/other"), False),
        (WORKLOAD, direct(True, "/org/other/ipset/egress"), False),
        (WORKLOAD, direct(True, None), False),
        (WORKLOAD, {"kind": "workload", "spec": {}}, False),
        (GVC, dedicated(True, "egress"), True),
        (GVC, dedicated(True, OWN), True),
        (GVC, dedicated(False, "egress"), False),
        (GVC, dedicated(True, None), False),
        (GVC, {"kind": "gvc"}, False),
    ],
)
def test_the_target_must_link_back(link: str, target: Item, ok: bool) -> None:
    found = status(link, target)
    if ok:
        assert found == {"ipAddresses": []}
    else:
        assert found["warning"].startswith(f"Cross-link misconfiguration: {link} must name this IP set in spec.")
