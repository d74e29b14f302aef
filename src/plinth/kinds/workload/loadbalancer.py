"""``loadBalancer`` (docs.controlplane.com/reference/workload/load-balancing): a direct load balancer, geo headers,
replica-direct.

Only blocks a client sends are stored; inside them ``replicaDirect`` and
``geoLocation.enabled`` default to ``false`` (TF). Rules needing the type or several fields
(``replicaDirect`` only on stateful, geo headers when enabled and distinct) are in ``rules``.

``direct.ports[].containerPort`` is a plain number (TS, TF, AI), not DOCS' ``{port: N}``
example (docs.controlplane.com/reference/workload/load-balancing), with the container ports' bounds: 80-65535 and not
reserved. ``direct.ipSet`` is a link the integration checks (an IP set of this org).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from plinth.kinds.spec_model import NonEmptyStr, SpecModel
from plinth.kinds.workload.firewall import HeaderName
from plinth.kinds.workload.ports import ContainerPortNumber


class DirectPort(SpecModel):
    externalPort: Annotated[int, Field(ge=22, le=32768)]
    protocol: Literal["TCP", "UDP"]
    scheme: Literal["http", "tcp", "https", "ws", "wss"] | None = None
    containerPort: ContainerPortNumber | None = None


class DirectLoadBalancer(SpecModel):
    enabled: bool
    ports: list[DirectPort] | None = None
    ipSet: NonEmptyStr | None = None


class GeoHeaders(SpecModel):
    asn: HeaderName | None = None
    city: HeaderName | None = None
    country: HeaderName | None = None
    region: HeaderName | None = None


class GeoLocation(SpecModel):
    enabled: bool = False
    headers: GeoHeaders | None = None


class WorkloadLoadBalancer(SpecModel):
    direct: DirectLoadBalancer | None = None
    geoLocation: GeoLocation | None = None
    replicaDirect: bool = False
