"""``defaultOptions`` and ``localOptions[]`` (docs.controlplane.com/reference/workload/autoscaling): scaling and
runtime options.

Both share one shape; a local option adds the ``location`` it applies to. Every field is
optional and has no model default: a local option overrides only what it names, so filling
defaults here would make every local option override everything. The API's defaults for
``defaultOptions`` are filled by ``prepare``; the type matrix (which metric each type allows,
``minScale: 0``, ``multi``, KEDA, Capacity AI) needs the type and is checked in ``option_rules``.

Choices where the sources differ:

- ``timeoutSeconds`` is 1-3600 (TF, whose 1.2.31 release "aligned workload autoscaling ...
  bounds with the API"), not DOCS' 1-600 with the ``cpln/timeoutSecondsOverride`` tag
  lifting it to 3600 (docs.controlplane.com/reference/workload/general): refusing what the official provider
  validates would break its users, and the tag's own semantics (a flag or the value itself) are unstated.
- ``multi[].metric`` is required: an entry without a metric means nothing, and "each metric
  once" needs it. ``multi[].target`` stays optional as in TS and TF.
- KEDA trigger ``metadata`` values are strings: KEDA's own ``metadata`` is a string map (TF,
  the CRD), even though TS types it loosely.
- ``suspend`` also takes the strings ``"true"`` and ``"false"``, stored as the boolean: the
  published Python SDK cpln-py (1.2.4, ``Workload.suspend``/``unsuspend``) sends
  ``{"spec": {"defaultOptions": {"suspend": "true"}}}``, which the live API evidently accepts.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from plinth.kinds.spec_model import BoolText, NonEmptyStr, SpecModel

Metric = Literal["concurrency", "cpu", "memory", "rps", "latency", "keda", "disabled"]
MultiMetricName = Literal["cpu", "memory", "rps"]
KedaMetricType = Literal["AverageValue", "Value", "Utilization"]

#: ``target`` bounds (TF, AI); cpu and memory are further limited to 100 (a percentage) by the rules.
Target = Annotated[int, Field(ge=1, le=20000)]
Replicas = Annotated[int, Field(ge=0)]
Seconds = Annotated[int, Field(ge=1)]

#: A location by name (``aws-us-east-1``) or link (``//location/N``, ``/org/O/location/N``).
_LOCATION = re.compile(r"(?:(?:/org/[^/\s]+|/)/location/)?[^/\s]+")


def _check_location(value: str) -> str:
    if not _LOCATION.fullmatch(value):
        raise ValueError("must be a location name or link (//location/NAME or /org/ORG/location/NAME)")
    return value


class MultiMetric(SpecModel):
    metric: MultiMetricName
    target: Target | None = None


class KedaAuthenticationRef(SpecModel):
    #: The name of a secret listed in the GVC's ``spec.keda.secrets`` (checked by the rules).
    name: NonEmptyStr


class KedaTrigger(SpecModel):
    type: NonEmptyStr
    metadata: dict[str, str] | None = None
    name: NonEmptyStr | None = None
    useCachedMetrics: bool | None = None
    metricType: KedaMetricType | None = None
    authenticationRef: KedaAuthenticationRef | None = None


class KedaScalingModifiers(SpecModel):
    target: str | None = None
    activationTarget: str | None = None
    metricType: KedaMetricType | None = None
    formula: str | None = None


class KedaAdvanced(SpecModel):
    scalingModifiers: KedaScalingModifiers | None = None


class KedaFallback(SpecModel):
    #: KEDA itself requires both to be at least 0.
    failureThreshold: Replicas
    replicas: Replicas
    behavior: Literal["static", "currentReplicas", "currentReplicasIfHigher", "currentReplicasIfLower"] | None = None


class WorkloadKeda(SpecModel):
    triggers: list[KedaTrigger] | None = None
    advanced: KedaAdvanced | None = None
    fallback: KedaFallback | None = None
    pollingInterval: Seconds | None = None
    cooldownPeriod: Seconds | None = None
    initialCooldownPeriod: Seconds | None = None


class WorkloadAutoscaling(SpecModel):
    """Fields in the platform's order (TS); every one optional, see the module docstring."""

    metric: Metric | None = None
    multi: list[MultiMetric] | None = None
    metricPercentile: Literal["p50", "p75", "p99"] | None = None
    target: Target | None = None
    maxScale: Replicas | None = None
    minScale: Replicas | None = None
    scaleToZeroDelay: Annotated[int, Field(ge=30, le=3600)] | None = None
    maxConcurrency: Annotated[int, Field(ge=0, le=30000)] | None = None
    keda: WorkloadKeda | None = None


class WorkloadMultiZone(SpecModel):
    enabled: bool = False


class WorkloadOptions(SpecModel):
    """``defaultOptions``: what every location runs with unless a local option says otherwise."""

    autoscaling: WorkloadAutoscaling | None = None
    timeoutSeconds: Annotated[int, Field(ge=1, le=3600)] | None = None
    capacityAI: bool | None = None
    capacityAIUpdateMinutes: Annotated[int, Field(ge=2)] | None = None
    spot: bool | None = None
    debug: bool | None = None
    suspend: BoolText | None = None
    multiZone: WorkloadMultiZone | None = None


class WorkloadLocalOptions(WorkloadOptions):
    """One ``localOptions[]`` entry: overrides for the location it names (required)."""

    location: Annotated[str, AfterValidator(_check_location)]
