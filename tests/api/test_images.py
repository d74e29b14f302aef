"""The image kind over real HTTP on both backends: nothing pushes, so the registry is empty, and
a POST is the platform's 403."""

from __future__ import annotations

import httpx

from tests.api.authz_support import bearer, ok, service_account_with_key
from tests.support.server import ServerProcess

ORG = "acme"


def test_images_cannot_be_created_and_none_exist(api: httpx.Client) -> None:
    refused = api.post(f"/org/{ORG}/image", json={"name": "nginx:1.27"})
    assert refused.status_code == 403 and refused.json()["message"] == "You can create an image only by pushing"
    assert api.post(f"/org/{ORG}/image?dryRun=true", json={"name": "web"}).status_code == 403
    assert api.put(f"/org/{ORG}/image", json={"name": "web"}).status_code == 405
    listed = api.get(f"/org/{ORG}/image")
    assert listed.status_code == 200 and listed.json()["items"] == []
    query = {"spec": {"terms": [{"property": "tag", "value": "latest"}]}}
    assert api.post(f"/org/{ORG}/image/-query", json=query).json()["items"] == []
    for method in ("GET", "PATCH", "DELETE"):
        body = {"tags": {"a": "b"}} if method == "PATCH" else None
        assert api.request(method, f"/org/{ORG}/image/web", json=body).status_code == 404, method
    assert api.get(f"/org/{ORG}/image/-schema/permissions").json()["targetKind"] == "image"


def test_a_policy_may_target_images(api: httpx.Client, unique: str) -> None:
    policy = {
        "name": unique,
        "targetKind": "image",
        "target": "all",
        "bindings": [{"permissions": ["pull"], "principalLinks": ["//group/superusers"]}],
    }
    assert api.post(f"/org/{ORG}/policy", json=policy).status_code == 201


def test_whatever_a_principal_holds_no_image_is_listed_or_created(
    server: ServerProcess, api: httpx.Client, unique: str
) -> None:
    """The image rows of the authorization matrix: a principal with no grant lists an empty
    registry (lists omit what it may not view), and even ``manage`` cannot create an image."""
    tokens = {held: service_account_with_key(api, ORG, f"{unique}-{held}") for held in ("none", "manage")}
    policy = {
        "name": f"{unique}-manage",
        "targetKind": "image",
        "target": "all",
        "bindings": [{"permissions": ["manage"], "principalLinks": [f"//serviceaccount/{unique}-manage"]}],
    }
    ok(api.post(f"/org/{ORG}/policy", json=policy), 201)
    with server.client() as anyone:
        for held, token in tokens.items():
            listed = anyone.get(f"/org/{ORG}/image", headers=bearer(token))
            assert ok(listed)["items"] == [], held
            refused = anyone.post(f"/org/{ORG}/image", json={"name": "web:1"}, headers=bearer(token))
            assert refused.status_code == 403 and refused.json()["message"] == "You can create an image only by pushing"
            assert anyone.get(f"/org/{ORG}/image/web:1", headers=bearer(token)).status_code == 404, held
