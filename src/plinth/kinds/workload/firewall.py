"""``firewallConfig`` (docs.controlplane.com/reference/workload/firewall): who may reach a workload, and what it may
reach.

The model fills the closed defaults (every list empty, ``inboundAllowType: none``), and the
spec model always creates the block, so a GET shows the firewall the platform enforces. The
CIDR lists are stored de-duplicated and sorted (AI says so of ``inboundAllowCIDR``; the other
CIDR lists are sets of the same kind, which TF models as sets too), by :func:`normalise_firewall`.

Single-value rules:

- CIDR entries are IPv4 or IPv6 addresses or networks (Python's ``ipaddress``; host bits may
  be set, ``10.1.2.3/8``, as most firewalls accept); ``inboundAllowCIDR`` holds at most 250;
- hostnames are lowercase DNS names of at most 128 characters, with at most one ``*``, only as
  a leading ``*.`` label (``*.amazonaws.com``);
- ``outboundAllowPort[].number`` is 80-65000 and not reserved;
- an ``inboundHeaderFilter`` key is an HTTP header name (a token) of at most 128 characters,
  whose values are RE2 expressions (stored as sent: Python's ``re`` is not RE2, so compiling
  them here would refuse valid RE2 and accept invalid RE2). Exactly one of ``allowedValues``
  and ``blockedValues`` is a rule in ``rules``, reported at the filter's path;
- ``inboundAllowWorkload`` links are workload links (``//gvc/G/workload/W``,
  ``/org/O/gvc/G/workload/W``, or ``//workload/W``, a workload of the same GVC, as the
  vendor's own stacks send, e.g. controlplane-com/examples
  examples/online-boutique/online-boutique.yaml), ``cpln://internal/keda`` or an agent
  (``//agent/A``, ``/org/O/agent/A``). Each is stored as sent, never rewritten: nothing in
  Plinth resolves these links (no reference, delete guard or ``links`` entry comes from them),
  so a rewrite would only make a GET differ from what the client applies. Shape only, never
  existence (AI).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from plinth.kinds.spec_model import SpecModel
from plinth.kinds.workload.ports import RESERVED_PORTS

#: Lists ``normalise_firewall`` stores de-duplicated and sorted.
CIDR_LISTS = ("inboundAllowCIDR", "inboundBlockedCIDR", "outboundAllowCIDR", "outboundBlockedCIDR")

_LABEL = r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?"
_HOSTNAME = re.compile(rf"(?:\*\.)?(?:{_LABEL}\.)*{_LABEL}")
#: RFC 9110 token characters: what an HTTP header name is made of.
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_WORKLOAD_LINK = re.compile(r"(?://gvc/[^/\s]+/|/org/[^/\s]+/gvc/[^/\s]+/|//)workload/[^/\s]+")
_AGENT_LINK = re.compile(r"(?://|/org/[^/\s]+/)agent/[^/\s]+")
KEDA_LINK = "cpln://internal/keda"


def _check_cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise ValueError(f"'{value}' is not an IPv4 or IPv6 address or CIDR block") from None
    return value


def _check_hostname(value: str) -> str:
    if len(value) > 128:
        raise ValueError("must be at most 128 characters")
    if not _HOSTNAME.fullmatch(value):
        raise ValueError(
            f"'{value}' is not a lowercase hostname; a wildcard is allowed only as a leading '*.' (*.example.com)"
        )
    return value


def _check_header_name(value: str) -> str:
    if not HEADER_NAME.fullmatch(value):
        raise ValueError("must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)")
    return value


def _check_workload_link(value: str) -> str:
    if value == KEDA_LINK or _WORKLOAD_LINK.fullmatch(value) or _AGENT_LINK.fullmatch(value):
        return value
    raise ValueError(
        f"'{value}' must be a workload link (//gvc/GVC/workload/NAME, /org/ORG/gvc/GVC/workload/NAME, "
        "or //workload/NAME in the same GVC), an agent link (//agent/NAME) or cpln://internal/keda"
    )


def _check_outbound_port(number: int) -> int:
    if number in RESERVED_PORTS:
        raise ValueError(f"{number} is reserved by the platform")
    return number


Cidr = Annotated[str, AfterValidator(_check_cidr)]
Hostname = Annotated[str, AfterValidator(_check_hostname)]
HeaderName = Annotated[str, Field(min_length=1, max_length=128), AfterValidator(_check_header_name)]
WorkloadLink = Annotated[str, AfterValidator(_check_workload_link)]


class OutboundAllowPort(SpecModel):
    protocol: Literal["http", "https", "tcp"]
    number: Annotated[int, Field(ge=80, le=65000), AfterValidator(_check_outbound_port)]


class InboundHeaderFilter(SpecModel):
    key: HeaderName
    allowedValues: list[str] | None = None
    blockedValues: list[str] | None = None


class FirewallHttp(SpecModel):
    inboundHeaderFilter: list[InboundHeaderFilter] | None = None


class FirewallExternal(SpecModel):
    inboundAllowCIDR: Annotated[list[Cidr], Field(max_length=250)] = Field(default_factory=list)
    inboundBlockedCIDR: list[Cidr] = Field(default_factory=list)
    outboundAllowHostname: list[Hostname] = Field(default_factory=list)
    outboundAllowPort: list[OutboundAllowPort] | None = None
    outboundAllowCIDR: list[Cidr] = Field(default_factory=list)
    outboundBlockedCIDR: list[Cidr] = Field(default_factory=list)
    http: FirewallHttp | None = None


class FirewallInternal(SpecModel):
    inboundAllowType: Literal["none", "same-gvc", "same-org", "workload-list"] = "none"
    inboundAllowWorkload: list[WorkloadLink] = Field(default_factory=list)


class FirewallConfig(SpecModel):
    external: FirewallExternal = Field(default_factory=FirewallExternal)
    internal: FirewallInternal = Field(default_factory=FirewallInternal)


def normalise_firewall(firewall: dict[str, Any]) -> None:
    """Store each CIDR list of a schema-valid ``firewallConfig`` de-duplicated and sorted."""
    external = firewall.get("external", {})
    for name in CIDR_LISTS:
        if name in external:
            external[name] = sorted(set(external[name]))
