"""Container port numbers and the ``ports[]`` entry (docs.controlplane.com/reference/workload/containers, "Reserved
ports").

One port type serves every place a workload names a port of its own containers: ``ports[]``,
the deprecated ``port``, ``metrics.port`` and the probes' ``port``. The sources give all of
them the same validators (TF ``GetPortValidators``): 80-65535 and not a port the platform's
mesh proxy or agents listen on.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from plinth.kinds.spec_model import SpecModel

PORT_MIN = 80
PORT_MAX = 65535

#: Ports the platform itself uses inside every replica (docs.controlplane.com/reference/workload/containers; TF
#: common.go, DOCS, AI).
RESERVED_PORTS: frozenset[int] = frozenset({8012, 8022, 9090, 9091, 15000, 15001, 15006, 15020, 15021, 15090, 41000})

Protocol = Literal["http", "http2", "grpc", "tcp"]
DEFAULT_PROTOCOL: Protocol = "http"


def _check_not_reserved(number: int) -> int:
    if number in RESERVED_PORTS:
        reserved = ", ".join(str(port) for port in sorted(RESERVED_PORTS))
        raise ValueError(f"{number} is reserved by the platform (reserved: {reserved})")
    return number


#: A port a container listens on: 80-65535, not reserved.
ContainerPortNumber = Annotated[int, Field(ge=PORT_MIN, le=PORT_MAX), AfterValidator(_check_not_reserved)]


class ContainerPort(SpecModel):
    """One exposed port; ``protocol`` defaults to ``http`` (filled by the defaults, ``container_defaults``)."""

    protocol: Protocol | None = None
    number: ContainerPortNumber
