"""The workload spec schema (types-ts workload.ts): every block but the containers' own.

Single-field rules (enums, bounds, patterns) live in the models so they are reported with
every other schema error; rules relating fields to each other are in ``rules`` and
``option_rules``. The blocks have one module each: ``options`` (``defaultOptions``,
``localOptions``), ``firewall``, ``job``, ``rollout`` (rollout, security, retry, sidecar) and
``loadbalancer``; the containers are in ``containers``.

Defaults declared here are the ones that need nothing but the block itself: ``type``
(``standard``, CLI and AI), ``supportDynamicTags: false`` (TF), a closed ``firewallConfig``
and an empty ``defaultOptions`` that ``prepare`` fills (its defaults depend on the type and
the containers). Everything else is absent unless sent.

``vm`` is a free-form object: ``vm`` workloads are not served yet (``rules`` refuses the type,
and the block on any other type, docs.controlplane.com/reference/workload/vm). ``extras`` (BYOK affinity, tolerations,
topology spread) is free-form as TS and TF have it; ``identityLink`` is a link the integration
checks (an identity of the same GVC).

Model classes carry names unique among every kind's models (``WorkloadAutoscaling``, not
``Autoscaling``, which the volume set has): the OpenAPI document names its components after
them, and a clash would turn both into module-qualified names.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from plinth.kinds.spec_model import NonEmptyStr, SpecModel
from plinth.kinds.workload.containers import ContainerSpec
from plinth.kinds.workload.firewall import FirewallConfig
from plinth.kinds.workload.job import WorkloadJob
from plinth.kinds.workload.loadbalancer import WorkloadLoadBalancer
from plinth.kinds.workload.options import WorkloadLocalOptions, WorkloadOptions
from plinth.kinds.workload.rollout import RequestRetryPolicy, RolloutOptions, SecurityOptions, WorkloadSidecar

WorkloadType = Literal["serverless", "standard", "cron", "stateful", "vm"]


class WorkloadSpec(SpecModel):
    type: WorkloadType = "standard"
    identityLink: NonEmptyStr | None = None
    containers: Annotated[list[ContainerSpec], Field(min_length=1, max_length=8)]
    firewallConfig: FirewallConfig = Field(default_factory=FirewallConfig)
    defaultOptions: WorkloadOptions = Field(default_factory=WorkloadOptions)
    localOptions: list[WorkloadLocalOptions] | None = None
    job: WorkloadJob | None = None
    sidecar: WorkloadSidecar | None = None
    supportDynamicTags: bool = False
    rolloutOptions: RolloutOptions | None = None
    securityOptions: SecurityOptions | None = None
    loadBalancer: WorkloadLoadBalancer | None = None
    extras: dict[str, Any] | None = None
    requestRetryPolicy: RequestRetryPolicy | None = None
    vm: dict[str, Any] | None = None

    @field_validator("firewallConfig", "defaultOptions", "supportDynamicTags", mode="before")
    @classmethod
    def _null_means_default(cls, value: Any, info: ValidationInfo) -> Any:
        """``null`` for an always-present field stands for its default, as omitting it does."""
        if value is None:
            return False if info.field_name == "supportDynamicTags" else {}
        return value
