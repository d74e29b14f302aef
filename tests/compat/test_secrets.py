"""The official CLI's secret commands, unchanged, against a real Plinth server, each checked
against the stored state afterwards through Plinth's HTTP API (``-reveal`` for the values,
since a plain GET never carries them)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.compat.conftest import ORG, Cpln
from tests.compat.test_rest import editor
from tests.compat.test_typed import as_json, ok
from tests.support.secret_values import DOCKER_CONFIG, tls_pair

SECRETS = f"/org/{ORG}/secret"


def stored(api: httpx.Client, name: str) -> dict[str, Any]:
    """What a plain GET serves, after checking it holds no values."""
    item = api.get(f"{SECRETS}/{name}").json()
    assert "data" not in item, item
    return item  # type: ignore[no-any-return]


def revealed(api: httpx.Client, name: str) -> Any:
    response = api.get(f"{SECRETS}/{name}/-reveal")
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_create_opaque_from_a_file_is_base64_by_default(
    cpln: Cpln, api: httpx.Client, tmp_path: Path, unique: str
) -> None:
    payload = b"\x00binary\xffpayload\n"
    source = tmp_path / "payload.bin"
    source.write_bytes(payload)
    made = as_json(cpln("secret", "create-opaque", "--name", unique, "--file", str(source), "-o", "json"))
    assert made == stored(api, unique) and made["type"] == "opaque"
    assert revealed(api, unique) == {"payload": base64.b64encode(payload).decode(), "encoding": "base64"}
    smart = ok(cpln("secret", "reveal", unique, "-o", "smart")).stdout
    assert "binary" in smart and "payload" in smart  # decoded by the CLI from the base64 payload
    plain = tmp_path / "plain.txt"
    plain.write_text("plain text value")
    ok(cpln("secret", "create-opaque", "--name", f"{unique}-p", "--file", str(plain), "--encoding", "plain"))
    assert revealed(api, f"{unique}-p") == {"payload": "plain text value", "encoding": "plain"}


def test_create_tls_with_a_chain(cpln: Cpln, api: httpx.Client, tmp_path: Path, unique: str) -> None:
    cert, key = tls_pair("compat.example.com")
    (tmp_path / "cert.pem").write_text(cert)
    (tmp_path / "key.pem").write_text(key)
    (tmp_path / "chain.pem").write_text(cert)
    args = ("--key", str(tmp_path / "key.pem"), "--cert", str(tmp_path / "cert.pem"))
    ok(cpln("secret", "create-tls", "--name", unique, *args, "--chain", str(tmp_path / "chain.pem")))
    assert stored(api, unique)["type"] == "tls"
    assert revealed(api, unique) == {"key": key, "cert": cert, "chain": cert}
    (tmp_path / "bad.pem").write_text("not a certificate at all")
    refused = cpln(
        "secret", "create-tls", "--name", f"{unique}-bad", "--key", args[1], "--cert", str(tmp_path / "bad.pem")
    )
    assert refused.code == 1
    error = json.loads(refused.stderr)[0]
    assert (
        error["status"] == 400
        and {"path": "data.cert", "message": "is not a PEM certificate"} in error["details"]["errors"]
    )
    assert api.get(f"{SECRETS}/{unique}-bad").status_code == 404


def test_create_dictionary_userpass_aws_and_docker(cpln: Cpln, api: httpx.Client, tmp_path: Path, unique: str) -> None:
    ok(cpln("secret", "create-dictionary", "--name", f"{unique}-d", "--entry", "USER=ada", "--entry", "URL=a=b"))
    assert revealed(api, f"{unique}-d") == {"USER": "ada", "URL": "a=b"}
    ok(cpln("secret", "create-userpass", "--name", f"{unique}-u", "--username", "ada", "--password", "pw 1"))
    assert revealed(api, f"{unique}-u") == {"username": "ada", "password": "pw 1", "encoding": "plain"}
    ok(cpln("secret", "create-aws", "--name", f"{unique}-a", "--access-key", "AKIAEXAMPLE", "--secret-key", "sk"))
    assert revealed(api, f"{unique}-a") == {"accessKey": "AKIAEXAMPLE", "secretKey": "sk"}
    refused = cpln("secret", "create-aws", "--name", f"{unique}-x", "--access-key", "nope", "--secret-key", "sk")
    assert refused.code == 1 and "data.accessKey" in refused.stderr and "nope" not in refused.stderr
    config = tmp_path / "config.json"
    config.write_text(DOCKER_CONFIG)
    ok(cpln("secret", "create-docker", "--name", f"{unique}-k", "--file", str(config)))
    assert revealed(api, f"{unique}-k") == DOCKER_CONFIG, "a docker secret's data stays a string"
    shown = json.loads(ok(cpln("secret", "reveal", f"{unique}-k", "-o", "json")).stdout)
    assert shown["data"] == DOCKER_CONFIG and shown["type"] == "docker"
    smart = yaml.safe_load(ok(cpln("secret", "reveal", f"{unique}-k", "-o", "smart")).stdout)
    assert smart == json.loads(DOCKER_CONFIG)
    table = ok(cpln("secret", "get", "-o", "text", "--ts", "iso")).stdout
    assert f"|{unique}-k " in table and "|docker " in table and "password" not in table


def test_reveal_get_and_query(cpln: Cpln, api: httpx.Client, unique: str) -> None:
    ok(cpln("secret", "create-userpass", "--name", unique, "--username", "ada", "--password", "hunter2"))
    got = as_json(cpln("secret", "get", unique, "-o", "json"))
    assert got == stored(api, unique)
    shown = as_json(cpln("secret", "reveal", unique, "-o", "json"))
    assert shown["data"]["password"] == "hunter2" and {k: v for k, v in shown.items() if k != "data"} == got
    smart = ok(cpln("secret", "reveal", unique, "-o", "smart")).stdout
    assert "SECRET_USERNAME=ada" in smart and "SECRET_PASSWORD=hunter2" in smart
    listed = ok(cpln("secret", "get", "-o", "json")).stdout
    assert unique in listed and "hunter2" not in listed
    queried = as_json(cpln("secret", "query", "--property", "type=userpass", "-o", "json"))
    assert unique in [item["name"] for item in queried["items"]]


def test_edit_reveals_edits_and_patches_back(cpln: Cpln, api: httpx.Client, tmp_path: Path, unique: str) -> None:
    ok(cpln("secret", "create-userpass", "--name", unique, "--username", "ada", "--password", "before"))
    script = editor(tmp_path, "sed -i -e 's/^  password: before$/  password: after-edit/' \"$1\"\n")
    run = cpln("secret", "edit", unique, "-o", "json", env={"EDITOR": script})
    assert run.code == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer == stored(api, unique) and answer["version"] == 2
    assert revealed(api, unique) == {"username": "ada", "password": "after-edit", "encoding": "plain"}
    unchanged = cpln("secret", "edit", unique, env={"EDITOR": editor(tmp_path, "true\n", "noop")})
    assert unchanged.code == 0 and "not modified" in unchanged.stdout
    assert stored(api, unique)["version"] == 2


def test_clone_copies_the_values(cpln: Cpln, api: httpx.Client, unique: str) -> None:
    ok(cpln("secret", "create-dictionary", "--name", unique, "--entry", "K=v", "--tag", "team=core"))
    made = as_json(cpln("secret", "clone", unique, "--name", f"{unique}-copy", "-o", "json"))
    assert made["name"] == f"{unique}-copy" and made["version"] == 1 and "data" not in made
    assert made["tags"] == {"team": "core"} and made["id"] != stored(api, unique)["id"]
    assert revealed(api, f"{unique}-copy") == {"K": "v"}
