"""The official CLI's identity, ipset and auditctx commands, unchanged, against a real Plinth
server (SQLite here; ``test_postgres.py`` re-runs a subset on PostgreSQL). Each is checked
against the stored state afterwards, through Plinth's HTTP API."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.compat.conftest import ORG, Cpln
from tests.compat.test_typed import as_json, ok


def test_identity_create_get_delete(either: Cpln, api: httpx.Client, unique: str) -> None:
    assert api.post(f"/org/{ORG}/gvc", json={"name": unique}).status_code == 201
    args = ("--gvc", unique)
    made = as_json(either("identity", "create", "--name", "reader", "--tag", "team=data", *args, "-o", "json"))
    href = f"/org/{ORG}/gvc/{unique}/identity/reader"
    stored = api.get(href).json()
    assert made == stored
    assert (stored["description"], stored["tags"], stored["gvc"]) == ("reader", {"team": "data"}, unique)
    assert as_json(either("identity", "get", "reader", *args, "-o", "json")) == stored
    table = ok(either("identity", "get", *args, "-o", "text", "--ts", "iso")).stdout
    assert f"|reader |reader      |{unique} |{stored['status']['objectName']} |" in table
    assert "reader" in ok(either("identity", "get", "--all-gvcs", "-o", "names")).stdout.split()
    ok(either("identity", "update", "reader", *args, "--set", "description=reads the warehouse"))
    assert api.get(href).json()["description"] == "reads the warehouse"
    ok(either("identity", "delete", "reader", *args))
    assert api.get(href).status_code == 404
    missing = either("identity", "get", "reader", *args)
    assert missing.code == 1 and json.loads(missing.stderr)[0]["code"] == "not_found"


def test_a_workload_uses_an_identity_that_exists(cpln: Cpln, api: httpx.Client, unique: str) -> None:
    assert api.post(f"/org/{ORG}/gvc", json={"name": unique}).status_code == 201
    args = ("--gvc", unique)
    image = ("--image", "nginx:1.27")
    refused = cpln("workload", "create", "--name", "web", *image, "--identity", "reader", *args)
    assert refused.code == 1 and "identity 'reader' does not exist" in refused.stderr
    ok(cpln("identity", "create", "--name", "reader", *args))
    made = as_json(cpln("workload", "create", "--name", "web", *image, "--identity", "reader", *args, "-o", "json"))
    assert made["spec"]["identityLink"] == f"/org/{ORG}/gvc/{unique}/identity/reader"
    ok(cpln("identity", "create", "--name", "writer", *args))
    ok(cpln("workload", "update", "web", *args, "--set", "spec.identityLink=writer"))
    assert api.get(made["links"][0]["href"]).json()["spec"]["identityLink"].endswith("/identity/writer")
    # Deleting an identity in use is a 409 naming the workload (tests/api/test_identities.py); the
    # CLI retries a DELETE's 409 ten times with backoff before it gives up, so not run here.
    in_use = api.delete(f"/org/{ORG}/gvc/{unique}/identity/writer")
    assert in_use.status_code == 409 and "workload/web" in in_use.json()["message"]
    # --force deletes the workloads, then the volume sets, then the identities, then the GVC.
    ok(cpln("gvc", "delete", unique, "--force"))
    assert api.get(f"/org/{ORG}/gvc/{unique}").status_code == 404
    assert all(i["gvc"] != unique for i in api.get(f"/org/{ORG}/identity?limit=1000").json()["items"])


def test_ipset_create_locations_get_delete(either: Cpln, api: httpx.Client, unique: str) -> None:
    assert api.post(f"/org/{ORG}/gvc", json={"name": unique}).status_code == 201
    made = as_json(
        either(
            "ipset", "create", "--name", unique, "--link", f"//gvc/{unique}", "--location", "aws-us-east-1",
            "--location", "gcp-us-east1,free", "-o", "json",
        )
    )  # fmt: skip
    href = f"/org/{ORG}/ipset/{unique}"
    stored = api.get(href).json()
    assert made == stored
    assert stored["spec"] == {
        "link": f"/org/{ORG}/gvc/{unique}",
        "locations": [
            {"name": f"/org/{ORG}/location/aws-us-east-1", "retentionPolicy": "keep"},
            {"name": f"/org/{ORG}/location/gcp-us-east1", "retentionPolicy": "free"},
        ],
    }
    assert stored["status"]["warning"].startswith("Cross-link misconfiguration")
    ok(either("ipset", "update-location", unique, "--location", "aws-us-east-1,free"))
    ok(either("ipset", "add-location", unique, "--location", "azure-eastus"))
    ok(either("ipset", "remove-location", unique, "--location", "gcp-us-east1"))
    locations = api.get(href).json()["spec"]["locations"]
    assert [(loc["name"].rsplit("/", 1)[-1], loc["retentionPolicy"]) for loc in locations] == [
        ("aws-us-east-1", "free"),
        ("azure-eastus", "keep"),
    ]
    assert as_json(either("ipset", "get", unique, "-o", "json")) == api.get(href).json()
    table = ok(either("ipset", "get", unique, "-o", "text")).stdout
    assert f"|/org/{ORG}/gvc/{unique} |aws-us-east-1,free |" in table and "azure-eastus,keep" in table
    ok(either("ipset", "delete", unique))
    assert api.get(href).status_code == 404


def test_auditctx_create_get_update_and_no_delete(either: Cpln, api: httpx.Client, unique: str) -> None:
    made = as_json(either("auditctx", "create", "--name", unique, "--tag", "team=payments", "-o", "json"))
    href = f"/org/{ORG}/auditctx/{unique}"
    stored = api.get(href).json()
    assert made == stored
    assert (stored["description"], stored["origin"], stored["tags"]) == (unique, "default", {"team": "payments"})
    assert as_json(either("auditctx", "get", unique, "-o", "json")) == stored
    table = ok(either("auditctx", "get", "-o", "text")).stdout
    assert f"|{unique} " in table and "|cpln " in table and "|builtin |" in table
    ok(either("auditctx", "update", unique, "--set", "description=payments trail"))
    assert api.get(href).json()["description"] == "payments trail"
    builtin = either("auditctx", "update", "cpln", "--set", "description=mine")
    assert builtin.code == 1 and "cannot be edited" in builtin.stderr
    # The CLI has no delete command for audit contexts; the API answers 405.
    assert either("auditctx", "delete", unique).code != 0
    refused = either("rest", "delete", href)
    assert refused.code == 1 and "405" in refused.stderr + refused.stdout
    assert api.get(href).status_code == 200


#: An IP set, an audit context, a workload and its identity, in the order a user might write
#: them: ``cpln apply`` sorts them (identity before workload, the others after: docs/api.md).
STACK = """\
kind: ipset
name: {gvc}
spec:
  link: //gvc/{gvc}/workload/web
  locations:
    - name: aws-us-east-1
---
kind: auditctx
name: {gvc}
---
kind: workload
name: web
gvc: {gvc}
spec:
  identityLink: //identity/web
  containers:
    - name: app
      image: nginx:1.27
      ports:
        - number: 443
  loadBalancer:
    direct:
      enabled: true
      ports:
        - externalPort: 443
          protocol: TCP
      ipSet: {gvc}
---
kind: identity
name: web
gvc: {gvc}
aws:
  cloudAccountLink: //cloudaccount/aws
  policyRefs:
    - aws::AmazonS3ReadOnlyAccess
"""


def test_apply_a_stack_with_an_identity_an_ip_set_and_an_audit_context(
    cpln: Cpln, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    assert api.post(f"/org/{ORG}/gvc", json={"name": unique}).status_code == 201
    manifest = tmp_path / "stack.yaml"
    manifest.write_text(STACK.format(gvc=unique))
    applied = ok(cpln("apply", "--file", str(manifest), "--gvc", unique))
    base = f"/org/{ORG}/gvc/{unique}"
    identity = api.get(f"{base}/identity/web").json()
    assert identity["aws"]["cloudAccountLink"] == f"/org/{ORG}/cloudaccount/aws"
    workload = api.get(f"{base}/workload/web").json()
    assert workload["spec"]["identityLink"] == f"{base}/identity/web"
    assert workload["spec"]["loadBalancer"]["direct"]["ipSet"] == f"/org/{ORG}/ipset/{unique}"
    ip_set = api.get(f"/org/{ORG}/ipset/{unique}").json()
    assert ip_set["spec"]["link"] == f"{base}/workload/web" and "warning" not in ip_set["status"]
    assert api.get(f"/org/{ORG}/auditctx/{unique}").json()["origin"] == "default"
    order = [line for line in applied.stdout.splitlines() if line.startswith("Created")]
    assert [line.split("/")[-2] for line in order] == ["identity", "workload", "ipset", "auditctx"]
    again = ok(cpln("apply", "--file", str(manifest), "--gvc", unique))
    assert "Updated identity 'web'" in again.stdout
    assert api.get(f"{base}/identity/web").json()["version"] == identity["version"]  # a no-op
