"""``cpln rest``: every verb and output format against a real Plinth, checked against the stored
state (through Plinth's HTTP API) and, where ``plinth rest`` is given the same request, byte for
byte against Plinth's own CLI."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import jsonschema
import pytest
import yaml

from tests.compat.conftest import ORG, Cpln, Plinth, Run
from tests.convert.test_crd import schema_for
from tests.convert.test_terraform import resources
from tests.support.server import ServerProcess

COMPARED_FORMATS = ("json", "yaml", "json-slim", "yaml-slim", "names", "text")


def domain_body(name: str, description: str = "compat", **extra: object) -> dict[str, object]:
    route = {"prefix": "/", "workloadLink": "//gvc/main/workload/web"}
    return {"name": name, "description": description, "spec": {"ports": [{"routes": [route]}]}, **extra}


def both(cpln: Cpln, plinth: Plinth, *args: str) -> tuple[Run, Run]:
    """The same request through both CLIs, at once (they only read)."""
    with ThreadPoolExecutor(2) as pool:
        ours = pool.submit(plinth, "rest", *args)
        theirs = pool.submit(cpln, "rest", *args)
        return theirs.result(), ours.result()


@pytest.fixture(scope="module")
def seeded(api: httpx.Client) -> dict[str, str]:
    """A GVC, two domains with tags of every allowed type, and a volume set, read by several tests."""
    api.post(f"/org/{ORG}/gvc", json={"name": "main", "spec": {"staticPlacement": {"locationLinks": []}}})
    gvc = {"staticPlacement": {"locationLinks": ["//location/aws-us-east-1", "//location/gcp-us-east1"]}}
    api.post(f"/org/{ORG}/gvc", json={"name": "seeded", "tags": {"tier": 1, "team": "core"}, "spec": gvc})
    long = "A description long enough to be cut to forty characters in the text table"
    tags = {"team": "web", "on": True, "n": 2.5, "none": None, "quoted": "yes"}
    for name, extra in (("a.example.com", {"tags": tags}), ("b.example.com", {"description": long})):
        r = api.post(f"/org/{ORG}/domain", json={**domain_body(name), **extra})
        assert r.status_code == 201, r.text
    r = api.post(f"/org/{ORG}/gvc/seeded/volumeset", json={"name": "data", "spec": {"initialCapacity": 20}})
    assert r.status_code == 201, r.text
    query = {"spec": {"terms": [{"property": "name", "op": "~", "value": "example"}]}}
    page = api.post(f"/org/{ORG}/domain/-query?limit=1", json=query).json()
    return {
        "item": f"/org/{ORG}/domain/a.example.com",
        "list": f"/org/{ORG}/domain",
        "query": next(link["href"] for link in page["links"] if link["rel"] == "next"),
        "gvcs": f"/org/{ORG}/gvc",
        "volumeset": f"/org/{ORG}/gvc/seeded/volumeset/data",
    }


@pytest.mark.parametrize("what", ["item", "list", "query", "gvcs", "volumeset"])
def test_get_prints_what_plinth_rest_prints_byte_for_byte(
    cpln: Cpln, plinth: Plinth, seeded: dict[str, str], api: httpx.Client, what: str
) -> None:
    path = seeded[what]
    formats = COMPARED_FORMATS if what in ("item", "list", "query") else ("text",)  # their own table columns
    for fmt in formats:
        theirs, ours = both(cpln, plinth, "get", path, "-o", fmt)
        assert (ours.stdout, ours.code) == (theirs.stdout, theirs.code), f"-o {fmt} differs for {path}"
        if what == "query" and fmt == "names":  # a query result is one object, and it has no name
            assert theirs.code == 1 and ours.stderr == theirs.stderr
        else:
            assert theirs.code == 0, theirs.stderr
    shown = json.loads(cpln("rest", "get", path, "-o", "json").stdout)
    stored = api.get(path).json()
    if what == "query":
        assert shown["kind"] == "queryresult" and [i["name"] for i in shown["items"]] == ["b.example.com"]
    else:
        assert shown == stored


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_create_from_json_yaml_and_stdin_follows_location(
    either: Cpln, api: httpx.Client, tmp_path: Path, unique: str
) -> None:
    names = [f"{unique}-{form}.example.com" for form in ("json", "yaml", "stdin")]
    as_json = write(tmp_path, "d.json", json.dumps(domain_body(names[0], tags={"form": "json"})))
    as_yaml = write(tmp_path, "d.yaml", "# a comment\n" + yaml.safe_dump(domain_body(names[1], tags={"form": "yaml"})))
    runs = [
        either("rest", "create", f"/org/{ORG}/domain", "-f", as_json, "-o", "json"),
        either("rest", "create", f"/org/{ORG}/domain", "--file", as_yaml, "-o", "json"),
        either(
            "rest", "create", f"/org/{ORG}/domain", "-f", "-", "-o", "json", stdin=yaml.safe_dump(domain_body(names[2]))
        ),
    ]
    for name, run in zip(names, runs, strict=True):
        assert run.code == 0, run.stderr
        stored = api.get(f"/org/{ORG}/domain/{name}").json()
        assert json.loads(run.stdout) == stored  # the GET of the Location, as stored
        assert stored["version"] == 1 and stored["spec"]["ports"][0]["routes"][0]["prefix"] == "/"
    assert api.get(f"/org/{ORG}/domain/{names[1]}").json()["tags"] == {"form": "yaml"}


def test_post_put_patch_delete_round_trip(either: Cpln, api: httpx.Client, tmp_path: Path, unique: str) -> None:
    item = f"/org/{ORG}/gvc/{unique}"
    posted = either("rest", "post", f"/org/{ORG}/gvc", "-f", "-", "-o", "json", stdin=json.dumps({"name": unique}))
    assert posted.code == 0, posted.stderr
    assert json.loads(posted.stdout)["name"] == unique and api.get(item).status_code == 200

    body = {"name": unique, "description": "put here", "spec": {"staticPlacement": {"locationLinks": []}}}
    put = either("rest", "put", item, "-f", write(tmp_path, "put.yaml", yaml.safe_dump(body)), "-o", "yaml-slim")
    assert put.code == 0, put.stderr
    assert yaml.safe_load(put.stdout)["description"] == "put here"
    assert api.get(item).json()["version"] == 2

    patch = {"tags": {"owner": "compat"}, "spec": {"staticPlacement": {"locationLinks": ["//location/aws-eu-west-1"]}}}
    patched = either("rest", "patch", item, "-f", "-", "-o", "json", stdin=json.dumps(patch))
    assert patched.code == 0, patched.stderr
    stored = api.get(item).json()
    assert json.loads(patched.stdout) == stored
    assert stored["tags"] == {"owner": "compat"} and stored["version"] == 3
    assert stored["spec"]["staticPlacement"]["locationLinks"] == [f"/org/{ORG}/location/aws-eu-west-1"]

    deleted = either("rest", "delete", item)
    assert (deleted.code, deleted.stdout, deleted.stderr) == (0, "\n", "")
    assert api.get(item).status_code == 404
    gone = either("rest", "get", item)
    assert gone.code == 1 and json.loads(gone.stderr)[0]["status"] == 404


def editor(tmp_path: Path, script: str, name: str = "editor") -> str:
    path = tmp_path / f"{name}.sh"
    path.write_text("#!/bin/sh\nset -e\n" + script)
    path.chmod(0o755)
    return str(path)


def test_edit_with_editor_script_patches_what_was_changed(
    either: Cpln, api: httpx.Client, tmp_path: Path, unique: str
) -> None:
    item = f"/org/{ORG}/domain/{unique}.example.com"
    assert api.post(f"/org/{ORG}/domain", json=domain_body(f"{unique}.example.com")).status_code == 201
    script = editor(tmp_path, "sed -i -e 's/^description: .*/description: edited by a script/' \"$1\"\n")
    run = either("rest", "edit", item, "-o", "json", env={"EDITOR": script})
    assert run.code == 0, run.stderr
    stored = api.get(item).json()
    assert json.loads(run.stdout) == stored
    assert (stored["description"], stored["version"]) == ("edited by a script", 2)

    unchanged = either("rest", "edit", item, env={"EDITOR": editor(tmp_path, "true\n", "noop")})
    assert unchanged.code == 0 and "not modified" in unchanged.stdout
    failed = either("rest", "edit", item, env={"EDITOR": editor(tmp_path, "exit 3\n", "failing")})
    assert failed.code == 1 and "Editor did not exit cleanly" in failed.stderr
    assert api.get(item).json()["version"] == 2

    typed = either("domain", "edit", f"{unique}.example.com", "-o", "json", env={"EDITOR": script})
    assert typed.code == 0 and "not changed" in typed.stdout  # same text again: nothing to PATCH


def test_header_option_reaches_the_server(cpln: Cpln, api: httpx.Client) -> None:
    missing = cpln("rest", "get", f"/org/{ORG}/gvc/not-there", "-H", "x-request-id: compat-header-1")
    assert missing.code == 1
    assert json.loads(missing.stderr)[0]["id"] == "compat-header-1"
    overridden = cpln("rest", "get", f"/org/{ORG}/gvc", "-H", "Authorization: Bearer not-a-key")
    assert overridden.code == 1 and json.loads(overridden.stderr)[0]["status"] == 401


@pytest.mark.parametrize("kind", ["gvc", "domain", "volumeset", "serviceaccount", "group", "policy"])
def test_tf_and_crd_come_from_the_exporters_discovery_names(
    cpln: Cpln, plinth: Plinth, server: ServerProcess, api: httpx.Client, seeded: dict[str, str], kind: str
) -> None:
    links = {
        "gvc": f"/org/{ORG}/gvc/seeded",
        "domain": seeded["item"],
        "volumeset": seeded["volumeset"],
        "serviceaccount": f"/org/{ORG}/serviceaccount/admin",
        "group": f"/org/{ORG}/group/superusers",
        "policy": f"/org/{ORG}/policy/viewers-gvc",
    }
    link = links[kind]
    endpoints = httpx.get(f"{server.url}/discovery").json()["endpoints"]
    tf = cpln("rest", "get", link, "-o", "tf")
    assert tf.code == 0, tf.stderr
    exported = api.get(endpoints["terraform-exporter"] + link)
    assert tf.stdout == exported.text + "\n"
    assert len(resources(tf.stdout)) == 1
    crd = cpln("rest", "get", link, "-o", "crd")
    assert crd.code == 0, crd.stderr
    obj = yaml.safe_load(crd.stdout)
    assert obj == api.get(endpoints["k8s-crd-exporter"] + link).json()
    jsonschema.validate(obj, schema_for(kind))
    assert plinth("rest", "get", link, "-o", "crd").stdout == crd.stdout  # the same translation, locally
    assert plinth("rest", "get", link, "-o", "tf").stdout == tf.stdout
    if kind in ("gvc", "policy"):  # a collection: one CRD object per item, and HCL for every item
        collection = link.rsplit("/", 1)[0]
        listed = cpln("rest", "get", collection, "-o", "crd")
        documents = [doc for doc in yaml.safe_load_all(listed.stdout) if doc]
        assert len(documents) == len(api.get(collection).json()["items"])
        tf_list = cpln("rest", "get", collection, "-o", "tf")
        assert len(resources(tf_list.stdout)) == len(documents)


def error_of(run: Run) -> dict[str, object]:
    assert run.code == 1 and run.stdout == "", (run.code, run.stdout, run.stderr)
    (printed,) = json.loads(run.stderr)
    return dict(printed)


def test_errors_reach_cpln_in_its_shape(cpln: Cpln, api: httpx.Client, tmp_path: Path, unique: str) -> None:
    """Each error is printed as the server sent it (``[{status, message, code, details, id}]``), exit 1."""
    missing = f"/org/{ORG}/domain/{unique}.example.com"
    expected = api.get(missing).json()
    printed = error_of(cpln("rest", "get", missing))
    assert {k: v for k, v in printed.items() if k != "id"} == {k: v for k, v in expected.items() if k != "id"}
    assert set(printed) == {"status", "message", "code", "details", "id"}
    as_yaml = cpln("rest", "get", missing, "-o", "yaml")
    assert as_yaml.code == 1 and yaml.safe_load(as_yaml.stderr)[0]["code"] == "not_found"

    invalid = error_of(cpln("rest", "create", f"/org/{ORG}/gvc", "-f", "-", stdin='{"name": "Bad_Name", "x": 1}'))
    assert (invalid["status"], invalid["code"]) == (400, "invalid")
    assert {e["path"] for e in invalid["details"]["errors"]} == {"name", "x"}  # type: ignore[index]

    api.post(f"/org/{ORG}/gvc", json={"name": unique})
    conflict = error_of(cpln("rest", "create", f"/org/{ORG}/gvc", "-f", "-", stdin=json.dumps({"name": unique})))
    assert (conflict["status"], conflict["code"]) == (409, "conflict")
    stale = error_of(cpln("rest", "patch", f"/org/{ORG}/gvc/{unique}", "-f", "-", stdin='{"version": 7}'))
    assert stale["status"] == 409

    unauthorized = error_of(cpln.raw("rest", "get", f"/org/{ORG}/gvc", "--endpoint", cpln.endpoint, "--token", "nope"))
    assert (unauthorized["status"], unauthorized["code"]) == (401, "unauthorized")

    no_body = cpln("rest", "patch", f"/org/{ORG}/gvc/{unique}")
    assert (no_body.code, no_body.stderr) == (1, "No input file provided\n\n")
