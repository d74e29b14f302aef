"""The ``agent`` kind (docs.controlplane.com/reference/agent): a network agent that links workloads to private networks.

An agent has no ``spec``: only its description and tags are the client's. Its ``status`` is the
server's: ``{protocolVersion: "v2", bootstrapConfig: {agentId, agentLink, hubEndpoint,
protocolVersion: "v2"}}`` (new agents are v2).

Decisions where the sources are silent or Plinth cannot do what the platform does:

- **The registration token is shown once, and never stored.** The write that creates an agent
  (POST, or a PUT that creates it: ``cpln apply``) answers 201 with
  ``status.bootstrapConfig.registrationToken``, a fresh random token (``shown_once``); ``cpln
  agent create`` prints that bootstrap config. Plinth keeps neither the token nor a hash of it:
  no agent ever registers here (there is no hub), so there is nothing to check it against, and a
  token that is not kept cannot leak. Every later read (GET, list, ``-query``, ``-eventlog``,
  ``-o tf``/``-o crd``) and every event shows ``bootstrapConfig`` without it. A dry run creates
  nothing, so it answers no token either.
- ``hubEndpoint`` is ``https://agent-hub.{base domain}``: the platform's value is unknown, and
  nothing answers there (documented, like the workloads' endpoints).
- ``GET .../agent/{name}/-info`` (needs ``view``) answers AgentInfo for an agent that never
  connected: ``{protocolVersion: "v2", env: {}, peerCount: 0, serviceCount: 0}``, without
  ``lastActive`` or ``instanceId`` (the CLI shows such an agent inactive).
- Deleting an agent an identity names is not refused: identities check their ``agentLink`` for
  shape only.
- Permissions: the default set plus ``use`` (implies ``view``).
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from plinth.kinds.actions import ActionContext, Answer, ClosedAnswer
from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    Access,
    ActionCase,
    Item,
    KindAction,
    KindContext,
    KindExample,
    KindSpec,
    Lifecycle,
    Presentation,
    Status,
)
from plinth.kinds.permissions import declare_permissions

PROTOCOL_VERSION = "v2"


class AgentInfo(ClosedAnswer):
    """The answer of ``-info``."""

    protocolVersion: Literal["v1", "v2"]
    instanceId: str | SkipJsonSchema[None] = None
    lastActive: datetime | SkipJsonSchema[None] = Field(
        None, description="Absent until the agent connects (never, on Plinth)."
    )
    env: dict[str, str]
    peerCount: int
    serviceCount: int


async def info(ctx: ActionContext) -> Answer:
    """``GET .../agent/{name}/-info``: 404 when there is none, 403 without ``view``."""
    await ctx.get("agent", ctx.name or "")
    return Answer(agent_info())


INFO = KindAction(
    operation_id="getAgentInfo",
    method="GET",
    path="-info",
    summary="What the agent last reported: an agent that never connected has no lastActive",
    handler=info,
    on_item=True,
    answer=AgentInfo,
    examples=(
        ActionCase(200, has={"protocolVersion": "v2"}, lacks=("lastActive",)),
        ActionCase(404, {"name": "no-such-agent"}),
    ),
)


def hub_endpoint(base_domain: str) -> str:
    return f"https://agent-hub.{base_domain}"


def agent_status(item: Item, ctx: KindContext) -> dict[str, Any]:
    """The bootstrap config without its token, which only the creating write answers."""
    config = {
        "agentId": item.get("id") or ctx.id,
        "agentLink": f"/org/{ctx.org}/agent/{item['name']}",
        "hubEndpoint": hub_endpoint(ctx.base_domain),
        "protocolVersion": PROTOCOL_VERSION,
    }
    return {"protocolVersion": PROTOCOL_VERSION, "bootstrapConfig": config}


def new_registration_token() -> str:
    return secrets.token_urlsafe(32)


def with_registration_token(item: Item) -> Item:
    """The created agent as its creating write answers it: with a fresh registration token."""
    status = dict(item.get("status") or {})
    status["bootstrapConfig"] = {**(status.get("bootstrapConfig") or {}), "registrationToken": new_registration_token()}
    return {**item, "status": status}


def agent_info() -> dict[str, Any]:
    """AgentInfo of an agent that never connected (no agent connects to Plinth)."""
    return {"protocolVersion": PROTOCOL_VERSION, "env": {}, "peerCount": 0, "serviceCount": 0}


AGENT = KindSpec(
    name="agent",
    scope="org",
    status=Status(
        compute=agent_status,
    ),
    lifecycle=Lifecycle(
        shown_once=with_registration_token,
    ),
    access=Access(
        # Permissions: use implies view (docs.controlplane.com/reference/agent).
        **declare_permissions(
            extra={"use": "Reference the agent from identities"},
            implied={"use": ("view",)},
        ),
    ),
    presentation=Presentation(
        terraform_resource="cpln_agent",
        text_columns=("NAME", "DESCRIPTION", "CREATED", "TAGS"),
        title="Agent",
        query_properties=COMMON_QUERY_PROPERTIES,
        template={"name": "", "description": "", "tags": {}},
    ),
    actions=(INFO,),
    example=KindExample(
        valid={"name": "agent{n}", "description": "Datacenter 1", "tags": {"site": "dc1"}},
        invalid=(
            ({"name": "Agent{n}"}, "name"),
            ({"name": "agent{n}", "spec": {"region": "x"}}, "spec"),
            ({"name": "agent{n}", "tags": {"cpln/builtin": "true"}}, "tags.cpln/builtin"),
        ),
        update={"description": "Datacenter 1 (main)"},
    ),
)
