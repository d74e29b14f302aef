"""The agent kind over real HTTP on both backends: the registration token is answered once, by
the write that creates the agent, and never again (no GET, list, query, event or export)."""

from __future__ import annotations

import httpx

ORG = "acme"


def _token(answer: httpx.Response) -> str:
    token: str = answer.json()["status"]["bootstrapConfig"]["registrationToken"]
    return token


def _everywhere(api: httpx.Client, name: str) -> str:
    """Every read of the agent a client can make, as one text."""
    href = f"/org/{ORG}/agent/{name}"
    reads = [
        api.get(href),
        api.get(f"/org/{ORG}/agent"),
        api.post(f"/org/{ORG}/agent/-query", json={"spec": {"terms": [{"property": "name", "value": name}]}}),
        api.get(f"{href}/-eventlog"),
        api.get(f"{href}/-info"),
        api.get(f"/org/{ORG}/agent?limit=1000"),
    ]
    assert all(r.status_code == 200 for r in reads), [r.text for r in reads]
    return "\n".join(r.text for r in reads)


def test_the_bootstrap_config_is_shown_once(api: httpx.Client, unique: str) -> None:
    made = api.post(f"/org/{ORG}/agent", json={"name": unique, "description": "dc1", "tags": {"site": "a"}})
    assert made.status_code == 201, made.text
    config = made.json()["status"]["bootstrapConfig"]
    token = _token(made)
    assert config["agentId"] == made.json()["id"] and config["protocolVersion"] == "v2"
    assert config["agentLink"] == f"/org/{ORG}/agent/{unique}" and config["hubEndpoint"].startswith("https://")
    got = api.get(f"/org/{ORG}/agent/{unique}").json()
    assert got["status"]["bootstrapConfig"] == {k: v for k, v in config.items() if k != "registrationToken"}
    edited = api.patch(f"/org/{ORG}/agent/{unique}", json={"description": "dc1 (main)"})
    assert edited.status_code == 200 and "registrationToken" not in edited.text
    put = api.put(f"/org/{ORG}/agent/{unique}", json=edited.json())
    assert put.status_code == 200 and "registrationToken" not in put.text
    assert token not in _everywhere(api, unique) and "registrationToken" not in _everywhere(api, unique)


def test_a_put_that_creates_answers_a_token_and_a_dry_run_none(api: httpx.Client, unique: str) -> None:
    dry = api.post(f"/org/{ORG}/agent?dryRun=true", json={"name": unique})
    assert dry.status_code == 200 and "registrationToken" not in dry.text
    applied = api.put(f"/org/{ORG}/agent", json={"name": unique})
    assert applied.status_code == 201 and _token(applied)
    again = api.post(f"/org/{ORG}/agent", json={"name": unique})
    assert again.status_code == 409 and "registrationToken" not in again.text
    # A new agent of the same name gets a new token.
    assert api.delete(f"/org/{ORG}/agent/{unique}").status_code == 202
    remade = api.post(f"/org/{ORG}/agent", json={"name": unique})
    assert remade.status_code == 201 and _token(remade) != _token(applied)


def test_only_description_and_tags_are_editable(api: httpx.Client, unique: str) -> None:
    assert api.post(f"/org/{ORG}/agent", json={"name": unique}).status_code == 201
    refused = api.patch(f"/org/{ORG}/agent/{unique}", json={"spec": {"region": "x"}})
    assert refused.status_code == 400
    status = api.patch(f"/org/{ORG}/agent/{unique}", json={"status": {"bootstrapConfig": {"agentId": "x"}}})
    assert status.status_code == 200 and status.json()["status"]["bootstrapConfig"]["agentId"] != "x"


def test_info_of_an_agent_that_never_connected(api: httpx.Client, unique: str) -> None:
    assert api.post(f"/org/{ORG}/agent", json={"name": unique}).status_code == 201
    info = api.get(f"/org/{ORG}/agent/{unique}/-info")
    assert info.status_code == 200
    assert info.json() == {"protocolVersion": "v2", "env": {}, "peerCount": 0, "serviceCount": 0}
    assert api.get(f"/org/{ORG}/agent/{unique}-none/-info").status_code == 404
    assert api.post(f"/org/{ORG}/agent/{unique}/-info", json={}).status_code == 405
