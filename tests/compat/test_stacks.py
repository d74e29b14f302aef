"""A whole stack in one file, applied and deleted by the official CLI, unchanged (SQLite here;
``test_postgres.py`` re-runs it on PostgreSQL): a GVC, an identity, an opaque secret, a policy
granting the identity ``reveal`` on it (docs.controlplane.com/reference/secret), a volume set and two workloads that use
all of them. Each item is checked through Plinth's HTTP API afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.compat.applying import apply_creating, delete_all, reapply_unchanged
from tests.compat.conftest import ORG, Cpln, Plinth
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
    items = apply_creating(cpln, api, manifest, links)
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

    reapply_unchanged(cpln, api, manifest, items)  # nothing changed, so nothing was rewritten

    delete_all(cpln, api, manifest, links)


SERVER_OWNED = ("id", "version", "created", "lastModified", "links", "status", "alias")  # alias: random per item


def test_plinth_apply_stores_what_cpln_apply_stores(
    cpln: Cpln, plinth: Plinth, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    """The same stack, by the official CLI (names ``{unique}o``) and by ``plinth apply`` (``{unique}p``):
    every item is stored the same, then ``plinth delete -f`` removes Plinth's at once, in order."""
    ours, theirs = f"{unique}p", f"{unique}o"
    for name, run in ((theirs, cpln), (ours, plinth)):
        manifest = tmp_path / f"{name}.yaml"
        manifest.write_text(STACK.format(u=name))
        ok(run("apply", "--file", str(manifest)) if run is cpln else run("apply", "-f", str(manifest), "--org", ORG))
    paths = ["/gvc/{u}", "/gvc/{u}/identity/runner", "/secret/{u}-db", "/policy/{u}-reveal"]
    paths += ["/gvc/{u}/volumeset/files", "/gvc/{u}/workload/api", "/gvc/{u}/workload/worker"]
    for path in paths:
        mine, official = (api.get(f"/org/{ORG}" + path.format(u=name)).json() for name in (ours, theirs))
        for item in (mine, official):
            for field in SERVER_OWNED:
                item.pop(field, None)
        assert json.loads(json.dumps(mine).replace(ours, theirs)) == official, path

    removed = plinth("delete", "-f", str(tmp_path / f"{ours}.yaml"), "--org", ORG)
    assert removed.code == 0, removed.stderr
    assert all(api.get(f"/org/{ORG}" + path.format(u=ours)).status_code == 404 for path in paths)
    ok(cpln("delete", "--file", str(tmp_path / f"{theirs}.yaml")))
