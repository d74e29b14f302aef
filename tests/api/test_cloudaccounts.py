"""The cloudaccount kind over real HTTP on both backends: the secret it links to, the immutable
provider, the status that never claims the account usable, and ``-instructions``."""

from __future__ import annotations

import httpx

ORG = "acme"
ARN = "arn:aws:iam::123456789012:role/cpln-acme"


def test_an_aws_account_is_stored_and_never_usable(api: httpx.Client, unique: str) -> None:
    body = {"name": unique, "provider": "aws", "data": {"roleArn": ARN}, "tags": {"env": "prod"}}
    made = api.post(f"/org/{ORG}/cloudaccount", json=body)
    assert made.status_code == 201, made.text
    item = api.get(f"/org/{ORG}/cloudaccount/{unique}").json()
    assert (item["provider"], item["data"]) == ("aws", {"roleArn": ARN})
    assert item["status"]["usable"] is False and "does not reach clouds" in item["status"]["lastError"]
    assert item["status"]["lastChecked"] == item["lastModified"]
    moved = api.patch(
        f"/org/{ORG}/cloudaccount/{unique}", json={"provider": "gcp", "data": {"projectId": "my-project"}}
    )
    assert moved.status_code == 400
    assert "provider" in [e["path"] for e in moved.json()["details"]["errors"]]
    query = {"spec": {"terms": [{"property": "provider", "value": "aws"}]}}
    found = api.post(f"/org/{ORG}/cloudaccount/-query", json=query).json()["items"]
    assert unique in [i["name"] for i in found]


def test_azure_and_ngs_accounts_need_a_secret_of_the_right_type(api: httpx.Client, unique: str) -> None:
    account = {"name": f"{unique}-az", "provider": "azure", "data": {"secretLink": f"//secret/{unique}"}}
    missing = api.post(f"/org/{ORG}/cloudaccount", json=account)
    assert missing.status_code == 400 and missing.json()["details"]["errors"][0]["path"] == "data.secretLink"
    # What `cpln cloudaccount create-azure` does: the secret first, then the account.
    secret = {"name": unique, "type": "azure-connector", "data": {"url": "https://fn.example.com", "code": "c0de"}}
    assert api.post(f"/org/{ORG}/secret", json=secret).status_code == 201
    made = api.post(f"/org/{ORG}/cloudaccount", json=account)
    assert made.status_code == 201, made.text
    assert made.json()["data"]["secretLink"] == f"/org/{ORG}/secret/{unique}"
    ngs = {"name": f"{unique}-ngs", "provider": "ngs", "data": {"secretLink": f"//secret/{unique}"}}
    wrong = api.post(f"/org/{ORG}/cloudaccount", json=ngs)
    assert wrong.status_code == 400 and "nats-account" in wrong.json()["details"]["errors"][0]["message"]
    other = {**ngs, "data": {"secretLink": f"//gvc/{unique}"}}
    assert api.post(f"/org/{ORG}/cloudaccount", json=other).status_code == 400


def test_instructions_per_provider(api: httpx.Client) -> None:
    for provider in ("aws", "gcp", "azure", "ngs"):
        answer = api.get(f"/org/{ORG}/cloudaccount/-instructions/{provider}")
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert isinstance(body["message"], str) and body["data"]["cli"]
        assert ORG in body["message"] + " ".join(body["data"]["cli"])
    assert "cpln-acme" in " ".join(api.get(f"/org/{ORG}/cloudaccount/-instructions/aws").json()["data"]["cli"])
    unknown = api.get(f"/org/{ORG}/cloudaccount/-instructions/oracle")
    assert unknown.status_code == 404
    assert api.post(f"/org/{ORG}/cloudaccount/-instructions/aws", json={}).status_code == 405
