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


def assert_before(labels: list[str], *pairs: tuple[str, str]) -> None:
    """Each pair's first label was printed before its second."""
    for first, then in pairs:
        assert labels.index(first) < labels.index(then), (first, then, labels)


def outcomes(run: Run) -> dict[str, str]:
    """``gvc/prod/workload/web created`` lines -> label: outcome, in printed order; no label twice."""
    pairs = [line.split(" ", 1) for line in run.stdout.splitlines()]
    labels = [label for label, _ in pairs]
    assert len(set(labels)) == len(labels), run.stdout
    return dict(pairs)


def test_a_stack_of_every_kind_applies_reapplies_and_deletes(
    cli: PlinthCli, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    manifest = stack_file(tmp_path, unique)
    u = unique
    applied = ok(cli("apply", "-f", str(manifest), "--org", ORG))
    done = outcomes(applied)  # printed as the answers came: each once, after what it links to
    labels = list(done)
    assert len(labels) == 16 and set(done.values()) == {"created", "updated"}, applied.stdout
    assert done[f"org/{ORG}"] == "updated"
    assert_before(
        labels,
        (f"gvc/{u}", f"gvc/{u}/identity/runner"),
        (f"cloudaccount/{u}-aws", f"gvc/{u}/identity/runner"),
        (f"gvc/{u}/identity/runner", f"gvc/{u}/workload/web"),
        (f"secret/{u}-db", f"gvc/{u}/workload/web"),
        (f"gvc/{u}/volumeset/files", f"gvc/{u}/workload/web"),
        (f"gvc/{u}/workload/web", f"domain/{u}.example.com"),
        (f"serviceaccount/{u}-robot", f"group/{u}-ops"),
        (f"group/{u}-ops", f"policy/{u}-reveal"),
        (f"gvc/{u}", f"ipset/{u}-ips"),
    )
    web = api.get(f"/org/{ORG}/gvc/{u}/workload/web").json()
    assert web["spec"]["identityLink"] == f"/org/{ORG}/gvc/{u}/identity/runner"
    assert "warning" not in web["status"], web["status"]  # its secret was there before it
    assert api.get(f"/org/{ORG}/secret/{u}-db/-reveal").json()["data"]["payload"] == "s3cr3t"

    again = ok(cli("apply", "-f", str(manifest), "--org", ORG))
    assert set(outcomes(again).values()) == {"unchanged"}, again.stdout
    assert api.get(f"/org/{ORG}/gvc/{u}/workload/web").json()["version"] == web["version"]

    changed = manifest.read_text().replace("image: nginx:1.27", "image: nginx:1.28")
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
    assert_before(
        order,
        (f"gvc/{u}/workload/web", f"gvc/{u}/volumeset/files"),
        (f"domain/{u}.example.com", f"gvc/{u}/workload/web"),
        (f"gvc/{u}/identity/runner", f"gvc/{u}"),
        (f"ipset/{u}-ips", f"gvc/{u}"),
        (f"policy/{u}-reveal", f"group/{u}-ops"),
    )
    assert api.get(f"/org/{ORG}/gvc/{u}").status_code == 404
    assert api.get(f"/org/{ORG}/secret/{u}-db").status_code == 404
    again = ok(cli("delete", "-f", str(manifest), "--org", ORG))
    assert set(outcomes(again).values()) == {"already gone"}


SMALL = """\
kind: gvc
name: {u}
tags: {{stack: {u}}}
---
kind: secret
name: {u}-bad
type: nonsense
data: {{payload: x, encoding: plain}}
---
kind: secret
name: {u}-ok
type: opaque
tags: {{stack: {u}}}
data: {{payload: x, encoding: plain}}
"""


def test_dry_run_checks_everything_and_changes_nothing(cli: PlinthCli, api: httpx.Client, unique: str) -> None:
    text = SMALL.format(u=unique).replace("type: nonsense", "type: opaque") + (
        f"---\nkind: identity\nname: id\ngvc: {unique}\n"
    )
    lines = [
        f"gvc/{unique} created (dry run)",
        f"secret/{unique}-bad created (dry run)",
        f"secret/{unique}-ok created (dry run)",
        f"gvc/{unique}/identity/id not checked (dry run: it needs gvc/{unique}, not created yet)",
    ]
    # As the answers come: each line once, the identity's after its GVC's (it waited for it).
    streamed = ok(cli("apply", "-f", "-", "--org", ORG, "--dry-run", stdin=text)).stdout.splitlines()
    assert sorted(streamed) == sorted(lines) and len(streamed) == len(lines), streamed
    assert streamed.index(lines[0]) < streamed.index(lines[3]), streamed
    # --ordered: the plan's order, whatever answered first.
    ordered = ok(cli("apply", "-f", "-", "--org", ORG, "--dry-run", "--ordered", stdin=text))
    assert ordered.stdout.splitlines() == lines
    assert api.get(f"/org/{ORG}/gvc/{unique}").status_code == 404


def test_a_failure_names_its_document_stops_and_fails_the_run(
    cli: PlinthCli, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    manifest = stack_file(tmp_path, unique, SMALL)
    stopped = cli("apply", "-f", str(manifest), "--org", ORG, "--concurrency", "1", "-o", "json")
    assert stopped.code == 1
    assert stopped.stdout.splitlines() == [f"gvc/{unique} created", f"secret/{unique}-bad failed"]
    where, error = stopped.stderr.split("\n", 1)
    assert where == f"{manifest}#2 (secret/{unique}-bad):"
    assert json.loads(error.split("\n\n")[0])[0]["status"] == 400
    assert stopped.stderr.endswith(
        "1 of 3 failed, 1 applied, 1 not tried (--continue-on-error goes on after a failure)\n"
    )
    assert api.get(f"/org/{ORG}/secret/{unique}-ok").status_code == 404

    going_on = cli("apply", "-f", str(manifest), "--org", ORG, "--continue-on-error")
    assert going_on.code == 1
    assert outcomes(going_on) == {
        f"gvc/{unique}": "unchanged",
        f"secret/{unique}-bad": "failed",
        f"secret/{unique}-ok": "created",
    }
    assert going_on.stderr.endswith("1 of 3 failed, 2 applied\n")


def test_a_document_in_another_gvc_than_the_flag_is_refused_before_any_write(
    cli: PlinthCli, api: httpx.Client, unique: str
) -> None:
    text = f"kind: gvc\nname: {unique}\n---\nkind: workload\nname: w\ngvc: elsewhere\nspec: {{}}\n"
    run = cli("apply", "-f", "-", "--org", ORG, "--gvc", unique, stdin=text)
    assert (run.code, run.stdout) == (1, "")
    assert "<stdin>#2: the workload 'w' names GVC 'elsewhere', not '" + unique + "' given by --gvc" in run.stderr
    assert api.get(f"/org/{ORG}/gvc/{unique}").status_code == 404


def test_prune_deletes_tagged_items_the_files_lost_after_asking(
    cli: PlinthCli, api: httpx.Client, unique: str, tmp_path: Path
) -> None:
    full = SMALL.replace("type: nonsense", "type: opaque\ntags: {{stack: {u}}}").format(u=unique)
    for name in ("keep", "old"):  # prune looks at the kinds the files still apply
        full += f"---\nkind: workload\nname: {name}\ngvc: {unique}\ntags: {{stack: {unique}}}\n"
        full += "spec: {containers: [{name: app, image: 'nginx:1', ports: [{number: 80}]}]}\n"
    ok(cli("apply", "-f", "-", "--org", ORG, stdin=full))
    other = {"name": f"{unique}-other", "type": "opaque", "tags": {"stack": "other"}, "data": {"payload": "x"}}
    assert api.put(f"/org/{ORG}/secret", json=other).status_code == 201
    less = "---\n".join(doc for doc in full.split("---\n") if f"{unique}-bad" not in doc and "name: old\n" not in doc)
    selector = ["--prune", "--selector", f"stack={unique}"]

    listed = ok(cli("apply", "-f", "-", "--org", ORG, *selector, "--dry-run", stdin=less))
    assert sorted(listed.stdout.splitlines()[-2:]) == [
        f"gvc/{unique}/workload/old would be pruned (dry run)",
        f"secret/{unique}-bad would be pruned (dry run)",
    ]
    refused = cli("apply", "-f", "-", "--org", ORG, *selector, stdin=less)  # no terminal to ask on
    assert refused.code == 1 and "Not pruned: confirm with --yes" in refused.stderr
    assert api.get(f"/org/{ORG}/secret/{unique}-bad").status_code == 200

    pruned = ok(cli("apply", "-f", "-", "--org", ORG, *selector, "--yes", stdin=less))
    assert outcomes(pruned)[f"gvc/{unique}/workload/old"] == "pruned"
    assert outcomes(pruned)[f"secret/{unique}-bad"] == "pruned"
    assert api.get(f"/org/{ORG}/secret/{unique}-bad").status_code == 404
    assert api.get(f"/org/{ORG}/gvc/{unique}/workload/old").status_code == 404
    assert api.get(f"/org/{ORG}/secret/{unique}-ok").status_code == 200  # in the files
    assert api.get(f"/org/{ORG}/secret/{unique}-other").status_code == 200  # another tag value
    usage = cli("apply", "-f", "-", "--org", ORG, "--prune", stdin=less)
    assert usage.code == 2 and "--prune and --selector go together" in usage.stderr


def test_get_takes_kinds_aliases_names_and_every_output_option(cli: PlinthCli, api: httpx.Client, unique: str) -> None:
    ok(cli("apply", "-f", "-", "--org", ORG, stdin=SMALL.replace("type: nonsense", "type: opaque").format(u=unique)))
    volume = "kind: vs\nname: vol\nspec: {initialCapacity: 10}\n"
    ok(cli("apply", "-f", "-", "--org", ORG, "--gvc", unique, stdin=volume))
    one = json.loads(ok(cli("get", "volumesets", "vol", "--org", ORG, "--gvc", unique, "-o", "json")).stdout)
    assert (one["kind"], one["name"]) == ("volumeset", "vol")
    org_wide = ok(cli("get", "vs", "--org", ORG, "-o", "names", "--max", "0")).stdout.splitlines()
    assert "vol" in org_wide  # no GVC: the org's volume sets of every GVC
    several = json.loads(ok(cli("get", "secrets", f"{unique}-ok", f"{unique}-bad", "--org", ORG, "-o", "json")).stdout)
    assert (several["kind"], [i["name"] for i in several["items"]]) == ("list", [f"{unique}-ok", f"{unique}-bad"])
    slim = ok(cli("get", "secret", f"{unique}-ok", "--org", ORG, "-o", "yaml-slim")).stdout
    assert "id:" not in slim and f"name: {unique}-ok" in slim
    table = ok(cli("get", "gvc", unique, "--org", ORG, "--ts", "iso")).stdout
    assert table.splitlines()[1].startswith("|NAME")
    from_env = ok(cli("get", "sa", "-o", "names", "--max", "0", env={"PLINTH_ORG": ORG})).stdout.splitlines()
    assert "admin" in from_env  # the org from $PLINTH_ORG
    assert cli("get", "workload", "w", "--org", ORG).stderr.startswith("A workload lives in a GVC")
    bad = cli("get", "nonsense", "--org", ORG)
    assert bad.code == 2 and "'nonsense' is not a kind" in bad.stderr
    missing = cli("get", "gvc", "nope", "--org", ORG, "-o", "json")
    assert missing.code == 1 and json.loads(missing.stderr)[0]["status"] == 404
