"""The shape of a domain's ``spec`` (docs.controlplane.com/reference/domain, CRD ``domains.cpln.io``), as pydantic
models.

These models hold the per-field rules only: types, enums, bounds, character sets, the
defaults the sources give as API defaults (types-ts domain.ts, TF resource_domain.go). Rules that relate two fields
(exactly one of ``prefix``/``regex``, ``.internal`` restrictions, limits that depend on tags, ...) live in
``rules`` and ``route_rules`` so that they are reported together, with precise paths, in
one list.

Every model forbids unknown fields and is strict: JSON numbers, strings and booleans are
not converted into one another (``"443"`` is not a port number), so the stored form is
exactly what a client sent plus defaults. Wire names are camelCase (``alias_generator``);
the Python attribute names are their snake_case forms.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

_CONFIG = ConfigDict(extra="forbid", strict=True, alias_generator=to_camel)

CipherSuite = Literal[
    "ECDHE-ECDSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305",
    "ECDHE-ECDSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-RSA-CHACHA20-POLY1305",
    "ECDHE-RSA-AES128-GCM-SHA256",
    "AES256-GCM-SHA384",
    "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_AES_128_GCM_SHA256",
    "DES-CBC3-SHA",
    "ECDHE-RSA-AES128-SHA",
    "ECDHE-RSA-AES256-SHA",
    "AES128-SHA",
    "AES256-SHA",
]
#: The full enum (21), in the order types-ts domain.ts lists it.
CIPHER_SUITES: tuple[CipherSuite, ...] = get_args(CipherSuite)
#: The API's default set: the first eight of the enum (docs.controlplane.com/reference/domain, from TF).
DEFAULT_CIPHER_SUITES: tuple[CipherSuite, ...] = CIPHER_SUITES[:8]

#: The only variables a ``headers.request.set`` value may use (docs.controlplane.com/reference/domain, from AI).
HEADER_VARIABLES: frozenset[str] = frozenset(
    {"REQUESTED_SERVER_NAME", "DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT", "START_TIME"}
)
# ``%%`` is Envoy's escape for a literal percent sign; any other ``%`` must open a variable.
_HEADER_TOKEN = re.compile(r"%%|%([^%]*)%|%")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HOST_PREFIX = re.compile(r"^[A-Za-z0-9._-]+$")
_MAX_AGE = re.compile(r"^[0-9]+[hms]$")


def _check_header_value(value: str) -> str:
    """Literal text plus ``%VAR%`` for the allowed variables; ``%%`` is a literal ``%``."""
    for match in _HEADER_TOKEN.finditer(value):
        token = match.group(0)
        if token == "%%":
            continue
        variable = match.group(1)
        if variable is None:
            raise ValueError("a '%' must open one of the allowed variables (write '%%' for a literal '%')")
        if variable not in HEADER_VARIABLES:
            allowed = ", ".join(f"%{v}%" for v in sorted(HEADER_VARIABLES))
            raise ValueError(f"unknown variable %{variable}%; allowed: {allowed}")
    return value


def _check_header_names(headers: dict[str, str]) -> dict[str, str]:
    bad = [name for name in headers if not _HEADER_NAME.fullmatch(name)]
    if bad:
        raise ValueError(f"not a valid HTTP header name: {bad[0]!r}")
    return headers


def _check_max_age(value: str) -> str:
    if not _MAX_AGE.fullmatch(value):
        raise ValueError("must be digits followed by h, m or s (e.g. 24h, 90m, 600s)")
    return value


def _check_host_prefix(value: str) -> str:
    if not _HOST_PREFIX.fullmatch(value):
        raise ValueError("may contain only letters, digits, '.', '_' and '-'")
    return value


def _check_path_prefix(value: str) -> str:
    if not value.startswith("/"):
        raise ValueError("must start with '/'")
    return value


def _check_unique(values: list[str]) -> list[str]:
    if len(set(values)) != len(values):
        raise ValueError("must not list the same cipher suite twice")
    return values


NonEmpty = Annotated[str, Field(min_length=1)]
PortNumber = Annotated[int, Field(ge=1, le=65535)]
HeaderValue = Annotated[str, AfterValidator(_check_header_value)]


class SecretRef(BaseModel):
    """A certificate held in a secret (TLS or keypair type; TF and docs.controlplane.com/reference/domain disagree)."""

    model_config = _CONFIG
    secret_link: NonEmpty


class TlsConfig(BaseModel):
    model_config = _CONFIG
    min_protocol_version: Literal["TLSV1_3", "TLSV1_2", "TLSV1_1", "TLSV1_0"] = "TLSV1_2"
    cipher_suites: Annotated[list[CipherSuite], Field(min_length=1), AfterValidator(_check_unique)] = Field(
        default_factory=lambda: list(DEFAULT_CIPHER_SUITES)
    )
    client_certificate: SecretRef | None = None
    server_certificate: SecretRef | None = None


class AllowOrigin(BaseModel):
    """Exactly one of ``exact``/``regex`` (checked in the rules, with the field's path)."""

    model_config = _CONFIG
    exact: NonEmpty | None = None
    regex: NonEmpty | None = None


class CorsConfig(BaseModel):
    model_config = _CONFIG
    allow_origins: list[AllowOrigin] | None = None
    allow_methods: list[NonEmpty] | None = None
    allow_headers: list[NonEmpty] | None = None
    expose_headers: list[NonEmpty] | None = None
    max_age: Annotated[str, AfterValidator(_check_max_age)] = "24h"
    allow_credentials: bool = False


class RequestHeaders(BaseModel):
    model_config = _CONFIG
    set: Annotated[dict[str, HeaderValue], AfterValidator(_check_header_names)] | None = None


class RouteHeaders(BaseModel):
    model_config = _CONFIG
    request: RequestHeaders | None = None


class Mirror(BaseModel):
    model_config = _CONFIG
    workload_link: NonEmpty
    percent: Annotated[float, Field(ge=0, le=100)]
    port: PortNumber | None = None


class Canary(BaseModel):
    """Weight 0 keeps the entry but sends it no traffic (docs.controlplane.com/reference/domain)."""

    model_config = _CONFIG
    workload_link: NonEmpty
    weight: Annotated[int, Field(ge=0, le=100)]
    port: PortNumber | None = None


class Route(BaseModel):
    """One route. ``prefix`` defaults to ``/`` in ``prepare`` when neither it nor ``regex`` is set,
    and must start with ``/``: it matches URL paths, which always do.

    ``regex`` and ``hostRegex`` are RE2 expressions evaluated by the proxy; Python's ``re`` is
    another dialect, so they are only required to be non-empty here.
    """

    model_config = _CONFIG
    prefix: Annotated[str, AfterValidator(_check_path_prefix)] | None = None
    regex: NonEmpty | None = None
    replace_prefix: str | None = None
    workload_link: NonEmpty
    port: PortNumber | None = None
    host_prefix: Annotated[str, AfterValidator(_check_host_prefix)] | None = None
    host_regex: NonEmpty | None = None
    headers: RouteHeaders | None = None
    replica: Annotated[int, Field(ge=0)] | None = None
    mirror: list[Mirror] | None = None
    canaries: list[Canary] | None = None


class DomainPort(BaseModel):
    model_config = _CONFIG
    number: PortNumber = 443
    protocol: Literal["http", "http2", "tcp"] = "http2"
    routes: list[Route] | None = None
    cors: CorsConfig | None = None
    tls: TlsConfig | None = None


class DomainSpec(BaseModel):
    """``spec`` of a domain. ``dnsMode`` and ``certChallengeType`` are defaulted in ``prepare``,
    because their defaults depend on other fields and on the domain's name."""

    model_config = _CONFIG
    dns_mode: Literal["cname", "ns"] | None = None
    gvc_link: NonEmpty | None = None
    cert_challenge_type: Literal["http01", "dns01"] | None = None
    workload_link: NonEmpty | None = None
    accept_all_hosts: bool = False
    accept_all_subdomains: bool = False
    ports: list[DomainPort] | None = None


def default_tls() -> dict[str, object]:
    """The TLS block the API inserts on port 443 (http/http2) when a client omits it."""
    return TlsConfig().model_dump(mode="json", by_alias=True, exclude_none=True)
