"""Deployment documents (types-ts deployment.ts), built the same way by every runtime here.

A deployment is one location's view of a workload: ``name`` is the location, ``status`` says
which workload version it processed, whether it is ready, and what each version runs. The
official CLI reads ``status.ready``, ``status.internal.syncFailed`` (with no null check on
``internal`` when ready, so ``internal`` is always an object, ``{}`` here),
``lastProcessedVersion``, ``expectedDeploymentVersion`` and ``versions[].workload`` /
``versions[].ready`` to decide whether a workload is ready at its latest version
(``cpln apply --ready``, ``cpln workload get``), and ``status.jobExecutions`` for cron.
``status.remote`` (the location's data-plane URL, used for replica listing and exec) is left
out here: only the containers runtime has a data plane (``runtime/observed.py`` adds it), and
the CLI skips a location without one.
"""

from __future__ import annotations

from typing import Any

from plinth.runtime.base import Doc, Placement


def location_options(workload: Doc, location: str) -> Doc:
    """``defaultOptions`` overlaid with the ``localOptions`` entry for ``location`` (named by
    its last path segment), one level deep for ``autoscaling``: a local option overrides only
    what it names."""
    spec = workload.get("spec") or {}
    merged: dict[str, Any] = dict(spec.get("defaultOptions") or {})
    for local in spec.get("localOptions") or []:
        if str(local.get("location", "")).rstrip("/").rsplit("/", 1)[-1] == location:
            autoscaling = {**(merged.get("autoscaling") or {}), **(local.get("autoscaling") or {})}
            merged.update({k: v for k, v in local.items() if k != "location"})
            merged["autoscaling"] = autoscaling
    return merged


def replicas_at(workload: Doc, location: str) -> int:
    """Replicas a location runs at rest: none when suspended, for cron (jobs run on schedule)
    or with ``maxScale: 0``; otherwise the autoscaling lower bound."""
    if (workload.get("spec") or {}).get("type") == "cron":
        return 0
    options = location_options(workload, location)
    autoscaling = options.get("autoscaling") or {}
    if options.get("suspend") or autoscaling.get("maxScale") == 0:
        return 0
    return int(autoscaling.get("minScale", 1))


def location_endpoint(placement: Placement, location: str) -> str:
    name = placement.workload["name"]
    return f"https://{name}-{placement.gvc.get('alias', '')}.{location}.{placement.base_domain}"


def container_statuses(placement: Placement, replicas: int, ready: bool) -> dict[str, Doc]:
    """ContainerStatus by container name (types-ts containerstatus.ts)."""
    out: dict[str, Doc] = {}
    for container in (placement.workload.get("spec") or {}).get("containers") or []:
        name = str(container.get("name", ""))
        out[name] = {
            "name": name,
            "image": container.get("image", ""),
            "ready": ready,
            "resources": {
                "replicas": replicas,
                "replicasReady": replicas if ready else 0,
                "cpu": container.get("cpu", ""),
                "memory": container.get("memory", ""),
            },
            "message": "",
            "restarts": {"count": 0},
        }
    return out


def deployment_doc(
    placement: Placement,
    location: str,
    *,
    ready: bool,
    message: str,
    processed: int,
    versions: list[Doc],
    executions: list[Doc],
) -> Doc:
    """One location's deployment document."""
    workload = placement.workload
    href = f"{placement.href}/deployment/{location}"
    status: Doc = {
        "endpoint": location_endpoint(placement, location),
        "lastProcessedVersion": processed,
        "expectedDeploymentVersion": workload["version"],
        # Empty unless there is something to say: the official CLI reads ``internal.syncFailed``
        # with no null check (so the object is always there, and a missing key reads as false),
        # and the Python SDK cpln-py refuses keys it does not know inside ``internal``.
        "internal": {},
        "ready": ready,
        "deploying": False,
        "message": message,
        "versions": versions,
    }
    if (workload.get("spec") or {}).get("type") == "cron":
        status["jobExecutions"] = executions
    return {
        "name": location,
        "kind": "deployment",
        "lastModified": workload.get("lastModified"),
        "links": [
            {"rel": "self", "href": href},
            {"rel": "workload", "href": placement.href},
            {"rel": "location", "href": f"{placement.href.split('/gvc/')[0]}/location/{location}"},
        ],
        "status": status,
    }
