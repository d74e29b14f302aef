"""The auditctx kind over real HTTP on both backends: never deleted (405), the built-in ``cpln``
context every org is created with, and queries by ``origin``."""

from __future__ import annotations

import httpx

ORG = "acme"


def test_an_audit_context_is_never_deleted(api: httpx.Client, unique: str) -> None:
    assert api.post(f"/org/{ORG}/auditctx", json={"name": unique}).status_code == 201
    refused = api.delete(f"/org/{ORG}/auditctx/{unique}")
    assert refused.status_code == 405
    assert refused.json()["code"] == "method_not_allowed"
    assert set(refused.headers["allow"].replace(" ", "").split(",")) == {"GET", "PUT", "PATCH"}
    assert api.get(f"/org/{ORG}/auditctx/{unique}").json()["version"] == 1


def test_every_org_has_the_built_in_cpln_context_and_it_is_read_only(api: httpx.Client) -> None:
    builtin = api.get(f"/org/{ORG}/auditctx/cpln")
    assert builtin.status_code == 200, builtin.text
    assert builtin.json()["origin"] == "builtin" and builtin.json()["status"] == {}
    refused = api.patch(f"/org/{ORG}/auditctx/cpln", json={"description": "mine now"})
    assert refused.status_code == 409 and "cannot be edited" in refused.json()["message"]
    assert api.delete(f"/org/{ORG}/auditctx/cpln").status_code == 405
    assert api.post("/org", json={"name": "gamma"}).status_code == 201
    assert api.get("/org/gamma/auditctx/cpln").json()["origin"] == "builtin"


def test_clients_make_default_contexts_and_query_by_origin(api: httpx.Client, unique: str) -> None:
    made = api.post(f"/org/{ORG}/auditctx", json={"name": unique, "origin": "builtin", "tags": {"team": "a"}})
    assert made.status_code == 201 and made.json()["origin"] == "default"
    edited = api.patch(f"/org/{ORG}/auditctx/{unique}", json={"description": "PCI", "tags": {"team": "b"}})
    assert edited.json()["version"] == 2 and edited.json()["origin"] == "default"
    query = {"spec": {"terms": [{"property": "origin", "value": "builtin"}]}}
    found = api.post(f"/org/{ORG}/auditctx/-query", json=query).json()["items"]
    assert [c["name"] for c in found] == ["cpln"]
