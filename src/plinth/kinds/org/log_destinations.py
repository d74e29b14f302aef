"""An org's log destinations: ``spec.logging`` and each entry of ``spec.extraLogging``.

A destination is an object with exactly one provider key (types-ts org.ts). Each provider's
fields follow the official CRD (Org.yaml) and are closed; they are modelled loosely (names
and types, with the fields a destination cannot work without required) because Plinth
forwards no logs itself: the point is to store what a client sends and reject typos.
``credentials`` fields hold secret links and are kept as sent.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from plinth.kinds.spec_model import NonEmptyStr, Port, SpecModel, exactly_one


class S3Logging(SpecModel):
    bucket: NonEmptyStr
    region: NonEmptyStr
    credentials: NonEmptyStr
    prefix: str | None = None


class CoralogixLogging(SpecModel):
    credentials: NonEmptyStr
    cluster: str | None = None
    app: str | None = None
    subsystem: str | None = None


class DatadogLogging(SpecModel):
    credentials: NonEmptyStr
    host: str | None = None


class LogzioLogging(SpecModel):
    credentials: NonEmptyStr
    listenerHost: str | None = None


class ElasticAws(SpecModel):
    host: NonEmptyStr
    port: Port
    index: NonEmptyStr
    type: NonEmptyStr
    credentials: NonEmptyStr
    region: NonEmptyStr


class ElasticCloud(SpecModel):
    index: NonEmptyStr
    type: NonEmptyStr
    credentials: NonEmptyStr
    cloudId: NonEmptyStr


class ElasticGeneric(SpecModel):
    host: NonEmptyStr
    index: NonEmptyStr
    type: NonEmptyStr
    credentials: NonEmptyStr
    port: Port | None = None
    path: str | None = None
    username: str | None = None
    password: str | None = None


class ElasticLogging(SpecModel):
    aws: ElasticAws | None = None
    elasticCloud: ElasticCloud | None = None
    generic: ElasticGeneric | None = None

    @model_validator(mode="after")
    def _one_flavour(self) -> ElasticLogging:
        exactly_one(self, ("aws", "elasticCloud", "generic"), "elastic flavour")
        return self


class CloudWatchLogging(SpecModel):
    credentials: NonEmptyStr
    groupName: NonEmptyStr
    streamName: NonEmptyStr
    region: str | None = None
    retentionDays: Annotated[int, Field(ge=0)] | None = None
    extractFields: dict[str, str] | None = None


class FluentdLogging(SpecModel):
    host: NonEmptyStr
    port: Port | None = None


class StackdriverLogging(SpecModel):
    credentials: NonEmptyStr
    location: str | None = None


class SyslogLogging(SpecModel):
    host: NonEmptyStr
    port: Port
    mode: Literal["tcp", "udp", "tls"] | None = None
    format: Literal["rfc3164", "rfc5424"] | None = None
    #: Syslog severity levels run from 0 (emergency) to 7 (debug).
    severity: Annotated[int, Field(ge=0, le=7)] | None = None


class OpenTelemetryLogging(SpecModel):
    endpoint: NonEmptyStr
    headers: dict[str, str] | None = None
    credentials: str | None = None


PROVIDERS: tuple[str, ...] = (
    "s3",
    "coralogix",
    "datadog",
    "logzio",
    "elastic",
    "cloudWatch",
    "fluentd",
    "stackdriver",
    "syslog",
    "opentelemetry",
)


class LoggingDestination(SpecModel):
    """One log destination: exactly one of the provider keys in :data:`PROVIDERS`."""

    s3: S3Logging | None = None
    coralogix: CoralogixLogging | None = None
    datadog: DatadogLogging | None = None
    logzio: LogzioLogging | None = None
    elastic: ElasticLogging | None = None
    cloudWatch: CloudWatchLogging | None = None
    fluentd: FluentdLogging | None = None
    stackdriver: StackdriverLogging | None = None
    syslog: SyslogLogging | None = None
    opentelemetry: OpenTelemetryLogging | None = None

    @model_validator(mode="after")
    def _one_provider(self) -> LoggingDestination:
        exactly_one(self, PROVIDERS, "logging provider")
        return self
