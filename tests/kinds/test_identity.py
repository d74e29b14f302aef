"""The identity kind (docs.controlplane.com/reference/identity) through build_candidate: every rule at its path, the
defaults, the links it holds and its computed status."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from plinth.engine.pipeline import build_candidate, strip_server_owned
from plinth.errors import FieldError
from plinth.kinds import PERMISSIONS, REGISTRY
from plinth.kinds.base import CRUD_VERBS, Item, KindContext
from plinth.kinds.gvc.prepare import gvc_alias
from plinth.kinds.identity import IDENTITY
from tests.cli import golden_docs as d

ORG = "acme"
ID = "0b7e4a55-3f4e-4d7e-9d38-0f4b1d2c3a4b"
CTX = KindContext(org=ORG, now="2026-01-01T00:00:00.000Z", gvc="main", parent={"id": "g-1", "name": "main"}, id=ID)
ACCOUNT = "//cloudaccount/main"

#: Every field an identity takes, defaults included: stored exactly as sent. The served identity
#: of the goldens as a client would send it back, and the cluster access lists it lacks.
SERVED = frozenset({"id", "name", "version", "created", "lastModified", "links", "gvc", "status"})
MAXIMAL: dict[str, Any] = {
    **{key: value for key, value in copy.deepcopy(d.IDENTITY).items() if key not in SERVED},
    "memcacheAccess": [{"clusterLink": f"/org/{ORG}/memcachecluster/cache", "role": "readWrite"}],
    "spicedbAccess": [{"clusterLink": f"/org/{ORG}/spicedbcluster/authz", "role": "checkPermission"}],
}


def write(body: dict[str, Any], old: Item | None = None, name: str = "reporter") -> tuple[Item, list[FieldError]]:
    """One identity write as the engine runs it: strip server-owned fields, then build."""
    return build_candidate(IDENTITY, strip_server_owned(IDENTITY, copy.deepcopy(body)), old, CTX, name)


def paths(body: dict[str, Any]) -> list[str]:
    return [error.path for error in write(body)[1]]


def stored(body: dict[str, Any]) -> Item:
    item, errors = write(body)
    assert errors == [], errors
    return item


def aws(**fields: Any) -> dict[str, Any]:
    return {"aws": {"cloudAccountLink": ACCOUNT, **fields}}


def gcp(**fields: Any) -> dict[str, Any]:
    return {"gcp": {"cloudAccountLink": ACCOUNT, **fields}}


def network(**fields: Any) -> dict[str, Any]:
    return {"networkResources": [{"name": "db", "ports": [5432], **fields}]}


def native(**fields: Any) -> dict[str, Any]:
    return {"nativeNetworkResources": [{"name": "db", "ports": [5432], **fields}]}


PRIVATE_LINK = {"awsPrivateLink": {"endpointServiceName": "com.amazonaws.vpce.x"}}


def test_declaration() -> None:
    assert REGISTRY["identity"] is IDENTITY
    assert (IDENTITY.scope, IDENTITY.access.verbs, IDENTITY.schema.spec_model) == ("gvc", CRUD_VERBS, None)
    assert IDENTITY.access.permissions is PERMISSIONS["identity"].permissions and "use" in IDENTITY.access.permissions
    assert IDENTITY.presentation.terraform_resource == "cpln_identity"
    assert IDENTITY.presentation.text_columns == (
        "NAME",
        "DESCRIPTION",
        "GVC",
        "LOCAL NAME",
        "CREATED",
        "PROVIDERS",
        "TAGS",
    )
    assert {"gvc", "aws.cloudAccountLink", "ngs.cloudAccountLink"} <= set(IDENTITY.presentation.query_properties)
    assert IDENTITY.example is not None and IDENTITY.example.gvc == "g{n}"


# --- stored shape and defaults ----------------------------------------------------------------


def test_an_identity_without_blocks_is_what_cpln_identity_create_makes() -> None:
    assert stored({"description": "reporter", "tags": {}}) == {
        "kind": "identity",
        "name": "reporter",
        "gvc": "main",
        "description": "reporter",
        "tags": {},
    }


def test_a_maximal_identity_is_stored_exactly_as_sent() -> None:
    item = stored(MAXIMAL)
    assert item == {"name": "reporter", "gvc": "main", **MAXIMAL}


def test_defaults_fill_only_the_blocks_sent_and_are_idempotent() -> None:
    body = {
        **aws(policyRefs=["p"], trustPolicy={}),
        **gcp(serviceAccount="reader@p.iam.gserviceaccount.com"),
        "ngs": {"cloudAccountLink": ACCOUNT, "resp": {}},
    }
    item = stored(body)
    assert item["aws"]["trustPolicy"] == {"Version": "2012-10-17"}
    assert item["gcp"]["scopes"] == ["https://www.googleapis.com/auth/cloud-platform"]
    assert item["ngs"] == {"cloudAccountLink": ACCOUNT, "resp": {"max": 1}, "subs": -1, "data": -1, "payload": -1}
    assert "azure" not in item and "networkResources" not in item
    again, errors = write(item, old=item)
    assert errors == [] and again == item


def test_server_owned_fields_and_a_matching_gvc_are_ignored() -> None:
    sent = {
        "id": "mine",
        "version": 9,
        "links": [],
        "status": {"objectName": "chosen"},
        "gvc": f"/org/{ORG}/gvc/main",
        "created": "x",
        "lastModified": "y",
    }
    assert stored(sent) == stored({})


# --- every rule at its path -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (aws(), ["aws"]),
        (aws(policyRefs=["p"], roleName="r"), ["aws"]),
        ({"aws": {"roleName": "r"}}, ["aws.cloudAccountLink"]),
        (aws(policyRefs=[]), ["aws.policyRefs"]),
        (aws(policyRefs=[""]), ["aws.policyRefs[0]"]),
        (aws(roleName="a" * 64), []),
        (aws(roleName="a" * 65), ["aws.roleName"]),
        (aws(roleName="path/to+role=,.@_-1"), []),
        (aws(roleName="no spaces"), ["aws.roleName"]),
        (aws(roleName="r", trustPolicy={}), ["aws.trustPolicy"]),
        (aws(policyRefs=["p"], trustPolicy={"Version": "2020-01-01"}), ["aws.trustPolicy.Version"]),
        (aws(policyRefs=["p"], trustPolicy={"Statement": {"Effect": "Allow"}}), ["aws.trustPolicy.Statement"]),
        (aws(policyRefs=["p"], trustPolicy={"statement": []}), ["aws.trustPolicy.statement"]),
        (aws(policyRefs=["p"], cloudAccountLink=""), ["aws.cloudAccountLink"]),
        (gcp(), ["gcp"]),
        (gcp(serviceAccount="a@p.iam.gserviceaccount.com", bindings=[{"roles": ["r"]}]), ["gcp"]),
        (gcp(serviceAccount="a@example.com"), ["gcp.serviceAccount"]),
        (gcp(bindings=[]), ["gcp.bindings"]),
        (gcp(bindings=[{"resource": "x"}]), ["gcp.bindings[0].roles"]),
        (gcp(bindings=[{"roles": []}]), ["gcp.bindings[0].roles"]),
        (gcp(bindings=[{"roles": ["r"]}], scopes=[]), ["gcp.scopes"]),
        (gcp(bindings=[{"roles": ["r"]}], scopes="https://x"), ["gcp.scopes"]),
        ({"azure": {"cloudAccountLink": ACCOUNT}}, ["azure.roleAssignments"]),
        ({"azure": {"cloudAccountLink": ACCOUNT, "roleAssignments": []}}, ["azure.roleAssignments"]),
        (
            {"azure": {"cloudAccountLink": ACCOUNT, "roleAssignments": [{"roles": []}]}},
            ["azure.roleAssignments[0].roles"],
        ),
        ({"ngs": {"cloudAccountLink": ACCOUNT, "subs": -2}}, ["ngs.subs"]),
        ({"ngs": {"cloudAccountLink": ACCOUNT, "data": "1"}}, ["ngs.data"]),
        ({"ngs": {"cloudAccountLink": ACCOUNT, "resp": {"max": -2}}}, ["ngs.resp.max"]),
        ({"ngs": {"cloudAccountLink": ACCOUNT, "resp": {"ttl": "5x"}}}, ["ngs.resp.ttl"]),
        ({"ngs": {"cloudAccountLink": ACCOUNT, "resp": {"ttl": "-1"}}}, []),
        ({"ngs": {"cloudAccountLink": ACCOUNT, "pub": {"allow": "x"}}}, ["ngs.pub.allow"]),
        (network(), ["networkResources[0]"]),
        (network(FQDN="db.example.com", IPs=["10.0.0.1"]), ["networkResources[0]"]),
        (network(IPs=[]), ["networkResources[0].IPs"]),
        (network(IPs=[f"10.0.0.{i}" for i in range(6)]), ["networkResources[0].IPs"]),
        (network(IPs=["10.0.0.300"]), ["networkResources[0].IPs[0]"]),
        (network(IPs=["::1"]), ["networkResources[0].IPs[0]"]),
        (network(FQDN="DB.example.com"), ["networkResources[0].FQDN"]),
        (network(FQDN="localhost"), ["networkResources[0].FQDN"]),
        (network(FQDN="db.example.com", resolverIP="10.0.0.53"), []),
        (network(FQDN="db.example.com", resolverIP="dns"), ["networkResources[0].resolverIP"]),
        (network(IPs=["10.0.0.1"], resolverIP="10.0.0.53"), ["networkResources[0].resolverIP"]),
        (network(IPs=["10.0.0.1"], ports=[]), ["networkResources[0].ports"]),
        (network(IPs=["10.0.0.1"], ports=list(range(11))), ["networkResources[0].ports"]),
        (network(IPs=["10.0.0.1"], ports=[65536]), ["networkResources[0].ports[0]"]),
        (network(IPs=["10.0.0.1"], ports=[-1]), ["networkResources[0].ports[0]"]),
        (network(IPs=["10.0.0.1"], ports=[80, 443, 80]), ["networkResources[0].ports[2]"]),
        (network(IPs=["10.0.0.1"], agentLink=""), ["networkResources[0].agentLink"]),
        ({"networkResources": [{"IPs": ["10.0.0.1"], "ports": [1]}]}, ["networkResources[0].name"]),
        (native(), ["nativeNetworkResources[0]"]),
        (native(**PRIVATE_LINK, gcpServiceConnect={"targetService": "t"}), ["nativeNetworkResources[0]"]),
        (native(awsPrivateLink={}), ["nativeNetworkResources[0].awsPrivateLink.endpointServiceName"]),
        (native(**PRIVATE_LINK, ports=[1, 1]), ["nativeNetworkResources[0].ports[1]"]),
        (native(**PRIVATE_LINK, FQDN="db"), ["nativeNetworkResources[0].FQDN"]),
        (native(**PRIVATE_LINK, IPs=["10.0.0.1"]), ["nativeNetworkResources[0].IPs"]),
        ({"memcacheAccess": [{"clusterLink": "//memcachecluster/c", "role": "read"}]}, ["memcacheAccess[0].role"]),
        ({"spicedbAccess": [{"clusterLink": "//spicedbcluster/c"}]}, ["spicedbAccess[0].role"]),
        (aws(policyRefs=["p"], surprise=1), ["aws.surprise"]),
        ({"spec": {"aws": {}}}, ["spec"]),
        ({"aws": "arn:aws:iam::1:role/r"}, ["aws"]),
    ],
)
def test_each_rule_at_its_path(body: dict[str, Any], expected: list[str]) -> None:
    assert paths(body) == expected


@pytest.mark.parametrize(("count", "ok"), [(50, True), (51, False)])
def test_at_most_50_resources_of_each_kind(count: int, ok: bool) -> None:
    resources = [{"name": f"r{i}", "IPs": ["10.0.0.1"], "ports": [80]} for i in range(count)]
    natives = [{"name": f"n{i}", "ports": [80], **PRIVATE_LINK} for i in range(count)]
    assert paths({"networkResources": resources}) == ([] if ok else ["networkResources"])
    assert paths({"nativeNetworkResources": natives}) == ([] if ok else ["nativeNetworkResources"])


def test_names_and_fqdns_are_one_namespace_over_both_lists() -> None:
    body = {
        "networkResources": [
            {"name": "db", "FQDN": "db.example.com", "ports": [1]},
            {"name": "db", "IPs": ["10.0.0.1"], "ports": [1]},
            {"name": "cache.example.com", "IPs": ["10.0.0.2"], "ports": [1]},
        ],
        "nativeNetworkResources": [
            {"name": "rds", "FQDN": "db.example.com", "ports": [1], **PRIVATE_LINK},
            {"name": "db", "ports": [1], **PRIVATE_LINK},
            {"name": "cache", "FQDN": "cache.example.com", "ports": [1], **PRIVATE_LINK},
        ],
    }
    _, errors = write(body)
    assert [(e.path, e.message) for e in errors] == [
        ("nativeNetworkResources[0].FQDN", "'db.example.com' is already the FQDN of networkResources[0]"),
        ("networkResources[1].name", "'db' is already the name of networkResources[0]"),
        (
            "networkResources[2].name",
            "'cache.example.com' is the FQDN of nativeNetworkResources[2]; names and FQDNs differ",
        ),
        ("nativeNetworkResources[1].name", "'db' is already the name of networkResources[0]"),
    ]


def test_every_rule_finding_comes_back_at_once() -> None:
    body = {
        **aws(roleName="r", trustPolicy={}),
        "networkResources": [
            {"name": "a", "IPs": ["10.0.0.1"], "resolverIP": "10.0.0.53", "ports": [1, 1]},
            {"name": "a", "FQDN": "a.example.com", "ports": [2]},
        ],
        "ngs": {"cloudAccountLink": f"//gvc/main/cloudaccount/{'nats'}"},
    }
    assert sorted(paths(body)) == [
        "aws.trustPolicy",
        "networkResources[0].ports[1]",
        "networkResources[0].resolverIP",
        "networkResources[1].name",
        "ngs.cloudAccountLink",
    ]


def test_schema_errors_in_several_blocks_come_back_together() -> None:
    body = {
        **aws(roleName="no spaces"),
        **gcp(serviceAccount="x"),
        "azure": {"cloudAccountLink": ACCOUNT},
        **network(IPs=["nope"]),
    }
    assert paths(body) == ["aws.roleName", "gcp.serviceAccount", "azure.roleAssignments", "networkResources[0].IPs[0]"]


# --- links ------------------------------------------------------------------------------------


def test_references_name_every_link_and_none_need_exist() -> None:
    item = stored(MAXIMAL)
    refs = IDENTITY.rules.references(item, ORG)
    assert [(r.path, r.kinds, r.must_exist) for r in refs] == [
        ("aws.cloudAccountLink", frozenset({"cloudaccount"}), False),
        ("gcp.cloudAccountLink", frozenset({"cloudaccount"}), False),
        ("azure.cloudAccountLink", frozenset({"cloudaccount"}), False),
        ("ngs.cloudAccountLink", frozenset({"cloudaccount"}), False),
        ("networkResources[0].agentLink", frozenset({"agent"}), False),
        ("networkResources[1].agentLink", frozenset({"agent"}), False),
        ("memcacheAccess[0].clusterLink", frozenset({"memcachecluster"}), False),
        ("spicedbAccess[0].clusterLink", frozenset({"spicedbcluster"}), False),
    ]
    assert IDENTITY.rules.references(stored({}), ORG) == []


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ("//cloudaccount/aws", []),
        (f"/org/{ORG}/cloudaccount/aws", []),
        ("//gvc/main/cloudaccount/aws", ["aws.cloudAccountLink"]),
        # Malformed, foreign or of another kind: the engine's reference check names those.
        ("aws", []),
        ("/org/other/cloudaccount/aws", []),
    ],
)
def test_links_to_org_scoped_kinds_name_no_gvc(link: str, expected: list[str]) -> None:
    assert paths(aws(policyRefs=["p"], cloudAccountLink=link)) == expected


# --- status -----------------------------------------------------------------------------------


def test_status_names_the_object_and_says_no_policy_is_applied() -> None:
    item = stored(MAXIMAL)
    status = IDENTITY.status.compute(item, CTX)
    assert list(status) == ["objectName", "aws", "gcp", "azure"]
    assert status["objectName"] == gvc_alias(ID) and len(status["objectName"]) == 13
    assert status["aws"] == {"usable": False, "lastError": status["gcp"]["lastError"]}
    assert "not applied" in status["aws"]["lastError"]
    assert IDENTITY.status.compute(stored({}), CTX) == {"objectName": gvc_alias(ID)}
