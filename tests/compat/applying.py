"""The steps every ``cpln apply --file`` test of a whole stack takes (``test_stacks.py``,
``test_vendor_shapes.py``, ``test_template_shapes.py``): apply it (each item created), apply it
again (nothing created, nothing rewritten), ``cpln delete --file`` it (every item gone)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from tests.compat.conftest import Cpln
from tests.compat.test_typed import ok

DELETE_WAIT_S = 30.0


def apply_creating(cpln: Cpln, api: httpx.Client, manifest: Path, links: list[str]) -> dict[str, Any]:
    """``cpln apply --file manifest``, which must report each of ``links`` created; returns each
    item as the API serves it, by link."""
    applied = ok(cpln("apply", "--file", str(manifest)))
    for link in links:
        assert f"Created {link}" in applied.stdout, applied.stdout
    return {link: api.get(link).json() for link in links}


def reapply_unchanged(cpln: Cpln, api: httpx.Client, manifest: Path, items: dict[str, Any]) -> None:
    """The same file again: nothing is created and no item's version moves (what was stored is
    what was sent, so applying it again changes nothing)."""
    again = ok(cpln("apply", "--file", str(manifest)))
    assert "Created" not in again.stdout, again.stdout
    assert {link: api.get(link).json()["version"] for link in items} == {
        link: item["version"] for link, item in items.items()
    }


def delete_all(cpln: Cpln, api: httpx.Client, manifest: Path, links: list[str]) -> None:
    """``cpln delete --file manifest``, then every one of ``links`` is a 404 within
    :data:`DELETE_WAIT_S` (the CLI does not wait for the deletes to finish)."""
    ok(cpln("delete", "--file", str(manifest)))
    deadline = time.monotonic() + DELETE_WAIT_S
    left = links
    while left and time.monotonic() < deadline:
        left = [link for link in left if api.get(link).status_code != 404]
        if left:
            time.sleep(0.2)
    assert left == [], f"still there after {DELETE_WAIT_S} s: {left}"
