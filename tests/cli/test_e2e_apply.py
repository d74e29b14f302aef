"""``plinth apply``, ``delete -f``, ``--prune`` and ``get`` through the real entry point against a real
server, on SQLite and on PostgreSQL (issue 13), with a stack holding every kind apply can write
(users join by invitation and images by a push, so those two are read with ``plinth get`` only)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli.conftest import PlinthCli, Run
from tests.support.server import ServerProcess

ORG = "acme"

#: Every kind apply can write, written in an order that would fail front to back.
STACK = """\
kind: policy
name: {u}-reveal
tags: {{stack: {u}}}
targetKind: secret
targetLinks: [//secret/{u}-db]
bindings:
  - permissions: [reveal]
    principalLinks: [//gvc/{u}/identity/runner, //group/{u}-ops]
---
kind: group
name: {u}-ops
tags: {{stack: {u}}}
memberLinks: [//serviceaccount/{u}-robot]
---
kind: domain
name: {u}.example.com
tags: {{stack: {u}}}
spec:
  ports: [{{routes: [{{prefix: /, workloadLink: //gvc/{u}/workload/web}}]}}]
---
kind: workload
name: web
gvc: {u}
tags: {{stack: {u}}}
spec:
  type: standard
  identityLink: //gvc/{u}/identity/runner
  containers:
    - name: app
      image: nginx:1.27
      ports: [{{number: 8080, protocol: http}}]
      env: [{{name: DB_PASSWORD, value: cpln://secret/{u}-db.payload}}]
      volumes: [{{uri: cpln://volumeset/files, path: /srv/files}}]
---
kind: workload
name: worker
gvc: {u}
tags: {{stack: {u}}}
spec:
  type: standard
  containers: [{{name: app, image: busybox:1.36, command: sleep, args: ["3600"]}}]
---
kind: vs
name: files
gvc: {u}
tags: {{stack: {u}}}
spec: {{initialCapacity: 10, fileSystemType: shared}}
---
kind: identity
name: runner
gvc: {u}
tags: {{stack: {u}}}
aws:
  cloudAccountLink: //cloudaccount/{u}-aws
  policyRefs: [aws::AmazonS3ReadOnlyAccess]
---
kind: ipset
name: {u}-ips
tags: {{stack: {u}}}
spec: {{link: //gvc/{u}, locations: [{{name: //location/aws-us-east-1}}]}}
---
kind: gvc
name: {u}
tags: {{stack: {u}}}
spec:
  staticPlacement:
    locationLinks: [//location/aws-us-east-1]
---
kind: secret
name: {u}-db
tags: {{stack: {u}}}
type: opaque
data: {{payload: s3cr3t, encoding: plain}}
---
kind: cloudaccount
name: {u}-aws
tags: {{stack: {u}}}
provider: aws
data: {{roleArn: "arn:aws:iam::123456789012:role/cpln-acme"}}
---
kind: serviceaccount
name: {u}-robot
tags: {{stack: {u}}}
---
kind: location
name: {u}-edge
provider: byok
tags: {{stack: {u}}}
---
kind: agent
name: {u}-agent
tags: {{stack: {u}}}
---
kind: auditctx
name: {u}-audit
tags: {{stack: {u}}}
---
kind: org
name: acme
description: applied by a test
"""


@pytest.fixture(scope="module")
def api(store_server: ServerProcess) -> Iterator[httpx.Client]:
    with store_server.client() as client:
        yield client


@pytest.fixture
def cli(store_server: ServerProcess, tmp_path: Path) -> PlinthCli:
    return PlinthCli(home=tmp_path, endpoint=store_server.url, token=store_server.key)


def stack_file(tmp_path: Path, unique: str, text: str = STACK, name: str = "stack.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text.format(u=unique))
    return path


def ok(run: Run) -> Run:
    assert run.code == 0, run.stdout + run.stderr
    return run


def outcomes(run: Run) -> dict[str, str]:
    """``gvc/prod/workload/web created`` lines -> label: outcome, in printed order."""
    return dict(line.split(" ", 1) for line in run.stdout.splitlines())


def test_a_stack_of_every_kind_applies_reapplies_and_deletes(
    cli: PlinthCli, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    manifest = stack_file(tmp_path, unique)
    u = unique
    applied = ok(cli("apply", "-f", str(manifest), "--org", ORG))
    done = outcomes(applied)
    labels = list(done)
    assert len(labels) == 16 and set(done.values()) == {"created", "updated"}, applied.stdout
    assert done[f"org/{ORG}"] == "updated"
    for first, then in [
        (f"gvc/{u}", f"gvc/{u}/identity/runner"),
        (f"cloudaccount/{u}-aws", f"gvc/{u}/identity/runner"),
        (f"gvc/{u}/identity/runner", f"gvc/{u}/workload/web"),
        (f"secret/{u}-db", f"gvc/{u}/workload/web"),
        (f"gvc/{u}/volumeset/files", f"gvc/{u}/workload/web"),
        (f"gvc/{u}/workload/web", f"domain/{u}.example.com"),
        (f"serviceaccount/{u}-robot", f"group/{u}-ops"),
        (f"group/{u}-ops", f"policy/{u}-reveal"),
        (f"gvc/{u}", f"ipset/{u}-ips"),
    ]:
        assert labels.index(first) < labels.index(then), (first, then, labels)
    web = api.get(f"/org/{ORG}/gvc/{u}/workload/web").json()
    assert web["spec"]["identityLink"] == f"/org/{ORG}/gvc/{u}/identity/runner"
    assert "warning" not in web["status"], web["status"]  # its secret was there before it
    assert api.get(f"/org/{ORG}/secret/{u}-db/-reveal").json()["data"]["payload"] == "s3cr3t"

    again = ok(cli("apply", "-f", str(manifest), "--org", ORG))
    assert set(outcomes(again).values()) == {"unchanged"}, again.stdout
    assert api.get(f"/org/{ORG}/gvc/{u}/workload/web").json()["version"] == web["version"]

    changed = manifest.read_text().replace("  - name: app\n      image: nginx:1.27", "  - name: app\n      image: nginx:1.28")
    manifest.write_text(changed)
    updated = outcomes(ok(cli("apply", "-f", str(manifest), "--org", ORG)))
    assert {label for label, outcome in updated.items() if outcome != "unchanged"} == {f"gvc/{u}/workload/web"}
    assert updated[f"gvc/{u}/workload/web"] == "updated"

    # plinth get reads every kind, apply's and the two it cannot write.
    for kind in ("users", "image", "org", "location", "auditctx", "agents", "cloudaccount", "ipsets"):
        assert ok(cli("get", kind, "--org", ORG, "-o", "json")).stdout.startswith("{"), kind

    # The org and the audit context are never deleted (405): delete the rest.
    kept = [doc for doc in changed.split("---\n") if not doc.startswith(("kind: org", "kind: auditctx"))]
    manifest.write_text("---\n".join(kept))
    gone = outcomes(ok(cli("delete", "-f", str(manifest), "--org", ORG)))
    order = list(gone)
    assert set(gone.values()) == {"deleted"} and len(order) == 14, gone
    for first, then in [
        (f"gvc/{u}/workload/web", f"gvc/{u}/volumeset/files"),
        (f"domain/{u}.example.com", f"gvc/{u}/workload/web"),
        (f"gvc/{u}/identity/runner", f"gvc/{u}"),
        (f"ipset/{u}-ips", f"gvc/{u}"),
        (f"policy/{u}-reveal", f"group/{u}-ops"),
    ]:
        assert order.index(first) < order.index(then), (first, then, order)
    assert api.get(f"/org/{ORG}/gvc/{u}").status_code == 404
    assert api.get(f"/org/{ORG}/secret/{u}-db").status_code == 404
    again = ok(cli("delete", "-f", str(manifest), "--org", ORG))
    assert set(outcomes(again).values()) == {"already gone"}
