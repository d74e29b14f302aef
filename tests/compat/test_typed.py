"""The official CLI's typed commands for the kinds Plinth serves, as their users run them, each
checked against the stored state afterwards (through Plinth's HTTP API)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
import yaml

from tests.compat.conftest import ORG, Cpln, Run

NOTICE = "Note: More records are available. Showing first 50 results (default). Use --max 0 to fetch all records.\n\n"


def ok(run: Run) -> Run:
    assert run.code == 0, (run.code, run.stdout, run.stderr)
    return run


def as_json(run: Run) -> dict:  # type: ignore[type-arg]
    return json.loads(ok(run).stdout)  # type: ignore[no-any-return]


def test_gvc_create_get_delete(either: Cpln, api: httpx.Client, unique: str) -> None:
    made = as_json(
        either("gvc", "create", "--name", unique, "--location", "aws-us-east-1", "--tag", "team=core", "-o", "json")
    )
    stored = api.get(f"/org/{ORG}/gvc/{unique}").json()
    assert made == stored
    assert stored["spec"]["staticPlacement"]["locationLinks"] == [f"/org/{ORG}/location/aws-us-east-1"]
    assert stored["tags"] == {"team": "core"} and stored["description"] == unique
    assert as_json(either("gvc", "get", unique, "-o", "json")) == stored
    listed = as_json(either("gvc", "get", "-o", "json"))
    assert listed["kind"] == "list" and unique in [item["name"] for item in listed["items"]]
    table = ok(either("gvc", "get", unique, "-o", "text", "--ts", "iso")).stdout
    assert f"|{unique} " in table and "aws-us-east-1" in table and 'team="core"' in table
    ok(either("gvc", "delete", unique))
    assert api.get(f"/org/{ORG}/gvc/{unique}").status_code == 404
    missing = either("gvc", "get", unique)
    assert missing.code == 1 and json.loads(missing.stderr)[0]["code"] == "not_found"


def test_domain_get(either: Cpln, api: httpx.Client, unique: str) -> None:
    name = f"{unique}.example.com"
    body = {"name": name, "spec": {"ports": [{"routes": [{"prefix": "/", "workloadLink": "//gvc/g/workload/w"}]}]}}
    assert api.post(f"/org/{ORG}/domain", json=body).status_code == 201
    stored = api.get(f"/org/{ORG}/domain/{name}").json()
    assert as_json(either("domain", "get", name, "-o", "json")) == stored
    names = ok(either("domain", "get", "-o", "names")).stdout.split()
    assert name in names
    slim = yaml.safe_load(ok(either("domain", "get", name, "-o", "yaml-slim")).stdout)
    assert set(slim) == {"kind", "name", "description", "tags", "spec"}


def test_volumeset_create_get_delete_in_a_gvc(either: Cpln, api: httpx.Client, unique: str) -> None:
    api.post(
        f"/org/{ORG}/gvc",
        json={"name": unique, "spec": {"staticPlacement": {"locationLinks": ["//location/aws-us-east-1"]}}},
    )
    made = as_json(
        either("volumeset", "create", "--name", "data", "--gvc", unique, "--initial-capacity", "20", "-o", "json")
    )
    link = f"/org/{ORG}/gvc/{unique}/volumeset/data"
    stored = api.get(link).json()
    assert made == stored
    assert stored["spec"]["initialCapacity"] == 20 and stored["gvc"] == unique
    assert stored["status"]["locations"][0]["name"] == "aws-us-east-1"
    assert as_json(either("volumeset", "get", "data", "--gvc", unique, "-o", "json")) == stored
    table = ok(either("volumeset", "get", "--gvc", unique, "-o", "text")).stdout
    assert f"|data |data        |{unique} |" in table  # the GVC column comes from the gvc link
    everywhere = ok(either("volumeset", "get", "--all-gvcs", "-o", "names")).stdout.split()
    assert "data" in everywhere
    ok(either("volumeset", "delete", "data", "--gvc", unique))
    assert api.get(link).status_code == 404


def test_serviceaccount_create_add_key_get_and_the_key_works(either: Cpln, api: httpx.Client, unique: str) -> None:
    made = as_json(either("serviceaccount", "create", "--name", unique, "--description", "a robot", "-o", "json"))
    assert made == api.get(f"/org/{ORG}/serviceaccount/{unique}").json() and made["keys"] == []
    key = as_json(either("serviceaccount", "add-key", unique, "--description", "for ci", "-o", "json"))
    assert set(key) == {"name", "created", "key", "description"} and key["key"].startswith(key["name"] + ".")
    stored = api.get(f"/org/{ORG}/serviceaccount/{unique}").json()
    assert [(k["name"], k["description"]) for k in stored["keys"]] == [(key["name"], "for ci")]
    assert as_json(either("serviceaccount", "get", unique, "-o", "json")) == stored
    table = ok(either("serviceaccount", "get", unique, "-o", "text")).stdout
    assert key["name"] in table and "default" in table

    # The new key is a token the official CLI can use: denied until a policy grants something.
    as_robot = ["--endpoint", either.endpoint, "--token", key["key"], "--org", ORG, "-o", "json"]
    denied = either.raw("serviceaccount", "get", unique, *as_robot)
    assert denied.code == 1 and json.loads(denied.stderr)[0]["status"] == 404
    assert as_json(either.raw("serviceaccount", "get", *as_robot))["items"] == []  # a list shows what one may view
    ok(either("group", "add-member", "viewers", "--serviceaccount", unique))
    assert as_json(either.raw("serviceaccount", "get", unique, *as_robot))["name"] == unique
    ok(either("group", "remove-member", "viewers", "--serviceaccount", unique))


def test_group_create_add_member_get(either: Cpln, api: httpx.Client, unique: str) -> None:
    api.post(f"/org/{ORG}/serviceaccount", json={"name": f"{unique}-sa"})
    made = as_json(either("group", "create", "--name", unique, "--tag", "kind=people", "-o", "json"))
    assert made["memberLinks"] == [] and made == api.get(f"/org/{ORG}/group/{unique}").json()
    added = either(
        "group", "add-member", unique, "--serviceaccount", f"{unique}-sa", "--email", "nobody@example.com", "-o", "json"
    )
    assert "User with email <nobody@example.com> not found" in ok(added).stderr  # looked up, then left out
    stored = api.get(f"/org/{ORG}/group/{unique}").json()
    assert stored["memberLinks"] == [f"/org/{ORG}/serviceaccount/{unique}-sa"] and stored["version"] == 2
    assert json.loads(added.stdout) == stored
    assert as_json(either("group", "get", unique, "-o", "json")) == stored
    table = ok(either("group", "get", unique, "-o", "text")).stdout
    assert "links" in table and "default" in table


def test_policy_create_add_binding_get(either: Cpln, api: httpx.Client, unique: str) -> None:
    api.post(f"/org/{ORG}/serviceaccount", json={"name": f"{unique}-sa"})
    api.post(f"/org/{ORG}/group", json={"name": f"{unique}-g"})
    made = as_json(either("policy", "create", "--name", unique, "--target-kind", "domain", "--all", "-o", "json"))
    assert (made["target"], made["targetLinks"]) == ("all", [])
    links = as_json(
        either("policy", "create", "--name", f"{unique}-l", "--target-kind", "gvc", "--resource", "main", "-o", "json")
    )
    assert links["targetLinks"] == [f"/org/{ORG}/gvc/main"]
    bound = either(
        "policy", "add-binding", unique, "--permission", "view", "--permission", "edit",
        "--serviceaccount", f"{unique}-sa", "--group", f"{unique}-g", "-o", "json",
    )  # fmt: skip
    ok(bound)
    again = as_json(
        either("policy", "add-binding", unique, "--permission", "manage", "--group", f"{unique}-g", "-o", "json")
    )
    stored = api.get(f"/org/{ORG}/policy/{unique}").json()
    assert again == stored and stored["version"] == 3
    assert stored["bindings"] == [
        {
            "permissions": ["view", "edit"],
            "principalLinks": [f"/org/{ORG}/serviceaccount/{unique}-sa", f"/org/{ORG}/group/{unique}-g"],
        },
        {"permissions": ["manage"], "principalLinks": [f"/org/{ORG}/group/{unique}-g"]},
    ]
    assert as_json(either("policy", "get", unique, "-o", "json")) == stored
    table = ok(either("policy", "get", unique, "-o", "text")).stdout
    assert "|domain " in table and "|all " in table


APPLY = """\
kind: policy
name: {u}
targetKind: domain
target: all
bindings:
  - permissions: [view]
    principalLinks: [//group/{u}, //serviceaccount/{u}]
---
kind: group
name: {u}
memberLinks: [//serviceaccount/{u}]
---
kind: serviceaccount
name: {u}
description: applied
---
kind: volumeset
name: data
gvc: {u}
spec:
  initialCapacity: 10
  fileSystemType: ext4
---
kind: gvc
name: {u}
spec:
  staticPlacement:
    locationLinks: [//location/aws-us-east-1]
---
kind: domain
name: {u}.example.com
spec:
  ports:
    - routes:
        - prefix: /
          workloadLink: //gvc/{u}/workload/web
"""


def test_apply_creates_then_updates_and_delete_from_file_waits_for_404(
    either: Cpln, api: httpx.Client, tmp_path: Path, unique: str
) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(APPLY.format(u=unique))
    links = [
        f"/org/{ORG}/gvc/{unique}",
        f"/org/{ORG}/gvc/{unique}/volumeset/data",
        f"/org/{ORG}/policy/{unique}",
        f"/org/{ORG}/group/{unique}",
        f"/org/{ORG}/serviceaccount/{unique}",
        f"/org/{ORG}/domain/{unique}.example.com",
    ]
    first = ok(either("apply", "--file", str(manifest)))
    assert first.stdout.splitlines() == [
        f"Created {link}" for link in links
    ]  # the CLI's order: gvc, volumeset, policy, ...
    assert [api.get(link).json()["version"] for link in links] == [1] * 6
    manifest.write_text(APPLY.format(u=unique).replace("description: applied", "description: applied twice"))
    second = ok(either("apply", "-f", str(manifest)))
    assert f"Updated serviceaccount '{unique}'" in second.stdout and "Created" not in second.stdout
    assert api.get(links[4]).json()["description"] == "applied twice"
    assert api.get(links[1]).json()["version"] == 1  # unchanged items are not rewritten

    gone = ok(either("delete", "--file", str(manifest)))
    assert "Deleted volumeset 'data'" in gone.stdout and f"Deleted gvc '{unique}'" in gone.stdout
    assert [api.get(link).status_code for link in links] == [404] * 6


def test_apply_from_stdin_and_a_list_from_get(either: Cpln, api: httpx.Client, unique: str) -> None:
    body = {"kind": "gvc", "name": unique, "description": "from stdin"}
    ok(either("apply", "-f", "-", stdin=json.dumps(body)))
    assert api.get(f"/org/{ORG}/gvc/{unique}").json()["description"] == "from stdin"
    exported = ok(either("gvc", "get", unique, "-o", "yaml")).stdout  # with id, version, status, links
    ok(either("apply", "-f", "-", stdin=exported.replace("from stdin", "round trip")))
    assert api.get(f"/org/{ORG}/gvc/{unique}").json()["description"] == "round trip"


def test_get_over_50_items_prints_the_paging_notice(cpln: Cpln, api: httpx.Client, unique: str) -> None:
    for i in range(55):
        api.post(f"/org/{ORG}/serviceaccount", json={"name": f"{unique}-{i:02d}"}).raise_for_status()
    total = len(api.get(f"/org/{ORG}/serviceaccount?limit=1000").json()["items"])
    shown = cpln("serviceaccount", "get", "-o", "names")
    assert len(ok(shown).stdout.split()) == 50 and shown.stderr == NOTICE
    everything = cpln("serviceaccount", "get", "-o", "names", "--max", "0")
    assert len(ok(everything).stdout.split()) == total and everything.stderr == ""
    queried = as_json(cpln("serviceaccount", "query", "--property", f"name~^{unique}-", "-o", "json", "--max", "60"))
    assert [item["name"] for item in queried["items"]] == [f"{unique}-{i:02d}" for i in range(55)]
    every = cpln("serviceaccount", "query", "-o", "json")  # no options: the CLI POSTs no body
    assert len(as_json(every)["items"]) == 50 and every.stderr == NOTICE


@pytest.mark.parametrize("output", ["json", "yaml", "text"])
def test_typed_errors_print_and_exit_1(cpln: Cpln, output: str) -> None:
    missing = cpln("domain", "get", "nope.example.com", "-o", output)
    assert missing.code == 1 and missing.stdout == ""
    assert "Domain 'nope.example.com' not found" in missing.stderr
    refused = cpln("gvc", "create", "--name", "Bad", "--location", "aws-us-east-1", "-o", output)
    assert refused.code == 1 and '"invalid"' in refused.stderr.replace("code: invalid", '"invalid"')


def test_gvc_delete_force_deletes_volume_sets_and_waits_for_their_404(
    cpln: Cpln, api: httpx.Client, unique: str
) -> None:
    ok(cpln("gvc", "create", "--name", unique, "--location", "aws-us-east-1"))
    for name in ("one", "two"):
        ok(cpln("volumeset", "create", "--name", name, "--gvc", unique))
    run = ok(cpln("gvc", "delete", unique, "--force", "-d"))  # -d prints every request and answer
    exchanges = [line for line in run.stderr.splitlines() if re.match(r"> (GET|DELETE) |< \d{3} ", line)]
    for name in ("one", "two"):  # the wait polls each deleted set (both at once) until a 404
        link = f"/org/{ORG}/gvc/{unique}/volumeset/{name}"
        assert f"Deleted volumeset '{name}'" in run.stdout
        assert exchanges.count(f"> GET {link}") == 1  # the first GET answers 404 and ends the wait
        assert api.get(link).status_code == 404
    assert exchanges.count("< 404 Not Found") == 2
    assert exchanges[-2:] == [f"> DELETE /org/{ORG}/gvc/{unique}", "< 202 Accepted"]
    assert api.get(f"/org/{ORG}/gvc/{unique}").status_code == 404
