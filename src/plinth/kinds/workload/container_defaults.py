"""The API's container defaults on write (TF resource_workload.go;
docs.controlplane.com/reference/workload/containers): :func:`fill_container_defaults`.

Filled on every container: ``cpu`` 50m and ``memory`` 128Mi when absent; ``inheritEnv``
false; each port's ``protocol`` http; each mount's ``recoveryPolicy`` retain (deprecated and
unused, but TS/TF give it that default and TF always sends it). Inside a probe the client
sent: the probe timings of ``probes``, and for ``httpGet`` path ``/``, scheme ``HTTP`` and, when the
container has a port, its first port (``probes.fill_probe_defaults``).

Two normalisations, with the reasons:

- The deprecated ``port: N`` becomes an entry ``{protocol: http, number: N}`` appended to
  ``ports`` (dropped instead when ``ports`` already lists N), and ``port`` goes away. That is
  exactly what TF sends for it (``buildContainers`` appends it with protocol http). DOCS say
  the server configures http2 for the legacy port and AI calls ``port`` and ``ports``
  mutually exclusive; we keep TF's shape, the only one a client is known to
  depend on, and accept both fields together rather than refuse what TF's merge produces.
- Probes on a ``cron`` workload are removed: a job has no traffic to gate. AI says the API
  strips them; TF refuses them client-side (TF resource_workload.go), so TF users never send any.
  Stripping keeps other clients' existing files working.

Every container's keys (and each probe's) end in the model's field order. The function is
idempotent: filling an already-filled spec changes nothing, so re-applying a file read back
from the API is a no-op.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds.workload.container_models import ContainerSpec
from plinth.kinds.workload.ports import DEFAULT_PROTOCOL
from plinth.kinds.workload.probes import PROBE_KINDS, fill_probe_defaults
from plinth.kinds.workload.resources import DEFAULT_CPU, DEFAULT_MEMORY
from plinth.kinds.workload.volumes import DEFAULT_RECOVERY_POLICY

_CONTAINER_DEFAULTS: dict[str, Any] = {"memory": DEFAULT_MEMORY, "cpu": DEFAULT_CPU, "inheritEnv": False}


def _fold_legacy_port(container: dict[str, Any]) -> None:
    legacy = container.pop("port", None)
    if legacy is None:
        return
    ports = container.setdefault("ports", [])
    if all(entry["number"] != legacy for entry in ports):
        ports.append({"protocol": DEFAULT_PROTOCOL, "number": legacy})


def _filled(container: dict[str, Any], cron: bool) -> dict[str, Any]:
    container = {**_CONTAINER_DEFAULTS, **container}
    _fold_legacy_port(container)
    if "ports" in container:
        container["ports"] = [
            {"protocol": entry.get("protocol", DEFAULT_PROTOCOL), "number": entry["number"]}
            for entry in container["ports"]
        ]
    if "volumes" in container:
        container["volumes"] = [
            {"uri": v["uri"], "recoveryPolicy": v.get("recoveryPolicy", DEFAULT_RECOVERY_POLICY), "path": v["path"]}
            for v in container["volumes"]
        ]
    ports = container.get("ports") or []
    first_port = ports[0]["number"] if ports else None
    for kind in PROBE_KINDS:
        if kind not in container:
            continue
        if cron:
            del container[kind]
        else:
            container[kind] = fill_probe_defaults(container[kind], kind, first_port)
    return {name: container[name] for name in ContainerSpec.model_fields if name in container}


def fill_container_defaults(spec: dict[str, Any]) -> None:
    """Fill each container's API defaults into ``spec`` (a schema-valid dump); mutates it.

    Reads ``spec['type']`` (the workload model always sets it) to strip probes on ``cron``.
    See the module docstring for what is filled and why.
    """
    cron = spec.get("type") == "cron"
    spec["containers"] = [_filled(container, cron) for container in spec.get("containers", [])]
