"""Service accounts the browser tests sign in with, other than the admin: made through the API."""

from __future__ import annotations

from typing import Any

import httpx


def service_key(api: httpx.Client, org: str, name: str) -> dict[str, Any]:
    """A new service account ``name`` in ``org`` (``/org/x``) and a key of it: the ``-addKey``
    answer, whose ``key`` signs in and whose ``name`` revokes it (``$drop/keys``)."""
    api.post(f"{org}/serviceaccount", json={"name": name}).raise_for_status()
    added: dict[str, Any] = api.post(f"{org}/serviceaccount/{name}/-addKey", json={"description": "console"}).json()
    return added


def viewer_key(api: httpx.Client, org: str, name: str) -> dict[str, Any]:
    """:func:`service_key`, its account put in the ``viewers`` group (view on every kind)."""
    added = service_key(api, org, name)
    api.patch(f"{org}/group/viewers", json={"$append/memberLinks": [f"//serviceaccount/{name}"]}).raise_for_status()
    return added
