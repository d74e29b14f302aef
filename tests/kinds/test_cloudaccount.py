"""The cloudaccount kind (docs.controlplane.com/reference/cloudaccount) through build_candidate: ``data`` per
provider at its paths, the secret link, the status that never claims the account is usable."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from _identity_support import CTX, ORG, SERVER_ENVELOPE, paths, stored, write

from plinth.errors import NotFound
from plinth.kinds import PERMISSIONS, REGISTRY
from plinth.kinds.base import CRUD_VERBS
from plinth.kinds.cloudaccount import CLOUDACCOUNT
from plinth.kinds.cloudaccount.instructions import instructions
from plinth.kinds.cloudaccount.rules import (
    NOT_CHECKED,
    cloudaccount_references,
    cloudaccount_status,
    validate_secret_type,
)
from plinth.kinds.permissions import implied_closure

ARN = "arn:aws:iam::123456789012:role/cpln-acme"


def test_declaration() -> None:
    assert REGISTRY["cloudaccount"] is CLOUDACCOUNT
    assert (CLOUDACCOUNT.scope, CLOUDACCOUNT.schema.spec_model, CLOUDACCOUNT.access.verbs) == ("org", None, CRUD_VERBS)
    assert CLOUDACCOUNT.schema.immutable == ("provider",)
    assert CLOUDACCOUNT.access.permissions is PERMISSIONS["cloudaccount"].permissions
    assert (CLOUDACCOUNT.presentation.terraform_resource, CLOUDACCOUNT.presentation.text_columns) == (
        "cpln_cloud_account",
        ("NAME", "DESCRIPTION", "PROVIDER", "INFO", "CREATED", "TAGS"),
    )
    assert "provider" in CLOUDACCOUNT.presentation.query_properties
    assert [a.operation_id for a in CLOUDACCOUNT.actions] == ["getCloudaccountInstructions"]


def test_permissions_of_kinds_md_5_2() -> None:
    assert set(CLOUDACCOUNT.access.permissions) == {"browse", "create", "delete", "edit", "manage", "view"}
    assert implied_closure("cloudaccount", ["edit"]) == {"edit", "browse", "view"}
    assert implied_closure("cloudaccount", ["browse"]) == {"browse", "view"}
    assert implied_closure("cloudaccount", ["manage"]) == set(CLOUDACCOUNT.access.permissions)


def test_what_cpln_cloudaccount_create_aws_sends() -> None:
    body = {"name": "prod", "provider": "aws", "tags": {}, "data": {"roleArn": ARN}}
    assert stored(CLOUDACCOUNT, body, "prod") == {
        "kind": "cloudaccount",
        "name": "prod",
        "description": "prod",
        "tags": {},
        "provider": "aws",
        "data": {"roleArn": ARN},
    }


def test_what_create_gcp_sends_keeps_the_numeric_id() -> None:
    data = {"projectId": "my-project-1", "numericProjectId": "123456"}
    assert stored(CLOUDACCOUNT, {"provider": "gcp", "data": data}, "gc")["data"] == data
    assert stored(CLOUDACCOUNT, {"provider": "gcp", "data": {"projectId": "my-project-1"}}, "gc")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"provider": "aws", "data": {"roleArn": "arn:aws:iam::12:user/x"}}, ["data.roleArn"]),
        ({"provider": "aws", "data": {"roleArn": "arn:aws-cn:iam::12:role/x"}}, []),
        ({"provider": "aws", "data": {}}, ["data.roleArn"]),
        ({"provider": "aws"}, ["data"]),
        ({"provider": "aws", "data": {"roleArn": ARN, "projectId": "p"}}, ["data.projectId"]),
        ({"provider": "gcp", "data": {"projectId": "short"}}, ["data.projectId"]),
        ({"provider": "gcp", "data": {"projectId": "1project"}}, ["data.projectId"]),
        (
            {"provider": "gcp", "data": {"projectId": "good-project", "numericProjectId": "x1"}},
            ["data.numericProjectId"],
        ),
        ({"provider": "azure", "data": {"secretLink": "//secret/az"}}, []),
        ({"provider": "azure", "data": {"secretLink": "//gvc/g/secret/az"}}, ["data.secretLink"]),
        ({"provider": "oracle", "data": {}}, ["provider"]),
        ({"data": {"roleArn": ARN}}, ["provider"]),
        ({"provider": "aws", "data": {"roleArn": ARN}, "spec": {"x": 1}}, ["spec"]),
    ],
)
def test_data_per_provider(body: dict[str, Any], expected: list[str]) -> None:
    assert paths(write(CLOUDACCOUNT, body, "acct")[1]) == expected


def test_the_provider_cannot_change() -> None:
    old = stored(CLOUDACCOUNT, {"provider": "aws", "data": {"roleArn": ARN}}, "ac")
    _, errors = write(CLOUDACCOUNT, {"provider": "gcp", "data": {"projectId": "my-project"}}, "ac", old=old)
    assert paths(errors) == ["provider"]


def test_the_secret_link_is_a_reference_that_must_exist() -> None:
    item = stored(CLOUDACCOUNT, {"provider": "ngs", "data": {"secretLink": "//secret/nats"}}, "nn")
    [ref] = cloudaccount_references(item, ORG)
    assert (ref.path, ref.kinds, ref.must_exist) == ("data.secretLink", frozenset({"secret"}), True)
    # A link to another kind or org is the engine's reference check's to refuse (tests/api).
    assert [r.link for r in cloudaccount_references({"provider": "azure", "data": {"secretLink": "//gvc/x"}}, ORG)]
    aws = stored(CLOUDACCOUNT, {"provider": "aws", "data": {"roleArn": ARN}}, "ac")
    assert cloudaccount_references(aws, ORG) == []


@pytest.mark.parametrize(
    ("provider", "secret_type", "ok"),
    [
        ("azure", "azure-connector", True),
        ("azure", "azure-sdk", True),
        ("azure", "opaque", False),
        ("ngs", "nats-account", True),
        ("ngs", "azure-sdk", False),
    ],
)
def test_the_secret_is_of_a_type_the_provider_reads(provider: str, secret_type: str, ok: bool) -> None:
    item = {"provider": provider, "data": {"secretLink": f"/org/{ORG}/secret/s"}}
    ctx = replace(CTX, resolved={f"/org/{ORG}/secret/s": {"type": secret_type}})
    assert paths(validate_secret_type(item, ctx)) == ([] if ok else ["data.secretLink"])


def test_status_never_claims_the_account_is_usable() -> None:
    item, errors = write(CLOUDACCOUNT, {**SERVER_ENVELOPE, "provider": "aws", "data": {"roleArn": ARN}}, "ac")
    assert errors == [] and "status" not in item
    assert cloudaccount_status(item, CTX) == {"usable": False, "lastChecked": CTX.now, "lastError": NOT_CHECKED}


@pytest.mark.parametrize("provider", ["aws", "gcp", "azure", "ngs"])
def test_instructions_name_the_org(provider: str) -> None:
    answer = instructions("acme", provider)
    assert set(answer) == {"message", "data"} and answer["data"]["cli"]
    assert all(isinstance(line, str) for line in answer["data"]["cli"])
    assert "acme" in answer["message"] + "".join(answer["data"]["cli"])


def test_instructions_for_an_unknown_provider_are_a_404() -> None:
    with pytest.raises(NotFound):
        instructions("acme", "oracle")
