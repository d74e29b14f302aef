"""The workload spec schema (kinds.md §1.2): every block but the containers' own.

Single-field rules (enums, bounds, patterns) live in the models so they are reported with
every other schema error; rules relating fields to each other are in ``rules``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from plinth.kinds._spec_model import SpecModel
from plinth.kinds.workload.containers import ContainerSpec

WorkloadType = Literal["serverless", "standard", "cron", "stateful", "vm"]


class WorkloadSpec(SpecModel):
    type: WorkloadType = "standard"
    identityLink: str | None = None
    containers: Annotated[list[ContainerSpec], Field(min_length=1, max_length=8)]
    firewallConfig: dict[str, Any] | None = None
    defaultOptions: dict[str, Any] | None = None
    localOptions: list[dict[str, Any]] | None = None
    job: dict[str, Any] | None = None
    sidecar: dict[str, Any] | None = None
    supportDynamicTags: bool | None = None
    rolloutOptions: dict[str, Any] | None = None
    securityOptions: dict[str, Any] | None = None
    loadBalancer: dict[str, Any] | None = None
    extras: dict[str, Any] | None = None
    requestRetryPolicy: dict[str, Any] | None = None
    vm: dict[str, Any] | None = None
