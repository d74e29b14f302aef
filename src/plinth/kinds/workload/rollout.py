"""``rolloutOptions``, ``securityOptions``, ``requestRetryPolicy`` and ``sidecar`` (TF resource_workload.go).

Defaults are filled only inside a block the client sent, never by creating the block: TF
models each as an optional block with these defaults inside it (``min_ready_seconds`` 0,
``scaling_policy`` OrderedReady, ``termination_grace_period_seconds`` 90, ``attempts`` 2 and
the ``retry_on`` list below), so the API echoes them within a sent block; an API that
invented the block would hand TF a block its configuration lacks. A workload without the
block behaves the same (DOCS termination.mdx: a 90 s grace period when unset).

Rules needing the type or the tags (a grace period above 900 only with
``cpln/relaxGracePeriodMax``, surge and unavailable not both zero except on stateful, where
``maxUnavailableReplicas`` is stored and means nothing) are in ``rules``. ``sidecar.envoy``
is free-form: the platform validates its Envoy filters itself (AI), and Plinth runs no Envoy.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from plinth.kinds.spec_model import SpecModel

#: A replica count or a percentage of the replicas: ``"2"``, ``"50%"`` (Kubernetes' IntOrString).
ReplicaCount = Annotated[str, Field(pattern=r"^[0-9]+%?$")]
#: What Envoy retries on unless told otherwise (TF, DOCS).
DEFAULT_RETRY_ON = (
    "connect-failure",
    "refused-stream",
    "unavailable",
    "cancelled",
    "resource-exhausted",
    "retriable-status-codes",
)
#: The grace period the API allows without the ``cpln/relaxGracePeriodMax`` tag (TF, AI).
GRACE_PERIOD_MAX = 900
RELAX_GRACE_PERIOD_TAG = "cpln/relaxGracePeriodMax"

UserId = Annotated[int, Field(ge=1, le=65534)]


class RolloutOptions(SpecModel):
    minReadySeconds: Annotated[int, Field(ge=0)] = 0
    maxUnavailableReplicas: ReplicaCount | None = None
    maxSurgeReplicas: ReplicaCount | None = None
    scalingPolicy: Literal["OrderedReady", "Parallel"] = "OrderedReady"
    #: 0-3600 (TF); above 900 only with the relax tag (``rules``).
    terminationGracePeriodSeconds: Annotated[int, Field(ge=0, le=3600)] = 90


class SecurityOptions(SpecModel):
    filesystemGroupId: UserId | None = None
    runAsUser: UserId | None = None


class RequestRetryPolicy(SpecModel):
    attempts: Annotated[int, Field(ge=0)] = 2
    retryOn: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=lambda: list(DEFAULT_RETRY_ON))


class WorkloadSidecar(SpecModel):
    envoy: dict[str, Any] | None = None
