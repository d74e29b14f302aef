"""Workload items -> the provider's ``cpln_workload`` resource (TF resource_workload.go).

The provider's layout differs from the wire in ways a generic camelCase -> snake_case walk
gets wrong, so the mapping is spelled out as a table of shapes, one per wire object:

- repeated objects are repeated blocks with a singular name (``containers`` -> ``container``,
  ``volumes`` -> ``volume``, ``keda.triggers`` -> ``trigger``, ``direct.ports`` -> ``port``);
- ``[{name, value}]`` lists are string maps (``env``, ``httpGet.httpHeaders`` -> ``http_headers``);
- ``spec.defaultOptions`` is ``options``; every ``options``/``local_options`` block carries an
  ``autoscaling`` block, empty if need be, because the provider refuses one without it;
- ``localOptions[].location`` is the location's name (the provider adds the link itself);
- ``gpu.nvidia``/``gpu.custom`` are the container blocks ``gpu_nvidia``/``gpu_custom``;
- ``sidecar.envoy`` and ``extras`` are JSON strings (compact, keys sorted, ``<``, ``>`` and
  ``&`` escaped: what the provider itself stores after reading the workload, so a plan after
  import shows no change);
- ``vm`` is a nested *attribute* (``vm = {...}``), not a block; ``networks`` -> ``network``,
  ``accessCredentials`` -> ``access_credential``;
- links (``identity_link``, ``ipset``, ``inbound_allow_workload``) are kept as the API returns
  them, which is what the provider keeps on import.

Server-owned fields (``status``, ``health``) and wire fields the provider has no argument for
(``spot``, for instance) are left out: Terraform would refuse the file otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from plinth.convert.hcl import Attribute, Block
from plinth.convert.tfbody import Body, common, gvc_of, snake


@dataclass(frozen=True, slots=True)
class Arg:
    """How one wire field becomes provider arguments.

    ``kind``: ``attr`` (a value), ``block`` (one block per object, ``fields`` their shape),
    ``inline`` (the object's own fields are emitted at this level), ``pairs`` (``[{name, value}]``
    as a string map), ``strings`` (a map with string values), ``json`` (JSON text), ``name``
    (a link's last segment), ``object`` (a nested attribute object, keys in snake case).
    ``always``: emit an empty block when the wire has none.
    """

    name: str | None = None
    kind: str = "attr"
    fields: dict[str, Arg] = field(default_factory=dict)
    always: bool = False


Shape = dict[str, Arg]
ATTR = Arg()


def attr(name: str) -> Arg:
    """An attribute whose provider name is not the wire name in snake case."""
    return Arg(name)


def block(fields: Shape, name: str | None = None, always: bool = False) -> Arg:
    """A block (one per object of a list) with ``fields`` inside; ``name`` defaults to the snake case."""
    return Arg(name, "block", fields, always)


EXEC = block({"command": ATTR})
PROBE: Shape = {
    "initialDelaySeconds": ATTR,
    "periodSeconds": ATTR,
    "timeoutSeconds": ATTR,
    "successThreshold": ATTR,
    "failureThreshold": ATTR,
    "exec": EXEC,
    "grpc": block({"port": ATTR}),
    "tcpSocket": block({"port": ATTR}),
    "httpGet": block({"path": ATTR, "port": ATTR, "httpHeaders": Arg(kind="pairs"), "scheme": ATTR}),
}
LIFECYCLE_HOOK = block({"exec": EXEC})
CONTAINER: Shape = {
    "name": ATTR,
    "image": ATTR,
    "workingDir": attr("working_directory"),
    "port": ATTR,
    "memory": ATTR,
    "cpu": ATTR,
    "minCpu": ATTR,
    "minMemory": ATTR,
    "env": Arg(kind="pairs"),
    "inheritEnv": ATTR,
    "command": ATTR,
    "args": ATTR,
    "metrics": block({"port": ATTR, "path": ATTR, "dropMetrics": ATTR}),
    "ports": block({"protocol": ATTR, "number": ATTR}),
    "readinessProbe": block(PROBE),
    "livenessProbe": block(PROBE),
    "gpu": Arg(
        kind="inline",
        fields={
            "nvidia": block({"model": ATTR, "quantity": ATTR}, "gpu_nvidia"),
            "custom": block({"resource": ATTR, "runtimeClass": ATTR, "quantity": ATTR}, "gpu_custom"),
        },
    ),
    "lifecycle": block({"postStart": LIFECYCLE_HOOK, "preStop": LIFECYCLE_HOOK}),
    "volumes": block(
        {"uri": ATTR, "recoveryPolicy": ATTR, "path": ATTR, "name": ATTR, "bus": ATTR, "bootOrder": ATTR}, "volume"
    ),
}
FIREWALL: Shape = {
    "external": block(
        {
            "inboundAllowCIDR": ATTR,
            "inboundBlockedCIDR": ATTR,
            "outboundAllowHostname": ATTR,
            "outboundAllowCIDR": ATTR,
            "outboundBlockedCIDR": ATTR,
            "outboundAllowPort": block({"protocol": ATTR, "number": ATTR}),
            "http": block({"inboundHeaderFilter": block({"key": ATTR, "allowedValues": ATTR, "blockedValues": ATTR})}),
        }
    ),
    "internal": block({"inboundAllowType": ATTR, "inboundAllowWorkload": ATTR}),
}
KEDA: Shape = {
    "pollingInterval": ATTR,
    "cooldownPeriod": ATTR,
    "initialCooldownPeriod": ATTR,
    "triggers": block(
        {
            "type": ATTR,
            "metadata": Arg(kind="strings"),
            "name": ATTR,
            "useCachedMetrics": ATTR,
            "metricType": ATTR,
            "authenticationRef": block({"name": ATTR}),
        },
        "trigger",
    ),
    "advanced": block(
        {
            "scalingModifiers": block(
                {"target": ATTR, "activationTarget": ATTR, "metricType": ATTR, "formula": ATTR},
            )
        }
    ),
    "fallback": block({"failureThreshold": ATTR, "replicas": ATTR, "behavior": ATTR}),
}
AUTOSCALING: Shape = {
    "metric": ATTR,
    "metricPercentile": ATTR,
    "target": ATTR,
    "minScale": ATTR,
    "maxScale": ATTR,
    "scaleToZeroDelay": ATTR,
    "maxConcurrency": ATTR,
    "multi": block({"metric": ATTR, "target": ATTR}),
    "keda": block(KEDA),
}
OPTIONS: Shape = {
    "timeoutSeconds": ATTR,
    "capacityAI": attr("capacity_ai"),
    "capacityAIUpdateMinutes": attr("capacity_ai_update_minutes"),
    "debug": ATTR,
    "suspend": ATTR,
    "autoscaling": block(AUTOSCALING, always=True),
    "multiZone": block({"enabled": ATTR}),
}
LOCAL_OPTIONS: Shape = {"location": Arg(kind="name"), **OPTIONS}
LOAD_BALANCER: Shape = {
    "replicaDirect": ATTR,
    "direct": block(
        {
            "enabled": ATTR,
            "ipSet": attr("ipset"),
            "ports": block({"externalPort": ATTR, "protocol": ATTR, "scheme": ATTR, "containerPort": ATTR}, "port"),
        }
    ),
    "geoLocation": block(
        {"enabled": ATTR, "headers": block({"asn": ATTR, "city": ATTR, "country": ATTR, "region": ATTR})}
    ),
}
SPEC: Shape = {
    "identityLink": ATTR,
    "supportDynamicTags": ATTR,
    "extras": Arg(kind="json"),
    "vm": Arg(kind="object"),
    "containers": block(CONTAINER, "container"),
    "firewallConfig": block(FIREWALL, "firewall_spec"),
    "defaultOptions": block(OPTIONS, "options"),
    "localOptions": block(LOCAL_OPTIONS, "local_options"),
    "job": block(
        {
            "schedule": ATTR,
            "concurrencyPolicy": ATTR,
            "historyLimit": ATTR,
            "restartPolicy": ATTR,
            "activeDeadlineSeconds": ATTR,
        }
    ),
    "sidecar": block({"envoy": Arg(kind="json")}),
    "rolloutOptions": block(
        {
            "minReadySeconds": ATTR,
            "maxUnavailableReplicas": ATTR,
            "maxSurgeReplicas": ATTR,
            "scalingPolicy": ATTR,
            "terminationGracePeriodSeconds": ATTR,
        }
    ),
    "securityOptions": block({"filesystemGroupId": attr("file_system_group_id"), "runAsUser": ATTR}),
    "loadBalancer": block(LOAD_BALANCER),
    "requestRetryPolicy": block({"attempts": ATTR, "retryOn": ATTR}),
}
#: ``vm`` keys whose provider name is not their snake case.
VM_NAMES = {"networks": "network", "accessCredentials": "access_credential"}


def workload(item: dict[str, Any]) -> Body:
    """The body of a ``cpln_workload`` resource: ``name``, ``description``, ``tags``, ``gvc``,
    ``type``, then the spec in the provider's layout (see the module docstring)."""
    spec = item.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    head: Body = [
        *common(item),
        Attribute("gvc", gvc_of(item) or ""),
        # The API's default type (types-ts workload.ts); the provider requires the argument.
        Attribute("type", spec.get("type") or "standard"),
    ]
    return head + body_of(spec, SPEC)


def body_of(obj: dict[str, Any], shape: Shape) -> Body:
    """``obj``'s arguments in ``shape``'s order: attributes first, then blocks."""
    attributes: Body = []
    blocks: Body = []
    for key, arg in shape.items():
        value = obj.get(key)
        if arg.kind == "block":
            blocks.extend(_blocks(arg.name or snake(key), value, arg))
        elif arg.kind == "inline":
            inner = body_of(value, arg.fields) if isinstance(value, dict) else []
            attributes.extend(e for e in inner if isinstance(e, Attribute))
            blocks.extend(e for e in inner if isinstance(e, Block))
        elif value is not None:
            attributes.append(Attribute(arg.name or snake(key), _value(arg.kind, value)))
    return attributes + blocks


def _blocks(name: str, value: Any, arg: Arg) -> list[Block]:
    items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
    found = [Block(name, body_of(entry, arg.fields)) for entry in items if isinstance(entry, dict)]
    if not found and arg.always:
        found = [Block(name, [])]
    return found


def _value(kind: str, value: Any) -> Any:
    if kind == "pairs":
        pairs = value if isinstance(value, list) else []
        return {
            str(p["name"]): _string(p.get("value")) for p in pairs if isinstance(p, dict) and p.get("name") is not None
        }
    if kind == "strings":
        return {str(k): _string(v) for k, v in value.items()} if isinstance(value, dict) else value
    if kind == "json":
        return provider_json(value)
    if kind == "name":
        return str(value).rsplit("/", 1)[-1]
    if kind == "object":
        return _snake_object(value)
    return value


def _string(value: Any) -> str | None:
    """A string map's value: strings as they are, null kept (an unset value), others as JSON text."""
    return value if value is None or isinstance(value, str) else json.dumps(value)


def _snake_object(value: Any) -> Any:
    if isinstance(value, dict):
        return {VM_NAMES.get(k, snake(k)): _snake_object(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_snake_object(v) for v in value]
    return value


def provider_json(value: Any) -> str:
    """JSON text as the provider writes it into state (Go's ``json.Marshal``): compact, object
    keys sorted, ``<``, ``>``, ``&``, U+2028 and U+2029 escaped."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text
