"""The identity's top-level schema (types-ts identity.ts): its provider blocks and network resources.

Single-field rules live here (bounds, patterns, enums, addresses), and so do the "one of these
shapes" rules of one object (``OneOfModel``: an AWS block names a role or policies, a GCP
block a service account or bindings, a network resource IPs or an FQDN, a native one AWS
PrivateLink or GCP Private Service Connect), whose error lands on the object itself. Rules
that relate fields across objects (names and FQDNs unique over both resource lists, a trust
policy only beside policies, a resolver only beside an FQDN, each port once) are in ``rules``.
Defaults are filled only inside blocks the client sent.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from plinth.kinds.domain.names import domain_name_rule
from plinth.kinds.spec_model import NonEmptyStr, OneOfModel, SpecModel, TopLevelModel, matching

#: Network resources and native network resources, each list (types-ts identity.ts).
RESOURCES_MAX = 50
#: IP addresses of one network resource.
IPS_MIN, IPS_MAX = 1, 5
#: Ports of one (native) network resource.
PORTS_MIN, PORTS_MAX = 1, 10
ROLE_NAME_MAX = 64
GCP_DEFAULT_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
#: NGS limits: ``-1`` means unlimited.
UNLIMITED = -1


def _check_ipv4(value: str) -> str:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        raise ValueError(f"'{value}' is not an IPv4 address") from None
    return value


def _check_fqdn(value: str) -> str:
    problem = domain_name_rule(value)
    if problem is not None:
        raise ValueError(f"'{value}' is not a DNS name: {problem}")
    return value


RoleName = Annotated[
    str,
    Field(min_length=1, max_length=ROLE_NAME_MAX),
    matching(r"[a-zA-Z0-9/+=,.@_-]+", "may contain only letters, digits and + = , . @ _ - /"),
]
GcpServiceAccount = Annotated[
    str, matching(r".+\.gserviceaccount\.com", "must be a GCP service account email ending in .gserviceaccount.com")
]
#: A NATS response deadline: a whole number of ms, s, m or h; ``-1`` for none.
Ttl = Annotated[
    str, matching(r"-1|[0-9]+(ms|s|m|h)", "must be a whole number of ms, s, m or h (e.g. 500ms, 5m), or -1 for none")
]
IPv4 = Annotated[str, AfterValidator(_check_ipv4)]
Fqdn = Annotated[str, AfterValidator(_check_fqdn)]
#: A port a network resource exposes (0 to 65535, types-ts identity.ts).
ResourcePort = Annotated[int, Field(ge=0, le=65535)]
Ports = Annotated[list[ResourcePort], Field(min_length=PORTS_MIN, max_length=PORTS_MAX)]
Roles = Annotated[list[NonEmptyStr], Field(min_length=1)]
Limit = Annotated[int, Field(ge=UNLIMITED)]


class IdentityAwsTrustPolicy(SpecModel):
    Version: Literal["2012-10-17", "2008-10-17"] = "2012-10-17"
    #: IAM statements, free-form (the trust policy is AWS's document, not the platform's).
    Statement: list[dict[str, Any]] | None = None


class IdentityAws(OneOfModel):
    ONE_OF = ("policyRefs", "roleName")
    ONE_OF_WHAT = "way to grant AWS access"

    cloudAccountLink: NonEmptyStr
    policyRefs: Annotated[list[NonEmptyStr], Field(min_length=1)] | None = None
    roleName: RoleName | None = None
    trustPolicy: IdentityAwsTrustPolicy | None = None


class IdentityGcpBinding(SpecModel):
    #: The resource the roles apply to; left out, the cloud account's project.
    resource: NonEmptyStr | None = None
    roles: Roles


class IdentityGcp(OneOfModel):
    ONE_OF = ("serviceAccount", "bindings")
    ONE_OF_WHAT = "way to grant GCP access"

    cloudAccountLink: NonEmptyStr
    scopes: Annotated[list[NonEmptyStr], Field(min_length=1)] = Field(default_factory=lambda: [GCP_DEFAULT_SCOPE])
    serviceAccount: GcpServiceAccount | None = None
    bindings: Annotated[list[IdentityGcpBinding], Field(min_length=1)] | None = None


class IdentityAzureRoleAssignment(SpecModel):
    #: The scope the roles apply to; left out, the cloud account's subscription.
    scope: NonEmptyStr | None = None
    roles: Roles


class IdentityAzure(SpecModel):
    cloudAccountLink: NonEmptyStr
    roleAssignments: Annotated[list[IdentityAzureRoleAssignment], Field(min_length=1)]


class IdentityNgsPermission(SpecModel):
    allow: list[NonEmptyStr] | None = None
    deny: list[NonEmptyStr] | None = None


class IdentityNgsResponses(SpecModel):
    max: Limit = 1
    ttl: Ttl | None = None


class IdentityNgs(SpecModel):
    cloudAccountLink: NonEmptyStr
    pub: IdentityNgsPermission | None = None
    sub: IdentityNgsPermission | None = None
    resp: IdentityNgsResponses | None = None
    subs: Limit = UNLIMITED
    data: Limit = UNLIMITED
    payload: Limit = UNLIMITED


class IdentityNetworkResource(OneOfModel):
    ONE_OF = ("IPs", "FQDN")
    ONE_OF_WHAT = "way to reach the resource"

    name: NonEmptyStr
    agentLink: NonEmptyStr | None = None
    IPs: Annotated[list[IPv4], Field(min_length=IPS_MIN, max_length=IPS_MAX)] | None = None
    FQDN: Fqdn | None = None
    resolverIP: IPv4 | None = None
    ports: Ports


class IdentityAwsPrivateLink(SpecModel):
    endpointServiceName: NonEmptyStr


class IdentityGcpServiceConnect(SpecModel):
    targetService: NonEmptyStr


class IdentityNativeNetworkResource(OneOfModel):
    ONE_OF = ("awsPrivateLink", "gcpServiceConnect")
    ONE_OF_WHAT = "private connection"

    name: NonEmptyStr
    FQDN: Fqdn | None = None
    ports: Ports
    awsPrivateLink: IdentityAwsPrivateLink | None = None
    gcpServiceConnect: IdentityGcpServiceConnect | None = None


class IdentityMemcacheAccess(SpecModel):
    clusterLink: NonEmptyStr
    role: Literal["readWrite"]


class IdentitySpicedbAccess(SpecModel):
    clusterLink: NonEmptyStr
    role: Literal["checkPermission", "read", "write"]


class IdentityFields(TopLevelModel):
    """The top-level fields a client may send for an identity (it has no ``spec``)."""

    aws: IdentityAws | None = None
    gcp: IdentityGcp | None = None
    azure: IdentityAzure | None = None
    ngs: IdentityNgs | None = None
    networkResources: Annotated[list[IdentityNetworkResource], Field(max_length=RESOURCES_MAX)] | None = None
    nativeNetworkResources: Annotated[list[IdentityNativeNetworkResource], Field(max_length=RESOURCES_MAX)] | None = (
        None
    )
    memcacheAccess: list[IdentityMemcacheAccess] | None = None
    spicedbAccess: list[IdentitySpicedbAccess] | None = None
