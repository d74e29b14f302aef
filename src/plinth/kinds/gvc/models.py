"""The GVC spec schema (types-ts gvc.ts; Gvc.yaml for the nested shapes).

Defaults are filled only inside blocks the client sent (``loadBalancer.dedicated`` and
``loadBalancer.trustedProxies`` when ``loadBalancer`` is present): adding whole blocks the
client left out would make declarative clients (terraform, the operator) see a perpetual
difference between what they sent and what they read back.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from plinth.kinds.query_model import Query
from plinth.kinds.spec_model import NonEmptyStr, SpecModel
from plinth.kinds.tracing_model import Tracing


class LocationOption(SpecModel):
    locationLink: NonEmptyStr
    routingTier: Annotated[int, Field(ge=0)] | None = None
    latencyOffsetMs: int | None = None
    latencyToleranceMs: Annotated[int, Field(ge=0)] | None = None


class StaticPlacement(SpecModel):
    locationLinks: list[NonEmptyStr] | None = None
    locationQuery: Query | None = None
    locationOptions: list[LocationOption] | None = None


class Sidecar(SpecModel):
    #: Envoy filter configuration, passed through to the proxy as sent (free-form).
    envoy: dict[str, Any] | None = None


class EnvVar(SpecModel):
    name: NonEmptyStr
    value: str | None = None


class MultiZone(SpecModel):
    enabled: bool | None = None


class RedirectClass(SpecModel):
    status5xx: str | None = None
    status401: str | None = None


class Redirect(SpecModel):
    class_: RedirectClass | None = Field(default=None, alias="class")


class LoadBalancer(SpecModel):
    dedicated: bool = False
    multiZone: MultiZone | None = None
    #: How many proxies in front of the load balancer to trust in X-Forwarded-For.
    trustedProxies: Annotated[int, Field(ge=0, le=2)] = 0
    redirect: Redirect | None = None
    ipSet: NonEmptyStr | None = None


class Keda(SpecModel):
    enabled: bool | None = None
    identityLink: NonEmptyStr | None = None
    secrets: list[NonEmptyStr] | None = None


class GvcSpec(SpecModel):
    staticPlacement: StaticPlacement | None = None
    pullSecretLinks: list[NonEmptyStr] | None = None
    #: Deprecated: the legacy way to bind a domain to a GVC; stored as sent.
    domain: NonEmptyStr | None = None
    endpointNamingFormat: Literal["default", "legacy", "org"] | None = None
    aliasWorkloadLink: NonEmptyStr | None = None
    tracing: Tracing | None = None
    sidecar: Sidecar | None = None
    env: list[EnvVar] | None = None
    loadBalancer: LoadBalancer | None = None
    keda: Keda | None = None
