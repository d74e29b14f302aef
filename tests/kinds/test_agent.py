"""The agent kind (docs.controlplane.com/reference/agent) through build_candidate: no spec, the status's bootstrap
config without its token, and the token added only to the creating write's answer."""

from __future__ import annotations

from typing import Any

import pytest
from _identity_support import CTX, ORG, SERVER_ENVELOPE, paths, stored, write

from plinth.kinds import PERMISSIONS, REGISTRY
from plinth.kinds.agent import AGENT, agent_info, agent_status, with_registration_token
from plinth.kinds.base import CRUD_VERBS
from plinth.kinds.permissions import implied_closure


def test_declaration() -> None:
    assert REGISTRY["agent"] is AGENT
    assert (AGENT.scope, AGENT.schema.spec_model, AGENT.schema.top_level_model, AGENT.access.verbs) == (
        "org",
        None,
        None,
        CRUD_VERBS,
    )
    assert AGENT.access.permissions is PERMISSIONS["agent"].permissions
    assert set(AGENT.access.permissions) == {"create", "delete", "edit", "manage", "use", "view"}
    assert implied_closure("agent", ["use"]) == {"use", "view"}
    assert (AGENT.presentation.terraform_resource, AGENT.presentation.text_columns) == (
        "cpln_agent",
        ("NAME", "DESCRIPTION", "CREATED", "TAGS"),
    )
    assert [a.operation_id for a in AGENT.actions] == ["getAgentInfo"] and AGENT.lifecycle.shown_once is not None


def test_what_cpln_agent_create_sends() -> None:
    assert stored(AGENT, {"name": "dc1", "description": "Datacenter", "tags": {}}, "dc1") == {
        "kind": "agent",
        "name": "dc1",
        "description": "Datacenter",
        "tags": {},
    }


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"spec": {"region": "x"}}, ["spec"]),
        ({"protocolVersion": "v1"}, ["protocolVersion"]),
        ({"description": " padded"}, ["description"]),
        ({**SERVER_ENVELOPE, "description": "ok"}, []),
    ],
)
def test_only_description_and_tags_are_the_clients(body: dict[str, Any], expected: list[str]) -> None:
    assert paths(write(AGENT, body, "dc1")[1]) == expected


def test_the_status_holds_the_bootstrap_config_without_a_token() -> None:
    status = agent_status({"name": "dc1", "id": "agent-id"}, CTX)
    assert status == {
        "protocolVersion": "v2",
        "bootstrapConfig": {
            "agentId": "agent-id",
            "agentLink": f"/org/{ORG}/agent/dc1",
            "hubEndpoint": "https://agent-hub.cpln.app",
            "protocolVersion": "v2",
        },
    }


def test_the_creating_answer_gets_a_fresh_token_and_the_item_is_not_changed() -> None:
    item = {"name": "dc1", "status": agent_status({"name": "dc1", "id": "x"}, CTX)}
    first, second = with_registration_token(item), with_registration_token(item)
    token = first["status"]["bootstrapConfig"]["registrationToken"]
    assert len(token) >= 40 and token != second["status"]["bootstrapConfig"]["registrationToken"]
    assert "registrationToken" not in item["status"]["bootstrapConfig"]
    assert {**first["status"]["bootstrapConfig"], "registrationToken": None} == {
        **item["status"]["bootstrapConfig"],
        "registrationToken": None,
    }


def test_info_of_an_agent_that_never_connected() -> None:
    info = agent_info()
    assert "lastActive" not in info and info["protocolVersion"] == "v2"
