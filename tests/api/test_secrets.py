"""Secrets through real HTTP on both backends: what GET hides and ``-reveal`` shows, PATCH into
sealed values, no-op writes, and who may reveal (docs.controlplane.com/reference/secret)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.authz_support import assert_forbidden, bearer, ok, service_account_with_key
from tests.support.secret_values import TYPES, valid_data
from tests.support.server import ServerProcess

ORG = "acme"
SECRETS = f"/org/{ORG}/secret"


def create(api: httpx.Client, name: str, kind: str, data: Any, **extra: Any) -> dict[str, Any]:
    return ok(api.post(SECRETS, json={"name": name, "type": kind, "data": data, **extra}), 201)  # type: ignore[no-any-return]


def reveal(api: httpx.Client, name: str) -> dict[str, Any]:
    return ok(api.get(f"{SECRETS}/{name}/-reveal"))  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", TYPES)
def test_a_plain_read_never_carries_data_and_reveal_gives_it_back_as_written(
    api: httpx.Client, unique: str, kind: str
) -> None:
    name = f"{unique}-{kind}"
    created = create(api, name, kind, valid_data(kind))
    assert "data" not in created and created["type"] == kind and created["version"] == 1
    got = ok(api.get(f"{SECRETS}/{name}"))
    assert got == created
    listed = ok(api.get(SECRETS, params={"limit": 1000}))["items"]
    assert [i for i in listed if i["name"] == name] == [created]
    query = {"spec": {"match": "all", "terms": [{"property": "name", "value": name}]}}
    assert ok(api.post(f"{SECRETS}/-query", json=query))["items"] == [created]
    shown = reveal(api, name)
    expected = valid_data(kind)
    if kind in ("opaque", "userpass") and isinstance(expected, dict):
        expected = {"encoding": "plain", **expected}
    assert shown["data"] == expected
    assert {k: v for k, v in shown.items() if k != "data"} == got
    events = ok(api.get(f"{SECRETS}/{name}/-eventlog"))["items"]
    assert [e["status"] for e in events] == ["created"] and "data" not in str(events)


def test_query_by_type(api: httpx.Client, unique: str) -> None:
    create(api, f"{unique}-d", "dictionary", {"K": "v"})
    create(api, f"{unique}-u", "userpass", {"username": "u", "password": "p"})
    terms = [{"property": "type", "value": "dictionary"}, {"property": "name", "op": "~", "value": unique}]
    found = ok(api.post(f"{SECRETS}/-query", json={"spec": {"match": "all", "terms": terms}}))["items"]
    assert [i["name"] for i in found] == [f"{unique}-d"]


def test_patch_merges_into_the_sealed_values(api: httpx.Client, unique: str) -> None:
    create(api, unique, "dictionary", {"A": "1", "B": "2"})
    patched = ok(api.patch(f"{SECRETS}/{unique}", json={"data": {"B": "two", "C": "3"}}))
    assert patched["version"] == 2 and "data" not in patched
    assert reveal(api, unique)["data"] == {"A": "1", "B": "two", "C": "3"}
    ok(api.patch(f"{SECRETS}/{unique}", json={"data": {"A": None}}))
    assert reveal(api, unique)["data"] == {"B": "two", "C": "3"}
    ok(api.patch(f"{SECRETS}/{unique}", json={"$replace/data": {"Z": "26"}, "description": "rotated"}))
    shown = reveal(api, unique)
    assert (shown["data"], shown["description"], shown["version"]) == ({"Z": "26"}, "rotated", 4)
    bad = api.patch(f"{SECRETS}/{unique}", json={"data": {"bad key": "x"}})
    assert bad.status_code == 400 and bad.json()["details"]["errors"][0]["path"] == 'data["bad key"]'
    assert reveal(api, unique)["version"] == 4


def test_a_json_string_secret_is_replaced_by_a_patch(api: httpx.Client, unique: str) -> None:
    create(api, unique, "docker", valid_data("docker"))
    other = '{"auths": {"ghcr.io": {"auth": "dXNlcjpwYXNz"}}}'
    ok(api.patch(f"{SECRETS}/{unique}", json={"data": other}))
    assert reveal(api, unique)["data"] == other
    wrong = api.patch(f"{SECRETS}/{unique}", json={"data": {"auths": {}}})
    assert wrong.status_code == 400 and "not an object" in wrong.text


def test_writing_the_same_values_again_changes_nothing(api: httpx.Client, unique: str) -> None:
    data = {"username": "ada", "password": "pw", "encoding": "plain"}
    create(api, unique, "userpass", data)
    assert ok(api.patch(f"{SECRETS}/{unique}", json={"data": {"password": "pw"}}))["version"] == 1
    assert ok(api.put(f"{SECRETS}/{unique}", json={"name": unique, "type": "userpass", "data": data}))["version"] == 1
    served = ok(api.get(f"{SECRETS}/{unique}"))
    assert ok(api.put(f"{SECRETS}/{unique}", json=served))["version"] == 1, "the GET form keeps the values"
    assert ok(api.put(f"{SECRETS}/{unique}", json=reveal(api, unique)))["version"] == 1, "and so does the revealed"
    assert len(ok(api.get(f"{SECRETS}/{unique}/-eventlog"))["items"]) == 1
    assert ok(api.put(f"{SECRETS}/{unique}", json={**served, "description": "d"}))["version"] == 2
    assert reveal(api, unique)["data"] == data


def test_the_type_cannot_change(api: httpx.Client, unique: str) -> None:
    create(api, unique, "opaque", {"payload": "x"})
    r = api.patch(f"{SECRETS}/{unique}", json={"type": "userpass", "data": {"username": "u", "password": "p"}})
    assert r.status_code == 400
    assert {e["path"] for e in r.json()["details"]["errors"]} >= {"type"}


def test_dry_run_and_delete_leave_nothing_behind(api: httpx.Client, unique: str) -> None:
    dry = api.post(
        SECRETS, params={"dryRun": "true"}, json={"name": unique, "type": "opaque", "data": {"payload": "a"}}
    )
    assert dry.status_code == 200 and "data" not in dry.json()
    assert api.get(f"{SECRETS}/{unique}").status_code == 404
    assert api.get(f"{SECRETS}/{unique}/-reveal").status_code == 404
    create(api, unique, "opaque", {"payload": "first"})
    assert api.delete(f"{SECRETS}/{unique}").status_code == 202
    assert api.get(f"{SECRETS}/{unique}/-reveal").status_code == 404
    create(api, unique, "dictionary", {"K": "second"})
    assert reveal(api, unique)["data"] == {"K": "second"}, "a new secret of the same name starts afresh"


def test_reveal_is_an_action_of_secrets_only(api: httpx.Client) -> None:
    r = api.get(f"/org/{ORG}/gvc/-reveal")
    assert r.status_code in (404, 405)
    assert api.post(f"{SECRETS}/nope/-reveal").status_code == 405
    assert api.get(f"{SECRETS}/never-made/-reveal").status_code == 404


def test_revealing_needs_reveal_which_edit_implies_and_view_does_not(
    server: ServerProcess, api: httpx.Client, unique: str
) -> None:
    create(api, unique, "userpass", {"username": "u", "password": "p"})
    tokens = {}
    for held in ("view", "reveal", "edit", "use"):
        account = f"{unique}-{held}"
        tokens[held] = service_account_with_key(api, ORG, account)
        policy = {
            "name": f"{unique}-{held}",
            "targetKind": "secret",
            "targetLinks": [f"//secret/{unique}"],
            "bindings": [{"permissions": [held], "principalLinks": [f"//serviceaccount/{account}"]}],
        }
        ok(api.post(f"/org/{ORG}/policy", json=policy), 201)
    with server.client() as anyone:
        for held, token in tokens.items():
            got = anyone.get(f"{SECRETS}/{unique}", headers=bearer(token))
            assert "data" not in ok(got), held
            revealed = anyone.get(f"{SECRETS}/{unique}/-reveal", headers=bearer(token))
            if held in ("reveal", "edit"):
                assert ok(revealed)["data"]["password"] == "p"
            else:
                assert_forbidden(revealed, "reveal")


def test_the_exporters_give_the_type_and_never_the_values(
    server: ServerProcess, api: httpx.Client, unique: str
) -> None:
    endpoints = httpx.get(f"{server.url}/discovery").json()["endpoints"]
    create(api, unique, "userpass", {"username": "u", "password": "EXPORT-CANARY"})
    for endpoint in ("terraform-exporter", "k8s-crd-exporter"):
        for path in (f"{SECRETS}/{unique}", SECRETS):
            r = api.get(endpoints[endpoint] + path)
            assert r.status_code == 200, r.text
            assert "EXPORT-CANARY" not in r.text and unique in r.text
    hcl = api.get(endpoints["terraform-exporter"] + f"{SECRETS}/{unique}").text
    assert 'resource "cpln_secret"' in hcl and "userpass {" in hcl
    crd = api.get(endpoints["k8s-crd-exporter"] + f"{SECRETS}/{unique}").json()
    assert crd["type"] == "userpass" and "data" not in crd


def warnings_of(api: httpx.Client, href: str) -> list[str]:
    """The workload's warning, one sentence per reference; and its deployments agree with it."""
    item = ok(api.get(href))
    warning = item["status"].get("warning")
    deployments = ok(api.get(f"{href}/deployment"))["items"]
    assert deployments and all(d["status"]["ready"] is (warning is None) for d in deployments)
    assert item["status"]["healthCheck"]["success"] is (warning is None)
    if warning is not None:
        assert all(d["status"]["message"] == warning for d in deployments)
    return [] if warning is None else warning.split("; ")


def test_a_workload_may_name_a_secret_before_it_exists_and_its_status_says_so(api: httpx.Client, unique: str) -> None:
    """docs.controlplane.com/reference/secret: nothing refuses the write; the status (and the deployments, not ready)
    says what does not hold, until the secrets exist with the keys named and the workload's
    identity holds ``reveal`` on them."""
    placed = {"staticPlacement": {"locationLinks": ["//location/aws-us-east-1"]}}
    ok(api.post(f"/org/{ORG}/gvc", json={"name": unique, "spec": placed}), 201)
    container = {
        "name": "app",
        "image": "nginx:1.27",
        "env": [
            {"name": "PASSWORD", "value": f"cpln://secret/{unique}-db.password"},
            {"name": "ALL", "value": f"cpln://secret/{unique}-db"},
        ],
        "volumes": [{"uri": f"cpln://secret/{unique}-tls.nokey", "path": "/etc/tls"}],
    }
    workload = f"/org/{ORG}/gvc/{unique}/workload/web"
    made = ok(
        api.post(f"/org/{ORG}/gvc/{unique}/workload", json={"name": "web", "spec": {"containers": [container]}}), 201
    )
    assert made["spec"]["containers"][0]["env"][0]["value"] == f"cpln://secret/{unique}-db.password", "kept as sent"
    env0, env1, volume = (
        "spec.containers[0].env[0].value",
        "spec.containers[0].env[1].value",
        "spec.containers[0].volumes[0].uri",
    )
    assert warnings_of(api, workload) == [
        f"{volume}: secret '{unique}-tls' does not exist",
        f"{env0}: secret '{unique}-db' does not exist",
        f"{env1}: secret '{unique}-db' does not exist",
    ]

    create(api, f"{unique}-db", "userpass", {"username": "u", "password": "p"})
    create(api, f"{unique}-tls", "tls", valid_data("tls"))
    no_identity = "the workload has no identity, so it cannot reveal secret '{}' (link one that holds reveal on it)"
    assert warnings_of(api, workload) == [
        f"{volume}: secret '{unique}-tls' (tls) has no key 'nokey' (it has cert, chain, key)",
        f"{env0}: {no_identity.format(f'{unique}-db')}",
        f"{env1}: {no_identity.format(f'{unique}-db')}",
    ], "creating the secrets refreshed the workload"
    assert "-----BEGIN" not in str(ok(api.get(workload))), "the status names secrets, never their values"

    ok(api.post(f"/org/{ORG}/gvc/{unique}/identity", json={"name": "app"}), 201)
    fixed = {**container, "volumes": [{"uri": f"cpln://secret/{unique}-tls.cert", "path": "/etc/tls"}]}
    spec = {"identityLink": f"//gvc/{unique}/identity/app", "containers": [fixed]}
    ok(api.patch(workload, json={"spec": spec}))
    not_granted = "identity 'app' may not reveal secret '{}' (grant it reveal on the secret with a policy)"
    assert warnings_of(api, workload) == [
        f"{volume}: {not_granted.format(f'{unique}-tls')}",
        f"{env0}: {not_granted.format(f'{unique}-db')}",
        f"{env1}: {not_granted.format(f'{unique}-db')}",
    ]

    # A policy granting the identity reveal on one secret, then on both (by query): each policy
    # write refreshes the workloads that reference what it targets.
    identity = f"//gvc/{unique}/identity/app"
    policy = {
        "name": f"{unique}-reveal",
        "targetKind": "secret",
        "targetLinks": [f"//secret/{unique}-db"],
        "bindings": [{"permissions": ["reveal"], "principalLinks": [identity]}],
    }
    ok(api.post(f"/org/{ORG}/policy", json=policy), 201)
    assert warnings_of(api, workload) == [f"{volume}: {not_granted.format(f'{unique}-tls')}"]
    by_query = {"match": "any", "terms": [{"op": "~", "property": "name", "value": f"^{unique}-"}]}
    by_name = {k: v for k, v in policy.items() if k != "targetLinks"}
    ok(api.put(f"/org/{ORG}/policy/{unique}-reveal", json={**by_name, "targetQuery": {"spec": by_query}}))
    assert warnings_of(api, workload) == []
    assert "warning" not in ok(api.get(workload))["status"]

    # Taking the grant away (deleting the policy) and deleting a secret say so again.
    assert api.delete(f"/org/{ORG}/policy/{unique}-reveal").status_code == 202
    assert f"{env0}: {not_granted.format(f'{unique}-db')}" in warnings_of(api, workload)
    assert api.delete(f"{SECRETS}/{unique}-db").status_code == 202
    assert f"{env0}: secret '{unique}-db' does not exist" in warnings_of(api, workload)


def test_a_policy_settles_the_workloads_of_the_identities_it_binds_before_and_after(
    api: httpx.Client, unique: str
) -> None:
    """A policy write settles only the statuses asking about an identity it binds (before or
    after the write): moving the grant from one identity to another turns both workloads."""
    placed = {"staticPlacement": {"locationLinks": ["//location/aws-us-east-1"]}}
    ok(api.post(f"/org/{ORG}/gvc", json={"name": unique, "spec": placed}), 201)
    create(api, f"{unique}-db", "opaque", {"payload": "x"})
    container = {"name": "app", "image": "nginx:1.27", "env": [{"name": "DB", "value": f"cpln://secret/{unique}-db"}]}
    for name in ("ida", "idb"):
        ok(api.post(f"/org/{ORG}/gvc/{unique}/identity", json={"name": name}), 201)
        spec = {"identityLink": f"//gvc/{unique}/identity/{name}", "containers": [container]}
        ok(api.post(f"/org/{ORG}/gvc/{unique}/workload", json={"name": name, "spec": spec}), 201)
    workload = f"/org/{ORG}/gvc/{unique}/workload/" + "{}"
    not_granted = "spec.containers[0].env[0].value: identity '{}' may not reveal secret '" + unique + "-db' (grant it "
    policy = {
        "name": f"{unique}-reveal",
        "targetKind": "secret",
        "targetLinks": [f"//secret/{unique}-db"],
        "bindings": [{"permissions": ["reveal"], "principalLinks": [f"//gvc/{unique}/identity/ida"]}],
    }
    ok(api.post(f"/org/{ORG}/policy", json=policy), 201)
    assert warnings_of(api, workload.format("ida")) == []
    assert warnings_of(api, workload.format("idb"))[0].startswith(not_granted.format("idb"))
    moved = {**policy, "bindings": [{"permissions": ["reveal"], "principalLinks": [f"//gvc/{unique}/identity/idb"]}]}
    ok(api.put(f"/org/{ORG}/policy/{unique}-reveal", json=moved))
    assert warnings_of(api, workload.format("ida"))[0].startswith(not_granted.format("ida"))
    assert warnings_of(api, workload.format("idb")) == []


def test_the_permission_schema_and_the_access_report(api: httpx.Client, unique: str) -> None:
    schema = ok(api.get(f"{SECRETS}/-schema/permissions"))
    assert {p["name"] for p in schema["items"]} == {"create", "delete", "edit", "manage", "reveal", "use", "view"}
    assert sorted(schema["implied"]["edit"]) == ["reveal", "view"]
    assert schema["implied"]["reveal"] == ["view"] and schema["implied"]["use"] == ["view"]
    create(api, unique, "opaque", {"payload": "x"})
    report = ok(api.get(f"{SECRETS}/{unique}/-accessreport"))
    assert report["kind"] == "accessreport"
    assert "reveal" in {entry["name"] for entry in report["permissions"]}


def test_the_secrets_of_one_type(api: httpx.Client, unique: str) -> None:
    """``GET /org/{org}/secret/-for/type/{type}`` (only in the CLI's map): the query on type."""
    create(api, f"{unique}-a", "userpass", {"username": "u", "password": "p"})
    create(api, f"{unique}-b", "opaque", {"payload": "x"})
    found = ok(api.get(f"{SECRETS}/-for/type/userpass", params={"limit": 1000}))
    assert found["kind"] == "queryresult" and found["itemKind"] == "secret"
    names = [item["name"] for item in found["items"]]
    assert f"{unique}-a" in names and f"{unique}-b" not in names
    assert all(item["type"] == "userpass" and "data" not in item for item in found["items"])
    unknown = api.get(f"{SECRETS}/-for/type/password")
    assert unknown.status_code == 404 and "userpass" in unknown.json()["message"]
