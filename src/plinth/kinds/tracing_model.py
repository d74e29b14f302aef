"""The ``tracing`` block shared by the org and GVC specs (types-ts gvc.ts; Gvc.yaml, Org.yaml).

``{sampling 0-100, provider: {otel | lightstep | controlplane}, customTags}``; the older
top-level ``lightstep`` form is still accepted because existing items carry it. A tracing
block must name where traces go: exactly one of ``provider`` and the legacy ``lightstep``,
and a ``provider`` names exactly one backend.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from plinth.kinds.spec_model import NonEmptyStr, SpecModel, exactly_one


class LightstepTracing(SpecModel):
    endpoint: NonEmptyStr
    credentials: str | None = None


class OtelTracing(SpecModel):
    endpoint: NonEmptyStr


class ControlPlaneTracing(SpecModel):
    """The platform's own collector: nothing to configure."""


class TracingProvider(SpecModel):
    otel: OtelTracing | None = None
    lightstep: LightstepTracing | None = None
    controlplane: ControlPlaneTracing | None = None

    @model_validator(mode="after")
    def _one_backend(self) -> TracingProvider:
        exactly_one(self, ("otel", "lightstep", "controlplane"), "tracing provider")
        return self


class LiteralTag(SpecModel):
    value: str


class CustomTag(SpecModel):
    literal: LiteralTag


class Tracing(SpecModel):
    """Where traces go, and which share of requests is sampled (a percentage)."""

    sampling: Annotated[float, Field(ge=0, le=100)]
    lightstep: LightstepTracing | None = None
    provider: TracingProvider | None = None
    customTags: dict[str, CustomTag] | None = None

    @model_validator(mode="after")
    def _one_destination(self) -> Tracing:
        exactly_one(self, ("provider", "lightstep"), "trace destination")
        return self
