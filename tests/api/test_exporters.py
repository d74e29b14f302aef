"""The exporter endpoints /discovery names: Terraform HCL and CRD objects for items and collections."""

from __future__ import annotations

import httpx
import jsonschema

from tests.convert.test_crd import schema_for
from tests.convert.test_terraform import resources
from tests.support.server import ServerProcess


def _exporters(server: ServerProcess) -> tuple[str, str]:
    endpoints = httpx.get(f"{server.url}/discovery").json()["endpoints"]
    return endpoints["terraform-exporter"], endpoints["k8s-crd-exporter"]


def test_terraform_for_a_domain_is_valid_hcl(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    tf_url, _ = _exporters(server)
    name = f"{unique}.example.com"
    body = {"name": name, "spec": {"ports": [{"routes": [{"prefix": "/", "workloadLink": "//gvc/g/workload/w"}]}]}}
    link = api.post("/org/acme/domain", json=body).headers["location"]
    r = api.get(tf_url + link)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    found = resources(r.text)
    assert len(found) == 1
    (((kind, _label), domain),) = found.items()
    assert kind == "cpln_domain" and domain["name"] == name
    assert domain["spec"][0]["ports"][0]["route"][0]["prefix"] == "/"


def test_crd_for_a_volume_set_passes_the_operator_schema(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    _, crd_url = _exporters(server)
    api.post("/org/acme/gvc", json={"name": unique})
    link = api.post(f"/org/acme/gvc/{unique}/volumeset", json={"name": "vol", "spec": {"initialCapacity": 10}})
    obj = api.get(crd_url + link.headers["location"]).json()
    assert obj["kind"] == "volumeset" and obj["gvc"] == unique and obj["org"] == "acme"
    jsonschema.validate(obj, schema_for("volumeset"))


def test_a_collection_exports_as_a_list(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    tf_url, crd_url = _exporters(server)
    for i in range(3):
        api.post("/org/acme/gvc", json={"name": f"{unique}-{i}"})
    objs = api.get(crd_url + "/org/acme/gvc").json()
    assert objs["kind"] == "list"
    names = {o["metadata"]["name"] for o in objs["items"]}
    assert {f"{unique}-{i}" for i in range(3)} <= names
    for obj in objs["items"]:
        jsonschema.validate(obj, schema_for("gvc"))
    gvcs = resources(api.get(tf_url + "/org/acme/gvc").text)
    assert {f"{unique}-{i}" for i in range(3)} <= {
        body["name"] for (kind, _), body in gvcs.items() if kind == "cpln_gvc"
    }


def test_exporters_need_credentials_and_an_existing_item(server: ServerProcess, api: httpx.Client) -> None:
    tf_url, crd_url = _exporters(server)
    assert httpx.get(tf_url + "/org/acme/gvc").status_code == 401
    assert api.get(crd_url + "/org/acme/gvc/never-made").status_code == 404
    assert api.post(crd_url + "/org/acme/gvc", json={}).status_code == 405


def test_identities_ip_sets_and_audit_contexts_export(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    tf_url, crd_url = _exporters(server)
    api.post("/org/acme/gvc", json={"name": unique})
    body = {
        "name": "reader",
        "gcp": {"cloudAccountLink": "//cloudaccount/gcp", "bindings": [{"roles": ["roles/viewer"]}]},
        "networkResources": [{"name": "db", "FQDN": "db.example.com", "ports": [5432]}],
    }
    link = api.post(f"/org/acme/gvc/{unique}/identity", json=body).headers["location"]
    ((key, identity),) = resources(api.get(tf_url + link).text).items()
    assert key == ("cpln_identity", "reader") and identity["gvc"] == unique
    assert identity["gcp_access_policy"][0]["scopes"] == "https://www.googleapis.com/auth/cloud-platform"
    assert identity["network_resource"] == [{"name": "db", "fqdn": "db.example.com", "ports": [5432]}]
    obj = api.get(crd_url + link).json()
    assert (obj["kind"], obj["gvc"], obj["metadata"]["namespace"]) == ("identity", unique, unique)
    assert obj["networkResources"] == body["networkResources"] and "status" not in obj
    api.post("/org/acme/ipset", json={"name": unique, "spec": {"link": f"//gvc/{unique}"}})
    api.post("/org/acme/auditctx", json={"name": unique})
    ip_sets = resources(api.get(tf_url + "/org/acme/ipset").text)
    assert ip_sets[("cpln_ipset", unique)]["link"] == f"/org/acme/gvc/{unique}"
    contexts = resources(api.get(tf_url + "/org/acme/auditctx").text)
    assert {("cpln_audit_context", "cpln"), ("cpln_audit_context", unique)} <= set(contexts)
