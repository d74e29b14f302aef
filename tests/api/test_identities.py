"""The identity kind over real HTTP on both backends: links stored in full, the computed status,
org-wide lists and queries, and the links between identities, workloads, GVCs and policies.

(``test_identity.py`` is about who a caller is; this file is about the GVC-scoped kind.)
"""

from __future__ import annotations

from typing import Any

import httpx

ORG = "acme"


def gvc(api: httpx.Client, name: str) -> str:
    assert api.post(f"/org/{ORG}/gvc", json={"name": name}).status_code == 201
    return f"/org/{ORG}/gvc/{name}"


def workload(name: str, identity: str) -> dict[str, Any]:
    return {"name": name, "spec": {"identityLink": identity, "containers": [{"name": "app", "image": "nginx:1.27"}]}}


def test_links_are_stored_in_full_and_the_status_is_computed(api: httpx.Client, unique: str) -> None:
    home = gvc(api, unique)
    body = {
        "name": "reader",
        "gvc": unique,
        "aws": {"cloudAccountLink": "//cloudaccount/aws", "roleName": "s3-reader"},
        "ngs": {"cloudAccountLink": "//cloudaccount/nats", "resp": {"ttl": "5s"}},
        "networkResources": [{"name": "db", "agentLink": "//agent/dc1", "FQDN": "db.corp.example", "ports": [5432]}],
    }
    made = api.post(f"{home}/identity", json=body)
    assert made.status_code == 201, made.text
    item = made.json()
    assert item["aws"]["cloudAccountLink"] == f"/org/{ORG}/cloudaccount/aws"
    assert item["ngs"] == {
        "cloudAccountLink": f"/org/{ORG}/cloudaccount/nats",
        "resp": {"max": 1, "ttl": "5s"},
        "subs": -1,
        "data": -1,
        "payload": -1,
    }
    assert item["networkResources"][0]["agentLink"] == f"/org/{ORG}/agent/dc1"
    assert item["gvc"] == unique and {"rel": "gvc", "href": home} in item["links"]
    status = item["status"]
    assert len(status["objectName"]) == 13 and set(status) == {"objectName", "aws"}
    assert status["aws"]["usable"] is False and "not applied" in status["aws"]["lastError"]
    # The object name is the identity's for good; applying the same body again changes nothing.
    again = api.put(f"{home}/identity", json=body)
    assert again.status_code == 200 and again.json() == item
    patched = api.patch(f"{home}/identity/reader", json={"ngs": None, "description": "S3"}).json()
    assert patched["status"]["objectName"] == status["objectName"] and "ngs" not in patched


def test_every_problem_comes_back_at_its_path(api: httpx.Client, unique: str) -> None:
    home = gvc(api, unique)
    body = {
        "name": "broken",
        "aws": {"cloudAccountLink": "//cloudaccount/a", "roleName": "r", "trustPolicy": {"Statement": []}},
        "azure": {"cloudAccountLink": f"//gvc/{unique}/cloudaccount/az", "roleAssignments": [{"roles": ["Reader"]}]},
        "networkResources": [
            {"name": "db", "FQDN": "db.example.com", "ports": [5432, 5432]},
            {"name": "db.example.com", "IPs": ["10.0.0.1"], "ports": [80]},
        ],
    }
    refused = api.post(f"{home}/identity", json=body)
    assert refused.status_code == 400
    assert sorted(e["path"] for e in refused.json()["details"]["errors"]) == [
        "aws.trustPolicy",
        "azure.cloudAccountLink",
        "networkResources[0].ports[1]",
        "networkResources[1].name",
    ]
    assert api.get(f"{home}/identity/broken").status_code == 404
    # Links are checked for their org and kind once the rules pass.
    elsewhere = {
        "name": "broken",
        "gcp": {"cloudAccountLink": "/org/elsewhere/cloudaccount/g", "bindings": [{"roles": ["r"]}]},
    }
    refused = api.post(f"{home}/identity", json=elsewhere)
    assert [e["path"] for e in refused.json()["details"]["errors"]] == ["gcp.cloudAccountLink"]
    wrong_kind = {"name": "broken", "ngs": {"cloudAccountLink": "//secret/nats"}}
    refused = api.post(f"{home}/identity", json=wrong_kind)
    assert [e["message"] for e in refused.json()["details"]["errors"]] == ["must link to a cloudaccount"]


def test_a_workload_needs_its_identity_and_keeps_it_from_deletion(api: httpx.Client, unique: str) -> None:
    home = gvc(api, unique)
    missing = api.post(f"{home}/workload", json=workload("web", "//identity/reader"))
    assert missing.status_code == 400
    assert [(e["path"], e["message"]) for e in missing.json()["details"]["errors"]] == [
        ("spec.identityLink", "identity 'reader' does not exist")
    ]
    assert api.post(f"{home}/identity", json={"name": "reader"}).status_code == 201
    assert api.post(f"{home}/workload", json=workload("web", "//identity/reader")).status_code == 201
    assert api.post(f"{home}/workload", json=workload("api", f"{home}/identity/reader")).status_code == 201
    refused = api.delete(f"{home}/identity/reader")
    assert refused.status_code == 409
    error = refused.json()
    assert error["details"]["dependants"] == ["workload/api", "workload/web"]
    assert "Identity 'reader' is in use by workload/api, workload/web" in error["message"]
    assert api.get(f"{home}/identity/reader").status_code == 200
    assert api.patch(f"{home}/workload/web", json={"spec": {"identityLink": None}}).status_code == 200
    assert api.delete(f"{home}/workload/api").status_code == 202
    assert api.delete(f"{home}/identity/reader").status_code == 202


def test_an_identity_of_another_gvc_is_refused(api: httpx.Client, unique: str) -> None:
    home = gvc(api, unique)
    other = gvc(api, f"{unique}-b")
    assert api.post(f"{other}/identity", json={"name": "reader"}).status_code == 201
    refused = api.post(f"{home}/workload", json=workload("web", f"{other}/identity/reader"))
    assert refused.status_code == 400
    assert [e["path"] for e in refused.json()["details"]["errors"]] == ["spec.identityLink"]


def test_a_gvc_is_deleted_only_once_its_identities_are(api: httpx.Client, unique: str) -> None:
    home = gvc(api, unique)
    assert api.post(f"{home}/identity", json={"name": "reader"}).status_code == 201
    refused = api.delete(home)
    assert refused.status_code == 409 and "identity/reader" in refused.json()["message"]
    assert api.delete(f"{home}/identity/reader").status_code == 202
    assert api.delete(home).status_code == 202


def test_org_wide_list_and_queries(api: httpx.Client, unique: str) -> None:
    for name in (unique, f"{unique}-b"):
        home = gvc(api, name)
        body = {
            "name": "reader",
            "gcp": {"cloudAccountLink": f"//cloudaccount/{name}", "serviceAccount": "r@p.iam.gserviceaccount.com"},
        }
        assert api.post(f"{home}/identity", json=body).status_code == 201
    everywhere = api.get(f"/org/{ORG}/identity?limit=1000").json()["items"]
    assert {(i["gvc"], i["name"]) for i in everywhere} >= {(unique, "reader"), (f"{unique}-b", "reader")}
    by_gvc = {"spec": {"terms": [{"rel": "gvc", "value": unique}]}}
    assert [i["gvc"] for i in api.post(f"/org/{ORG}/identity/-query", json=by_gvc).json()["items"]] == [unique]
    by_account = {
        "spec": {"terms": [{"property": "gcp.cloudAccountLink", "value": f"/org/{ORG}/cloudaccount/{unique}-b"}]}
    }
    found = api.post(f"/org/{ORG}/identity/-query", json=by_account).json()["items"]
    assert [(i["gvc"], i["status"]["gcp"]["usable"]) for i in found] == [(f"{unique}-b", False)]


def test_deleting_an_identity_drops_it_from_policies(api: httpx.Client, unique: str) -> None:
    """An identity made later under the same name is another one: it inherits no grant."""
    home = gvc(api, unique)
    assert api.post(f"{home}/identity", json={"name": "reader"}).status_code == 201
    principal = f"//gvc/{unique}/identity/reader"
    bindings = [
        {"permissions": ["view"], "principalLinks": [principal]},
        {"permissions": ["edit"], "principalLinks": [principal, "//group/viewers"]},
    ]
    policy = {"name": unique, "targetKind": "workload", "target": "all", "bindings": bindings}
    assert api.post(f"/org/{ORG}/policy", json=policy).status_code == 201
    assert api.delete(f"{home}/identity/reader").status_code == 202
    kept = api.get(f"/org/{ORG}/policy/{unique}").json()
    assert kept["bindings"] == [{"permissions": ["edit"], "principalLinks": [f"/org/{ORG}/group/viewers"]}]
