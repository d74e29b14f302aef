"""Health checks: ``readinessProbe`` and ``livenessProbe`` (TF resource_workload.go), and their defaults.

Bounds follow TF and AI (initialDelaySeconds 0-600, periodSeconds and timeoutSeconds 1-600,
thresholds 1-20), not the older DOCS page (0-120 / 1-60 / 1-60): TF's CHANGELOG says its
bounds were aligned with the API, and AI agrees. The same goes for the
defaults: ``initialDelaySeconds`` is 10 for readiness and 60 for liveness (DOCS says 0).

A probe names exactly one handler (AI; TF has that check commented out, so a TF user can
only ever send one). Defaults are filled only inside a probe the client sent: adding a probe
the client left out would change what runs, and declarative clients would see a difference.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from plinth.kinds.spec_model import SpecModel, exactly_one
from plinth.kinds.workload.ports import ContainerPortNumber

ProbeKind = Literal["readinessProbe", "livenessProbe"]
PROBE_KINDS: tuple[ProbeKind, ...] = ("readinessProbe", "livenessProbe")
HANDLERS = ("exec", "grpc", "tcpSocket", "httpGet")

#: The defaults (TF resource_workload.go) shared by both probes, in the model's field order.
PROBE_TIMING_DEFAULTS: dict[str, int] = {
    "periodSeconds": 10,
    "timeoutSeconds": 1,
    "successThreshold": 1,
    "failureThreshold": 3,
}
INITIAL_DELAY_DEFAULTS: dict[ProbeKind, int] = {"readinessProbe": 10, "livenessProbe": 60}
HTTP_GET_DEFAULTS: dict[str, str] = {"path": "/", "scheme": "HTTP"}


class Exec(SpecModel):
    """A command run inside the container; shared by probes and lifecycle hooks (≥ 1 item, TF)."""

    command: Annotated[list[str], Field(min_length=1)]


class PortAction(SpecModel):
    """``grpc`` or ``tcpSocket``: a port of the container (TS makes it optional)."""

    port: ContainerPortNumber | None = None


class HttpHeader(SpecModel):
    name: Annotated[str, Field(min_length=1)]
    value: str


class HttpGet(SpecModel):
    path: Annotated[str, Field(max_length=256)] | None = None
    #: Defaults to the container's first port, when it has one.
    port: ContainerPortNumber | None = None
    httpHeaders: list[HttpHeader] | None = None
    scheme: Literal["HTTP", "HTTPS"] | None = None


class Probe(SpecModel):
    exec: Exec | None = None
    grpc: PortAction | None = None
    tcpSocket: PortAction | None = None
    httpGet: HttpGet | None = None
    initialDelaySeconds: Annotated[int, Field(ge=0, le=600)] | None = None
    periodSeconds: Annotated[int, Field(ge=1, le=600)] | None = None
    timeoutSeconds: Annotated[int, Field(ge=1, le=600)] | None = None
    successThreshold: Annotated[int, Field(ge=1, le=20)] | None = None
    failureThreshold: Annotated[int, Field(ge=1, le=20)] | None = None

    @model_validator(mode="after")
    def _one_handler(self) -> Probe:
        exactly_one(self, HANDLERS, "probe handler")
        return self


def _ordered(block: dict[str, Any], model: type[SpecModel]) -> dict[str, Any]:
    return {name: block[name] for name in model.model_fields if name in block}


def fill_probe_defaults(probe: dict[str, Any], kind: ProbeKind, first_port: int | None) -> dict[str, Any]:
    """``probe`` (a schema-valid dump) with the defaults filled in, keys in model order.

    ``first_port`` is the container's first exposed port: TF fills an ``httpGet`` probe's
    missing port with it (``ModifyHealthCheck``), so a probe written for TF reads back the same.
    """
    filled = {"initialDelaySeconds": INITIAL_DELAY_DEFAULTS[kind], **PROBE_TIMING_DEFAULTS, **probe}
    http_get = filled.get("httpGet")
    if http_get is not None:
        http_get = {**HTTP_GET_DEFAULTS, **http_get}
        if first_port is not None:
            http_get.setdefault("port", first_port)
        filled["httpGet"] = _ordered(http_get, HttpGet)
    return _ordered(filled, Probe)
