"""Rules across a workload's containers, or needing its type or tags: :func:`container_errors`.

Runs on the candidate after ``container_defaults`` (so ``cpu``/``memory`` are set, the
legacy ``port`` is already in ``ports`` and cron probes are gone). Every problem comes back
at once, each at its own JSON path; nothing is mutated and nothing raises.

- ``image`` is required unless the type is ``vm`` (TS, TF);
- container names are unique (they are the merge key of ``$patch/containers``);
- port numbers are unique across all containers (AI), a legacy ``port`` included: by now it
  is the last entry of its container's ``ports``, and a clash is reported there;
- the type matrix for ports (docs.controlplane.com/reference/workload/types): ``serverless`` exposes exactly one
  port, on exactly one container. ``cron`` ports are accepted and kept though DOCS say cron cannot
  expose ports: the vendor's own TF acceptance tests create cron workloads with three ports
  (TF resource_workload_test.go, ``CronUpdate1Hcl``), so the API evidently takes and ignores them;
- an env var ``PORT`` on a container that exposes ports equals one of them (DOCS
  containers.mdx: the platform sets ``PORT`` itself to the exposed port). DOCS speak of a
  single exposed port; with several, any of them is accepted rather than guessing which one
  the platform means. A container exposing none may set ``PORT`` to anything;
- mounts of one container do not share or nest paths (``volumes``);
- compute and GPU rules (``resources``).

Not here: options, autoscaling and Capacity AI (including "no Capacity AI with a GPU"),
firewall, job, rollout, load balancer, vm, and whether linked secrets and volume sets exist.
"""

from __future__ import annotations

from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext
from plinth.kinds.workload.resources import ratio_relaxed, resource_errors
from plinth.kinds.workload.volumes import mount_overlap_errors

BASE = "spec.containers"


def _base(index: int) -> str:
    return f"{BASE}[{index}]"


def _image_errors(containers: list[dict[str, Any]], workload_type: str) -> list[FieldError]:
    if workload_type == "vm":
        return []
    return [FieldError(f"{_base(i)}.image", "is required") for i, c in enumerate(containers) if "image" not in c]


def _name_errors(containers: list[dict[str, Any]]) -> list[FieldError]:
    errors = []
    first: dict[str, int] = {}
    for index, container in enumerate(containers):
        name = container.get("name")
        if name is None:
            continue
        if name in first:
            errors.append(FieldError(f"{_base(index)}.name", f"'{name}' is already the name of {_base(first[name])}"))
        else:
            first[name] = index
    return errors


def _exposed(containers: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    """(container index, port index, number) of every exposed port, in document order."""
    return [
        (index, port_index, port["number"])
        for index, container in enumerate(containers)
        for port_index, port in enumerate(container.get("ports") or [])
    ]


def _port_errors(containers: list[dict[str, Any]], workload_type: str) -> list[FieldError]:
    exposed = _exposed(containers)
    errors = []
    first: dict[int, str] = {}
    for index, port_index, number in exposed:
        path = f"{_base(index)}.ports[{port_index}]"
        if number in first:
            errors.append(FieldError(f"{path}.number", f"port {number} is already exposed by {first[number]}"))
        else:
            first[number] = path
    if workload_type == "serverless":
        if not exposed:
            errors.append(FieldError(BASE, "a serverless workload must expose exactly one port, on one container"))
        for index, port_index, _ in exposed[1:]:
            errors.append(
                FieldError(
                    f"{_base(index)}.ports[{port_index}]",
                    "a serverless workload exposes exactly one port, on one container; remove this one",
                )
            )
    return errors


def _port_env_errors(container: dict[str, Any], base: str) -> list[FieldError]:
    numbers = [str(port["number"]) for port in container.get("ports") or []]
    if not numbers:
        return []
    allowed = " or ".join(numbers)
    return [
        FieldError(f"{base}.env[{index}].value", f"PORT must be the container's exposed port ({allowed})")
        for index, var in enumerate(container.get("env") or [])
        if var["name"] == "PORT" and var.get("value") not in numbers
    ]


def container_errors(item: Item, ctx: KindContext) -> list[FieldError]:
    """Every rule of the module docstring on ``item['spec']['containers']``, each at its JSON path.

    ``item`` is the candidate after ``prepare``; ``ctx`` is not needed yet (the GVC's env,
    for one, does not constrain a container). Mutates nothing; never raises.
    """
    spec = item["spec"]
    containers: list[dict[str, Any]] = spec.get("containers") or []
    workload_type = spec.get("type", "standard")
    relaxed = ratio_relaxed(item.get("tags") or {})
    errors = _image_errors(containers, workload_type) + _name_errors(containers)
    errors += _port_errors(containers, workload_type)
    for index, container in enumerate(containers):
        base = _base(index)
        errors += resource_errors(container, base, workload_type, relaxed)
        errors += _port_env_errors(container, base)
        errors += mount_overlap_errors(container.get("volumes") or [], base)
    return errors
