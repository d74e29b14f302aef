"""The official CLI's cloudaccount, agent and image commands, unchanged, against a real Plinth server (SQLite
here; ``test_postgres.py`` re-runs them on PostgreSQL), checked through Plinth's HTTP API."""

from __future__ import annotations

import httpx

from tests.compat.conftest import ORG, Cpln
from tests.compat.test_typed import as_json, ok

ARN = f"arn:aws:iam::123456789012:role/cpln-{ORG}"


def test_cloudaccount_create_aws_get_and_how(either: Cpln, api: httpx.Client, unique: str) -> None:
    args = ("--name", unique, "--role-arn", ARN, "--tag", "team=data")
    made = as_json(either("cloudaccount", "create-aws", *args, "-o", "json"))
    stored = api.get(f"/org/{ORG}/cloudaccount/{unique}").json()
    assert made == stored
    assert (stored["provider"], stored["data"], stored["tags"]) == ("aws", {"roleArn": ARN}, {"team": "data"})
    assert stored["status"]["usable"] is False
    assert as_json(either("cloudaccount", "get", unique, "-o", "json")) == stored
    table = ok(either("cloudaccount", "get", unique, "-o", "text", "--ts", "iso")).stdout
    assert f"|{unique} |{unique}" in table and f"|aws      |{ARN} |" in table
    how = ok(either("cloudaccount", "create-aws", "--how")).stdout
    assert f"cpln-{ORG}" in how and "aws iam create-role" in how
    ok(either("cloudaccount", "delete", unique))
    assert api.get(f"/org/{ORG}/cloudaccount/{unique}").status_code == 404


def test_cloudaccount_create_azure_creates_the_secret_first(cpln: Cpln, api: httpx.Client, unique: str) -> None:
    args = ("--name", unique, "--secret", f"{unique}-s", "--url", "https://fn.example.com/api", "--code", "c0de")
    made = as_json(cpln("cloudaccount", "create-azure", *args, "-o", "json"))
    assert made["data"] == {"secretLink": f"/org/{ORG}/secret/{unique}-s"}
    assert api.get(f"/org/{ORG}/secret/{unique}-s").json()["type"] == "azure-connector"


def test_agent_create_prints_the_bootstrap_config_once(either: Cpln, api: httpx.Client, unique: str) -> None:
    printed = as_json(either("agent", "create", "--name", unique, "--tag", "site=dc1", "-o", "json"))
    stored = api.get(f"/org/{ORG}/agent/{unique}").json()
    assert set(printed) == {"registrationToken", "agentId", "agentLink", "hubEndpoint", "protocolVersion"}
    assert (printed["agentId"], printed["agentLink"], printed["protocolVersion"]) == (
        stored["id"],
        f"/org/{ORG}/agent/{unique}",
        "v2",
    )
    assert stored["status"]["bootstrapConfig"] == {k: v for k, v in printed.items() if k != "registrationToken"}
    got = either("agent", "get", unique, "-o", "json")
    assert as_json(got) == stored and printed["registrationToken"] not in got.stdout
    table = ok(either("agent", "get", unique, "-o", "text", "--ts", "iso")).stdout
    assert f"|{unique} |{unique}" in table and 'site="dc1"' in table
    info = as_json(either("agent", "info", unique, "-o", "json"))
    assert "lastActive" not in info and info["protocolVersion"] == "v2"
    ok(either("agent", "delete", unique))
    assert api.get(f"/org/{ORG}/agent/{unique}").status_code == 404


def test_image_get_lists_an_empty_registry(either: Cpln, api: httpx.Client) -> None:
    listed = as_json(either("image", "get", "-o", "json"))
    assert listed["kind"] == "list" and listed["items"] == []
    missing = either("image", "get", "web:1.0")
    assert missing.code == 1 and "not_found" in missing.stderr
    refused = api.post(f"/org/{ORG}/image", json={"name": "web:1.0"})
    assert refused.status_code == 403
