"""Shared builders for the workload-level spec tests: they drive the engine's real pure pipeline."""

from __future__ import annotations

import copy
from typing import Any

from plinth.engine.pipeline import build_candidate, strip_server_owned
from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext
from plinth.kinds.workload import WORKLOAD

GVC_ID = "5d9c0c52-8d5e-4f0b-9d43-1c7a52f0e111"
#: The parent GVC: two static locations, KEDA off.
PARENT_GVC: Item = {
    "id": GVC_ID,
    "name": "main",
    "spec": {"staticPlacement": {"locationLinks": ["//location/aws-us-east-1", "//location/gcp-us-east1"]}},
}
#: The same GVC with KEDA enabled and one secret a trigger may authenticate with.
KEDA_GVC: Item = {
    **PARENT_GVC,
    "spec": {**PARENT_GVC["spec"], "keda": {"enabled": True, "secrets": ["//secret/redis-auth"]}},
}


def context(parent: Item = PARENT_GVC) -> KindContext:
    """The context the engine builds for a write into GVC ``main`` of org ``acme``."""
    return KindContext(org="acme", now="2026-01-01T00:00:00.000Z", gvc="main", parent=parent, id="wl-0001")


def write(
    spec: Any = None,
    *,
    body: dict[str, Any] | None = None,
    old: Item | None = None,
    parent: Item = PARENT_GVC,
    name: str = "web",
) -> tuple[Item, list[FieldError]]:
    """Run one workload write as the engine does: strip server-owned fields, then build."""
    full = {"spec": copy.deepcopy(spec)} if body is None else copy.deepcopy(body)
    return build_candidate(WORKLOAD, strip_server_owned(WORKLOAD, full), old, context(parent), name)


def stored(spec: dict[str, Any], **kwargs: Any) -> Item:
    """The candidate of a write that must succeed (fails the test with the errors otherwise)."""
    item, errors = write(spec, **kwargs)
    assert errors == []
    return item


def container(name: str = "app", **fields: Any) -> dict[str, Any]:
    """A container with just a name and an image, plus ``fields``."""
    return {"name": name, "image": "nginx:1.27", **fields}


def served(port: int = 8080) -> dict[str, Any]:
    """A container exposing one http port (what serverless needs)."""
    return container(ports=[{"protocol": "http", "number": port}])


def workload(type: str = "standard", **fields: Any) -> dict[str, Any]:
    """A minimal valid spec of ``type`` (a cron gets a job, a serverless its one port), plus ``fields``."""
    spec: dict[str, Any] = {"type": type, "containers": [served() if type == "serverless" else container()]}
    if type == "cron":
        spec["job"] = {"schedule": "*/5 * * * *"}
    spec.update(fields)
    return spec


def autoscaled(type: str = "standard", **autoscaling: Any) -> dict[str, Any]:
    """A spec of ``type`` whose ``defaultOptions.autoscaling`` is ``autoscaling``."""
    return workload(type, defaultOptions={"autoscaling": autoscaling})


def paths(errors: list[FieldError]) -> list[str]:
    """The paths of ``errors``, in order."""
    return [error.path for error in errors]


def pairs(errors: list[FieldError]) -> list[tuple[str, str]]:
    """``(path, message)`` of each of ``errors``, in order."""
    return [(error.path, error.message) for error in errors]


def errors_for(spec: dict[str, Any], **kwargs: Any) -> list[str]:
    """The error paths of writing ``spec``."""
    return paths(write(spec, **kwargs)[1])


def rewritten(item: Item, **kwargs: Any) -> Item:
    """``item``'s spec written again as a new body (``get -o yaml`` then ``apply``)."""
    return stored(copy.deepcopy(item["spec"]), **kwargs)
