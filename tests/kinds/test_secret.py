"""The ``secret`` kind through the engine's real pipeline: every type's shape and checks (types-ts secret.ts)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from plinth.kinds import REGISTRY
from plinth.kinds.permissions import implied_closure
from plinth.kinds.secret import SECRET
from tests.kinds._identity_support import paths, stored, write
from tests.support.secret_values import TYPES, ed25519_pair, tls_pair, valid_data

#: A value no message may repeat.
CANARY = "CANARY-7f3a9b"


def secret(kind: str, data: Any, name: str = "s1") -> tuple[dict[str, Any], list[Any]]:
    return write(SECRET, {"name": name, "type": kind, "data": data}, name)


def errors_of(kind: str, data: Any) -> dict[str, str]:
    _, errors = secret(kind, data)
    return {e.path: e.message for e in errors}


def test_declaration() -> None:
    assert REGISTRY["secret"] is SECRET
    assert (SECRET.scope, SECRET.schema.sealed, SECRET.schema.immutable) == ("org", ("data",), ("type",))
    assert SECRET.presentation.terraform_resource == "cpln_secret"
    assert SECRET.presentation.text_columns == ("NAME", "DESCRIPTION", "TYPE", "CREATED", "TAGS")
    assert "type" in SECRET.presentation.query_properties
    assert [(a.operation_id, a.method, a.path, a.on_item) for a in SECRET.actions] == [
        ("revealSecret", "GET", "-reveal", True),
        ("listSecretsForType", "GET", "-for/type/{type}", False),
    ]
    assert SECRET.schema.top_level_model is not None
    assert set(SECRET.schema.sealed) <= set(SECRET.schema.top_level_model.model_fields)


def test_permissions_reveal_comes_with_edit_and_manage_and_gives_view() -> None:
    assert set(SECRET.access.permissions) == {"create", "delete", "edit", "manage", "reveal", "use", "view"}
    assert implied_closure("secret", ["edit"]) == {"edit", "reveal", "view"}
    assert implied_closure("secret", ["reveal"]) == {"reveal", "view"}
    assert implied_closure("secret", ["use"]) == {"use", "view"}
    assert implied_closure("secret", ["view"]) == {"view"}
    assert "reveal" in implied_closure("secret", ["manage"])


@pytest.mark.parametrize("kind", TYPES)
def test_every_type_takes_its_shape(kind: str) -> None:
    item = stored(SECRET, {"name": "s1", "type": kind, "data": valid_data(kind)}, "s1")
    assert item["type"] == kind
    if kind in ("docker", "gcp", "azure-sdk"):
        assert item["data"] == valid_data(kind), "JSON string types stay strings"


def test_opaque_and_userpass_default_to_plain() -> None:
    assert stored(SECRET, {"name": "sx", "type": "opaque", "data": {"payload": "x"}}, "sx")["data"] == {
        "payload": "x",
        "encoding": "plain",
    }
    item = stored(SECRET, {"name": "sx", "type": "userpass", "data": {"username": "u", "password": "p"}}, "sx")
    assert item["data"]["encoding"] == "plain"
    kept = stored(SECRET, {"name": "sx", "type": "opaque", "data": {"payload": "eA==", "encoding": "base64"}}, "sx")
    assert kept["data"]["encoding"] == "base64"


def test_optional_fields_sent_as_null_are_left_out() -> None:
    data = {"accessKey": "AKIA1", "secretKey": "k", "roleArn": None, "externalId": None}
    assert stored(SECRET, {"name": "sx", "type": "aws", "data": data}, "sx")["data"] == {
        "accessKey": "AKIA1",
        "secretKey": "k",
    }


INVALID: list[tuple[str, Any, dict[str, str]]] = [
    ("opaque", {"encoding": "plain"}, {"data.payload": "is required"}),
    ("opaque", {"payload": ""}, {"data.payload": "must not be empty"}),
    ("opaque", {"payload": CANARY, "encoding": "base64"}, {"data.payload": "must be base64 (its encoding is base64)"}),
    ("opaque", {"payload": "x", "encoding": "hex"}, {"data.encoding": "must be 'plain' or 'base64'"}),
    ("opaque", CANARY, {"data": "must be an object for the type opaque"}),
    ("opaque", {"payload": "x", "surprise": CANARY}, {"data.surprise": "unknown field"}),
    ("userpass", {"username": "", "password": 5}, {
        "data.username": "must not be empty",
        "data.password": "must be a string",
    }),
    ("tls", {"cert": CANARY}, {"data.cert": "is not a PEM certificate"}),
    ("tls", {"key": "x"}, {"data.cert": "is required", "data.key": "is not a PEM private key"}),
    ("aws", {"accessKey": CANARY, "secretKey": "k", "roleArn": "role"}, {
        "data.accessKey": "must be an AWS access key id (starting with 'AKIA')",
        "data.roleArn": "must be an ARN (starting with 'arn:')",
    }),
    ("ecr", {"accessKey": "AKIA1", "secretKey": "k", "repos": []}, {"data.repos": "must list 1 to 20 repositories"}),
    ("ecr", {"accessKey": "AKIA1", "secretKey": "k", "repos": ["123456789012.dkr.ecr.eu-west-1.amazonaws.com", "x"]}, {
        "data.repos[1]": "must be ACCOUNT.dkr.ecr.REGION.amazonaws.com[/REPO] (a 12-digit account)",
    }),
    ("ecr", {"accessKey": "AKIA1", "secretKey": "k", "repos": ["123456789012.dkr.ecr.r.amazonaws.com"] * 2}, {
        "data.repos[1]": "is listed twice",
    }),
    ("azure-connector", {"url": "http://" + CANARY, "code": ""}, {
        "data.url": "must be an https URL",
        "data.code": "must not be empty",
    }),
    ("nats-account", {"accountId": CANARY, "privateKey": "SA"}, {
        "data.accountId": "must be a NATS account id (^A[A-Z0-9]{55}$)",
        "data.privateKey": "must be a NATS account seed (^SA[A-Z0-9]{56}$)",
    }),
    ("dictionary", {"ok": "1", "bad key": CANARY, "n": 3}, {
        'data["bad key"]': "keys may hold only letters, digits, '-', '.' and '_'",
        "data.n": "must be a string",
    }),
    ("dictionary", ["a"], {"data": "must be an object of string values for the type dictionary"}),
    ("docker", {"auths": {}}, {"data": "must be a string holding a Docker config (its auths) as JSON (not an object)"}),
    ("docker", CANARY, {"data": "must hold a Docker config (its auths) as JSON: the string does not parse"}),
    ("docker", json.dumps({"auths": {}}), {
        "data": "the Docker config's 'auths' must be an object with at least one registry"
    }),
    ("docker", json.dumps({"auths": {"r.example.com": {"username": CANARY}}}), {
        "data": "each registry in 'auths' needs 'auth', or 'username' and 'password'"
    }),
    ("gcp", json.dumps({"type": "service_account"}), {"data": "the service account key needs 'project_id', "
     "'private_key_id', 'private_key', 'client_email', 'client_id', 'auth_uri', 'token_uri', "
     "'auth_provider_x509_cert_url', 'client_x509_cert_url'"}),
    ("azure-sdk", json.dumps({"subscriptionId": CANARY, "tenantId": "t", "clientId": "c"}), {
        "data": "the credentials' 'subscriptionId' must be a UUID",
    }),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "data", "expected"), INVALID, ids=[f"{c[0]}-{i}" for i, c in enumerate(INVALID)])
def test_every_problem_at_its_path_and_never_the_value(kind: str, data: Any, expected: dict[str, str]) -> None:
    _, errors = secret(kind, data)
    found = [(e.path, e.message) for e in errors]
    for path, message in expected.items():
        assert (path, message) in found, found
    assert all(CANARY not in path + message for path, message in found)


def test_all_of_azure_sdks_problems_at_once() -> None:
    found = secret("azure-sdk", json.dumps({"subscriptionId": "x", "tenantId": "y", "clientId": "z"}))[1]
    assert [e.message for e in found] == [
        "the credentials' 'subscriptionId' must be a UUID",
        "the credentials' 'tenantId' must be a UUID",
        "the credentials' 'clientId' must be a UUID",
        "the credentials need a 'clientSecret'",
    ]


def test_data_is_required_and_the_type_must_be_known() -> None:
    assert paths(write(SECRET, {"name": "sx", "type": "opaque"}, "sx")[1]) == ["data"]
    assert paths(write(SECRET, {"name": "sx", "data": {}}, "sx")[1]) == ["type"]
    _, errors = write(SECRET, {"name": "sx", "type": "vault", "data": {}}, "sx")
    assert paths(errors) == ["type"] and "'opaque'" in errors[0].message


def test_a_tls_key_must_match_its_certificate_and_not_be_encrypted() -> None:
    cert, _ = tls_pair("a.example.com")
    _, other_key = tls_pair("b.example.com")
    assert errors_of("tls", {"cert": cert, "key": other_key}) == {
        "data.key": "does not match the certificate (the first one in cert)"
    }
    encrypted, _ = ed25519_pair("pass phrase")
    assert errors_of("tls", {"cert": cert, "key": encrypted}) == {
        "data.key": "is an encrypted private key: a TLS key must not be encrypted"
    }
    assert errors_of("tls", {"cert": cert}) == {}, "the key is optional"


def test_a_keypair_opens_with_its_passphrase_and_matches_its_public_key() -> None:
    encrypted, public = ed25519_pair("pass phrase")
    assert errors_of("keypair", {"secretKey": encrypted, "publicKey": public, "passphrase": "pass phrase"}) == {}
    assert errors_of("keypair", {"secretKey": encrypted}) == {
        "data.secretKey": "is an encrypted private key: its passphrase is needed"
    }
    assert errors_of("keypair", {"secretKey": encrypted, "passphrase": "wrong"}) == {
        "data.secretKey": "does not open with the passphrase given (or is not a PEM private key)"
    }
    _, other_public = ed25519_pair()
    _, plain = tls_pair()
    assert errors_of("keypair", {"secretKey": plain, "publicKey": other_public}) == {
        "data.publicKey": "does not match secretKey"
    }
    assert errors_of("keypair", {"secretKey": plain, "publicKey": "ssh-ed25519 nope"}) == {
        "data.publicKey": "is not a PEM or OpenSSH public key"
    }


def test_the_type_cannot_change_and_a_replace_without_data_keeps_it() -> None:
    old = stored(SECRET, {"name": "sx", "type": "opaque", "data": {"payload": "v1"}}, "sx")
    _, errors = write(SECRET, {"name": "sx", "type": "userpass", "data": {"username": "u", "password": "p"}}, "sx", old)
    assert {e.path: e.message for e in errors} == {"type": "cannot be changed after creation"}
    kept, errors = write(SECRET, {"name": "sx", "type": "opaque", "description": "new"}, "sx", old)
    assert errors == [] and kept["data"] == {"payload": "v1", "encoding": "plain"}
    assert kept["data"] is not old["data"]


def test_the_example_is_valid_and_its_invalid_bodies_fail_where_it_says() -> None:
    example = SECRET.example
    assert example is not None
    body = {k: v.replace("{n}", "1") if isinstance(v, str) else v for k, v in example.valid.items()}
    stored(SECRET, body, body["name"])
    for invalid, path in example.invalid:
        filled = {k: v.replace("{n}", "1") if isinstance(v, str) else v for k, v in invalid.items()}
        assert path in paths(write(SECRET, filled, filled["name"])[1])


def test_the_keys_a_workload_may_name_are_fields_of_each_type() -> None:
    from typing import get_args

    from plinth.kinds.secret.models import SecretType
    from plinth.kinds.workload.secret_refs import SECRET_KEYS

    assert set(SECRET_KEYS) == set(get_args(SecretType))
    for kind, keys in SECRET_KEYS.items():
        if keys is None:
            continue
        _, errors = secret(kind, dict.fromkeys(keys, "x"))
        assert [e.path for e in errors if e.message == "unknown field"] == [], kind
