"""The IP set spec schema (docs.controlplane.com/reference/ipset): what it links to, and where it holds addresses."""

from __future__ import annotations

from typing import Literal

from plinth.kinds.spec_model import NonEmptyStr, SpecModel

#: What happens to a location's address once nothing uses it: ``keep`` holds it (the CLI's
#: default, and how unlisted locations behave), ``free`` releases it.
RetentionPolicy = Literal["keep", "free"]
DEFAULT_RETENTION: RetentionPolicy = "keep"


class IpSetLocation(SpecModel):
    #: A location, by link (``//location/aws-us-east-1``) or by name; stored as a full link.
    name: NonEmptyStr
    retentionPolicy: RetentionPolicy = DEFAULT_RETENTION


class IpSetSpec(SpecModel):
    #: The workload (``//gvc/G/workload/W``) or GVC (``//gvc/G``) the addresses serve.
    link: NonEmptyStr | None = None
    locations: list[IpSetLocation] | None = None
