"""The order of ``plinth apply``/``delete -f`` from the links the documents hold, and how files are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from plinth.cli.errors import InputError
from plinth.cli.manifests import Document, Placement, read_documents
from plinth.cli.plan import link_targets, plan, reverse_plan

PLACE = Placement("acme", "prod", None)

#: One document per kind that apply can write, written in the reverse of a workable order.
STACK = """\
kind: policy
name: reveal
targetKind: secret
targetLinks: [//secret/db]
bindings: [{permissions: [reveal], principalLinks: [//gvc/prod/identity/runner, //group/ops]}]
---
kind: group
name: ops
memberLinks: [/org/acme/serviceaccount/robot]
---
kind: domain
name: shop.example.com
spec: {ports: [{routes: [{prefix: /, workloadLink: //gvc/prod/workload/web}]}]}
---
kind: workload
name: web
spec:
  identityLink: //gvc/prod/identity/runner
  containers:
    - name: app
      env: [{name: PASSWORD, value: cpln://secret/db.password}]
      volumes: [{uri: cpln://volumeset/files, path: /srv}]
---
kind: volumeset
name: files
spec: {initialCapacity: 10}
---
kind: identity
name: runner
aws: {cloudAccountLink: //cloudaccount/aws}
---
kind: cloudaccount
name: aws
provider: aws
---
kind: secret
name: db
type: opaque
description: "not a link: //gvc/prod"
---
kind: serviceaccount
name: robot
---
kind: gvc
name: prod
spec: {staticPlacement: {locationLinks: [//location/edge]}}
---
kind: location
name: edge
provider: byok
"""


def documents(tmp_path: Path, text: str = STACK, place: Placement = PLACE) -> list[Document]:
    path = tmp_path / "stack.yaml"
    path.write_text(text)
    return read_documents((str(path),), None, place)  # type: ignore[arg-type]


def position(labels: list[str], label: str) -> int:
    return labels.index(label)


def test_targets_come_before_what_links_to_them(tmp_path: Path) -> None:
    steps = plan(documents(tmp_path))
    labels = [step.document.label for step in steps]
    before = [
        ("location/edge", "gvc/prod"),
        ("gvc/prod", "gvc/prod/identity/runner"),
        ("cloudaccount/aws", "gvc/prod/identity/runner"),
        ("gvc/prod/identity/runner", "gvc/prod/workload/web"),
        ("secret/db", "gvc/prod/workload/web"),
        ("gvc/prod/volumeset/files", "gvc/prod/workload/web"),
        ("gvc/prod/workload/web", "domain/shop.example.com"),
        ("serviceaccount/robot", "group/ops"),
        ("group/ops", "policy/reveal"),
        ("secret/db", "policy/reveal"),
        ("gvc/prod/identity/runner", "policy/reveal"),
    ]
    for first, then in before:
        assert position(labels, first) < position(labels, then), (first, then, labels)
    # Independent documents share a level (they may be sent together), in file order.
    assert [(s.document.label, s.level) for s in steps if s.level == 0] == [
        ("cloudaccount/aws", 0),
        ("secret/db", 0),
        ("serviceaccount/robot", 0),
        ("location/edge", 0),
    ]
    web = next(step for step in steps if step.document.label == "gvc/prod/workload/web")
    assert sorted(steps[n].document.label for n in web.needs) == [
        "gvc/prod",
        "gvc/prod/identity/runner",
        "gvc/prod/volumeset/files",
        "secret/db",
    ]


def test_delete_runs_the_same_links_backwards(tmp_path: Path) -> None:
    labels = [step.document.label for step in reverse_plan(documents(tmp_path))]
    assert position(labels, "gvc/prod/workload/web") < position(labels, "gvc/prod/volumeset/files")
    assert position(labels, "domain/shop.example.com") < position(labels, "gvc/prod/workload/web")
    assert labels[-1] == "location/edge"  # the gvc links to it, and everything in the gvc to the gvc
    assert position(labels, "gvc/prod/identity/runner") < position(labels, "gvc/prod")


def test_text_fields_and_unknown_uris_are_not_links(tmp_path: Path) -> None:
    secret, workload = documents(
        tmp_path,
        "kind: secret\nname: db\ndescription: //gvc/prod\ntags: {x: //gvc/prod}\n---\n"
        "kind: workload\nname: w\nspec: {firewallConfig: {internal: {inboundAllowWorkload: [cpln://internal/keda]}}}\n",
    )
    assert link_targets(secret) == set()
    assert link_targets(workload) == {"/org/acme/gvc/prod"}  # only its GVC


def test_a_cycle_is_placed_last_in_file_order(tmp_path: Path) -> None:
    text = "kind: group\nname: a\nx: //group/b\n---\nkind: group\nname: b\nx: //group/a\n---\nkind: gvc\nname: c\n"
    assert [step.document.label for step in plan(documents(tmp_path, text))] == ["gvc/c", "group/a", "group/b"]


def test_files_directories_lists_aliases_and_gvc_placement(tmp_path: Path) -> None:
    folder = tmp_path / "stack"
    folder.mkdir()
    (folder / "b.yaml").write_text("kind: vs\nname: v\n---\n---\nkind: w\nname: w\ngvc: other\n")
    (folder / "a.json").write_text('{"kind": "list", "items": [{"kind": "gvc", "name": "g"}]}')
    (folder / "notes.txt").write_text("not read")
    read = read_documents((str(folder),), None, PLACE)  # type: ignore[arg-type]
    assert [(d.where.rsplit("/", 1)[1], d.label, d.body["kind"]) for d in read] == [
        ("a.json#1", "gvc/g", "gvc"),
        ("b.yaml#1", "gvc/prod/volumeset/v", "volumeset"),
        ("b.yaml#3", "gvc/other/workload/w", "workload"),
    ]


@pytest.mark.parametrize(
    ("text", "place", "message"),
    [
        ("kind: workload\nname: w\ngvc: other\n", Placement("acme", "prod", "prod"), "names GVC 'other', not 'prod'"),
        ("kind: workload\nname: w\n", Placement("acme", None, None), "names no GVC"),
        ("name: w\n", PLACE, 'stack.yaml#1: the document has no "kind"'),
        ("kind: gvc\n", PLACE, 'the gvc has no "name"'),
        ("kind: gvc\nname: g\n---\n- a list\n", PLACE, "stack.yaml#2: a document must be an object"),
        ("kind: gvc\nname: g\n---\nkind: gvc\nname: g\n", PLACE, "stack.yaml#2: gvc/g is also"),
    ],
)
def test_bad_documents_are_refused_before_anything_is_sent(
    tmp_path: Path, text: str, place: Placement, message: str
) -> None:
    with pytest.raises(InputError) as refused:
        documents(tmp_path, text, place)
    assert message in refused.value.message


def test_stacks_read_fast_as_rest_reads_one_body() -> None:
    """libyaml and the JSON parser give what ``plinth rest``'s loader gives, errors included."""
    from plinth.cli.body import load_document, load_documents

    yaml_text = "a: yes\nb: 1.50\nc: 2025-03-01\nd: 1\nd: 2\ne: 0x1f\nf: ~\n"
    one = load_document(yaml_text, "s")
    assert load_documents(yaml_text + "---\n---\n" + yaml_text, "s.yaml") == [one, None, one]
    json_text = '{"kind": "list", "items": [{"n": 1.0, "x": [1, 2.5], "d": 1, "d": 2}]}'
    assert load_documents(json_text, "s.json") == [load_document(json_text, "s.json")]
    assert load_documents("{a: 1}", "flow.yaml") == [{"a": 1}]  # looks like JSON, is YAML
    with pytest.raises(InputError) as broken:
        load_documents("kind: gvc\n---\nname: [unclosed\n", "bad.yaml")
    with pytest.raises(InputError) as one:
        load_document("name: [unclosed\n", "bad.yaml")
    assert broken.value.message.split(" in ")[0] == one.value.message.split(" in ")[0]
    assert '"bad.yaml" (4:1)' in broken.value.message
