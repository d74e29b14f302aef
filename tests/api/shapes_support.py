"""Shared steps of the shape tests (``test_template_shapes.py``, ``test_vendor_shapes.py``):
a GVC placed in two locations, and a workload PUT twice as ``cpln apply`` sends it."""

from __future__ import annotations

from typing import Any

import httpx

LOCATIONS = ["//location/aws-us-east-1", "//location/gcp-us-east1"]


def make_gvc(api: httpx.Client, name: str) -> None:
    made = api.post("/org/acme/gvc", json={"name": name, "spec": {"staticPlacement": {"locationLinks": LOCATIONS}}})
    assert made.status_code == 201, made.text


def put_twice(api: httpx.Client, gvc: str, body: dict[str, Any]) -> dict[str, Any]:
    """PUT ``body`` (as ``cpln apply`` does), then again: the second write changes nothing."""
    href = f"/org/acme/gvc/{gvc}/workload/{body['name']}"
    first = api.put(f"/org/acme/gvc/{gvc}/workload", json=body)
    assert first.status_code in (200, 201), first.text
    stored = api.get(href).json()
    again = api.put(f"/org/acme/gvc/{gvc}/workload", json=body)
    assert again.status_code in (200, 201), again.text
    assert api.get(href).json()["version"] == stored["version"]
    return stored  # type: ignore[no-any-return]
