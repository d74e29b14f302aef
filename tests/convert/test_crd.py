"""``to_crd``: each object is accepted by the operator's CRD schema (tests/data/crds, see its README)."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
import yaml

from plinth.convert import to_crd
from plinth.convert.crd import SYSTEM_FIELDS
from tests.cli import golden_docs as d
from tests.support.paths import CRDS

SCHEMA_FILES = {
    "domain": "Domain.yaml",
    "volumeset": "VolumeSet.yaml",
    "gvc": "Gvc.yaml",
    "org": "Org.yaml",
    "group": "Group.yaml",
    "policy": "Policy.yaml",
    "serviceaccount": "ServiceAccount.yaml",
    "secret": "Secret.yaml",
    "user": "User.yaml",
    "workload": "Workload.yaml",
}
#: Served kinds whose operator CRD is not among the reference schemas: their objects are checked
#: for the shape every CRD object shares instead (``test_the_other_kinds_take_the_common_crd_shape``).
WITHOUT_SCHEMA = frozenset({"identity", "ipset", "auditctx"})


def schema_for(kind: str) -> dict[str, Any]:
    crd = yaml.safe_load((CRDS / SCHEMA_FILES[kind]).read_text())
    assert crd["spec"]["names"]["kind"] == kind
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


ITEMS = [
    d.DOMAIN,
    d.DOMAIN_3,
    d.VOLUMESET,
    d.GVC_PROD,
    d.GVC_DEV,
    d.ORG_ITEM,
    d.SERVICEACCOUNT,
    *d.POLICIES["items"],
    *d.GROUPS["items"],
    *d.SECRETS["items"],
    *d.USERS["items"],
    *d.WORKLOADS["items"],
]
UNSCHEMED = [*d.IDENTITIES["items"], *d.IPSETS["items"], *d.AUDITCTXS["items"]]


@pytest.mark.parametrize("item", ITEMS, ids=[f"{i['kind']}-{i['name']}" for i in ITEMS])
def test_each_item_validates_against_its_crd_schema(item: dict[str, Any]) -> None:
    crd = to_crd(item, "acme")
    jsonschema.validate(crd, schema_for(item["kind"]))
    assert (crd["apiVersion"], crd["kind"], crd["org"]) == ("cpln.io/v1", item["kind"], "acme")
    for dropped in ("id", "version", "created", "lastModified", "links", "status", "health"):
        assert dropped not in crd


@pytest.mark.parametrize("item", UNSCHEMED, ids=[f"{i['kind']}-{i['name']}" for i in UNSCHEMED])
def test_the_other_kinds_take_the_common_crd_shape(item: dict[str, Any]) -> None:
    assert item["kind"] in WITHOUT_SCHEMA and item["kind"] not in SCHEMA_FILES
    crd = to_crd(item, "acme")
    assert (crd["apiVersion"], crd["kind"], crd["org"]) == ("cpln.io/v1", item["kind"], "acme")
    assert crd["metadata"]["name"] == item["name"] and crd["description"] == item["description"]
    assert crd["metadata"]["namespace"] == (item.get("gvc") or "acme")
    for dropped in ("id", "version", "created", "lastModified", "links", "status", "health"):
        assert dropped not in crd
    for key in set(item) - SYSTEM_FIELDS - {"gvc"}:
        assert crd[key] == item[key], key


def test_gvc_scoped_items_carry_the_gvc_and_live_in_its_namespace() -> None:
    crd = to_crd(d.VOLUMESET, "acme")
    assert (crd["gvc"], crd["metadata"]) == ("prod", {"name": "data", "namespace": "prod"})
    assert crd["spec"]["initialCapacity"] == 10


def test_an_identity_lives_in_its_gvcs_namespace_with_its_blocks_at_the_top_level() -> None:
    crd = to_crd(d.IDENTITY, "acme")
    assert (crd["kind"], crd["org"], crd["gvc"], crd["metadata"]) == (
        "identity",
        "acme",
        "prod",
        {"name": "storefront", "namespace": "prod"},
    )
    for block in ("aws", "gcp", "azure", "ngs", "networkResources", "nativeNetworkResources"):
        assert crd[block] == d.IDENTITY[block]
    assert "status" not in crd and "spec" not in crd


def test_names_kubernetes_refuses_are_replaced_and_annotated() -> None:
    user = d.USERS["items"][0]
    crd = to_crd(user, "acme")
    assert crd["metadata"]["name"] == "ada-lovelace"
    assert crd["metadata"]["annotations"] == {"cpln.io/name-replacement": "Ada Lovelace"}
    assert crd["email"] == "ada@example.com"


def test_tags_become_strings_and_a_list_becomes_a_list_of_objects() -> None:
    converted = to_crd(d.listing("domain", [d.DOMAIN, d.DOMAIN_2]), "acme")
    assert converted["kind"] == "list"
    assert [c["metadata"]["name"] for c in converted["items"]] == ["api.example.com", "example.com"]
    tags = converted["items"][0]["tags"]
    assert tags["tier"] == "1" and tags["public"] == "true" and tags["nested"] == '{"a": [1, 2]}'
    assert "owner" not in tags


def test_a_workload_lives_in_its_gvc_namespace_with_its_wire_spec() -> None:
    crd = to_crd(d.WORKLOAD, "acme")
    assert (crd["org"], crd["gvc"], crd["metadata"]) == ("acme", "prod", {"name": "web", "namespace": "prod"})
    assert crd["spec"] == d.WORKLOAD["spec"]
    assert crd["tags"] == {
        "team": "web",
        "tier": "1",
        "public": "true",
        "cpln/deployTimestamp": "2025-02-20T08:59:00.000Z",
    }
    assert "health" not in crd and "status" not in crd
    without_field = {k: v for k, v in d.WORKLOAD_CRON.items() if k != "gvc"}  # the gvc link names it too
    assert to_crd(without_field, "acme")["gvc"] == "prod"


def test_a_workload_list_validates_item_by_item() -> None:
    converted = to_crd(d.WORKLOADS, "acme")
    assert [c["metadata"]["name"] for c in converted["items"]] == ["web", "nightly-report", "api"]
    assert converted["items"][1]["spec"]["job"]["schedule"] == "0 3 * * *"
    schema = schema_for("workload")
    for crd in converted["items"]:
        jsonschema.validate(crd, schema)


def test_the_operator_schema_requires_org_and_gvc_on_workloads() -> None:
    crd = to_crd(d.WORKLOAD, "acme")
    del crd["gvc"]
    with pytest.raises(jsonschema.ValidationError, match="'gvc' is a required property"):
        jsonschema.validate(crd, schema_for("workload"))


def test_free_form_extras_and_envoy_filters_stay_objects_although_the_schema_says_string() -> None:
    item = copy.deepcopy(d.WORKLOAD)
    envoy_filter = {"name": "acme.lua", "priority": 50, "typed_config": {"@type": "type.lua"}}
    item["spec"]["sidecar"] = {"envoy": {"http": [envoy_filter]}}
    item["spec"]["extras"] = {"affinity": {"nodeAffinity": {}}}
    crd = to_crd(item, "acme")
    # The API wants these objects and the operator forwards the spec as it is; its schema's
    # ``type: string`` here is a known gap (see plinth.convert.crd), so it refuses them.
    assert crd["spec"]["sidecar"]["envoy"]["http"] == [envoy_filter]
    assert crd["spec"]["extras"] == {"affinity": {"nodeAffinity": {}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(crd, schema_for("workload"))


def test_a_secret_never_carries_its_values_and_the_list_of_sealed_fields_follows_the_kinds() -> None:
    from plinth.convert.crd import SEALED
    from plinth.kinds import KINDS

    assert {kind.name: frozenset(kind.schema.sealed) for kind in KINDS if kind.schema.sealed} == SEALED
    revealed = {**d.SECRETS["items"][1], "data": {"payload": "CANARY-crd", "encoding": "plain"}}
    crd = to_crd(revealed, "acme")
    assert "data" not in crd and "CANARY-crd" not in str(crd)
    assert crd["type"] == "opaque"
    jsonschema.validate(crd, schema_for("secret"))
