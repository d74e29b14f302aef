"""The official CLI's quota commands, unchanged, against a real Plinth server: ``quota get`` (the
list as a table and one quota by id), ``quota patch`` of ``max``, and a create past a quota,
which the CLI reports at once (it retries a 429 unless the message names a quota)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.compat.conftest import ORG, Cpln
from tests.compat.test_typed import as_json, ok


def test_quota_get_patch_and_a_create_past_the_quota(
    cpln: Cpln, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    assert api.post(f"/org/{ORG}/gvc", json={"name": unique}).status_code == 201
    listed = api.get(f"/org/{ORG}/quota").json()["items"]
    (mine,) = [q for q in listed if q["name"] == "workloads-per-gvc" and q["dimensions"] == {"gvc": unique}]

    table = ok(cpln("quota", "get", "-o", "text")).stdout
    header = [cell.strip() for cell in table.splitlines()[1].strip("|").split("|")]
    assert header == ["ID", "NAME", "DESCRIPTION", "ORIGIN", "CURRENT", "MAX", "UNIT", "DIMENSIONS"]
    assert any(mine["id"] in line and f'gvc="{unique}"' in line for line in table.splitlines())
    assert as_json(cpln("quota", "get", mine["id"], "-o", "json")) == mine

    patch = tmp_path / "max.json"
    patch.write_text(json.dumps({"max": 1}))
    patched = as_json(cpln("quota", "patch", mine["id"], "--file", str(patch), "-o", "json"))
    assert patched["max"] == 1 and api.get(f"/org/{ORG}/quota/{mine['id']}").json()["max"] == 1

    image = ("--image", "nginx:1.27", "--gvc", unique)
    ok(cpln("workload", "create", "--name", "one", *image))
    refused = cpln("workload", "create", "--name", "two", *image)
    assert refused.code == 1 and "workloads-per-gvc" in refused.stderr
    assert api.get(f"/org/{ORG}/gvc/{unique}/workload/two").status_code == 404
    assert as_json(cpln("quota", "get", mine["id"], "-o", "json"))["current"] == 1
