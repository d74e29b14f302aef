"""The answers of a workload's actions (``actions.py``), as models for the OpenAPI document."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from plinth.kinds.actions import ClosedAnswer, Links, OpenAnswer


class DeploymentInternal(OpenAnswer):
    syncFailed: bool | SkipJsonSchema[None] = None


class DeploymentStatus(OpenAnswer):
    ready: bool
    lastProcessedVersion: int
    expectedDeploymentVersion: int
    internal: DeploymentInternal
    versions: list[dict[str, Any]] | SkipJsonSchema[None] = None


class Deployment(OpenAnswer):
    """One location's deployment."""

    name: str = Field(description="The location.")
    kind: Literal["deployment"]
    links: Links
    status: DeploymentStatus


class DeploymentList(ClosedAnswer):
    kind: Literal["list"]
    itemKind: Literal["deployment"]
    items: list[Deployment]
    links: Links


class Command(OpenAnswer):
    id: str
    kind: Literal["command"]
    type: Literal["runCronWorkload", "stopReplica"]
    lifecycleStage: Literal["pending", "running", "cancelled", "completed", "failed"]
    created: datetime
    lastModified: datetime | SkipJsonSchema[None] = None
    spec: dict[str, Any]
    status: dict[str, Any]
    links: Links


class CommandList(ClosedAnswer):
    kind: Literal["list"]
    itemKind: Literal["command"]
    items: list[Command]
    links: Links
