"""A whole stack in one file, applied and deleted by the official CLI, unchanged (SQLite here;
``test_postgres.py`` re-runs it on PostgreSQL): a GVC, an identity, an opaque secret, a policy
granting the identity ``reveal`` on it (kinds.md §2.4), a volume set and two workloads that use
all of them. Each item is checked through Plinth's HTTP API afterwards."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.compat.conftest import ORG, Cpln
from tests.compat.test_typed import ok

STACK = """\
kind: gvc
name: {u}
spec:
  staticPlacement:
    locationLinks: [//location/aws-us-east-1]
---
kind: identity
name: runner
gvc: {u}
description: the workloads' identity
---
kind: secret
name: {u}-db
type: opaque
data:
  payload: s3cr3t
  encoding: plain
---
kind: policy
name: {u}-reveal
targetKind: secret
targetLinks: [//secret/{u}-db]
bindings:
  - permissions: [reveal]
    principalLinks: [//gvc/{u}/identity/runner]
---
kind: volumeset
name: files
gvc: {u}
spec:
  initialCapacity: 10
  fileSystemType: shared
---
kind: workload
name: api
gvc: {u}
spec:
  type: standard
  identityLink: //gvc/{u}/identity/runner
  containers:
    - name: app
      image: nginx:1.27
      ports: [{{number: 8080, protocol: http}}]
      env: [{{name: DB_PASSWORD, value: cpln://secret/{u}-db}}]
      volumes: [{{uri: cpln://volumeset/files, path: /srv/files}}]
---
kind: workload
name: worker
gvc: {u}
spec:
  type: standard
  identityLink: //gvc/{u}/identity/runner
  containers:
    - name: app
      image: busybox:1.36
      command: sleep
      args: ["3600"]
      env: [{{name: DB_PASSWORD, value: cpln://secret/{u}-db.payload}}]
      volumes: [{{uri: cpln://volumeset/files, path: /srv/files}}]
"""

DELETE_WAIT_S = 30.0


def test_a_stack_applies_reapplies_unchanged_and_deletes(
    cpln: Cpln, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "stack.yaml"
    manifest.write_text(STACK.format(u=unique))
    gvc = f"/org/{ORG}/gvc/{unique}"
    links = [
        gvc,
        f"{gvc}/identity/runner",
        f"/org/{ORG}/secret/{unique}-db",
        f"/org/{ORG}/policy/{unique}-reveal",
        f"{gvc}/volumeset/files",
        f"{gvc}/workload/api",
        f"{gvc}/workload/worker",
    ]
    applied = ok(cpln("apply", "--file", str(manifest)))
    for link in links:
        assert f"Created {link}" in applied.stdout, applied.stdout
    items = {link: api.get(link).json() for link in links}
    assert items[gvc]["spec"]["staticPlacement"]["locationLinks"] == [f"/org/{ORG}/location/aws-us-east-1"]
    assert items[f"/org/{ORG}/secret/{unique}-db"]["type"] == "opaque"
    revealed = api.get(f"/org/{ORG}/secret/{unique}-db/-reveal").json()["data"]
    assert revealed == {"payload": "s3cr3t", "encoding": "plain"}
    binding = items[f"/org/{ORG}/policy/{unique}-reveal"]["bindings"][0]
    assert binding == {"permissions": ["reveal"], "principalLinks": [f"{gvc}/identity/runner"]}
    for name in ("api", "worker"):
        workload = items[f"{gvc}/workload/{name}"]
        assert workload["spec"]["identityLink"] == f"{gvc}/identity/runner"
        assert "warning" not in workload["status"], workload["status"]
    volumeset = api.get(f"{gvc}/volumeset/files").json()
    assert sorted(volumeset["status"]["workloadLinks"]) == [f"{gvc}/workload/api", f"{gvc}/workload/worker"]

    again = ok(cpln("apply", "--file", str(manifest)))
    assert "Created" not in again.stdout, again.stdout
    assert {link: api.get(link).json()["version"] for link in links} == {
        link: item["version"] for link, item in items.items()
    }  # nothing changed, so nothing was rewritten

    ok(cpln("delete", "--file", str(manifest)))
    deadline = time.monotonic() + DELETE_WAIT_S  # the CLI does not wait for the deletes to finish
    left = links
    while left and time.monotonic() < deadline:
        left = [link for link in left if api.get(link).status_code != 404]
        if left:
            time.sleep(0.2)
    assert left == [], f"still there after {DELETE_WAIT_S} s: {left}"
