"""The shape of an org's ``spec`` (types-ts org.ts; Org.yaml), as pydantic models."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from plinth.kinds.org.log_destinations import LoggingDestination
from plinth.kinds.spec_model import Email, NonEmptyStr, Port, SpecModel
from plinth.kinds.tracing_model import Tracing

RetentionDays = Annotated[int, Field(ge=0)]


class AuthConfig(SpecModel):
    domainAutoMembers: list[NonEmptyStr] | None = None
    samlOnly: bool | None = None


class Observability(SpecModel):
    logsRetentionDays: RetentionDays | None = None
    metricsRetentionDays: RetentionDays | None = None
    tracesRetentionDays: RetentionDays | None = None
    defaultAlertEmails: list[Email] | None = None


class ThreatSyslog(SpecModel):
    transport: Literal["tcp", "udp"] | None = None
    host: NonEmptyStr
    port: Port


class ThreatDetection(SpecModel):
    enabled: bool
    minimumSeverity: Literal["warning", "error", "critical"] | None = None
    syslog: ThreatSyslog | None = None


class Security(SpecModel):
    threatDetection: ThreatDetection | None = None


class OrgSpec(SpecModel):
    logging: LoggingDestination | None = None
    extraLogging: list[LoggingDestination] | None = None
    tracing: Tracing | None = None
    sessionTimeoutSeconds: Annotated[int, Field(gt=0)] | None = None
    authConfig: AuthConfig | None = None
    observability: Observability | None = None
    security: Security | None = None
