"""Requests exactly as the official CLI (``cpln`` 3.10.1) sends them, and the answers it needs.

Each test names the command whose request it reproduces; tests/compat runs the commands themselves.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx
import orjson

from plinth.engine.access import Access
from plinth.engine.action_context import EngineActionContext
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import SYSTEM, Engine
from plinth.errors import APIError
from plinth.kinds import REGISTRY
from plinth.kinds.base import CRUD_VERBS
from plinth.kinds.user_actions import for_email
from plinth.storage import open_storage
from tests.aio import RunAsync


async def user_for_email(engine: Engine, info: RequestInfo, email: str, access: Access) -> bytes:
    """The user action's handler, called as the server calls it (``server/actions.py``)."""
    answer = await for_email(EngineActionContext(engine, info, access, params={"email": email}))
    assert isinstance(answer.body, bytes)
    return answer.body


def test_a_query_without_a_body_matches_every_item(api: httpx.Client, unique: str) -> None:
    """``cpln gvc query`` with no term options POSTs ``-query`` with no body (form content type)."""
    api.post("/org/acme/gvc", json={"name": unique})
    headers = {"content-type": "application/x-www-form-urlencoded"}
    r = api.post("/org/acme/gvc/-query", content=b"", headers=headers)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["kind"] == "queryresult" and body["query"]["spec"] == {"match": "all", "terms": []}
    assert unique in [item["name"] for item in body["items"]]
    assert api.get("/org/acme/gvc/-query").status_code == 400  # a GET still needs a cursor


def test_the_default_page_is_the_clis_default_max_of_50(api: httpx.Client, unique: str) -> None:
    """``cpln <kind> get`` shows 50 and prints its notice only if a ``next`` link follows them."""
    group = f"/org/acme/gvc/{unique}/volumeset"
    assert api.post("/org/acme/gvc", json={"name": unique}).status_code == 201
    for i in range(50):
        api.post(group, json={"name": f"v{i:02d}", "spec": {"initialCapacity": 10}}).raise_for_status()
    full = api.get(group).json()
    assert len(full["items"]) == 50 and [link["rel"] for link in full["links"]] == ["self"]
    api.post(group, json={"name": "v50", "spec": {"initialCapacity": 10}}).raise_for_status()
    first = api.get(group).json()
    assert len(first["items"]) == 50 and "next" in [link["rel"] for link in first["links"]]


def test_apply_order_policy_before_its_group_and_group_before_its_service_account(
    api: httpx.Client, unique: str
) -> None:
    """``cpln apply`` PUTs policies before groups and service accounts of the same file."""
    policy = {
        "kind": "policy",
        "name": unique,
        "targetKind": "gvc",
        "target": "all",
        "bindings": [{"permissions": ["view"], "principalLinks": [f"//group/{unique}", f"//serviceaccount/{unique}"]}],
    }
    r = api.put("/org/acme/policy", json=policy)
    assert r.status_code == 201, r.text
    group = {"kind": "group", "name": unique, "memberLinks": [f"//serviceaccount/{unique}"]}
    assert api.put("/org/acme/group", json=group).status_code == 201
    assert api.put("/org/acme/serviceaccount", json={"kind": "serviceaccount", "name": unique}).status_code == 201
    stored = api.get(f"/org/acme/policy/{unique}").json()
    principals = [f"/org/acme/group/{unique}", f"/org/acme/serviceaccount/{unique}"]
    assert stored["bindings"][0]["principalLinks"] == principals
    bad = {**policy, "name": f"{unique}-x", "bindings": [{"permissions": ["view"], "principalLinks": ["//domain/x"]}]}
    assert api.put("/org/acme/policy", json=bad).status_code == 400  # links are still checked for shape


def test_user_lookup_by_email_answers_404_in_the_error_shape(api: httpx.Client) -> None:
    """``group add-member --email`` and ``policy add-binding --email`` look each email up first."""
    r = api.get("/org/acme/user/-for/email/nobody@example.com")
    assert r.status_code == 404
    body = r.json()
    assert (body["code"], body["details"]) == ("not_found", {"kind": "user", "name": "nobody@example.com"})
    assert api.post("/org/acme/user/-for/email/nobody@example.com").status_code == 405


def test_user_lookup_by_email_finds_the_user_whatever_the_case(run_async: RunAsync, tmp_path: Path) -> None:
    async def scenario() -> dict[str, object]:
        storage = await open_storage(None, tmp_path)
        try:
            # Users join by invitation; this engine is given a PUT for them to set one up directly.
            engine = Engine(
                storage,
                {
                    **REGISTRY,
                    "user": replace(REGISTRY["user"], access=replace(REGISTRY["user"].access, verbs=CRUD_VERBS)),
                },
            )
            await engine.upsert(RequestInfo(kind="org"), {"name": "acme"})
            user = {"name": "ada@example.com", "email": "ada@example.com"}
            await engine.upsert(RequestInfo(kind="user", org="acme", name="ada@example.com"), user)
            info = RequestInfo(kind="user", org="acme", action="for", action_args=("email", "Ada@Example.com"))
            found = orjson.loads(await user_for_email(engine, info, "Ada@Example.com", SYSTEM))
            try:
                await user_for_email(engine, info, "bob@example.com", SYSTEM)
            except APIError as exc:
                assert exc.status == 404
            else:
                raise AssertionError("a missing user must be a 404")
            return found  # type: ignore[no-any-return]
        finally:
            await storage.close()

    found = run_async(scenario())
    assert (found["kind"], found["email"]) == ("user", "ada@example.com")


def test_applying_the_same_volume_set_again_changes_nothing(api: httpx.Client, unique: str) -> None:
    """``cpln apply`` of an unchanged file PUTs each item again: same version, no event."""
    assert api.post("/org/acme/gvc", json={"name": unique}).status_code == 201
    body = {"kind": "volumeset", "name": "data", "gvc": unique, "spec": {"initialCapacity": 10}}
    first = api.put(f"/org/acme/gvc/{unique}/volumeset", json=body)
    again = api.put(f"/org/acme/gvc/{unique}/volumeset", json=body)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json() and again.json()["version"] == 1
    patched = api.patch(f"/org/acme/gvc/{unique}/volumeset/data", json={"gvc": unique, "tags": {}})
    assert patched.json()["version"] == 1


def test_the_clis_identity_create_body_and_gvc_delete_force(api: httpx.Client, unique: str) -> None:
    """``cpln identity create`` sends ``{name, description, tags}``; ``cpln gvc delete --force``
    lists the GVC's identities and deletes them (after its workloads) before the GVC."""
    assert api.post("/org/acme/gvc", json={"name": unique}).status_code == 201
    body = {"name": "reader", "description": "reader", "tags": {}}
    identity = api.post(f"/org/acme/gvc/{unique}/identity", json=body)
    assert identity.status_code == 201, identity.text
    assert identity.headers["location"] == f"/org/acme/gvc/{unique}/identity/reader"
    assert set(identity.json()) == {
        "id", "name", "kind", "version", "description", "tags", "created", "lastModified", "links", "gvc", "status",
    }  # fmt: skip
    listed = api.get(f"/org/acme/gvc/{unique}/identity").json()
    assert (listed["kind"], listed["itemKind"]) == ("list", "identity")
    assert [i["name"] for i in listed["items"]] == ["reader"]
    assert api.delete(f"/org/acme/gvc/{unique}").status_code == 409
    assert api.delete(f"/org/acme/gvc/{unique}/identity/reader").status_code == 202
    assert api.delete(f"/org/acme/gvc/{unique}").status_code == 202


def test_the_clis_ip_set_and_audit_context_create_bodies(api: httpx.Client, unique: str) -> None:
    """``cpln ipset create --location aws-us-east-1`` without ``--link`` (``spec.link`` is
    undefined, so JSON leaves it out) and ``cpln auditctx create`` without ``--description``."""
    location = {"name": "/org/acme/location/aws-us-east-1", "retentionPolicy": "keep"}
    body = {"name": unique, "description": unique, "tags": {"a": "b"}, "spec": {"locations": [location]}}
    made = api.post("/org/acme/ipset", json=body)
    assert made.status_code == 201, made.text
    assert made.json()["spec"] == body["spec"] and made.json()["status"] == {"ipAddresses": []}
    context = api.post("/org/acme/auditctx", json={"name": unique, "tags": {}})
    assert context.status_code == 201, context.text
    assert (context.json()["description"], context.json()["origin"]) == (unique, "default")
